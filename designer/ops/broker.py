"""Direct, fast access to the Celery broker (Redis): ping, queue depth, "is it up?".

A plain redis-py client built from the Celery app's broker URL (so a test pointing the app at
another Redis is followed), with one-second timeouts: a probe never hangs a request. redis-py
reconnects by itself, so these keep working after Redis comes back.
"""
from __future__ import annotations

import threading
import time
from urllib.parse import unquote, urlparse

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from designer.ops.errors import BrokerUnavailable

__all__ = ["broker_url", "client", "ping", "queue_depth", "ensure_available"]

TIMEOUT_S = 1.0
_clients: dict[str, redis.Redis] = {}
_lock = threading.Lock()
# kombu's Redis transport keeps messages of priority p > 0 in "<queue>\x06\x16<p>" lists.
_PRIORITY_SUFFIXES = ["", *(f"\x06\x16{p}" for p in (1, 2, 3, 4, 5, 6, 7, 8, 9))]


def broker_url() -> str:
    from designer.celery import app

    return app.conf.broker_url


def queue_name() -> str:
    from designer.celery import app

    return app.conf.task_default_queue


def client(url: str | None = None) -> redis.Redis:
    """A cached client for ``url`` (default: the broker), ``redis://`` or ``redis+socket://``."""
    url = url or broker_url()
    with _lock:
        if url not in _clients:
            _clients[url] = _make_client(url)
        return _clients[url]


def _make_client(url: str) -> redis.Redis:
    # No retries: redis-py's default backoff would hold a refused request for seconds.
    options = {"socket_timeout": TIMEOUT_S, "socket_connect_timeout": TIMEOUT_S,
               "health_check_interval": 10, "retry": Retry(NoBackoff(), 0)}
    parsed = urlparse(url)
    if parsed.scheme in ("redis+socket", "socket", "unix"):
        query = dict(p.split("=", 1) for p in parsed.query.split("&") if "=" in p)
        return redis.Redis(unix_socket_path=unquote(parsed.path),
                           db=int(query.get("virtual_host") or query.get("db") or 0),
                           password=parsed.password, **options)
    return redis.Redis.from_url(url, **options)


def ping() -> float:
    """Round trip to the broker in seconds; raises ``redis.RedisError``/``OSError`` when down."""
    start = time.perf_counter()
    client().ping()
    return time.perf_counter() - start


def queue_depth(queue: str | None = None) -> int:
    """Messages waiting in the Celery queue (all priority lists), not counting reserved ones."""
    queue = queue or queue_name()
    pipe = client().pipeline(transaction=False)
    for suffix in _PRIORITY_SUFFIXES:
        pipe.llen(queue + suffix)
    return int(sum(pipe.execute()))


def ensure_available() -> None:
    """Raise :class:`BrokerUnavailable` unless the broker answers PING within a second."""
    try:
        ping()
    except (redis.RedisError, OSError) as exc:
        raise BrokerUnavailable(
            "the job queue is unreachable, so the job was not accepted (nothing was queued); "
            "try again in a minute", details={"reason": f"{type(exc).__name__}: {exc}",
                                                "retry_after_s": 30}) from exc
