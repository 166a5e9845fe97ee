"""Django app configuration for the domain app ``designer``."""
from django.apps import AppConfig


class DesignerConfig(AppConfig):
    name = "designer"
    verbose_name = "Fabricscope designer"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Load the Celery app here rather than in designer/__init__.py, which stays empty so that
        # `import designer.engine` loads neither Django nor Celery.
        from designer import celery  # noqa: F401
