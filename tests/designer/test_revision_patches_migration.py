"""Migration 0015 undone: every revision stored as a patch gets its whole document back (the
column is NOT NULL again), with its checksum; done again, they read the same."""
from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_undoing_the_migration_stores_every_revision_whole(django_user_model):
    from designer import services
    from designer.bridge.common import document_checksum
    from designer.models import TopologyRevision

    owner = django_user_model.objects.create_user("undo", password="pw-undo-123456")
    topology = services.topology_build(owner=owner, name="u", template="dgx-h100", hosts=1)
    link = topology.current_revision.document["links"][2]
    revision = services.revision_save(topology=topology, user=owner, base_revision=1, message="m",
                                      patch={"links": {"update": [dict(link, latency_ns=42.0)]}})
    expected = TopologyRevision.objects.get(pk=revision.pk).document
    assert TopologyRevision.objects.get(pk=revision.pk).base_id is not None

    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate([("designer", "0014_revision_document_json")])
    with connection.cursor() as cursor:
        cursor.execute("SELECT CAST(document AS text), checksum FROM designer_topologyrevision WHERE id = %s",
                       [revision.pk])
        text, checksum = cursor.fetchone()
    assert json.loads(text) == expected and checksum == document_checksum(expected)
    MigrationExecutor(connection).migrate(leaves)

    row = TopologyRevision.objects.get(pk=revision.pk)
    assert row.base_id is None and row.document == expected
