"""``designer.ops.supervisor`` with real (small) processes, and ``up``'s command-line assembly.

- A SIGKILLed child is restarted on its own, after the back-off; its sibling keeps its pid.
- What the dead child left in its process group is killed before the restart.
- A child that keeps dying: the give-up message names it, its last exit status and log lines.
- The back-off doubles and is capped; a stop reaches every child.
- gunicorn: a control socket of this instance's own, request timeout and recycling from the
  environment; a bad value is refused with the variable's name.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from designer.management.commands.up import gunicorn_command, read_limits
from designer.ops.supervisor import Child, RestartPolicy, Supervisor


def _launcher(script: str, log: Path):
    def launch() -> subprocess.Popen:
        with log.open("ab") as out:
            return subprocess.Popen([sys.executable, "-c", script], stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
    return launch


SLEEPER = "import time\nprint('up', flush=True)\ntime.sleep(60)"
# A parent that leaves a grandchild in its process group (as gunicorn leaves its workers).
FAMILY = ("import subprocess, sys, time\n"
          "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
          "print('grandchild', g.pid, flush=True)\ntime.sleep(60)")


class Lines:
    def __init__(self):
        self.said: list[str] = []

    def __call__(self, line: str) -> None:
        self.said.append(line)


def _supervisor(policy: RestartPolicy, lines: Lines) -> Supervisor:
    return Supervisor(policy, lines, lines, lambda text: None, last="b")


def _until(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_killed_child_alone_is_restarted_after_the_back_off(tmp_path):
    lines = Lines()
    supervisor = _supervisor(RestartPolicy(backoff_s=0.3, max_failures=3), lines)
    a = supervisor.add(Child("a", _launcher(SLEEPER, tmp_path / "a.log"), tmp_path / "a.log"))
    b = supervisor.add(Child("b", _launcher(SLEEPER, tmp_path / "b.log"), tmp_path / "b.log"))
    try:
        old_a, old_b = a.pid, b.pid
        os.kill(old_a, signal.SIGKILL)
        killed = time.monotonic()
        _until(lambda: supervisor.check() is None and a.running() and a.pid != old_a)
        assert time.monotonic() - killed >= 0.3  # waited for the back-off
        assert b.pid == old_b and b.running()
        assert a.status == -signal.SIGKILL
        assert any("a exited with status -9; restarting it in 0.3 s" in s for s in lines.said)
        assert any(s.startswith("a: restarted (pid ") for s in lines.said)
    finally:
        supervisor.stop_all(5)
    assert not a.running() and not b.running()


def test_what_a_dead_child_left_in_its_group_is_killed_before_the_restart(tmp_path):
    log = tmp_path / "family.log"
    supervisor = _supervisor(RestartPolicy(backoff_s=0.0), Lines())
    family = supervisor.add(Child("family", _launcher(FAMILY, log), log))
    try:
        grandchild = int(_until(lambda: "grandchild" in log.read_text() and log.read_text())
                         .split()[1])
        os.kill(family.pid, signal.SIGKILL)
        _until(lambda: supervisor.check() is None and not _alive(grandchild), 5)
    finally:
        supervisor.stop_all(5)


def test_a_child_that_keeps_dying_gives_up_naming_it_its_status_and_log(tmp_path):
    log = tmp_path / "crash.log"
    script = "import sys\nprint('config error: port 8000 is taken', flush=True)\nsys.exit(3)"
    supervisor = _supervisor(RestartPolicy(backoff_s=0.05, max_failures=3, window_s=30),
                             Lines())
    supervisor.add(Child("web", _launcher(script, log), log))
    message = _until(supervisor.check, 10)
    supervisor.stop_all(5)
    assert message.startswith("web died 3 times within 30 s (last exit status 3); "
                              "stopping everything")
    assert "config error: port 8000 is taken" in message and str(log) in message


def test_a_child_that_cannot_even_start_counts_as_dying(tmp_path):
    def broken() -> subprocess.Popen:
        raise RuntimeError("redis-server exited with 1; see redis.log")
    lines = Lines()
    supervisor = _supervisor(RestartPolicy(backoff_s=0.01, max_failures=2), lines)
    child = Child("redis", broken, tmp_path / "redis.log")
    supervisor.add(child, running=subprocess.Popen([sys.executable, "-c", "pass"]))
    message = _until(supervisor.check, 10)
    assert message.startswith("redis died 2 times")
    assert "failed to start: redis-server exited with 1" in message
    assert any("redis could not be restarted" in s for s in lines.said)


def test_back_off_doubles_and_is_capped():
    policy = RestartPolicy(backoff_s=0.5, backoff_max_s=3.0)
    assert [policy.delay(k) for k in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_deaths_outside_the_window_are_forgotten(tmp_path):
    now = [0.0]
    supervisor = Supervisor(RestartPolicy(backoff_s=0.0, max_failures=2, window_s=10), Lines(),
                            Lines(), lambda text: None, clock=lambda: now[0])
    log = tmp_path / "a.log"
    child = supervisor.add(Child("a", _launcher(SLEEPER, log), log))
    try:
        for _ in range(3):  # three deaths, 11 s apart: never two inside one window
            os.kill(child.pid, signal.SIGKILL)
            _until(lambda: not child.running())
            assert supervisor.check() is None
            assert child.running()
            now[0] += 11
    finally:
        supervisor.stop_all(5)


def test_gunicorn_gets_its_own_control_socket_timeout_and_recycling(tmp_path):
    limits = read_limits({"FABRICSCOPE_WEB_TIMEOUT_S": "45", "FABRICSCOPE_WEB_MAX_REQUESTS": "500",
                          "FABRICSCOPE_WEB_MAX_REQUESTS_JITTER": "50"})
    command = gunicorn_command("127.0.0.1:8000", 2, 4, limits, tmp_path / "run")
    options = dict(zip(command, command[1:]))
    assert options["--control-socket"] == str(tmp_path / "run" / "gunicorn.ctl")
    assert options["--timeout"] == "45" and options["--graceful-timeout"] == "10"
    assert options["--max-requests"] == "500" and options["--max-requests-jitter"] == "50"
    deep = tmp_path / ("d" * 120) / "run"
    assert "--no-control-socket" in gunicorn_command("127.0.0.1:8000", 1, 1, limits, deep)


@pytest.mark.parametrize("variable, value", [
    ("FABRICSCOPE_WEB_TIMEOUT_S", "ten"), ("FABRICSCOPE_WEB_MAX_REQUESTS", "-1"),
    ("FABRICSCOPE_UP_MAX_FAILURES", "0"), ("FABRICSCOPE_UP_RESTART_BACKOFF_S", "1e"),
])
def test_a_bad_limit_is_refused_naming_its_variable(variable, value):
    with pytest.raises(CommandError) as refused:
        read_limits({variable: value})
    assert str(refused.value).startswith(f"{variable}={value!r} is not valid: expected")
