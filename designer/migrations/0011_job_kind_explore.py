"""Jobs of kind ``explore``: the design-space explorer (docs/FORMATS.md, "Design-space explorer"),
run in chunks like sweeps. Only the field's choices change: no data moves."""
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("designer", "0010_revision_document_unchecked")]
    operations = [migrations.AlterField(
        model_name="simulationjob", name="kind",
        field=models.CharField(choices=[("simulate", "Simulation"), ("sweep", "Failure sweep"),
                                        ("compare", "Policy comparison"), ("diagnose", "Diagnosis"),
                                        ("explore", "Design-space exploration")],
                               max_length=16))]
