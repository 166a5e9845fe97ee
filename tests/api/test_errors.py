"""The one error shape for 404, 405, 413, 415, 429 and 500, inside and outside DRF views."""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error
from tests.api.test_topologies import TWO_GPUS

pytestmark = pytest.mark.django_db


def test_oversized_body_is_413(api, settings):
    settings.FABRICSCOPE_MAX_BODY_BYTES = 10_000
    big = {**TWO_GPUS, "description": "x" * 20_000}
    for url in (f"{API}/topologies/", f"{API}/validate/", f"{API}/topologies/import/"):
        error = assert_error(api.post(url, {"name": "big", "document": big}), 413,
                             "payload_too_large")
        assert error["details"]["limit_bytes"] == 10_000
    assert api.post(f"{API}/validate/", {"document": TWO_GPUS}).status_code == 200


def test_oversized_multipart_upload_is_413(api, settings):
    settings.FABRICSCOPE_MAX_BODY_BYTES = 10_000
    import io
    upload = io.BytesIO(b"<system>" + b" " * 20_000 + b"</system>")
    upload.name = "topo.xml"
    response = api.post(f"{API}/topologies/import/", {"name": "x", "file": upload},
                        format="multipart")
    assert_error(response, 413, "payload_too_large")


def test_unsupported_media_type_is_415(api):
    response = api.post(f"{API}/validate/", data="document=1", content_type="text/plain")
    assert_error(response, 415, "unsupported_media_type")


def test_malformed_json_is_400(api):
    response = api.post(f"{API}/validate/", data="{nope", content_type="application/json")
    assert_error(response, 400, "parse_error")


def test_method_not_allowed_is_405(api):
    assert_error(api.delete(f"{API}/catalog/"), 405, "method_not_allowed")
    assert_error(api.put(f"{API}/jobs/"), 405, "method_not_allowed")


@pytest.mark.parametrize("path", ["nothing/", "topologies/abc/", "topologies/1/nope/",
                                  "templates/no-such/"])
def test_unknown_paths_are_json_404(api, path):
    assert_error(api.get(f"{API}/{path}"), 404, "not_found")


def test_missing_slash_hint(api):
    error = assert_error(api.get(f"{API}/topologies"), 404, "not_found")
    assert "did you mean /api/v1/topologies/" in error["message"]


def test_anonymous_throttle_429(anon, settings):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"anon": "2/min"}
    for _ in range(2):
        assert anon.get(f"{API}/catalog/").status_code == 401
    response = anon.get(f"{API}/catalog/")
    error = assert_error(response, 429, "throttled")
    assert error["details"]["retry_after"] >= 1 and response["Retry-After"]


def test_user_throttle_429(api, settings):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"user": "3/min"}
    for _ in range(3):
        assert api.get(f"{API}/catalog/").status_code == 200
    assert_error(api.get(f"{API}/catalog/"), 429, "throttled")


def test_unexpected_error_is_json_500(api, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr("designer.selectors.topology_list", boom)
    error = assert_error(api.get(f"{API}/topologies/"), 500, "server_error")
    assert "secret" not in error["message"]


def test_django_handlers_answer_json_under_api(rf):
    from api.exception_handlers import handler404, handler500

    import json

    response = handler404(rf.get("/api/v2/x"), None)
    assert response.status_code == 404
    assert json.loads(response.content)["error"]["code"] == "not_found"
    response = handler500(rf.get("/api/v1/x"))
    assert json.loads(response.content)["error"]["code"] == "server_error"
    assert handler404(rf.get("/elsewhere"), None)["Content-Type"].startswith("text/html")
