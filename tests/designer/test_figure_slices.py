"""Figures built on a click: the browser posts a slice of the page's data, the server draws it.

The result page embeds the path index of every listed flow and a collapsed topology's host
internals; on a click ``static/js/results/slices.js`` cuts the slice one figure needs and
``POST /figures/<kind>/`` (:func:`designer.figures.figure_from_slice`) builds it. The figure of a
slice must be exactly the figure of the full data — checked here through the real JavaScript.

Cluster (``build_cluster("dgx-h100", 2, storage=1)``, as in test_figures.py)::

    [spine0] ...  [leaf0 .. leaf7]  [sleaf0]--[storage0]
    [h0: gpu0-7, nvswitch0-3, pcie0-7, nic0-9, cpu0-1 + rc0-7, mem0-1, nvme0-7]   [h1: same]
    workload: ring all-reduce over the 16 GPUs (1 GB) + storage0 → h0's 8 GPUs (4 GB)
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from django.urls import reverse

from designer import figures as F
from tests.scenarios import dgx_h100_scenario

ROOT = Path(__file__).resolve().parents[2]
SLICER = """
import { hostSlice, pathSlice } from './static/js/results/slices.js';
let text = '';
process.stdin.on('data', (d) => { text += d; });
process.stdin.on('end', () => {
  const { index, details } = JSON.parse(text);
  process.stdout.write(JSON.stringify({
    paths: index.flows.map((row) => pathSlice(index, row)),
    hosts: Object.keys(details.hosts).map((h) => hostSlice(details, h)),
  }));
});
"""


@pytest.fixture(scope="module")
def small():
    from designer.engine.analysis.simulate import simulate

    topo, sc = dgx_h100_scenario(2, latency=False)
    return topo, json.loads(json.dumps(simulate(sc)))


def jsonable(x):
    return json.loads(json.dumps(x))


def test_full_index_and_details_give_the_page_figures(small):
    topo, result = small
    index = jsonable(F.path_index(result, topo))  # what the page holds: JSON, node_res keys are strings
    for row in index["flows"][::9]:
        fig = F.figure_from_slice("path", {"index": index, "flow": row[0]})
        assert fig == F.path_figure(result, row[0], topology_doc=topo)
    details = jsonable(F.topology_figure(result, topo, collapsed=True)["fabricscope"]["hosts"])
    assert F.figure_from_slice("host", {"details": details, "host": "h1"}) == F.host_figure(result, topo, "h1")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_javascript_slices_draw_exactly_the_full_figures(small):
    """Every listed flow and every host, sliced by slices.js: same figure as from the full data."""
    topo, result = small
    index = jsonable(F.path_index(result, topo))
    details = jsonable(F.topology_figure(result, topo, collapsed=True)["fabricscope"]["hosts"])
    proc = subprocess.run(["node", "--input-type=module", "-e", SLICER], cwd=ROOT, capture_output=True, text=True,
                          input=json.dumps({"index": index, "details": details}), timeout=120, check=True)
    sliced = json.loads(proc.stdout)
    assert len(sliced["paths"]) == len(index["flows"]) and len(sliced["hosts"]) == 2
    internal = sum(1 for r in result["resources"] if r.get("link") and r["link"].startswith("h0/"))
    assert internal  # the hops below carry real loads
    for body, row in zip(sliced["paths"], index["flows"]):
        assert len(body["index"]["nodes"]) <= len(set(row[9]) | {row[2], row[3]})  # a slice, not the index
        assert F.figure_from_slice("path", body) == F.path_figure(result, row[0], topology_doc=topo)
    for body in sliced["hosts"]:
        assert F.figure_from_slice("host", body) == F.host_figure(result, topo, body["host"])


@pytest.mark.parametrize("kind, payload", [
    ("table", {}),
    ("path", []),
    ("path", {"flow": "f"}),
    ("path", {"index": {"flows": [["f", 0, 0, 0, -1, 1, 1, None, -1, [0, 1], 1]]}, "flow": "f"}),
    ("path", {"index": {"flows": [], "node_res": {"x": 1}}, "flow": "f"}),
    ("host", {"details": {"hosts": {}, "shapes": []}, "host": "h0"}),
    ("host", {"details": {"hosts": {"h0": {"s": 3, "l": []}}, "shapes": []}, "host": "h0"}),
])
def test_malformed_slices_raise_slice_error(kind, payload):
    with pytest.raises(F.SliceError):
        F.figure_from_slice(kind, payload)


def test_endpoint_builds_the_figure_for_anyone_and_rejects_bad_input(client, small):
    """No session needed (share-link visitors click too): it reads nothing, it draws what it is sent."""
    topo, result = small
    index = jsonable(F.path_index(result, topo))
    flow = index["flows"][0][0]
    url = reverse("figure_render", args=["path"])
    ok = client.post(url, json.dumps({"index": index, "flow": flow}), content_type="application/json")
    assert ok.status_code == 200
    assert ok.json() == jsonable(F.path_figure(result, flow, topology_doc=topo))
    bad = client.post(url, "{not json", content_type="application/json")
    assert bad.status_code == 400 and "error" in bad.json()
    wrong = client.post(reverse("figure_render", args=["nope"]), "{}", content_type="application/json")
    assert wrong.status_code == 400 and "unknown figure kind" in wrong.json()["error"]
    assert client.get(url).status_code == 405


def test_endpoint_is_rate_limited_per_visitor_and_bounds_the_slice(client, settings):
    """Anyone may POST a slice, so each visitor gets the ``figures`` rate (a 429 with
    Retry-After past it) and a slice bigger than FIGURE_SLICE_MAX_BYTES is a 413 unparsed."""
    from django.core.cache import cache

    from designer.pages.results import FIGURE_SLICE_MAX_BYTES

    cache.clear()
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"figures": "3/min"}
    url = reverse("figure_render", args=["nope"])
    codes = [client.post(url, "{}", content_type="application/json").status_code for _ in range(4)]
    assert codes == [400, 400, 400, 429]
    limited = client.post(url, "{}", content_type="application/json")
    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    assert "too many figure requests" in limited.json()["error"]
    cache.clear()
    big = client.post(url, b" " * (FIGURE_SLICE_MAX_BYTES + 1), content_type="application/json")
    assert big.status_code == 413 and "larger than" in big.json()["error"]
    cache.clear()
