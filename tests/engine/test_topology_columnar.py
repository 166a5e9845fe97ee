"""A topology file read straight into columns (``Topology.read_file_bytes``,
``document.columnar``, kernel ``scan_items``) is exactly what parsing it and
``Topology.from_document`` build — the same columns, arrays and, once read, the same document —
and a file it cannot vouch for goes to the dict path, which reports the same located problems as
before: the CLI's ``simulate`` of a broken file fails with the same error text either way.

    [h0/gpu0]--pcie--[h0/pcie0]--pcie--[h0/nic0]==400G==[leaf0]     (a DGX-H100 cluster, 2 tiers)
"""
from __future__ import annotations

import json

import numpy as np
import orjson
import pytest

from designer.engine.commands import _scenario_io as sio
from designer.engine.document.validator import normalize, write_document
from designer.engine.errors import EngineError
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology
from designer.engine.solve.kernels import jit, loader
from designer.engine.traffic.scenario import normalize_scenario
from designer.engine.analysis.simulate import simulate

AOT = loader.load_aot()
KERNELS = [pytest.param(jit, id="jit"),
           pytest.param(None, id="aot", marks=pytest.mark.skipif(AOT is None, reason="AOT kernels not built"))]

_LISTS = ("node_ids", "node_kind", "node_role", "node_group", "node_host", "node_attrs", "link_ids", "link_tech",
          "groups", "node_index")
_ARRAYS = ("node_capacity_gbps", "link_a", "link_b", "link_capacity_gbps", "link_latency_ns",
           "link_capacity_ab_gbps", "link_capacity_ba_gbps", "node_resource", "resource_node")


@pytest.fixture(scope="module")
def cluster_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("columnar") / "t.json"
    with open(path, "wb") as fh:   # as the build command writes it
        write_document(normalize(build_cluster("dgx-h100", 4, tiers=2)), fh)
    return path.read_bytes()


@pytest.fixture(autouse=True)
def _compiled_reader(monkeypatch):
    """The CLI's reader with the JIT kernels when the AOT module is not built (or stale)."""
    from designer.engine.document import columnar

    if AOT is None:
        monkeypatch.setattr(columnar, "aot_kernels", lambda: jit)


def _kernels(k):
    return k if k is not None else loader._Kernels(AOT)


def _assert_same_topology(fast: Topology, old: Topology) -> None:
    for name in _LISTS:
        assert getattr(fast, name) == getattr(old, name), name
    for name in _ARRAYS:
        a, b = getattr(fast, name), getattr(old, name)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name
    assert fast.__dict__.get("_node_attr_keys") == old.__dict__.get("_node_attr_keys")
    assert fast.name == old.name
    assert "_finish_doc" in fast.__dict__   # the document is not built until read
    assert orjson.dumps(fast.doc) == orjson.dumps(old.doc)   # same keys, order, value types


def _old(data: bytes) -> Topology:
    return Topology.from_document(orjson.loads(data), owned=True)


@pytest.mark.parametrize("kernels", KERNELS)
def test_a_built_file_reads_as_the_dict_path(cluster_bytes, kernels):
    fast = Topology.read_file_bytes(cluster_bytes, _kernels(kernels))
    assert fast is not None
    _assert_same_topology(fast, _old(cluster_bytes))


def _variant(data: bytes, edit) -> bytes:
    doc = orjson.loads(data)
    edit(doc)
    return json.dumps(doc, indent=1, ensure_ascii=False).encode()


def _reorder(doc):
    doc["nodes"] = [dict(reversed(list(n.items()))) for n in doc["nodes"]]
    doc["links"] = [dict(reversed(list(l.items()))) for l in doc["links"]]
    doc["links"], doc["nodes"] = doc.pop("links"), doc.pop("nodes")   # links first


def _unusual_values(doc):
    doc["nodes"][0]["id"] = "h0/cpu0·ünï"
    for link in doc["links"]:
        link["a"] = "h0/cpu0·ünï" if link["a"] == "h0/cpu0" else link["a"]
        link["b"] = "h0/cpu0·ünï" if link["b"] == "h0/cpu0" else link["b"]
    doc["nodes"][1]["capacity_gbps"] = 800
    doc["nodes"][2]["attrs"] = {"x_gbps": 1e3, "note": "", "flag": True, "none": None}
    doc["nodes"][3].pop("attrs")
    doc["links"][0]["latency_ns"] = -0.0
    doc["links"][1]["latency_ns"] = 7
    doc["links"][2]["capacity_gbps"] = 1e-300
    doc["links"][3].pop("tech", None)


def _tabs_and_crlf(data: bytes) -> bytes:
    return data.replace(b"\n", b"\r\n").replace(b'":', b'"\t:\t').replace(b",", b" ,\t")


@pytest.mark.parametrize("edit", [_reorder, _unusual_values, None],
                         ids=["keys-and-lists-reordered", "unusual-values", "tabs-and-crlf"])
def test_indented_reordered_and_unusual_files_read_as_the_dict_path(cluster_bytes, edit):
    data = _variant(cluster_bytes, edit) if edit else _tabs_and_crlf(cluster_bytes)
    fast = Topology.read_file_bytes(data, jit)
    assert fast is not None
    _assert_same_topology(fast, _old(data))


def _edit_link(key, value):
    def edit(doc):
        doc["links"][5][key] = value
    return edit


def _edit_node(key, value):
    def edit(doc):
        doc["nodes"][5][key] = value
    return edit


def _text(old: bytes, new: bytes):
    return lambda data: data.replace(old, new, 1)


BROKEN = {
    "unknown link end": _edit_link("b", "h9/nowhere"),
    "self-loop": lambda doc: doc["links"][5].update(b=doc["links"][5]["a"]),
    "duplicate node id": lambda doc: doc["nodes"][5].update(id=doc["nodes"][4]["id"]),
    "duplicate link id": lambda doc: doc["links"][5].update(id=doc["links"][4]["id"]),
    "zero capacity": _edit_link("capacity_gbps", 0),
    "negative latency": _edit_link("latency_ns", -1),
    "capacity as text": _edit_link("capacity_gbps", "400"),
    "huge capacity": _edit_link("capacity_gbps", 1e300),
    "unknown tech": _edit_link("tech", "eth9000"),
    "unknown basis": _edit_link("capacity_basis", "guessed"),
    "unknown link key": _edit_link("degrade", 0.5),
    "null link end": _edit_link("a", None),
    "unknown node kind": _edit_node("kind", "toaster"),
    "unknown group": _edit_node("group", "h99"),
    "empty node id": _edit_node("id", ""),
    "unprintable node id": _edit_node("id", "h0/gpu\u202e9"),
    "negative attrs capacity": _edit_node("attrs", {"port_gbps": -1}),
    "bad format": lambda doc: doc.update(format="fabricscope.topology/9"),
}
BROKEN_TEXT = {
    "truncated": lambda data: data[:len(data) // 2],
    "number with a trailing dot": _text(b'"latency_ns":100.0', b'"latency_ns":100.'),
    "leading zero": _text(b'"latency_ns":100.0', b'"latency_ns":0100'),
    "trailing comma": _text(b"}\n ]", b"},\n ]"),
    "a bare word in attrs": _text(b'"socket":0', b'"socket":tru'),
    "an array in attrs": _text(b'"socket":0', b'"socket":[0'),
    "an unclosed attrs": _text(b'"socket":0}', b'"socket":0'),
}


def _errors(data: bytes, tmp_path, read) -> str:
    """The error text of simulating a scenario on ``data`` with the CLI's topology reader ``read``."""
    path = tmp_path / "broken.json"
    path.write_bytes(data)
    scenario = {"topology": path.name, "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                                                      "participants": {"kind": "gpu"}, "bytes": 1e6}]}
    with pytest.raises(EngineError) as caught:
        normalize_scenario(scenario, topology_loader=lambda ref: read(str(tmp_path / ref), f"topology ({ref})"))
    return f"{caught.value}: " + "; ".join(f"{p.path}: {p.message}" for p in caught.value.problems)


@pytest.mark.parametrize("name", [*BROKEN, *BROKEN_TEXT])
def test_a_broken_file_is_refused_with_the_dict_paths_located_errors(cluster_bytes, tmp_path, name):
    if name in BROKEN:
        data = orjson.dumps(orjson.loads(_variant(cluster_bytes, BROKEN[name])))
    else:
        data = BROKEN_TEXT[name](cluster_bytes)
    assert data != cluster_bytes
    assert Topology.read_file_bytes(data, jit) is None
    assert _errors(data, tmp_path, sio.read_topology) == _errors(data, tmp_path, sio.read_json)


OUTSIDE_THE_SUBSET = {
    "an escaped id": _text(b'"id":"h0/cpu0"', b'"id":"h0\\/cpu0"'),
    "a link's status": _text(b'"latency_ns":100.0}', b'"latency_ns":100.0,"status":"up"}'),
    "a nested nodes key": _text(b'"fabric": {', b'"fabric": {"nodes": [],'),
    "nested attrs": lambda data: _variant(data, _edit_node("attrs", {"b": {"c": 1}})),
    "a null capacity (the catalog's)": lambda data: _variant(data, _edit_link("capacity_gbps", None)),
    "per-direction capacity": lambda data: _variant(data, _edit_link("capacity_ab_gbps", 100.0)),
}


@pytest.mark.parametrize("name", list(OUTSIDE_THE_SUBSET))
def test_a_valid_file_outside_the_subset_goes_to_the_dict_path(cluster_bytes, name):
    data = OUTSIDE_THE_SUBSET[name](cluster_bytes)
    assert data != cluster_bytes
    assert Topology.read_file_bytes(data, jit) is None
    _old(data)   # valid


def test_a_file_with_a_build_key_is_left_to_the_scenario(cluster_bytes):
    """The scenario reads a document with "build" as a build request (traffic.scenario._topology)."""
    data = cluster_bytes.replace(b'"name":', b'"build":{"template":"dgx-h100","hosts":2},"name":', 1)
    assert data != cluster_bytes and Topology.read_file_bytes(data, jit) is None


@pytest.mark.parametrize("algorithm", ["ring", "tree"])
def test_simulate_from_the_columns_equals_simulate_from_the_dicts(cluster_bytes, tmp_path, algorithm):
    path = tmp_path / "t.json"
    path.write_bytes(cluster_bytes)
    scenario = {"topology": path.name, "workload": [{"id": "ar", "kind": "allreduce", "algorithm": algorithm,
                                                      "participants": {"kind": "gpu"}, "bytes": 1e9}]}
    results = []
    for read in (sio.read_topology, sio.read_json):
        loaded = []

        def loader(ref, read=read, loaded=loaded):
            loaded.append(read(str(tmp_path / ref), ref))
            return loaded[-1]

        results.append(simulate(scenario, topology_loader=loader))
        results[-1].pop("timings_s")
        assert isinstance(loaded[0], Topology if read is sio.read_topology else dict)
    assert orjson.dumps(results[0]) == orjson.dumps(results[1])
