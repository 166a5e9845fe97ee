"""Fixtures for the REST API tests: authenticated clients, a clean throttle cache, helpers.

Fixtures from tests/conftest.py (``user``, ``other_user``, ``small_topology``, ``scenario``,
``published``, ``celery_worker``, ``redis_url``) are reused as they are.
"""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

API = "/api/v1"


@pytest.fixture(autouse=True)
def _fresh_throttles():
    """Throttle counters live in the (process-wide) cache: never carry them between tests."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def anon():
    return APIClient()


@pytest.fixture
def client_for():
    """``client_for(user)``: an APIClient authenticated with a real token of ``user``."""
    from designer import services

    def make(user, keyword: str = "Bearer") -> APIClient:
        client = APIClient()
        token = services.api_token_rotate(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"{keyword} {token.key}")
        return client
    return make


@pytest.fixture
def api(client_for, user):
    """Alice's client (token auth)."""
    return client_for(user)


@pytest.fixture
def bob(client_for, other_user):
    """Bob's client: a stranger to alice's objects."""
    return client_for(other_user)


def assert_error(response, status: int, code: str | None = None) -> dict:
    """The response is the one error shape with this status (and code); returns the error."""
    assert response.status_code == status, (response.status_code, response.content[:2000])
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "details"}, error
    assert isinstance(error["message"], str) and error["message"]
    if code is not None:
        assert error["code"] == code, error
    return error


def paths_of(error: dict) -> set[str]:
    return {d["path"] for d in error["details"]}
