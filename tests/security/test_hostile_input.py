"""Hostile input never answers 5xx, signed in or through a share link.

Faults found by hand before this (each was a 500 with a traceback):

- ``?revision=²`` / ``?failure=²``: ``str.isdigit()`` accepts the superscript, ``int()`` does not
  (the export API, the job-figures API, the result page of a share link — anonymously);
- ``/compare/?a=99999999999999999999``: ``OverflowError`` converting it to an SQLite INTEGER;
- a JSON body nested 1,000 deep: ``RecursionError`` in the API's JSON parser and in the
  figure endpoint's ``json.loads`` (open to share-link visitors);
- 500 levels inside a node's ``attrs``: ``RecursionError`` in the engine's document copy.

Each is now a 400 (malformed input) or a 404 (an id that cannot name anything). The world
(``tests/sharing/conftest.py``): alice's ``pod-2`` with job 1 succeeded, a topology link and a
result link (job 1), bob a stranger.
"""
from __future__ import annotations

import json

import pytest

from designer.engine.document import validator as document
from designer.engine.errors import EngineError

pytestmark = pytest.mark.django_db

SUPERSCRIPT_TWO = "%C2%B2"  # "²": str.isdigit() is True, int() raises
HUGE = "99999999999999999999"  # 20 digits: above any bigint id


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def two_gpus(attrs=None) -> dict:
    """``[g0]--nvlink 100G--[g1]``"""
    return {"format": "fabricscope.topology/1", "name": "two",
            "nodes": [{"id": "g0", "kind": "gpu", "attrs": attrs or {}},
                      {"id": "g1", "kind": "gpu"}],
            "links": [{"a": "g0", "b": "g1", "capacity_gbps": 100.0}]}


def deep_value(depth: int):
    value: object = 1
    for _ in range(depth):
        value = {"x": value}
    return value


def assert_client_error(response, status: int, where: str = "") -> None:
    assert response.status_code == status, (response.status_code, response.content[:300])
    if where:
        assert where in response.content.decode()


# ------------------------------------------------------------------ query parameters and ids
def api_cases(w) -> list[tuple[str, int]]:
    t, j = w.topology.pk, w.job.pk
    return [
        (f"/api/v1/topologies/{t}/export/?revision={SUPERSCRIPT_TWO}", 400),
        (f"/api/v1/topologies/{t}/export/?revision={HUGE}", 400),
        (f"/api/v1/jobs/{j}/figures/?failure={SUPERSCRIPT_TWO}", 400),
        (f"/api/v1/jobs/{j}/figures/?failure={HUGE}", 400),
        (f"/api/v1/topologies/{HUGE}/", 404),
        (f"/api/v1/topologies/?min_gpus={SUPERSCRIPT_TWO}", 400),
        (f"/api/v1/scenarios/?topology={HUGE}", 400),
        ("/api/v1/scenarios/?topology=1e3", 400),
        (f"/api/v1/jobs/?topology={SUPERSCRIPT_TWO}", 400),
    ]


def test_api_query_parameters_signed_in(world, api_as):
    client = api_as("owner")
    for url, status in api_cases(world):
        assert_client_error(client.get(url), status)


def test_api_query_parameters_through_a_share_link(world, api_as):
    """The link holder sees job 1 through ``X-Share-Token``: the same bad parameters are 400s
    for them too (their view of the export is refused before the parameter matters)."""
    client = api_as("result_link")
    j = world.job.pk
    assert client.get(f"/api/v1/jobs/{j}/").status_code == 200
    assert_client_error(client.get(f"/api/v1/jobs/{j}/figures/?failure={SUPERSCRIPT_TWO}"), 400,
                        "failure")


def test_api_page_parameter_is_never_a_server_error(world, api_as):
    client = api_as("owner")
    for page in ("0", SUPERSCRIPT_TWO, HUGE, "-1"):
        response = client.get(f"/api/v1/topologies/?page={page}")
        assert response.status_code < 500, (page, response.content[:200])


def page_cases(w) -> list[tuple[str, int]]:
    t, j = w.topology.pk, w.job.pk
    return [
        (f"/jobs/{j}/result/?failure={SUPERSCRIPT_TWO}", 400),
        (f"/compare/?a={HUGE}&b={j}", 404),
        (f"/compare/?a={SUPERSCRIPT_TWO}&b={j}", 400),
        (f"/topologies/{t}/diff/?a={SUPERSCRIPT_TWO}", 400),
        (f"/topologies/{t}/diff/?a={HUGE}", 400),
        (f"/topologies/{HUGE}/", 404),
        (f"/jobs/{HUGE}/result/", 404),
    ]


def test_page_query_parameters_signed_in(world, page_as):
    client = page_as("owner")
    for url, status in page_cases(world):
        assert_client_error(client.get(url), status)
    # well-formed parameters still work
    assert client.get(f"/jobs/{world.job.pk}/result/?failure=0").status_code == 200


def test_share_link_result_page_anonymously(world, page_as):
    client = page_as("anon")
    token, j = world.tokens["result_link"], world.job.pk
    assert client.get(f"/s/{token}/results/{j}/").status_code == 200
    assert_client_error(client.get(f"/s/{token}/results/{j}/?failure={SUPERSCRIPT_TWO}"), 400)
    assert_client_error(client.get(f"/s/{token}/results/{HUGE}/"), 404)


# ------------------------------------------------------------------------------ JSON bodies
def test_deeply_nested_json_bodies_are_400_in_the_api(world, api_as):
    client = api_as("owner")
    t = world.topology.pk
    for url in ("/api/v1/validate/", f"/api/v1/topologies/{t}/revisions/", "/api/v1/topologies/",
                "/api/v1/topologies/build-preview/", "/api/v1/topologies/build-job/"):
        response = client.post(url, data=nested(1000), content_type="application/json")
        assert_client_error(response, 400, "nested deeper than")
        assert response.json()["error"]["code"] == "parse_error"


def test_nan_in_a_json_body_is_400(world, api_as):
    body = '{"document": {"format": "fabricscope.topology/1", "nodes": [], "links": [], "x": NaN}}'
    response = api_as("owner").post("/api/v1/validate/", data=body,
                                    content_type="application/json")
    assert_client_error(response, 400)


def test_deeply_nested_json_to_the_figure_endpoint_is_400(world, page_as):
    """The figure endpoint serves share-link visitors too: an anonymous client here."""
    for client in (page_as("anon"), page_as("owner")):
        response = client.post("/figures/path/", data=nested(100_000),
                               content_type="application/json")
        assert_client_error(response, 400, "nested deeper than")


def test_deep_attrs_in_a_saved_document_are_a_located_400(world, api_as):
    """Under the parser's limit (128) but over the engine's (64): the engine locates it."""
    client = api_as("owner")
    url = f"/api/v1/topologies/{world.topology.pk}/revisions/"
    body = {"document": two_gpus(attrs={"deep": deep_value(100)}), "base_revision": 1}
    response = client.post(url, data=json.dumps(body), content_type="application/json")
    assert_client_error(response, 400)
    details = response.json()["error"]["details"]
    assert {"path": "document.nodes[0].attrs",
            "message": "nested deeper than 64 levels"} in details


def test_engine_rejects_deep_attrs_without_recursion():
    """500 levels inside attrs used to be a RecursionError in ``document._copy``."""
    doc = two_gpus(attrs={"deep": deep_value(500)})
    with pytest.raises(EngineError) as exc:
        document.normalize(doc)
    assert [(p.path, p.message) for p in exc.value.problems] == [
        ("nodes[0].attrs", "nested deeper than 64 levels")]
    # exactly at the limit: accepted, and copied intact
    ok = two_gpus(attrs={"deep": deep_value(63)})  # attrs itself is the 64th level
    assert document.normalize(ok)["nodes"][0]["attrs"] == ok["nodes"][0]["attrs"]
    # deeper JSON text than the parser can take is a located error too, not a RecursionError
    with pytest.raises(EngineError):
        document.load('{"nodes": ' + nested(100_000) + "}")


# ------------------------------------------------------------------ the depth check itself
def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_TRICKY = ["[", "]", "{", "}", '"', "\\", '\\"', "\\\\", '"[', "]\\", "x"]


def test_depth_check_matches_a_recursive_count():
    """On any JSON value (strings full of brackets, quotes and backslashes included) the
    non-recursive check agrees with counting the nesting recursively, at every limit."""
    from hypothesis import given, settings as hsettings, strategies as st

    from designer.params import json_depth_exceeds

    text = st.lists(st.sampled_from(_TRICKY), max_size=4).map("".join)
    values = st.recursive(st.none() | st.integers() | text,
                          lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(text, inner, max_size=3), max_leaves=30)

    @hsettings(max_examples=300, deadline=None)
    @given(values, st.booleans())
    def check(value, ascii_only):
        raw = json.dumps(value, ensure_ascii=ascii_only)
        depth = _depth(value)
        for limit in range(depth + 2):
            assert json_depth_exceeds(raw, limit) == (depth > limit), (raw, limit)
            assert json_depth_exceeds(raw.encode(), limit) == (depth > limit)

    check()


def test_depth_check_on_malformed_text_never_raises():
    from designer.params import JsonTooDeep, json_depth_exceeds, json_loads_bounded

    assert json_depth_exceeds("[" * 1000, 64) is True      # unclosed and deep
    assert json_depth_exceeds("[}", 64) is False           # malformed, shallow: json says why
    assert json_depth_exceeds('["]]]]"', 1) is False       # unclosed; brackets in a string
    with pytest.raises(JsonTooDeep):
        json_loads_bounded("[" * 1000, max_depth=64)
    with pytest.raises(ValueError):
        json_loads_bounded("[}", max_depth=64)


def test_parse_int_accepts_only_bounded_ascii_digits():
    from designer.params import InvalidParam, parse_int

    assert parse_int("0", name="n") == 0 and parse_int("2147483647", name="n") == 2 ** 31 - 1
    assert parse_int("-3", name="n", minimum=-5) == -3
    for bad in ("²", "٣", "３", " 1", "1\n", "+1", "-1", "1.0", "1e3", "", "2147483648",
                "9" * 20, "9" * 5000):
        with pytest.raises(InvalidParam):
            parse_int(bad, name="n")
