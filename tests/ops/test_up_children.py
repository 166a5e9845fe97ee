"""A real ``manage.py up`` supervising each child on its own (docs/RELIABILITY.md, "``manage.py
up`` as a supervisor").

- The Celery worker, beat or the gunicorn master SIGKILLed: that child alone comes back (the
  others keep their pids) and the site answers within 10 s; a job runs on the new worker.
- Two ``up``s on one machine: each gunicorn has its own control socket; stopping one leaves the
  other's in place.
- DEBUG is off out of the box, and pages and static files are still served.
- A child that keeps dying stops everything, naming it, its exit status and its last log lines.

Started as tests/ops/test_supervisor.py starts ``up`` (own port, var directory, SQLite, Redis).
"""
from __future__ import annotations

import os
import shutil
import signal
import time

import pytest

from tests.ops.test_supervisor import Up, _descendants, _name, _status

pytestmark = [pytest.mark.worker, pytest.mark.slow]

RUN_A_JOB = """
import time, uuid
from django.contrib.auth import get_user_model
from designer import services
user = get_user_model().objects.create_user(f"runner-{uuid.uuid4().hex[:8]}")
topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2,
                                   options={})
scenario = services.scenario_create(topology=topology, user=user, name="ring", workload=[
    {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
     "bytes": 1e9}])
job = services.job_submit_simulate(scenario=scenario, user=user)
deadline = time.monotonic() + 90
while time.monotonic() < deadline:
    job.refresh_from_db()
    if job.is_terminal:
        break
    time.sleep(0.2)
print("job-state", job.state)
"""
# The third death of one child within the window gives up (the last test).
MAX_FAILURES = 3


def _top(up: Up) -> dict[str, int]:
    """{child: pid} of `up`'s direct children."""
    programs = {"redis-server": "redis", "designer.celery:app worker": "worker",
                "designer.celery:app beat": "beat", "gunicorn": "web"}
    found = {}
    for pid in _descendants(up.process.pid):
        if _parent(pid) == up.process.pid:
            name = _name(pid)
            found.update({child: pid for program, child in programs.items() if program in name})
    return found


def _parent(pid: int) -> int | None:
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return int(text[text.rindex(")") + 2:].split()[1])


@pytest.fixture(scope="module")
def up():
    server = Up(FABRICSCOPE_UP_MAX_FAILURES=str(MAX_FAILURES),
                FABRICSCOPE_UP_RESTART_BACKOFF_S="0.2",
                STATIC_ROOT=f"/tmp/fsup-static-{os.getpid()}")   # not there yet: up makes it
    try:
        yield server.wait_ready()
    finally:
        server.close()
        shutil.rmtree(server.env["STATIC_ROOT"], ignore_errors=True)


def test_debug_is_off_and_pages_and_static_files_are_served(up):
    assert "debug     off" in up.text()
    assert _status(up.base + "/accounts/login/") == 200
    assert _status(up.base + "/static/js/app.js") == 200
    assert _status(up.base + "/static/admin/css/base.css") == 200  # an app's static, too
    assert _status(up.base + "/no-such-page/") == 404
    # WhiteNoise warned "No directory at: .../staticfiles/" at every web start without one.
    web_log = (up.var / "var" / "run" / "web.log").read_text(errors="replace")
    assert "Booting worker" in web_log and "No directory at" not in web_log


@pytest.mark.parametrize("child", ["worker", "beat", "web"])
def test_a_killed_child_alone_comes_back_and_the_site_answers_within_10_s(up, child):
    before = _top(up)
    assert set(before) == {"redis", "worker", "beat", "web"}, before
    os.kill(before[child], signal.SIGKILL)
    killed = time.monotonic()
    while True:
        now = _top(up)
        if (now.get(child) not in (None, before[child])
                and _status(up.base + "/readyz", timeout=2) == 200):
            break
        assert up.process.poll() is None, up.text()[-3000:]
        assert time.monotonic() - killed < 10, up.text()[-3000:]
        time.sleep(0.2)
    print(f"{child}: back and /readyz 200 after {time.monotonic() - killed:.2f} s")
    assert {k: v for k, v in now.items() if k != child} == \
        {k: v for k, v in before.items() if k != child}
    assert f"{child} exited with status -9; restarting it" in up.text()
    if child == "worker":
        assert "job-state succeeded" in up.manage("shell", "-c", RUN_A_JOB)


def test_two_ups_do_not_share_a_control_socket(up):
    mine = up.var / "var" / "run" / "gunicorn.ctl"
    assert mine.exists()
    other = Up()
    try:
        other.wait_ready()
        theirs = other.var / "var" / "run" / "gunicorn.ctl"
        assert theirs.exists() and theirs != mine
        other.process.send_signal(signal.SIGTERM)
        assert other.process.wait(60) == 0
        assert mine.exists()  # stopping the other `up` left ours alone
    finally:
        other.close()
    assert _status(up.base + "/readyz") == 200


def test_a_child_that_keeps_dying_stops_everything_with_its_status_and_log(up):
    """Beat died once above; two more deaths inside the window are one too many."""
    children = _descendants(up.process.pid)
    for _ in range(MAX_FAILURES - 1):
        beat = _top(up).get("beat")
        deadline = time.monotonic() + 10
        while beat is None:  # in its back-off
            assert time.monotonic() < deadline, up.text()[-3000:]
            time.sleep(0.1)
            beat = _top(up).get("beat")
        os.kill(beat, signal.SIGKILL)
        time.sleep(0.5)
    assert up.process.wait(60) == 1, up.text()[-3000:]  # failed, and says so
    text = up.text()
    assert (f"beat died {MAX_FAILURES} times within 60 s (last exit status -9); "
            "stopping everything") in text
    assert "beat.log:\n  | " in text and "stopped." in text
    for pid in children:
        assert not os.path.exists(f"/proc/{pid}/cmdline") or \
            open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z"
