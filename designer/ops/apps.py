"""App config: connects the Celery signal handlers of :mod:`designer.ops.worker`."""
from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "designer.ops"
    label = "ops"
    verbose_name = "Operations"

    def ready(self) -> None:
        from designer.ops import worker  # noqa: F401  (connects signal handlers on import)
