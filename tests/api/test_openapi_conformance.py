"""What the OpenAPI drift was (docs/RELIABILITY.md, "OpenAPI conformance"), pinned one answer at a time: each test sends the
request, checks the answer is the one error shape (or the documented body), and checks the
schema documents that status for that operation. The bounded schemathesis run
(tests/api/test_live.py) covers the whole API; these fail fast and say which contract broke."""
from __future__ import annotations

import pytest
import redis
import yaml
from django.core.management import call_command

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema(tmp_path_factory, django_db_blocker) -> dict:
    out = tmp_path_factory.mktemp("schema") / "schema.yaml"
    with django_db_blocker.unblock():
        call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    return yaml.safe_load(out.read_text())


def _documented(schema: dict, method: str, path: str) -> dict:
    return schema["paths"][f"{API}{path}"][method]["responses"]


def test_templates_list_is_paginated_as_documented(api, schema):
    """The built-in templates, 2 per page: the last page holds the rest, the next one does not exist."""
    from designer.engine.model.templates import TEMPLATES

    count = len(TEMPLATES)
    last = (count + 1) // 2
    body = api.get(f"{API}/templates/?page_size=2&page={last}").json()
    assert body["count"] == count and len(body["results"]) == count - 2 * (last - 1) and body["next"] is None
    ok = _documented(schema, "get", "/templates/")["200"]["content"]["application/json"]
    component = ok["schema"]["$ref"].rsplit("/", 1)[1]
    props = schema["components"]["schemas"][component]["properties"]
    assert {"count", "next", "previous", "results"} <= set(props)
    error = assert_error(api.get(f"{API}/templates/?page_size=2&page={last + 1}"), 404, "not_found")
    assert error["details"] == {"last_page": last}, error


@pytest.mark.parametrize("query, path", [("page=0", "page"), ("page=-1", "page"),
                                         ("page=abc", "page"), ("page=%C2%B2", "page"),
                                         ("page_size=0", "page_size")])
def test_malformed_page_numbers_are_located_400s(api, schema, small_topology, query, path):
    for url in ("/topologies/", "/templates/", "/jobs/", "/scenarios/",
                f"/topologies/{small_topology.pk}/revisions/"):
        error = assert_error(api.get(f"{API}{url}?{query}"), 400, "invalid")
        assert paths_of(error) == {path}, (url, error)
        assert {"400", "404"} <= set(_documented(schema, "get", url.replace(
            str(small_topology.pk), "{topology_pk}"))), url


def test_empty_page_is_the_first_page_and_big_page_sizes_are_clamped(api, small_topology):
    body = api.get(f"{API}/topologies/?page=&page_size=100000").json()
    assert body["count"] == 1 and body["results"][0]["id"] == small_topology.pk


def test_a_bad_share_token_is_a_401_even_with_a_valid_bearer_token(api, schema, small_topology):
    """A bad credential is refused, not swapped for the other one: else a check that a revoked
    link is dead would see the owner's view and conclude the link still works."""
    url = f"{API}/topologies/{small_topology.pk}/"
    assert api.get(url).status_code == 200
    for header in ("not-a-token", "", "   "):
        response = api.get(url, HTTP_X_SHARE_TOKEN=header)
        assert_error(response, 401, "invalid_share_link")
        assert response["WWW-Authenticate"].startswith("Bearer")
    assert_error(api.get(f"{url}?share=nope"), 401, "invalid_share_link")
    examples = _documented(schema, "get", "/topologies/{id}/")["401"]["content"][
        "application/json"]["examples"]
    assert {e["value"]["error"]["code"] for e in examples.values()} == {
        "not_authenticated", "invalid_share_link", "token_expired"}


def test_share_links_are_documented_only_where_they_are_accepted(schema):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            schemes = {name for req in operation.get("security", []) for name in req}
            reader = path.startswith((f"{API}/topologies/", f"{API}/scenarios/", f"{API}/jobs/"))
            readable = method == "get" and reader and not path.endswith(
                ("/shares/", "/links/", "/audit/"))
            assert ("shareLink" in schemes) == readable, (method, path)


def test_broker_down_is_a_documented_503_with_retry_after(api, schema, scenario, settings,
                                                          monkeypatch):
    from designer.models import SimulationJob
    from designer.ops import broker

    def down():
        raise redis.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")

    settings.FABRICSCOPE_BROKER_PRECHECK = True
    monkeypatch.setattr(broker, "ping", down)
    response = api.post(f"{API}/jobs/", {"scenario": scenario.pk, "kind": "simulate"},
                        format="json")
    error = assert_error(response, 503, "broker_unavailable")
    assert error["details"]["retry_after_s"] == 30 and response["Retry-After"] == "30"
    assert not SimulationJob.objects.exists()  # nothing written
    documented = _documented(schema, "post", "/jobs/")
    assert {"201", "400", "401", "403", "429", "503"} <= set(documented)
    assert "Retry-After" in documented["503"]["headers"]


def test_too_many_active_jobs_is_a_429_with_retry_after(api, scenario, settings, published):
    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 1
    job = {"scenario": scenario.pk, "kind": "simulate"}
    assert api.post(f"{API}/jobs/", job, format="json").status_code == 201
    response = api.post(f"{API}/jobs/", job, format="json")
    error = assert_error(response, 429, "too_many_jobs")
    assert error["details"] == {"active": 1, "limit": 1, "retry_after_s": 10}
    assert response["Retry-After"] == "10"


def test_unknown_api_paths_are_json_404s_even_with_a_session_cookie_or_a_newline(user):
    """Django's CSRF check used to answer these with an HTML 403; the catch-all missed paths
    with a newline, which then got Django's HTML 404 under DEBUG."""
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert_error(client.delete(f"{API}/scenarios/abc/"), 404, "not_found")
    assert_error(client.post(f"{API}/nothing/here/"), 404, "not_found")
    assert_error(client.get(f"{API}/jobs/1%0A/"), 404, "not_found")


def test_a_number_where_a_string_is_documented_is_a_400(api):
    error = assert_error(api.post(f"{API}/topologies/", {"name": 0, "build": {
        "template": "dgx-h100", "hosts": 1}}, format="json"), 400, "invalid")
    assert paths_of(error) == {"name"}, error


def test_a_patch_without_fields_changes_nothing(api, small_topology, other_user):
    from designer import services

    share = services.share_grant(topology=small_topology, actor=small_topology.owner,
                                 role="viewer", user=other_user)
    response = api.patch(f"{API}/topologies/{small_topology.pk}/shares/{share.pk}/", {},
                         format="json")
    assert response.status_code == 200 and response.json()["role"] == "viewer"


def test_every_error_status_is_the_one_shape_in_the_schema(schema):
    """Every 4xx/5xx of every operation is the Error component; 401 and 429 are everywhere."""
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert {"401", "429"} <= set(responses), (method, path)
            for code, response in responses.items():
                if code[0] in "45":
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref.endswith("/Error"), (method, path, code)
