"""CPU per request of a stored N-1 sweep's readers, the ranking stored as rows against columns.

Runs the N-1 NIC sweep of ``bench --only whatif.sweep_nic_4096`` (``--hosts`` DGX-H100,
rail-optimized, ring all-reduce on every GPU; 512 hosts = 4,096 GPUs, ~20 s CPU), stores its
result twice in a throw-away database — as a sweep was stored before (``fabricscope.sweep/1``,
one object per failure) and as it is stored now (``fabricscope.sweep-columns/1``, one array per
field) — and sends each reader's request ``--repeat`` times to both, alternating, through
Django's test client: the result page (its figures stored after the first visit), the page with a
failure selected, and the API's whole and summary result. Prints the stored bytes and the mean
process CPU per request (ms) of each, and checks both rows give the same API documents.

    .venv/bin/python tools/sweep_store_reads.py [--hosts 512] [--repeat 10]

Settings and database as ``tools/request_costs.py`` makes them (DEBUG off, SQLite in a temporary
directory unless ``DATABASE_URL`` names a PostgreSQL server). docs/PERFORMANCE.md, "Stored
sweeps: rows against columns", holds the figures this prints.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from request_costs import API, _account, measure, with_django  # noqa: E402


def _sweep(hosts: int) -> dict:
    from designer import bridge
    from designer.engine.analysis.whatif import sweep
    from designer.engine.model.fabrics import build_cluster

    document = build_cluster("dgx-h100", hosts, fabric="rail-optimized")
    return bridge.json_safe(sweep({"topology": document, "routing": {"nic_policy": "affinity"},
                                   "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                                                 "participants": {"kind": "gpu"}, "bytes": 1e9}]}, over="nic"))


def _stored_sweep(scenario, user, data: dict):
    """A succeeded sweep job of ``scenario`` whose stored ``data`` is ``data``."""
    from django.utils import timezone

    from designer.choices import JobKind, JobState
    from designer.models import SimulationJob, SimulationResult

    now = timezone.now()
    job = SimulationJob.objects.create(kind=JobKind.SWEEP, state=JobState.SUCCEEDED, topology=scenario.topology,
                                       revision=scenario.revision, scenario=scenario, submitted_by=user,
                                       progress=100, message="done", started_at=now, finished_at=now,
                                       attempts=1, parameters={"over": ["nic"]})
    SimulationResult.objects.create(job=job, data=data)
    return job


def _stored_bytes(job) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT length(CAST(data AS text)) FROM designer_simulationresult WHERE job_id = %s",
                       [job.pk])
        return cursor.fetchone()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    return with_django(_run, args)


def _run(args) -> int:
    from django.test import Client

    from designer.engine.analysis.sweep_columns import pack

    rows = _sweep(args.hosts)
    user, key, _, scenario, _ = _account()
    jobs = {"rows": _stored_sweep(scenario, user, rows), "columns": _stored_sweep(scenario, user, pack(rows))}
    page, api = Client(), Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    page.force_login(user)
    reads = {"page result": lambda j: page.get(f"/jobs/{j}/result/"),
             "page result ?failure=1": lambda j: page.get(f"/jobs/{j}/result/?failure=1"),
             "api result": lambda j: api.get(f"{API}/jobs/{j}/result/"),
             "api result ?view=summary": lambda j: api.get(f"{API}/jobs/{j}/result/?view=summary")}
    same = all(api.get(f"{API}/jobs/{jobs['rows'].pk}/result/?view={v}").json()
               == api.get(f"{API}/jobs/{jobs['columns'].pk}/result/?view={v}").json() for v in ("full", "summary"))
    print(f"{len(rows['ranking']):,} failures; same API documents from both rows: {same}")
    print(f"stored bytes: rows {_stored_bytes(jobs['rows']):,}, columns {_stored_bytes(jobs['columns']):,}")
    print(f"{'request':28s} {'rows ms':>9s} {'columns ms':>10s} {'ratio':>6s}")
    for name, read in reads.items():
        cpu = {form: [] for form in jobs}
        for _ in range(3):  # alternate the two forms, best of three rounds
            for form, job in jobs.items():
                cpu[form].append(measure(lambda j=job.pk: read(j), args.repeat)[0])
        r, c = min(cpu["rows"]), min(cpu["columns"])
        print(f"{name:28s} {r:9.2f} {c:10.2f} {c / r:6.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
