"""Scenarios store their latency request (docs/FORMATS.md, Scenario ``latency``); null: none."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("designer", "0007_legacy_unknown_fields")]
    operations = [migrations.AddField(model_name="scenario", name="latency",
                                      field=models.JSONField(blank=True, default=None, null=True))]
