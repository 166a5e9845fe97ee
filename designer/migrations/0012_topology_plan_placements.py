"""Devices moved by hand on a topology's floor plan (docs/FORMATS.md, "Physical plan",
placements): one JSON object per topology, empty = the automatic plan. No data moves."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("designer", "0011_job_kind_explore")]
    operations = [migrations.AddField(model_name="topology", name="plan_placements",
                                      field=models.JSONField(blank=True, default=dict))]
