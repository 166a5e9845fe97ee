"""``manage.py up`` as a supervisor, against the real thing: gunicorn web, Celery worker, Redis.

Each test starts ``up`` in a subprocess on a free port with a var directory of its own (its own
SQLite database and embedded Redis) and a hard deadline, and always kills what it started.

- Redis SIGKILLed under ``up``: restarted from its append-only file, ``/readyz`` 200 within 10 s.
- 40 concurrent revision saves on one base: exactly 1 x 201 and 39 x 409, no connection error.
- SIGTERM of ``up``: every child stops; SIGKILL of ``up``: no child survives it (parent-death
  signal), none is orphaned.
"""
from __future__ import annotations

import collections
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import redis

from tests.conftest import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.slow]

START_TIMEOUT_S = 180.0
SETUP_SCRIPT = """
import json, uuid
from django.contrib.auth import get_user_model
from designer import services
user = get_user_model().objects.create_user(f"saver-{uuid.uuid4().hex[:8]}",
                                            password="saver-password-1")
topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2,
                                   options={})
token = services.api_token_rotate(user=user)
print(json.dumps({"id": topology.pk, "token": token.key, "revision": topology.revision_number}))
"""


# --- processes -----------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time in clock ticks) of a live process; None when gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
    except OSError:
        return "?"


def _descendants(root: int) -> dict[int, int]:
    """{pid: start time} of every live descendant of ``root`` (zombies count as dead)."""
    parents: dict[int, list[int]] = collections.defaultdict(list)
    starts = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[0] != "Z":
            parents[stat[1]].append(int(entry.name))
            starts[int(entry.name)] = stat[2]
    found, todo = {}, [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found[child] = starts[child]
            todo.append(child)
    return found


def _alive(processes: dict[int, int]) -> list[str]:
    """Those of ``processes`` ({pid: start time}) still running, named."""
    alive = []
    for pid, start in processes.items():
        stat = _stat(pid)
        if stat is not None and stat[0] != "Z" and stat[2] == start:
            alive.append(f"{pid} {_name(pid)}")
    return alive


class Up:
    """One ``manage.py up`` subprocess and everything it started."""

    def __init__(self, *args: str, **env):
        self.var = Path(tempfile.mkdtemp(prefix="fsup-", dir="/tmp"))  # unix socket path limit
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY")}
        self.env.update(FABRICSCOPE_VAR_DIR=str(self.var / "var"),
                        FABRICSCOPE_QUEUE=f"up-{self.port}", PYTHONUNBUFFERED="1",
                        FABRICSCOPE_API_RATE_USER="100000/min", **env)
        self.log = self.var / "up.log"
        self.seen: dict[int, int] = {}  # every descendant ever seen, for the final clean-up
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "up", "--no-seed", "--port", str(self.port), *args],
                cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> Up:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "Press Ctrl-C to stop." not in self.text():
            assert self.process.poll() is None, self.text()
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.3)
        # The port opens before gunicorn's workers have loaded Django (slow on busy cores).
        while _status(self.base + "/readyz", timeout=10) != 200:
            assert time.monotonic() < deadline, self.text()
            time.sleep(0.3)
        self.children()
        return self

    def children(self) -> dict[int, int]:
        found = _descendants(self.process.pid)
        self.seen.update(found)
        return found

    def child_pids(self, word: str) -> list[int]:
        return [pid for pid in self.children() if word in _name(pid)]

    def manage(self, *args: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], check=False, cwd=ROOT,
                              env=self.env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def close(self) -> None:
        if self.process.poll() is None:
            self.children()
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for line in _alive(self.seen):  # whatever survived a failed test
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.var, ignore_errors=True)


def _status(url: str, timeout: float = 5.0) -> int | None:
    host, _, rest = url.removeprefix("http://").partition("/")
    connection = http.client.HTTPConnection(host, timeout=timeout)
    try:
        connection.request("GET", "/" + rest)
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


def _wait_gone(processes: dict[int, int], timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while (alive := _alive(processes)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.fixture(scope="module")
def up():
    server = Up()
    try:
        yield server.wait_ready()
    finally:
        server.close()


# --- tests ---------------------------------------------------------------------------------------

def test_up_serves_with_gunicorn_and_static_files(up):
    assert _status(up.base + "/readyz") == 200
    assert _status(up.base + "/static/js/app.js") == 200  # whitenoise, through gunicorn
    assert up.child_pids("gunicorn") and up.child_pids("celery") and up.child_pids("redis-server")
    assert "web       gunicorn, 2 process(es) x 4 threads" in up.text()


def test_redis_killed_under_up_comes_back_with_its_data_within_10_s(up):
    """SIGKILL of the embedded redis-server: `up` restarts it; the AOF keeps what was written."""
    socket_path = up.var / "var" / "redis" / "redis.socket"
    client = redis.Redis(unix_socket_path=str(socket_path), socket_timeout=2)
    client.set("supervisor-test", "kept")
    time.sleep(1.5)  # appendfsync everysec: the write is on disk after at most a second
    [old] = up.child_pids("redis-server")
    os.kill(old, signal.SIGKILL)
    killed = time.monotonic()
    while _status(up.base + "/readyz") != 200 or not up.child_pids("redis-server"):
        assert time.monotonic() - killed < 10, up.text()[-3000:]
        time.sleep(0.2)
    recovered_s = time.monotonic() - killed
    [new] = up.child_pids("redis-server")
    assert new != old and "restarting it" in up.text()
    assert client.get("supervisor-test") == b"kept"
    assert up.process.poll() is None and up.child_pids("gunicorn") and up.child_pids("celery")
    print(f"/readyz green {recovered_s:.2f} s after the kill")


def test_forty_concurrent_saves_on_one_base_one_201_thirty_nine_409(up):
    made = json.loads(up.manage("shell", "-c", SETUP_SCRIPT).strip().splitlines()[-1])
    headers = {"Authorization": f"Bearer {made['token']}", "Content-Type": "application/json"}
    path = f"/api/v1/topologies/{made['id']}/revisions/"
    connection = http.client.HTTPConnection("127.0.0.1", up.port, timeout=30)
    connection.request("GET", f"{path}{made['revision']}/", headers=headers)
    response = connection.getresponse()
    assert response.status == 200
    document = json.loads(response.read())["document"]
    connection.close()
    body = json.dumps({"document": document, "base_revision": made["revision"],
                       "message": "concurrent"})
    barrier = threading.Barrier(40)
    outcomes: list = []

    def save() -> None:
        barrier.wait()
        saver = http.client.HTTPConnection("127.0.0.1", up.port, timeout=120)
        try:
            saver.request("POST", path, body=body, headers=headers)
            outcomes.append(saver.getresponse().status)
        except OSError as exc:  # a reset or a refused connection
            outcomes.append(repr(exc))
        finally:
            saver.close()
    threads = [threading.Thread(target=save) for _ in range(40)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    print(f"40 saves in {time.monotonic() - started:.2f} s: {collections.Counter(outcomes)}")
    assert collections.Counter(outcomes) == {201: 1, 409: 39}


def test_sigterm_stops_every_child(up):
    children = up.children()
    assert len(children) >= 6  # redis-server, celery worker (+ pool) and beat, gunicorn (+ 2)
    up.process.send_signal(signal.SIGTERM)
    assert up.process.wait(60) == 0, up.text()[-3000:]
    assert _wait_gone(children, 5) == []
    assert "stopped." in up.text()
    assert _status(up.base + "/healthz", timeout=1) is None


def test_sigkill_of_up_leaves_no_orphan():
    server = Up()
    try:
        server.wait_ready()
        children = server.children()
        names = " ".join(_name(pid) for pid in children)
        for program in ("redis-server", "celery -A designer.celery:app worker",
                        "celery -A designer.celery:app beat", "gunicorn"):
            assert program in names
        server.process.kill()
        server.process.wait(10)
        killed = time.monotonic()
        assert _wait_gone(children, 10) == []
        print(f"{len(children)} children gone {time.monotonic() - killed:.2f} s after SIGKILL")
        assert _status(server.base + "/healthz", timeout=1) is None
    finally:
        server.close()
