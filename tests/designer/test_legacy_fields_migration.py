"""Migration 0007: a revision stored before unknown fields were refused is readable again — each
unknown field moved under ``attrs.legacy_fields`` of its item, the checksum recomputed, every
other revision left as it was."""
from __future__ import annotations

import copy

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_stored_unknown_fields_move_under_attrs_and_the_revision_validates(small_topology):
    from designer.bridge.common import document_checksum
    from designer.bridge.documents import validate_document
    from designer.models import TopologyRevision

    revision = small_topology.revisions.order_by("number").last()
    clean = copy.deepcopy(revision.document)
    legacy = copy.deepcopy(clean)
    legacy["notes"] = "rack B"                           # top-level, never part of the format
    legacy["links"][3]["degrade"] = 0.5                  # a misspelled failure, silently stored before
    TopologyRevision.objects.filter(pk=revision.pk).update(stored_document=legacy, checksum=document_checksum(legacy))
    assert validate_document(legacy), "the legacy document must fail today's validation"
    others = {r.pk: r.checksum for r in TopologyRevision.objects.exclude(pk=revision.pk)}

    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate([("designer", "0006_revision_digest")])
    MigrationExecutor(connection).migrate(leaves)

    migrated = TopologyRevision.objects.get(pk=revision.pk)
    assert validate_document(migrated.document) == []
    assert migrated.document["attrs"]["legacy_fields"] == {"notes": "rack B"}
    assert migrated.document["links"][3]["attrs"]["legacy_fields"] == {"degrade": 0.5}
    assert migrated.checksum == document_checksum(migrated.document) != document_checksum(legacy)
    assert {r.pk: r.checksum for r in TopologyRevision.objects.exclude(pk=revision.pk)} == others
