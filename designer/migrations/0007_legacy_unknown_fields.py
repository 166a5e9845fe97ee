"""Stored revisions with fields the document format does not know move them under ``attrs``.

Unknown fields used to be stored as they were (a link's misspelled ``degrade``, a top-level
``notes``); the validator now refuses them with a located error, so such a revision would fail
every time it is read (simulate, patch, export). This moves each one under ``attrs.legacy_fields``
of its item (engine ``document.normalizer.migrate_unknown_keys``: every value kept, nothing
guessed) and recomputes the checksum. Revisions are immutable to the application; a schema
migration is the one place allowed to rewrite them, once, before anything reads them.
"""
from django.db import migrations


def move_unknown_fields(apps, schema_editor):
    from designer.bridge.common import document_checksum
    from designer.bridge.documents import move_legacy_unknown_fields

    Revision = apps.get_model("designer", "TopologyRevision")
    for pk in Revision.objects.values_list("pk", flat=True).iterator():
        document = Revision.objects.values_list("document", flat=True).get(pk=pk)
        migrated, moved = move_legacy_unknown_fields(document)
        if moved:
            Revision.objects.filter(pk=pk).update(document=migrated, checksum=document_checksum(migrated))


class Migration(migrations.Migration):
    dependencies = [("designer", "0006_revision_digest")]
    operations = [migrations.RunPython(move_unknown_fields, migrations.RunPython.noop)]
