"""Rate limits shared by every web process through Redis, and what happens when Redis is away.

Every test here counts in a real Redis (``redis_url``: REDIS_URL, else an embedded redis-server
started for the session), under a key prefix of its own. The first one starts two real web
processes (``manage.py runserver --noreload``) and sends 700 figure requests from one address
across both: the documented 300/min must hold in total, not per process (before the shared
cache, 601 of 700 got through).
"""
from __future__ import annotations

import http.client
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
FIGURE = json.dumps({"host": "h0", "details": {"hosts": {"h0": {"s": 0, "l": [[1.0, 1.0, 2.0]]}},
                                               "shapes": [{"nodes": [["a", "gpu", 0, 0],
                                                                     ["b", "nic", 1, 0]],
                                                           "links": [["l0", 0, 1, "pcie5"]]}]}})


def cache_location(url: str) -> str:
    """redis-py's spelling of the broker URL (the embedded server is ``redis+socket://``)."""
    return url.replace("redis+socket://", "unix://", 1)


def shared_cache_settings(location: str, prefix: str) -> dict:
    return {"default": {"BACKEND": "designer.ops.shared_cache.SharedRedisCache",
                        "LOCATION": location, "KEY_PREFIX": prefix}}


@pytest.fixture
def real_redis_cache(settings, redis_url):
    """The default cache on the real Redis, under a prefix no other test or run uses."""
    from django.core.cache import cache

    settings.CACHES = shared_cache_settings(cache_location(redis_url),
                                            f"fabricscope-test-{uuid.uuid4().hex[:10]}")
    yield cache
    cache.clear()


def raw_redis(redis_url: str):
    import redis

    return redis.Redis.from_url(cache_location(redis_url))


# --- two real web processes -----------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebProcess:
    """``manage.py runserver --noreload`` on a free port, in its own process group."""

    def __init__(self, env: dict, log: Path):
        self.port = _free_port()
        self.log = log
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{self.port}"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text(errors="replace")
            try:
                if request(self.port, "GET", "/healthz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        pytest.fail(f"web process on {self.port} not ready: {self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


# Django's CSRF check compares the header with the cookie (as the result page's script sends them).
CSRF = "fabricscopetestcsrf0123456789abc"


def request(port: int, method: str, path: str, body: str | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Cookie": f"csrftoken={CSRF}", "X-CSRFToken": CSRF}
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.fixture
def two_web_processes(redis_url, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRICSCOPE_API_RATE_")}
    env.update(DEBUG="1", REDIS_URL=redis_url, FABRICSCOPE_VAR_DIR=str(tmp_path / "var"),
               DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", PYTHONUNBUFFERED="1",
               FABRICSCOPE_CACHE_KEY_PREFIX=f"fabricscope-test-{uuid.uuid4().hex[:10]}",
               LOG_LEVEL="WARNING")
    # The database is made first, as `manage.py up` does: two processes opening a brand-new SQLite
    # file at once race to switch it to WAL, and the loser fails with "database is locked".
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True,
                   timeout=600)
    servers = [WebProcess(env, tmp_path / f"web{k}.log") for k in range(2)]
    try:
        for server in servers:
            server.wait_ready()
        yield servers
    finally:
        for server in servers:
            server.stop()


@pytest.mark.worker
@pytest.mark.slow
def test_700_figure_requests_across_two_processes_get_the_documented_300(two_web_processes):
    from designer.ops.throttling import DEFAULT_RATES

    assert DEFAULT_RATES["figures"] == "300/min"  # the documented rate, not a test override
    ports = [server.port for server in two_web_processes]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda k: (ports[k % 2], request(ports[k % 2], "POST",
                                                                  "/figures/host/", FIGURE)[0]),
                                range(700)))
    elapsed = time.monotonic() - started
    assert elapsed < 50, f"700 requests took {elapsed:.0f} s: the 60 s window no longer holds them"
    allowed = [port for port, status in results if status == 200]
    refused = [port for port, status in results if status == 429]
    assert len(allowed) + len(refused) == 700, {s for _, s in results}
    assert len(allowed) == 300, f"{len(allowed)} of 700 allowed across two processes"
    for port in ports:  # both processes served and refused: the count is theirs together
        assert allowed.count(port) > 0 and refused.count(port) > 0


# --- the cache itself, on real Redis ---------------------------------------------------------------

@pytest.mark.django_db
def test_counts_live_in_redis_so_another_process_sees_them(real_redis_cache, redis_url, settings):
    """Two cache objects (as two processes have) on one Redis: one rate, one build budget."""
    from django.core.cache.backends.locmem import LocMemCache  # noqa: F401  (not what is used)

    from designer.ops import limits
    from designer.ops.shared_cache import SharedRedisCache

    other = SharedRedisCache(cache_location(redis_url), {"KEY_PREFIX": real_redis_cache.key_prefix})
    waits = [cache.take_slot("ip-1", 3, 60) for cache in (real_redis_cache, other, other,
                                                            real_redis_cache)]
    assert waits[:3] == [0.0, 0.0, 0.0] and 0 < waits[3] <= 60

    class Someone:
        pk = 4242
    settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE = 1000
    limits._spend_build_budget(Someone(), 600)
    stored = [key for key in raw_redis(redis_url).scan_iter(
        match=f"{real_redis_cache.key_prefix}:*build-budget:4242:*")]
    assert len(stored) == 1 and int(raw_redis(redis_url).get(stored[0])) == 600


def test_clear_deletes_only_this_caches_keys_never_the_broker_queue(real_redis_cache, redis_url):
    client = raw_redis(redis_url)
    queue = f"fabricscope-test-queue-{uuid.uuid4().hex[:8]}"
    client.rpush(queue, "a job message")
    real_redis_cache.set("mine", 1)
    try:
        real_redis_cache.clear()
        assert real_redis_cache.get("mine") is None
        assert client.lrange(queue, 0, -1) == [b"a job message"]
    finally:
        client.delete(queue)


# --- sign-in ---------------------------------------------------------------------------------------

@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-password-1")


def sign_in(username: str, password: str, address: str):
    return Client(REMOTE_ADDR=address).post("/accounts/login/",
                                            {"username": username, "password": password})


@pytest.mark.django_db
def test_sign_in_is_limited_per_address(real_redis_cache, settings, alice):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"signin_ip": "5/min", "signin_account": "100/min"}
    codes = [sign_in(f"guess{k}", "wrong", "203.0.113.7").status_code for k in range(5)]
    assert codes == [200] * 5  # the form's "did not match"
    refused = sign_in("alice", "alice-password-1", "203.0.113.7")  # the right password, too late
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    text = refused.content.decode()
    assert "Too many sign-in attempts from your network address" in text
    assert "_auth_user_id" not in refused.wsgi_request.session  # not signed in
    # Another address is not affected, and signs in.
    assert sign_in("alice", "alice-password-1", "198.51.100.9").status_code == 302


@pytest.mark.django_db
def test_sign_in_is_limited_per_account_from_any_address(real_redis_cache, settings, alice):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"signin_ip": "100/min", "signin_account": "3/min"}
    codes = [sign_in(name, "wrong", f"203.0.113.{k}").status_code
             for k, name in enumerate(["alice", "ALICE", " Alice "])]
    assert codes == [200, 200, 200]
    refused = sign_in("alice", "alice-password-1", "192.0.2.200")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "Too many sign-in attempts for this account" in refused.content.decode()
    assert sign_in("bob", "wrong", "192.0.2.200").status_code == 200  # other accounts go on


@pytest.mark.django_db
def test_the_admin_sign_in_has_the_sign_in_limits(real_redis_cache, settings, alice):
    """/admin/login/ checked passwords without any rate (only the per-pair lockout)."""
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"signin_ip": "3/min", "signin_account": "100/min"}
    client = Client(REMOTE_ADDR="203.0.113.60")
    codes = [client.post("/admin/login/", {"username": f"g{k}", "password": "x"}).status_code
             for k in range(3)]
    assert codes == [200] * 3   # the admin form's "enter the correct username and password"
    refused = client.post("/admin/login/", {"username": "alice", "password": "alice-password-1"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "Too many sign-in attempts from your network address" in refused.content.decode()
    assert client.get("/admin/login/").status_code == 200   # the page itself still shows


@pytest.mark.django_db
def test_the_api_token_endpoint_has_the_sign_in_limits(real_redis_cache, settings, alice):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"signin_ip": "3/min", "signin_account": "100/min",
                                               "anon": "1000/min"}
    client = Client(REMOTE_ADDR="203.0.113.50")
    codes = [client.post("/api/v1/auth/token/", {"username": "alice", "password": "wrong"},
                         content_type="application/json").status_code for _ in range(4)]
    assert 429 not in codes[:3] and codes[3] == 429, codes
    limited = client.post("/api/v1/auth/token/", {"username": "alice", "password": "x"},
                          content_type="application/json")
    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    assert limited.json()["error"]["code"] == "throttled"


# --- page views ------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_page_views_are_limited_per_visitor_and_probes_never(real_redis_cache, settings):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"pages": "5/min"}
    client = Client(REMOTE_ADDR="203.0.113.80")
    codes = [client.get("/accounts/login/").status_code for _ in range(6)]
    assert codes == [200] * 5 + [429]
    refused = client.get("/")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "at most 5/min pages per visitor" in refused.content.decode()
    assert [client.get("/healthz").status_code for _ in range(10)] == [200] * 10
    assert Client(REMOTE_ADDR="203.0.113.81").get("/accounts/login/").status_code == 200


# --- Redis away ------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_redis_down_limits_count_per_process_and_pages_still_serve(settings, tmp_path, caplog):
    """No Redis at the cache's address: pages, sign-in and the build budget work; the limits
    still refuse (counted in this process); one WARNING says so."""
    from django.core.cache import cache

    from designer.ops import limits
    from designer.ops.errors import BuildRateExceeded

    settings.CACHES = shared_cache_settings(f"unix://{tmp_path}/no-redis.socket",
                                            f"fabricscope-test-{uuid.uuid4().hex[:10]}")
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"signin_ip": "2/min", "pages": "1000/min"}
    caplog.set_level(logging.INFO, logger="designer.ops.shared_cache")
    started = time.monotonic()
    assert Client().get("/accounts/login/").status_code == 200
    codes = [sign_in("someone", "wrong", "203.0.113.90").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert time.monotonic() - started < 10  # no hanging on the missing server

    class Someone:
        pk = 77
    settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE = 100
    limits._spend_build_budget(Someone(), 60)
    with pytest.raises(BuildRateExceeded):
        limits._spend_build_budget(Someone(), 60)
    warnings = [r for r in caplog.records
                if r.name == "designer.ops.shared_cache" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "count per web process" in warnings[0].getMessage()
    cache.clear()


def test_a_redis_that_returns_is_used_again(redis_url, monkeypatch, caplog):
    """After an outage the shared counts resume (the outage ends with an INFO line)."""
    from designer.ops import shared_cache

    cache = shared_cache.SharedRedisCache(cache_location(redis_url),
                                          {"KEY_PREFIX": f"fabricscope-test-{uuid.uuid4().hex[:10]}"})
    caplog.set_level(logging.INFO, logger="designer.ops.shared_cache")
    monkeypatch.setitem(shared_cache._down_until, cache._location, 0.0)  # it failed, retry now
    cache.set("k", 5)
    assert raw_redis(redis_url).get(cache.make_key("k")) is not None
    assert cache._location not in shared_cache._down_until
    assert any("reachable again" in r.getMessage() for r in caplog.records)
    cache.clear()
