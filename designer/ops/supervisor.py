"""Supervising ``manage.py up``'s children one by one (docs/RELIABILITY.md, "``manage.py up`` as
a supervisor").

A :class:`Child` is one long-lived process (web master, Celery worker, beat, Redis): how to start
it, how to stop it, and the file its output goes to. The :class:`Supervisor` checks them every
round: a child that died is started again on its own, after a back-off that doubles with each
death inside a window (:class:`RestartPolicy`); the others keep running. A child that dies
``max_failures`` times inside the window is broken (bad config, port taken, disk full), and
looping would only hide it: :meth:`Supervisor.check` then returns a message naming the child, its
last exit status and its last log lines, and the caller stops everything.

Each child writes to a log file of its own (``<var>/run/<name>.log``); the supervisor copies new
output to the terminal every round (:meth:`Supervisor.echo`), which needs no thread in the
parent (children are started with a ``preexec_fn``, which must not run in a process with
threads) and never blocks a child on a full pipe.

This module imports neither Django nor Celery.
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RestartPolicy", "Child", "Supervisor"]

# A child's log is emptied once it grows past this (after its new output reached the terminal),
# so weeks of `up` do not fill the disk.
LOG_MAX_BYTES = 10 * 1024 * 1024
LAST_LINES = 20


@dataclass(frozen=True)
class RestartPolicy:
    """When to start a dead child again, and when to give up on it.

    The k-th death inside ``window_s`` seconds is followed by a restart after
    ``backoff_s * 2**(k-1)`` seconds, at most ``backoff_max_s``; the ``max_failures``-th gives up.
    """

    backoff_s: float = 0.5
    backoff_max_s: float = 30.0
    max_failures: int = 5
    window_s: float = 60.0

    def delay(self, failures: int) -> float:
        return min(self.backoff_max_s, self.backoff_s * 2 ** max(0, failures - 1))


class Child:
    """One supervised process.

    Parameters
    ----------
    name : str
        Shown in every message (``web``, ``worker``, ``beat``, ``redis``).
    launch : callable
        Starts the process and returns its ``Popen``; may raise (counted as a death).
    log : Path
        Where the process's output goes (``launch`` opens it) and the last lines come from.
    stop : callable, optional
        Stops the process; default SIGTERM to its process group.
    echo : bool
        Copy new log output to the terminal (Redis keeps its own log quiet).
    """

    def __init__(self, name: str, launch: Callable[[], subprocess.Popen], log: Path, *,
                 stop: Callable[[], None] | None = None, echo: bool = True):
        self.name, self.launch, self.log, self.echoes = name, launch, log, echo
        self._stop = stop
        self.process: subprocess.Popen | None = None
        self.status: int | str | None = None   # last exit status (or why it could not start)
        self.deaths: deque[float] = deque()      # monotonic times of deaths inside the window
        self.restart_due: float | None = None    # when a dead child is to be started again
        self.offset = 0                          # bytes of the log already echoed

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        """False once the process exited; the exit is seen without reaping it (``WNOWAIT``), so
        its pid, which is its process group's id, cannot be reused before :meth:`clear_group`."""
        if self.process is None or self.process.returncode is not None:
            return False
        try:
            return os.waitid(os.P_PID, self.process.pid,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
        except ChildProcessError:  # already reaped elsewhere
            return self.process.poll() is None

    def start(self) -> None:
        self.restart_due = None
        self.process = self.launch()

    def clear_group(self) -> None:
        """SIGKILL what the dead child left in its process group (web workers, pool processes),
        so its successor can bind the same port and no orphan runs a job twice."""
        if self.process is None:
            return
        if self.process.returncode is None:  # not reaped yet: its pid still names its group
            _signal_group(self.process.pid, signal.SIGKILL)
        self.status = self.process.wait()  # reaped only now, after the group is gone

    def terminate(self) -> None:
        if self._stop is not None:
            self._stop()
        elif self.running():
            _signal_group(self.process.pid, signal.SIGTERM)

    def last_lines(self, count: int = LAST_LINES) -> list[str]:
        try:
            with self.log.open("rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - 64 * count * 4))
                text = handle.read().decode(errors="replace")
        except OSError:
            return []
        return text.splitlines()[-count:]


class Supervisor:
    """Start, watch, restart and stop a list of children (started in order, stopped in reverse).

    ``last`` names the child stopped after all the others (Redis: web and worker keep it until
    they are gone). ``say``/``warn`` write a line to the terminal's stdout/stderr, ``echo``
    a child's output as it is.
    """

    def __init__(self, policy: RestartPolicy, say: Callable[[str], None],
                 warn: Callable[[str], None], echo: Callable[[str], None], *, last: str = "",
                 clock: Callable[[], float] = time.monotonic):
        self.policy, self.say, self.warn, self.write = policy, say, warn, echo
        self.children: list[Child] = []
        self.last, self.clock = last, clock

    def add(self, child: Child, *, running: subprocess.Popen | None = None) -> Child:
        """Start ``child`` (or adopt its ``running`` process) and watch it from now on; a failed
        first start raises (nothing to restart yet: the caller's setup is wrong)."""
        if running is None:
            child.start()
        else:
            child.process = running
        self.children.append(child)
        return child

    def check(self) -> str | None:
        """One round: restart what died and is due; a give-up message when a child keeps dying."""
        now = self.clock()
        for child in self.children:
            if child.restart_due is None and not child.running():
                if (message := self._died(child, now)) is not None:
                    return message
            if child.restart_due is not None and now >= child.restart_due:
                self._restart(child, now)
        return None

    def _died(self, child: Child, now: float) -> str | None:
        child.clear_group()
        while child.deaths and now - child.deaths[0] > self.policy.window_s:
            child.deaths.popleft()
        child.deaths.append(now)
        if len(child.deaths) >= self.policy.max_failures:
            return self._give_up(child)
        delay = self.policy.delay(len(child.deaths))
        child.restart_due = now + delay
        self.warn(f"{child.name} exited with status {child.status}; restarting it in "
                  f"{delay:g} s (death {len(child.deaths)} of {self.policy.max_failures} "
                  f"allowed within {self.policy.window_s:g} s)")
        return None

    def _restart(self, child: Child, now: float) -> None:
        try:
            child.start()
        except Exception as exc:  # counted as a death: the next round backs off or gives up
            child.status, child.process = f"failed to start: {exc}", None
            child.restart_due = None
            self.warn(f"{child.name} could not be restarted: {exc}")
            return
        self.say(f"{child.name}: restarted (pid {child.pid})")

    def _give_up(self, child: Child) -> str:
        lines = "\n".join(f"  | {line}" for line in child.last_lines()) or "  (no output)"
        return (f"{child.name} died {len(child.deaths)} times within {self.policy.window_s:g} s "
                f"(last exit status {child.status}); stopping everything. It is not restarted "
                f"again because something is broken, not unlucky. Last lines of {child.log}:\n"
                f"{lines}")

    def echo(self) -> None:
        """Copy the children's new log output to the terminal."""
        for child in self.children:
            if child.echoes:
                _echo_new_output(child, self.write)

    def stop_all(self, timeout: float) -> None:
        """SIGTERM every child (``last`` after the others), SIGKILL what outlives ``timeout``."""
        first = [c for c in reversed(self.children) if c.name != self.last]
        for group in (first, [c for c in self.children if c.name == self.last]):
            for child in group:
                child.terminate()
            self._wait_or_kill(group, timeout)
        self.echo()

    def _wait_or_kill(self, children: list[Child], timeout: float) -> None:
        deadline = self.clock() + timeout
        for child in children:
            if child.process is None:
                continue
            while child.running() and self.clock() < deadline:
                self.echo()
                time.sleep(0.1)
            if child.running():
                self.warn(f"{child.name} did not stop in {timeout:g} s; killing it")
            child.clear_group()


def _echo_new_output(child: Child, write: Callable[[str], None]) -> None:
    try:
        size = child.log.stat().st_size
        if size < child.offset:  # emptied meanwhile
            child.offset = 0
        if size == child.offset:
            return
        with child.log.open("rb") as handle:
            handle.seek(child.offset)
            chunk = handle.read(size - child.offset)
        child.offset += len(chunk)
        write(chunk.decode(errors="replace"))
        if child.offset > LOG_MAX_BYTES:
            os.truncate(child.log, 0)
            child.offset = 0
    except OSError:
        pass  # a log that cannot be read costs the terminal some lines, never the child


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
