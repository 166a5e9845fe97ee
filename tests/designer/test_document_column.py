"""The revision document column on the embedded default (SQLite): no ``JSON_VALID`` re-parse on
insert, and Django's debug query log does not copy a whole document (docs/PERFORMANCE.md,
"One-node save of a 32k-GPU design": the two were 1.9 s of a 3.5 s save). On PostgreSQL the
column is ``json``, not ``jsonb`` (whose values stop at 256 MiB, under a 100,000-GPU design's
259 MB), read back as text and parsed by the field's decoder."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from designer import services

pytestmark = pytest.mark.django_db
sqlite_only = pytest.mark.skipif("connection.vendor != 'sqlite'", reason="SQLite's column and debug log")
postgresql_only = pytest.mark.skipif("connection.vendor != 'postgresql'", reason="PostgreSQL's column type")


def _table_sql(table: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = %s", [table])
        return cursor.fetchone()[0]


@sqlite_only
def test_revision_document_has_no_json_valid_check():
    sql = _table_sql("designer_topologyrevision")
    assert '"document" text NULL' in sql   # null for a revision stored as a patch
    assert "JSON_VALID" not in sql   # the app validates documents; SQLite re-parsed 90 MB per save
    # other JSON columns keep Django's check (they are small)
    assert "JSON_VALID" in _table_sql("designer_scenario")


@sqlite_only
def test_debug_query_log_names_a_long_document_by_its_length(django_user_model):
    owner = django_user_model.objects.create_user("saver", password="pw-saver-123456")
    topology = services.topology_build(owner=owner, name="two", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    document["links"][0] = dict(document["links"][0], latency_ns=777)
    with CaptureQueriesContext(connection) as queries:   # forces the debug cursor, as DEBUG does
        services.revision_save(topology=topology, user=owner, base_revision=topology.revision_number,
                               document=document, message="one latency")
    inserts = [q["sql"] for q in queries.captured_queries if "designer_topologyrevision" in q["sql"]
               and q["sql"].lstrip().upper().startswith("INSERT")]
    assert len(inserts) == 1
    assert "characters>" in inserts[0] and len(inserts[0]) < 4096
    assert max(len(q["sql"]) for q in queries.captured_queries) < 8192
    topology.refresh_from_db()
    assert topology.current_revision.document["links"][0]["latency_ns"] == 777   # stored whole


@postgresql_only
def test_postgresql_keeps_the_document_as_json_text_in_its_key_order(django_user_model):
    with connection.cursor() as cursor:
        cursor.execute("SELECT data_type FROM information_schema.columns "
                       "WHERE table_name = 'designer_topologyrevision' AND column_name = 'document'")
        assert cursor.fetchone()[0] == "json"   # jsonb refuses values over 256 MiB
    owner = django_user_model.objects.create_user("keeper", password="pw-keeper-123456")
    topology = services.topology_build(owner=owner, name="two", template="dgx-h100", hosts=2)
    revision = type(topology.current_revision).objects.get(pk=topology.current_revision.pk)
    assert isinstance(revision.document, dict)
    assert list(revision.document) == list(topology.current_revision.document)   # jsonb sorted keys by length
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_typeof(document)::text, CAST(document AS text) FROM designer_topologyrevision "
                       "WHERE id = %s", [revision.pk])
        kind, text = cursor.fetchone()
    assert kind == "json" and text.startswith('{"format"')
