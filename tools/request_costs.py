"""CPU per request of the load test's requests, in process: where the web tier's time goes.

Makes one account as ``loadtest/run.py`` does (a 2-host DGX-H100 topology, a ring all-reduce
scenario, one finished job, an API token, a signed-in session), then sends each request of
``loadtest/locustfile.py`` ``--repeat`` times through Django's test client (the whole middleware
chain, DRF, the shared rate limit) and prints the mean process CPU per request (ms, the
client's own cost included) and the queries it ran.

    .venv/bin/python tools/request_costs.py [--repeat 40] [--profile "page topology"]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test .venv/bin/python tools/request_costs.py

DEBUG off, as ``loadtest/run.py`` runs the app, and ``designer.wsgi`` imported as gunicorn
imports it. The database is a throw-away SQLite file in a
temporary directory, or, with ``DATABASE_URL`` set, a fresh database made next to it on that
server (``<name>_costs_<pid>``, dropped at the end). The rate limits count in Redis when
``REDIS_URL`` is set (a key prefix of the run's own), else in each process (what
``designer/ops/shared_cache.py`` falls back to). ``--profile NAME`` prints the 30 costliest
functions of one request (cProfile, cumulative) over the repeats. docs/PERFORMANCE.md, "Many
users", holds the figures this prints.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

API = "/api/v1"


def _django(var_dir: str) -> str | None:
    """Settings as the load test's app has them; returns the PostgreSQL database to drop."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    os.environ["FABRICSCOPE_VAR_DIR"] = var_dir
    made = None
    if os.environ.get("DATABASE_URL", "").startswith("postgres"):
        made = _fresh_postgres(os.environ["DATABASE_URL"])
    else:
        os.environ["DATABASE_URL"] = f"sqlite:///{var_dir}/costs.sqlite3"
    os.environ.update({
        "DEBUG": "0", "SECRET_KEY": "request-costs-" + os.urandom(8).hex(),
        "ALLOWED_HOSTS": "testserver,localhost", "LOG_LEVEL": "ERROR",
        "FABRICSCOPE_STATIC_FROM_SOURCE": "1",  # as `manage.py up` serves static files
        "FABRICSCOPE_BROKER_PRECHECK": "0",
        "FABRICSCOPE_CACHE_KEY_PREFIX": "costs-" + os.urandom(4).hex(),
        # One account sends every request: rates as generous as loadtest/run.py sets them.
        "FABRICSCOPE_API_RATE_USER": "100000/min", "FABRICSCOPE_API_RATE_PAGES": "100000/min"})
    if not os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = "redis://127.0.0.1:1/0"  # nothing listens: per-process counts
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return made


def _fresh_postgres(url: str) -> str:
    """Point DATABASE_URL at a new database on the same server; returns its name."""
    import psycopg

    base, _, name = url.rpartition("/")
    made = f"{name}_costs_{os.getpid()}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{made}"')
    os.environ["DATABASE_URL"] = f"{base}/{made}"
    return made


def _drop_postgres(made: str) -> None:
    import psycopg
    from django.db import connections

    connections.close_all()
    url = os.environ["DATABASE_URL"].rpartition("/")[0] + "/postgres"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{made}"')


def _account():
    """(user, token key, topology, scenario, finished job): one load-test account."""
    from django.contrib.auth import get_user_model
    from django.test import TestCase

    from designer import bridge, services
    from designer.services import queue

    user = get_user_model().objects.create_user("costs", password="costs-password-1")
    token = services.api_token_rotate(user=user)
    document = bridge.build_cluster_document(name="pod", template="dgx-h100", hosts=2,
                                             fabric="rail-optimized", options=None)
    topology = services.topology_create(owner=user, name="pod", document=document,
                                        message="generated: 2 x dgx-h100")
    scenario = services.scenario_create(topology=topology, user=user, name="ring", workload=[
        {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
         "bytes": 1e9}])
    sent = []
    queue._send = lambda name, *args, task_id: sent.append(task_id)  # no broker: run it here
    with TestCase.captureOnCommitCallbacks(execute=True):
        job = services.job_submit_simulate(scenario=scenario, user=user)
    _run_elsewhere(lambda: services.job_run(job_id=job.pk, hostname="costs", task_id=sent[0]))
    job.refresh_from_db()
    assert job.state == "succeeded", (job.state, job.error)
    return user, token.key, topology, scenario, job


def _run_elsewhere(work) -> None:
    """``work()`` in a forked child, as a Celery worker runs a job: the engine's objects (and
    numba's compiled code) stay out of this process, whose heap should look like a web
    worker's, or the collector's passes over it would inflate every request's CPU."""
    from django.db import connections

    connections.close_all()  # the child opens its own
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)  # never back into the parent's code
    _, status = os.waitpid(pid, 0)
    assert status == 0, f"the job's child process ended with status {status}"


def requests(topology, job) -> dict[str, tuple[str, str]]:
    """Name (as the locustfile names it) -> (client, URL) of each GET the load test sends."""
    t = topology.pk
    return {
        "page topology list": ("page", "/topologies/"),
        "page topology": ("page", f"/topologies/{t}/"),
        "page job": ("page", f"/jobs/{job.pk}/"),
        "api read topologies": ("api", f"{API}/topologies/"),
        "api read revisions": ("api", f"{API}/topologies/{t}/revisions/"),
        "api read jobs": ("api", f"{API}/jobs/?page_size=20"),
        "api read topology": ("api", f"{API}/topologies/{t}/"),
        "api read revision": ("api", f"{API}/topologies/{t}/revisions/1/"),
        "api poll job": ("api", f"{API}/jobs/{job.pk}/"),
    }


def _edit(api, topology):
    """The locustfile's edit: read the head, save the same document on it (a new revision)."""
    head = api.get(f"{API}/topologies/{topology.pk}/").json()["revision_number"]
    document = api.get(f"{API}/topologies/{topology.pk}/revisions/1/").json()["document"]
    response = api.post(f"{API}/topologies/{topology.pk}/revisions/", data={
        "document": document, "base_revision": head, "message": "edit"},
        content_type="application/json")
    assert response.status_code == 201, response.content[:300]
    return response


def measure(send, repeat: int) -> tuple[float, int, int]:
    """(mean CPU ms, queries of the last call, status) of ``send()`` over ``repeat`` calls."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    send()  # warm-up: token touch, digest cache, compiled templates
    start = time.process_time()
    for _ in range(repeat - 1):
        send()
    with CaptureQueriesContext(connection) as queries:
        status = send().status_code
    return (time.process_time() - start) * 1000 / repeat, len(queries), status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--profile", default="", help="a request name to profile instead")
    parser.add_argument("--sort", default="cumulative", help="the profile's order (pstats key)")
    args = parser.parse_args()
    return with_django(_run, args)


def with_django(run, args) -> int:
    """``run(args)`` in a throw-away app (a temporary VAR_DIR, its database dropped after)."""
    with tempfile.TemporaryDirectory() as var_dir:
        made = _django(var_dir)
        try:
            return run(args)
        finally:
            if made:
                _drop_postgres(made)


def _run(args) -> int:
    from django.db import connection
    from django.test import Client

    user, key, topology, _, job = _account()
    import designer.wsgi  # noqa: F401  (what gunicorn loads, with whatever it does at load)
    page, api = Client(), Client(HTTP_AUTHORIZATION=f"Bearer {key}")
    page.force_login(user)
    clients = {"page": page, "api": api}
    sends = {name: (lambda c=clients[which], u=url: c.get(u))
             for name, (which, url) in requests(topology, job).items()}
    sends["api edit (head + save)"] = lambda: _edit(api, topology)
    if args.profile:
        profiler = cProfile.Profile()
        sends[args.profile]()
        profiler.runcall(lambda: [sends[args.profile]() for _ in range(args.repeat)])
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(30)
        return 0
    print(f"{connection.vendor}, {args.repeat} requests each, mean process CPU per request")
    print(f"{'request':28s} {'CPU ms':>7s} {'queries':>7s} status")
    for name, send in sends.items():
        cpu_ms, queries, status = measure(send, args.repeat)
        print(f"{name:28s} {cpu_ms:7.2f} {queries:7d} {status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
