"""Simulation results stored as a small head (``data``) and a compressed columnar body.

Schema: ``SimulationResult.body`` / ``encoding`` and the ``ResultFigures`` cache. Data: every
stored ``fabricscope.result/1`` is re-written as head + body (``designer.engine.analysis.result_columns``),
one row at a time so memory stays that of one document; reversing writes the whole documents back.
The same on SQLite (BLOB) and PostgreSQL (bytea).
"""
import django.db.models.deletion
from django.db import migrations, models


def _pack_rows(apps, schema_editor):
    from designer.bridge import results as result_columns

    Result = apps.get_model("designer", "SimulationResult")
    for pk in list(Result.objects.filter(encoding="").values_list("pk", flat=True)):
        row = Result.objects.get(pk=pk)
        if not str((row.data or {}).get("format") or "").startswith("fabricscope.result/"):
            continue  # sweeps and comparisons stay whole
        row.data, row.body = result_columns.pack(row.data)
        row.encoding = result_columns.ENCODING
        row.save(update_fields=["data", "body", "encoding"])


def _unpack_rows(apps, schema_editor):
    from designer.bridge import results as result_columns

    Result = apps.get_model("designer", "SimulationResult")
    for pk in list(Result.objects.exclude(encoding="").values_list("pk", flat=True)):
        row = Result.objects.get(pk=pk)
        row.data = result_columns.unpack(row.data, row.body)
        row.body, row.encoding = None, ""
        row.save(update_fields=["data", "body", "encoding"])


class Migration(migrations.Migration):

    dependencies = [
        ('designer', '0003_published_at'),
    ]

    operations = [
        migrations.AddField(
            model_name='simulationresult',
            name='body',
            field=models.BinaryField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name='simulationresult',
            name='encoding',
            field=models.CharField(blank=True, default='', max_length=40),
        ),
        migrations.CreateModel(
            name='ResultFigures',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=100)),
                ('keys', models.JSONField(default=list)),
                ('figures', models.BinaryField()),
                ('path_index', models.BinaryField(blank=True, null=True)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('result', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='figure_sets', to='designer.simulationresult')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('result', 'key'), name='figures_unique_result_key')],
            },
        ),
        migrations.RunPython(_pack_rows, _unpack_rows, elidable=False),
    ]
