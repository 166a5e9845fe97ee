"""``POST /figures/<kind>/`` caps: what a slice multiplies is refused before any figure is built.

The endpoint is open to anonymous share-link visitors. Before the caps a 3 MB path slice (one
node referenced by a million hops) cost 70 s of CPU, 4.9 GB of memory and a 1.4 GB answer; each
test below posts what an attacker would and checks the refusal is a small 413 naming the cap,
answered fast, and that real slices (at the caps, too) still get their figure.
"""
from __future__ import annotations

import json
import time

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

# The refusal is a JSON error of a few hundred bytes; a figure of the slices below is megabytes.
SMALL_ANSWER = 2048


def path_slice(hops: int, *, name: str = "h0/gpu0", rows: int = 1) -> dict:
    """A well-formed path slice: ``rows`` flows whose node path visits node 0 ``hops + 1`` times."""
    flow = ["f", 0, 0, 0, 0, 100.0, 1, None, -1, [0] * (hops + 1), 1]
    return {"flow": "f", "index": {
        "nodes": [name], "kinds": ["gpu"], "hosts": ["h0"], "patterns": ["p"], "classes": ["NET"],
        "techs": ["nvlink4"], "tiers": ["host"], "flows": [flow] * rows, "hops": {"0>0": 0},
        "res": [["h0/l0:a>b", 0, 0, 0.5, 200.0, 400.0]], "node_res": {"0": 0}, "listed": rows,
        "total": rows}}


def host_slice(devices: int, links: int, *, kinds: int = 3, failed: int = 0) -> dict:
    nodes = [[f"d{i}", f"kind{i % kinds}", i % 16, -(i // 16)] for i in range(devices)]
    shape = {"nodes": nodes, "links": [[f"l{i}", i % devices, (i + 1) % devices, "pcie5"]
                                       for i in range(links)]}
    host = {"s": 0, "l": [[10.0, 5.0, 100.0]] * links, "f": [f"d{i}" for i in range(failed)]}
    return {"host": "h0", "details": {"shapes": [shape], "hosts": {"h0": host}}}


def post(kind: str, body, client: Client | None = None):
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    started = time.perf_counter()
    response = (client or Client()).post(f"/figures/{kind}/", data=data,
                                         content_type="application/json")
    return response, time.perf_counter() - started


def assert_refused(response, elapsed: float, setting: str) -> dict:
    assert response.status_code == 413, response.content[:300]
    assert len(response.content) < SMALL_ANSWER
    assert elapsed < 2.0, f"refusal took {elapsed:.2f} s: work was done before the check"
    body = response.json()
    assert setting in body["error"] and "nothing was built" in body["error"]
    assert body["limit"]["setting"] == setting and body["limit"]["size"] > body["limit"]["value"]
    return body


def test_a_million_hop_reference_bomb_is_refused_before_any_work():
    """100,000 hops on one node: 0.3 MB posted; built it was ~7 s of CPU and a 140 MB answer."""
    response, elapsed = post("path", path_slice(100_000))
    body = assert_refused(response, elapsed, "FABRICSCOPE_FIGURE_MAX_HOPS")
    assert body["limit"] == {"setting": "FABRICSCOPE_FIGURE_MAX_HOPS", "value": 64, "size": 100_000}
    assert "100,000 hops in one flow" in body["error"]


def test_a_2_mb_slice_is_refused_by_its_size_unread():
    body = json.dumps(path_slice(700_000))
    assert len(body) > 2_000_000
    response, elapsed = post("path", body)
    assert response.status_code == 413 and elapsed < 2.0 and len(response.content) < SMALL_ANSWER
    assert "FABRICSCOPE_FIGURE_SLICE_MAX_KB" in response.json()["error"]


def test_the_path_at_the_hop_cap_is_drawn_and_one_more_is_refused():
    ok, _ = post("path", path_slice(64))
    assert ok.status_code == 200 and ok.json()["fabricscope"]["kind"] == "path"
    assert len(ok.json()["fabricscope"]["hops"]) == 64
    refused, elapsed = post("path", path_slice(65))
    assert_refused(refused, elapsed, "FABRICSCOPE_FIGURE_MAX_HOPS")


def test_many_flow_rows_are_refused():
    response, elapsed = post("path", path_slice(3, rows=5_000))  # ~0.2 MB: under the body cap
    assert_refused(response, elapsed, "FABRICSCOPE_FIGURE_MAX_ROWS")


def test_a_long_string_is_refused_wherever_it_hides():
    response, elapsed = post("path", path_slice(3, name="n" * 5_000))
    assert_refused(response, elapsed, "FABRICSCOPE_FIGURE_MAX_STRING")
    sneaky = host_slice(4, 4)
    sneaky["details"]["hosts"]["h0"]["x" * 5_000] = 1  # an object key counts too
    response, elapsed = post("host", sneaky)
    assert_refused(response, elapsed, "FABRICSCOPE_FIGURE_MAX_STRING")


@pytest.mark.parametrize("slice_args, setting", [
    ({"devices": 5_000, "links": 10}, "FABRICSCOPE_FIGURE_MAX_NODES"),
    ({"devices": 10, "links": 20_000}, "FABRICSCOPE_FIGURE_MAX_LINKS"),
    ({"devices": 1_000, "links": 10, "kinds": 500}, "FABRICSCOPE_FIGURE_MAX_TRACES"),  # per kind
])
def test_host_slices_over_a_cap_are_refused(slice_args, setting):
    response, elapsed = post("host", host_slice(**slice_args))
    assert_refused(response, elapsed, setting)


def test_failed_devices_count_towards_the_traces():
    ok, _ = post("host", host_slice(200, 50, kinds=60))  # 60 kinds + 13 link traces = 73 <= 96
    assert ok.status_code == 200
    refused, elapsed = post("host", host_slice(200, 50, kinds=60, failed=200))  # + 60 failed traces
    assert_refused(refused, elapsed, "FABRICSCOPE_FIGURE_MAX_TRACES")


def test_a_real_sized_host_is_drawn():
    """Twice the largest template's host (aws-p5: 72 devices, 99 links)."""
    response, _ = post("host", host_slice(144, 198, kinds=8, failed=3))
    assert response.status_code == 200
    figure = response.json()
    assert figure["fabricscope"]["kind"] == "host" and len(figure["fabricscope"]["table"]["rows"]) == 198


def test_the_answer_size_is_capped_before_it_is_sent(settings):
    settings.FABRICSCOPE_FIGURE_LIMITS = {**settings.FABRICSCOPE_FIGURE_LIMITS,
                                          "max_response_bytes": 4096}
    response, _ = post("host", host_slice(144, 198))
    assert response.status_code == 413 and len(response.content) < SMALL_ANSWER
    assert "FABRICSCOPE_FIGURE_MAX_RESPONSE_KB" in response.json()["error"]


def test_caps_follow_settings(settings):
    settings.FABRICSCOPE_FIGURE_LIMITS = {**settings.FABRICSCOPE_FIGURE_LIMITS, "max_hops": 4}
    assert post("path", path_slice(4))[0].status_code == 200
    response, elapsed = post("path", path_slice(5))
    assert assert_refused(response, elapsed, "FABRICSCOPE_FIGURE_MAX_HOPS")["limit"]["value"] == 4


@pytest.mark.parametrize("kind, body", [
    ("path", {"index": {"flows": "not a list"}, "flow": "f"}),
    ("path", {"index": {"flows": [["f"]]}, "flow": "f"}),
    ("host", {"host": "h0", "details": {"hosts": {}, "shapes": []}}),
    ("host", {"host": "h0", "details": {"hosts": {"h0": {"s": 0, "l": [], "f": [[1]]}},
                                        "shapes": [{"nodes": [["a", "gpu", 0, 0]], "links": []}]}}),
])
def test_malformed_slices_are_still_a_400_not_a_500(kind, body):
    response, _ = post(kind, body)
    assert response.status_code == 400 and "malformed" in response.json()["error"]
