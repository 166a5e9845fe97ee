"""Revisions stored as a patch against a whole-document base (``TopologyRevision.base`` +
``patch``): the document column becomes nullable and is named ``stored_document`` in the model
(``document`` is the property that reads either form); the column keeps its name, so the
rename touches the state only. Existing revisions stay whole; undone, every revision is stored
whole again."""
import django.db.models.deletion
from django.db import migrations, models

import designer.bridge.common
import designer.models


def _store_whole(apps, schema_editor):
    """Undo: each revision stored as a patch gets its whole document back."""
    from designer.bridge.common import document_checksum
    from designer.bridge.deltas import compose_document

    Revision = apps.get_model("designer", "TopologyRevision")
    for pk, base_id, patch in Revision.objects.filter(base__isnull=False).values_list("pk", "base_id", "patch"):
        base = Revision.objects.values_list("stored_document", flat=True).get(pk=base_id)
        document = compose_document(base, patch)
        Revision.objects.filter(pk=pk).update(stored_document=document, base=None, patch=None,
                                              checksum=document_checksum(document))


def _document_field(null: bool):
    return designer.models.DocumentField(db_column="document", null=null,
                                         decoder=designer.bridge.common.DocumentJSONDecoder,
                                         encoder=designer.bridge.common.DocumentJSONEncoder)


class Migration(migrations.Migration):
    dependencies = [("designer", "0014_revision_document_json")]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RenameField("topologyrevision", "document", "stored_document"),
            migrations.AlterField("topologyrevision", "stored_document", _document_field(False)),
        ]),
        migrations.AlterField("topologyrevision", "stored_document", _document_field(True)),
        migrations.AddField(
            model_name="topologyrevision", name="base",
            field=models.ForeignKey(blank=True, null=True, related_name="+",
                                    on_delete=django.db.models.deletion.RESTRICT,
                                    to="designer.topologyrevision")),
        migrations.AddField(
            model_name="topologyrevision", name="patch",
            field=designer.models.DocumentField(blank=True, null=True,
                                                decoder=designer.bridge.common.DocumentJSONDecoder,
                                                encoder=designer.bridge.common.DocumentJSONEncoder)),
        migrations.AddConstraint(
            model_name="topologyrevision",
            constraint=models.CheckConstraint(
                condition=(models.Q(stored_document__isnull=False, base__isnull=True, patch__isnull=True)
                           | models.Q(stored_document__isnull=True, base__isnull=False,
                                      patch__isnull=False)),
                name="revision_whole_or_patch")),
        # Backwards only: every revision stored whole again, before its column is NOT NULL.
        migrations.RunPython(migrations.RunPython.noop, _store_whole),
    ]
