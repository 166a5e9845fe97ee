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
        from django.db.backends.signals import connection_created

        connection_created.connect(_json_as_text, dispatch_uid="designer-json-as-text")


def _json_as_text(sender, connection, **kwargs) -> None:
    """PostgreSQL hands ``json`` columns (a revision's document, ``models.DocumentField``) back as
    text, as Django has it do for ``jsonb``: the field's orjson decoder parses them once, not
    the driver first."""
    if connection.vendor == "postgresql":
        from psycopg.types.string import TextLoader

        connection.connection.adapters.register_loader("json", TextLoader)
