"""Authentication: Bearer and Token keywords, sessions with CSRF, anonymous 401s, tokens."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.api.conftest import API, assert_error

pytestmark = pytest.mark.django_db

# Every endpoint (method, path); {t} topology, {s} scenario, {j} job.
ENDPOINTS = [
    ("get", "topologies/"), ("post", "topologies/"), ("get", "topologies/{t}/"),
    ("patch", "topologies/{t}/"), ("delete", "topologies/{t}/"),
    ("get", "topologies/{t}/revisions/"), ("post", "topologies/{t}/revisions/"),
    ("get", "topologies/{t}/revisions/1/"), ("get", "topologies/{t}/export/"),
    ("post", "topologies/import/"), ("post", "topologies/import-preview/"),
    ("post", "topologies/build-preview/"), ("post", "topologies/build-job/"),
    ("get", "scenarios/"), ("post", "scenarios/"), ("get", "scenarios/{s}/"),
    ("patch", "scenarios/{s}/"), ("delete", "scenarios/{s}/"),
    ("get", "jobs/"), ("post", "jobs/"), ("get", "jobs/{j}/"), ("post", "jobs/{j}/cancel/"),
    ("get", "jobs/{j}/result/"), ("get", "jobs/{j}/figures/"),
    ("get", "templates/"), ("get", "templates/dgx-h100/"), ("get", "templates/dgx-h100/host/"),
    ("get", "catalog/"), ("post", "validate/"),
    ("get", "auth/token/"), ("post", "auth/token/"), ("delete", "auth/token/"),
]


@pytest.fixture
def ids(scenario, published, user):
    from designer import services

    job = services.job_submit_simulate(scenario=scenario, user=user)
    return {"t": scenario.topology_id, "s": scenario.pk, "j": job.pk}


@pytest.mark.parametrize("method, path", ENDPOINTS)
def test_anonymous_is_401_everywhere(anon, ids, method, path):
    response = getattr(anon, method)(f"{API}/{path.format(**ids)}", {})
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_bad_tokens_are_401(anon, user):
    for header in ("Bearer nope", "Token nope", "Bearer", "Bearer a b"):
        anon.credentials(HTTP_AUTHORIZATION=header)
        assert_error(anon.get(f"{API}/topologies/"), 401, "authentication_failed")


@pytest.mark.parametrize("keyword", ["Bearer", "Token", "bearer"])
def test_both_token_keywords(client_for, user, small_topology, keyword):
    response = client_for(user, keyword).get(f"{API}/topologies/")
    assert response.status_code == 200 and response.json()["count"] == 1


def test_session_auth_enforces_csrf(user):
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="alice", password="alice-password-1")
    assert client.get(f"{API}/topologies/").status_code == 200
    error = assert_error(client.post(f"{API}/validate/", {"document": {}}), 403,
                         "permission_denied")
    assert "CSRF" in error["message"]
    client.get("/accounts/login/")  # sets the csrftoken cookie
    token = client.cookies["csrftoken"].value
    response = client.post(f"{API}/validate/", {"document": {}}, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200


def test_token_endpoints_for_the_current_user(user):
    from designer.models import ApiToken

    client = APIClient()
    client.force_login(user)
    url = f"{API}/auth/token/"
    assert client.get(url).json() == []
    first = client.post(url)
    assert first.status_code == 201
    first = first.json()["token"]
    assert [t["prefix"] for t in client.get(url).json()] == [first[:12]]  # never the key
    second = client.post(url)
    assert second.status_code == 201 and second.json()["token"] != first
    assert ApiToken.objects.filter(user=user).count() == 1  # same name: the old one is revoked
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {second.json()['token']}")
    assert bearer.get(f"{API}/topologies/").status_code == 200
    assert client.delete(url).status_code == 204
    assert_error(bearer.get(f"{API}/topologies/"), 401, "authentication_failed")


def test_drf_create_token_command(user):
    out = io.StringIO()
    call_command("drf_create_token", "alice", stdout=out)
    key = out.getvalue().split()[2]
    assert key.startswith("fsk_")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(f"{API}/catalog/").status_code == 200
