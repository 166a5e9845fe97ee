"""The revision document column without SQLite's ``JSON_VALID`` check (``DocumentField``): on
SQLite the table is rebuilt once without it; on PostgreSQL (``jsonb``) nothing changes."""
from django.db import migrations

import designer.bridge.common
import designer.models


class Migration(migrations.Migration):
    dependencies = [("designer", "0009_job_kind_diagnose")]
    operations = [migrations.AlterField(
        model_name="topologyrevision", name="document",
        field=designer.models.DocumentField(decoder=designer.bridge.common.DocumentJSONDecoder,
                                            encoder=designer.bridge.common.DocumentJSONEncoder))]
