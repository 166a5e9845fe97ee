"""Jobs of kind ``build``: a topology generated on a worker (docs/PERFORMANCE.md, "100,000 GPUs
in the browser"). Its job has no revision until the build has saved the first one, so the
job's revision may be null. No data moves."""
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("designer", "0012_topology_plan_placements")]
    operations = [
        migrations.AlterField(
            model_name="simulationjob", name="kind",
            field=models.CharField(choices=[("simulate", "Simulation"), ("sweep", "Failure sweep"),
                                            ("compare", "Policy comparison"), ("diagnose", "Diagnosis"),
                                            ("explore", "Design-space exploration"),
                                            ("build", "Topology build")],
                                   max_length=16)),
        migrations.AlterField(
            model_name="simulationjob", name="revision",
            field=models.ForeignKey(blank=True, null=True,
                                    on_delete=django.db.models.deletion.PROTECT,
                                    related_name="jobs", to="designer.topologyrevision")),
    ]
