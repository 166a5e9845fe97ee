"""PostgreSQL: the revision document column becomes ``json`` instead of ``jsonb``
(``models.DocumentField``): ``jsonb`` refuses a value over 256 MiB, and a 100,000-GPU design is
259 MB. SQLite keeps its text column; nothing changes there."""
from django.db import migrations


def _alter(to: str):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(apps.get_model("designer", "TopologyRevision")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN document TYPE {to} USING document::{to}")
    return run


class Migration(migrations.Migration):
    dependencies = [("designer", "0013_job_kind_build")]
    operations = [migrations.RunPython(_alter("json"), _alter("jsonb"))]
