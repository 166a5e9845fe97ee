"""Jobs of kind ``diagnose``: measured nccl-tests runs explained by ranked faults (docs/FORMATS.md,
"Diagnosis"). Only the field's choices change: no data moves."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("designer", "0008_scenario_latency")]
    operations = [migrations.AlterField(
        model_name="simulationjob", name="kind",
        field=models.CharField(choices=[("simulate", "Simulation"), ("sweep", "Failure sweep"),
                                        ("compare", "Policy comparison"), ("diagnose", "Diagnosis")],
                               max_length=16))]
