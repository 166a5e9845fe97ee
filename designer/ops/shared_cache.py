"""The default cache, on the app's Redis, so every web process counts rate limits together.

Django's own ``RedisCache`` with three changes (docs/RELIABILITY.md, "Shared rate limits"):

- :meth:`SharedRedisCache.take_slot`: a sliding-window rate limit in one atomic Lua script
  (a sorted set of request times, Redis's clock). DRF's throttles read a history list, append
  and write it back: two processes racing both write, one request is forgotten, and more than
  the rate gets through.
- :meth:`SharedRedisCache.clear` deletes only this cache's keys (its ``KEY_PREFIX``): Django's
  would ``FLUSHDB``, and the Celery queue lives in the same Redis database.
- Redis unreachable: each operation falls back to a per-process memory cache for
  ``DOWN_RETRY_S`` seconds, then Redis is tried again. Limits then count per web process (looser
  by the number of processes, never absent) and the outage is logged once, at WARNING, with its
  end at INFO. Neither fail-closed (every page would answer 429/503 while Redis is down, against
  "reads never need Redis") nor fail-open (no brake on figure CPU or sign-in guessing during an
  outage). Connection and read timeouts are short (``TIMEOUT_S``) so a request never hangs.
"""
from __future__ import annotations

import logging
import re
import threading
import time
import uuid

import redis
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.backoff import NoBackoff
from redis.retry import Retry

__all__ = ["SharedRedisCache", "take_local", "DOWN_RETRY_S", "TIMEOUT_S"]

logger = logging.getLogger(__name__)

DOWN_RETRY_S = 5.0   # after a failure, this process uses its memory cache this long before retrying
TIMEOUT_S = 0.5      # connect and read timeout of one cache operation
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError, OSError)
# location -> monotonic time until which that Redis counts as down (shared by every thread).
_down_until: dict[str, float] = {}
_state_lock = threading.Lock()
_local_lock = threading.Lock()

# KEYS[1]: sorted set of allowed request times (µs). ARGV: window µs, limit, unique member.
# Returns -1 when the request is allowed (and recorded), else µs until the oldest one leaves.
_TAKE_SLOT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(window / 1000))
  return -1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) + window - now)
"""


def take_local(cache, key: str, limit: int, window_s: float) -> float:
    """:meth:`SharedRedisCache.take_slot` on any Django cache, exact within one process only
    (a lock orders this process's threads; other processes keep their own counts)."""
    with _local_lock:
        now = time.time()
        times = [t for t in cache.get(key, []) if t > now - window_s]
        if len(times) >= limit:
            return max(min(times) + window_s - now, 0.001)
        times.append(now)
        cache.set(key, times, int(window_s) + 1)
        return 0.0


class SharedRedisCache(RedisCache):
    """``django.core.cache.backends.redis.RedisCache`` + :meth:`take_slot`, a prefix-only
    :meth:`clear` and a per-process fallback while Redis is unreachable."""

    def __init__(self, server, params):
        options = {"socket_connect_timeout": TIMEOUT_S, "socket_timeout": TIMEOUT_S,
                   "retry": Retry(NoBackoff(), 0), "health_check_interval": 10,
                   **params.get("OPTIONS", {})}
        super().__init__(server, {**params, "OPTIONS": options})
        self._location = str(server)
        # One memory cache per location and process (LocMemCache shares storage by name).
        self._local = LocMemCache(f"fabricscope-fallback:{self._location}",
                                  {k: v for k, v in params.items() if k != "OPTIONS"})
        self._take_script = None

    # ------------------------------------------------------------------ outage handling
    def _redis_or_local(self, remote, local):
        """``remote()`` on Redis; ``local()`` while Redis is (or just turned out to be) down."""
        if time.monotonic() < _down_until.get(self._location, 0.0):
            return local()
        try:
            result = remote()
        except _UNREACHABLE as exc:
            self._mark_down(exc)
            return local()
        if self._location in _down_until:
            self._mark_up()
        return result

    def _mark_down(self, exc: Exception) -> None:
        with _state_lock:
            first = self._location not in _down_until
            _down_until[self._location] = time.monotonic() + DOWN_RETRY_S
        if first:
            logger.warning(
                "shared cache (Redis at %s) unreachable (%s: %s); rate limits and the build budget "
                "now count per web process (looser by the number of processes) until it answers "
                "again; retrying every %.0f s", self._location, type(exc).__name__, exc,
                DOWN_RETRY_S)

    def _mark_up(self) -> None:
        with _state_lock:
            was_down = _down_until.pop(self._location, None) is not None
        if was_down:
            logger.info("shared cache (Redis at %s) reachable again: rate limits are shared "
                        "across web processes again", self._location)

    def _either(self, name: str, *args, **kwargs):
        return self._redis_or_local(lambda: getattr(super(SharedRedisCache, self), name)(*args, **kwargs),
                                    lambda: getattr(self._local, name)(*args, **kwargs))

    # ------------------------------------------------------------------ Django's cache API
    def add(self, *args, **kwargs):
        return self._either("add", *args, **kwargs)

    def get(self, *args, **kwargs):
        return self._either("get", *args, **kwargs)

    def set(self, *args, **kwargs):
        return self._either("set", *args, **kwargs)

    def touch(self, *args, **kwargs):
        return self._either("touch", *args, **kwargs)

    def delete(self, *args, **kwargs):
        return self._either("delete", *args, **kwargs)

    def get_many(self, *args, **kwargs):
        return self._either("get_many", *args, **kwargs)

    def has_key(self, *args, **kwargs):
        return self._either("has_key", *args, **kwargs)

    def set_many(self, *args, **kwargs):
        return self._either("set_many", *args, **kwargs)

    def delete_many(self, *args, **kwargs):
        return self._either("delete_many", *args, **kwargs)

    def incr(self, key, delta=1, version=None):
        def local():
            # A key that `add` put in Redis before the outage is not in this process's memory:
            # a per-process count starts from zero rather than failing the request.
            self._local.add(key, 0, version=version)
            return self._local.incr(key, delta, version=version)
        return self._redis_or_local(lambda: super(SharedRedisCache, self).incr(key, delta, version),
                                    local)

    def clear(self) -> bool:
        """Delete this cache's keys only (SCAN for the prefix), never the broker's."""
        self._local.clear()
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self.key_prefix) + ":*"

        def remote() -> bool:
            client = self._cache.get_client(None, write=True)
            keys = list(client.scan_iter(match=pattern, count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start:start + 1000])
            return True
        return self._redis_or_local(remote, lambda: True)

    # ------------------------------------------------------------------ rate limits
    def take_slot(self, key: str, limit: int, window_s: float) -> float:
        """Record one request under ``key`` unless ``limit`` were already recorded in the last
        ``window_s`` seconds: 0.0 when recorded (allowed), else seconds until a slot frees."""
        full_key = self.make_and_validate_key(key)

        def remote() -> float:
            client = self._cache.get_client(full_key, write=True)
            if self._take_script is None:
                self._take_script = client.register_script(_TAKE_SLOT)
            wait_us = self._take_script(keys=[full_key], client=client,
                                        args=[int(window_s * 1_000_000), int(limit), uuid.uuid4().hex])
            return 0.0 if int(wait_us) < 0 else int(wait_us) / 1_000_000
        return self._redis_or_local(remote, lambda: take_local(self._local, key, limit, window_s))
