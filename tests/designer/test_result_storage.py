"""Stored results and stored page figures.

- ``designer.engine.analysis.result_columns``: head + columnar zlib body, exact round trip;
- ``SimulationResult``: new rows split and packed, old (whole-document) rows still read, the body
  left unread by default; migration 0004's conversion both ways;
- the result page and the API: the same document and field names as before; a page visit of a
  stored job reads its head and one stored figure set, not the flows nor the topology document;
- the 1,024-GPU measurement (slow): stored bytes and bytes the page reads, printed.

Cluster of the fast tests: ``build_cluster("dgx-h100", 2, storage=1)`` (2 hosts × 8 GPUs,
rail-optimized leaves, one storage server); workload: ring all-reduce on the 16 GPUs (1 GB) +
storage read into h0's GPUs (4 GB); h0/nic0 down under NIC policy ``any`` (so ``diff`` is filled).
Every flow is listed (the result is under the listing limit).
"""
from __future__ import annotations

import json
import time

import pytest
from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.test import Client
from django.urls import reverse

from designer.engine.analysis import result_columns as rc
from designer.models import ResultFigures, SimulationResult
from tests.scenarios import dgx_h100_scenario
from tests.stored_results import stored_job


def jsonable(x):
    return json.loads(json.dumps(x))


@pytest.fixture(scope="module")
def small():
    from designer.engine.analysis.whatif import simulate_with_diff

    topo, sc = dgx_h100_scenario(2, failures=[{"target": "h0/nic0", "mode": "down"}], policy="any",
                                 latency=True)
    return topo, jsonable(simulate_with_diff(sc))


# --- the codec ---------------------------------------------------------------------------------------

def test_pack_round_trips_a_real_result_exactly(small):
    _, doc = small
    head, body = rc.pack(doc)
    assert set(head) == set(doc) - set(rc.BULK_KEYS) and "summary" in head
    back = rc.unpack(head, body)
    assert back == doc
    assert list(back) == list(doc)  # top-level key order kept
    for a, b in zip(back["flows"], doc["flows"]):
        assert list(a) == list(b)   # and each record's
    assert len(body) < len(json.dumps(doc)) / 5


def test_columns_keep_shapes_types_and_nesting():
    """Records of different keys, None vs missing, mixed-type columns, nested tables, empty lists."""
    doc = {"format": "fabricscope.result/1", "summary": {"n": 1},
           "flows": [{"id": "a", "path": ["x", "y"], "rate": 1.5, "paths": [{"path": ["x"], "share": 0.5}]},
                     {"id": "b", "path": [], "rate": None, "reason": "down", "status": "unroutable"},
                     {"rate": 2, "id": None, "path": ["y"], "mixed": True, "paths": []},
                     {"id": "c", "path": ["x"], "mixed": "text", "paths": [{"share": 1, "path": []}]}],
           "resources": [], "diff": {"rerouted": [{"flow": "a", "old": ["x"], "new": ["y"]}], "impact": None},
           "latency": None, "scenario": {"mode": "steady"}}
    head, body = rc.pack(doc)
    back = rc.unpack(head, body)
    assert back == doc and list(back) == list(doc)
    assert [list(r) for r in back["flows"]] == [list(r) for r in doc["flows"]]
    assert type(back["flows"][2]["rate"]) is int and back["flows"][2]["mixed"] is True


def test_unpack_without_body_is_the_head():
    assert rc.unpack({"format": "x"}, None) == {"format": "x"}


# --- the model and the migration --------------------------------------------------------------------

@pytest.mark.django_db
def test_new_rows_are_split_old_rows_still_read(small):
    topo, doc = small
    _, job = stored_job(topo, doc, prebuild=False)
    row = SimulationResult.objects.get(job=job)
    assert row.encoding == rc.ENCODING and "flows" not in row.data
    assert "body" in row.get_deferred_fields()      # not read until used
    assert row.document() == doc
    legacy = SimulationResult(job=job, data=doc)     # as rows were before migration 0004
    assert legacy.document() is doc
    sweep = SimulationResult.parts_of({"format": "fabricscope.sweep/1", "ranking": []})
    assert sweep["body"] is None and sweep["encoding"] == ""


@pytest.mark.django_db
def test_migration_packs_old_rows_and_unpacks_them_back(small):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("designer.migrations.0004_result_columns")
    topo, doc = small
    _, job = stored_job(topo, doc, prebuild=False)
    SimulationResult.objects.filter(job=job).update(data=doc, body=None, encoding="")  # an old row
    migration._pack_rows(apps, None)
    row = SimulationResult.objects.get(job=job)
    assert row.encoding == rc.ENCODING and "flows" not in row.data and row.document() == doc
    migration._unpack_rows(apps, None)
    row = SimulationResult.objects.get(job=job)
    assert row.encoding == "" and row.body is None and row.data == doc


# --- what the page and the API read --------------------------------------------------------------------

class _CountingCursor(CursorWrapper):
    """Adds the size of every value fetched to ``counter`` (bytes of text and blobs, 8 per number)."""

    counter: list

    def _count(self, rows):
        for row in rows:
            for v in row:
                if isinstance(v, (bytes, bytearray, memoryview)):
                    self.counter[0] += len(v)
                elif isinstance(v, str):
                    self.counter[0] += len(v.encode())
                elif v is not None:
                    self.counter[0] += 8
        return rows

    def fetchone(self):
        row = self.cursor.fetchone()
        if row is not None:
            self._count([row])
        return row

    def fetchmany(self, size=None):
        return self._count(self.cursor.fetchmany(size) if size else self.cursor.fetchmany())

    def fetchall(self):
        return self._count(self.cursor.fetchall())


def bytes_read(fn):
    """``(value of fn(), bytes fetched from the database while it ran, CPU seconds)``."""
    counter = [0]

    def wrap(cursor):
        w = _CountingCursor(cursor, connection)
        w.counter = counter
        return w
    saved = connection.make_cursor, connection.make_debug_cursor
    connection.make_cursor = connection.make_debug_cursor = wrap  # every cursor opened from now
    t0 = time.process_time()
    try:
        value = fn()
    finally:
        cpu = time.process_time() - t0
        connection.make_cursor, connection.make_debug_cursor = saved
    return value, counter[0], cpu


def stored_bytes(job_pk: int) -> dict:
    """Bytes the database holds for the result row and its figure sets: ``pg_column_size`` on
    PostgreSQL (after its own TOAST compression), the column length on SQLite."""
    size = "pg_column_size({})" if connection.vendor == "postgresql" else "length(CAST({} AS BLOB))"
    with connection.cursor() as c:
        c.execute(f"SELECT {size.format('data')}, coalesce({size.format('body')}, 0) "
                  "FROM designer_simulationresult WHERE job_id = %s", [job_pk])
        head, body = c.fetchone()
        c.execute(f"SELECT coalesce(sum({size.format('figures')} + coalesce({size.format('path_index')}, 0)), 0) "
                  "FROM designer_resultfigures WHERE result_id = %s", [job_pk])
        (figures,) = c.fetchone()
    return {"head": head, "body": body, "result": head + body, "figures": int(figures)}


def figures_part(html: str) -> str:
    return html[html.index('<script id="fs-figures"'):html.index('<script id="fs-style"')]


def page(client: Client, job) -> str:
    response = client.get(reverse("job_result", args=[job.pk]))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_page_reads_head_and_stored_figures_only(small):
    topo, doc = small
    user, job = stored_job(topo, doc)
    assert ResultFigures.objects.filter(result_id=job.pk).count() == 1   # built when it finished
    client = Client()
    client.force_login(user)
    html, read, _ = bytes_read(lambda: page(client, job))
    assert 'id="fs-figures"' in html and "What the failures changed" in html
    sizes = stored_bytes(job.pk)
    # The page read less than the body alone: neither the flows nor the topology document.
    assert read < sizes["head"] + sizes["figures"] + 20_000, (read, sizes)
    # Same page as one built from the whole document (figures equal once through JSON).
    from designer.pages.selectors import result_context

    fresh = result_context(job=None, result=doc, topology_doc=topo)
    assert str(fresh["figures_script"]) in html


@pytest.mark.django_db(transaction=True)
def test_page_of_an_old_row_builds_its_figures_once(small):
    topo, doc = small
    user, job = stored_job(topo, doc, prebuild=False)
    SimulationResult.objects.filter(job=job).update(data=doc, body=None, encoding="")  # before 0004
    client = Client()
    client.force_login(user)
    first = figures_part(page(client, job))
    assert ResultFigures.objects.filter(result_id=job.pk).count() == 1
    assert figures_part(page(client, job)) == first   # read back: the same figures
    stale = ResultFigures.objects.get(result_id=job.pk)
    ResultFigures.objects.filter(pk=stale.pk).update(key="0000000000000000:result:-")  # older figure code
    page(client, job)
    assert list(ResultFigures.objects.filter(result_id=job.pk).values_list("key", flat=True)) != [
        "0000000000000000:result:-"]


@pytest.mark.django_db
def test_api_result_keeps_its_fields_and_offers_a_summary(small):
    from rest_framework.test import APIClient

    topo, doc = small
    user, job = stored_job(topo, doc, prebuild=False)
    api = APIClient()
    api.force_authenticate(user)
    full = api.get(f"/api/v1/jobs/{job.pk}/result/")
    assert full.status_code == 200 and full.json() == doc
    summary, read, _ = bytes_read(lambda: api.get(f"/api/v1/jobs/{job.pk}/result/?view=summary"))
    assert summary.json() == {k: v for k, v in doc.items() if k not in rc.BULK_KEYS}
    assert read < 3 * len(json.dumps(summary.json())) + 20_000
    assert api.get(f"/api/v1/jobs/{job.pk}/result/?view=flows").status_code == 400
    figs = api.get(f"/api/v1/jobs/{job.pk}/figures/")
    assert figs.status_code == 200 and "topology" in figs.json()
    assert ResultFigures.objects.filter(result_id=job.pk).count() == 1


# --- the 1,024-GPU measurement ----------------------------------------------------------------------------

def _measure(label, topo, doc):
    """Stored bytes and page reads of ``doc`` stored whole (before) and split (after)."""
    user, before_job = stored_job(topo, doc, prebuild=False)
    SimulationResult.objects.filter(job=before_job).update(data=doc, body=None, encoding="")
    client = Client()
    client.force_login(user)
    before_sizes = stored_bytes(before_job.pk)
    ResultFigures.objects.filter(result_id=before_job.pk).delete()
    _, before_read, before_cpu = bytes_read(lambda: page(client, before_job))  # builds every figure
    t0 = time.process_time()
    _, job = stored_job(topo, doc)                                           # what the runner writes
    write_cpu = time.process_time() - t0
    sizes = stored_bytes(job.pk)
    page(client, job)  # warm the process (imports), not the data: the figures are stored already
    _, read, cpu = bytes_read(lambda: page(client, job))
    print(f"\n{label}: stored result {before_sizes['result']:,} B -> {sizes['result']:,} B "
          f"(head {sizes['head']:,} + body {sizes['body']:,}; stored figures {sizes['figures']:,} B more); "
          f"page reads {before_read:,} B -> {read:,} B; page server CPU {before_cpu:.2f} s -> {cpu:.3f} s; "
          f"store + prebuild figures {write_cpu:.2f} s CPU")
    return sizes, read


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("workload", ["ring", "alltoall"])
def test_1024_gpu_result_is_stored_small_and_read_smaller(workload):
    from designer.bridge import json_safe
    from designer.engine.analysis.whatif import simulate_with_diff

    topo, sc = dgx_h100_scenario(128, latency=True)
    if workload == "alltoall":
        sc["workload"] = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e9}]
    doc = json_safe(simulate_with_diff(sc))
    sizes, read = _measure(f"1,024 GPUs, {workload} ({doc['summary']['flows_total']:,} flows, "
                           f"{doc['summary']['flows_listed']:,} listed)", topo, doc)
    assert sizes["result"] <= 5_000_000
    assert read <= 1_000_000


# --- the runner and the figure set ---------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_runner_stores_split_result_and_its_page_figures(scenario, user, published):
    from designer import services

    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk, hostname="w@test", task_id="t-1")
    row = SimulationResult.objects.get(job_id=job.pk)
    assert row.encoding == rc.ENCODING and row.document()["flows"]
    stored = ResultFigures.objects.get(result_id=job.pk)
    assert stored.key.endswith(":result:-") and "topology" in stored.keys


def test_figure_set_answers_membership_without_parsing():
    from designer.figures.base import FigureSet, figure_texts, figures_key, figures_version

    figs = {"path": {"data": [], "fabricscope": {"kind": "path", "path_index": {"node_res": {1: [2]}}}},
            "tiers": {"data": [1.5], "fabricscope": {"kind": "tiers"}}}
    texts = figure_texts(figs)
    assert "path_index" not in texts[0] and texts[1] == '{"node_res":{"1":[2]}}'
    fs = FigureSet(list(figs), *texts)
    assert "tiers" in fs and "timeline" not in fs and list(fs) == ["path", "tiers"]
    assert fs._figs is None                    # nothing parsed yet
    assert fs["path"]["fabricscope"]["path_index"] == {"node_res": {"1": [2]}}
    assert figures_key("sweep", 3) == f"{figures_version()}:sweep:3" and len(figures_version()) == 16
