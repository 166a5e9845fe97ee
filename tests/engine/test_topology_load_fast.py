"""The column-wise topology load (document.normalize from the acceptance's columns,
Topology._assemble from them, link tiers memoized per class) builds exactly what the item by
item path builds: the same normalized document (keys, order, value types), the same arrays,
adjacency and tiers; and a document handed over (``owned``: the CLI's loaded file), completed
in place, is that same document too.

    [h0/gpu0]--nvlink--[h0/nvsw0]        (and a 2-host DGX-H100 cluster, rail-optimized)
        |pcie
    [h0/nic0]==400G==[leaf0]
"""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.document import validator as document

from designer.engine.model import tiers
from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology, node_attr_keys
from designer.engine.numbers import first_appearance_codes


def _slow(monkeypatch, doc):
    """normalize + compile with the acceptance off: the item walk and item-by-item paths."""
    with monkeypatch.context() as m:
        m.setattr(document, "node_columns", lambda nodes, groups: None)
        m.setattr(document, "link_columns", lambda links, index: None)
        m.setattr(document, "accept_links", lambda links, ids: False)
        return Topology.from_document(copy.deepcopy(doc))


def _same_json(x, y) -> bool:
    """Equal, with keys in the same order and ints/floats of the same type (JSON text)."""
    return json.dumps(x) == json.dumps(y)


def _assert_same_topology(fast: Topology, slow: Topology) -> None:
    assert _same_json(fast.doc, slow.doc)
    for name in ("node_ids", "node_kind", "node_role", "node_group", "node_host", "node_attrs",
                 "link_ids", "link_tech", "groups", "node_index", "link_index", "adjacency"):
        assert getattr(fast, name) == getattr(slow, name), name
    for name in ("node_capacity_gbps", "link_a", "link_b", "link_capacity_gbps", "link_latency_ns",
                 "link_capacity_ab_gbps", "link_capacity_ba_gbps", "node_resource", "resource_node"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert list(fast.link_index) == list(slow.link_index)
    for topo in (fast, slow):   # node_attrs are the normalized document's own attrs dicts
        assert all(a is n["attrs"] for a, n in zip(topo.node_attrs, topo.doc["nodes"]) if n.get("attrs"))
    assert tiers.resource_tiers(fast) == tiers.resource_tiers(slow)
    _assert_kept_codes_are_the_columns(fast)
    assert node_attr_keys(slow) is None or node_attr_keys(slow) == _attr_keys(slow)


def _attr_keys(topo: Topology) -> frozenset:
    return frozenset(k for a in topo.node_attrs for k in a)


def _assert_kept_codes_are_the_columns(topo: Topology) -> None:
    """What the load kept for the routing context and the tiers (kind and tech codes, attrs
    keys) is what they would compute from the topology's lists."""
    for column, (distinct, codes) in topo.__dict__.get("_value_codes", {}).items():
        want = first_appearance_codes(getattr(topo, column))
        assert distinct == want[0] and codes.dtype == np.int64 and np.array_equal(codes, want[1]), column
    if node_attr_keys(topo) is not None:
        assert node_attr_keys(topo) == _attr_keys(topo)


@pytest.fixture(scope="module")
def cluster():
    return build_cluster("dgx-h100", 2, fabric="rail-optimized", leaves_per_rail=1)


def _small():
    return {"format": document.FORMAT, "name": "t",
            "groups": [{"id": "h0", "kind": "host"}],
            "nodes": [{"id": "h0/gpu0", "kind": "gpu", "group": "h0", "attrs": {"rail": 0}},
                      {"kind": "nvswitch", "id": "h0/nvsw0", "group": "h0"},           # keys out of order
                      {"id": "h0/nic0", "attrs": {"peak_gbps": 400}, "kind": "nic", "group": "h0"},
                      {"id": "leaf0", "kind": "switch", "attrs": {"role": "leaf", "note": "x"}}],
            "links": [{"id": "g-s", "a": "h0/gpu0", "b": "h0/nvsw0", "tech": "nvlink4x18"},
                      {"a": "h0/gpu0", "b": "h0/nic0", "tech": "pcie5x16", "latency_ns": 7},
                      {"a": "h0/gpu0", "b": "h0/nic0", "tech": "pcie5x16", "capacity_basis": "raw"},
                      {"bundle": 2, "id": "n-l", "a": "h0/nic0", "b": "leaf0", "capacity_gbps": 800,
                       "capacity_ab_gbps": 700.0, "attrs": {"cable": "dac"}},
                      {"id": "n-l2", "a": "leaf0", "b": "h0/nic0", "tech": "eth400",
                       "capacity_gbps": 400.0, "capacity_basis": "explicit", "latency_ns": 0}]}


def test_small_document_same_both_ways(monkeypatch):
    fast = Topology.from_document(copy.deepcopy(_small()))
    assert document._validate(_small())[1] is not None   # the columns path really ran
    slow = _slow(monkeypatch, _small())
    _assert_same_topology(fast, slow)
    # hand-checkable: a generated id, the catalog filling in, a given int capacity made a float
    assert [l["id"] for l in fast.doc["links"]] == ["g-s", "h0/gpu0-h0/nic0", "h0/gpu0-h0/nic0#2", "n-l", "n-l2"]
    assert list(fast.doc["nodes"][1]) == ["id", "kind", "group"]
    assert list(fast.doc["links"][3]) == ["id", "a", "b", "capacity_gbps", "capacity_basis", "latency_ns",
                                          "bundle", "capacity_ab_gbps", "attrs"]
    assert fast.doc["links"][3]["capacity_gbps"] == 800.0 and type(fast.doc["links"][3]["capacity_gbps"]) is float
    assert fast.doc["links"][1]["latency_ns"] == 7 and fast.doc["links"][2]["capacity_basis"] == "raw"
    assert fast.adjacency[0] == [(1, 0), (2, 1), (2, 2)]


def test_cluster_same_both_ways(cluster, monkeypatch):
    _assert_same_topology(Topology.from_document(copy.deepcopy(cluster)), _slow(monkeypatch, cluster))


def test_normalized_copy_is_independent(cluster):
    """normalize() returns new dicts (attrs too): editing the result leaves the input as it was."""
    doc = copy.deepcopy(cluster)
    out = document.normalize(doc)
    out["nodes"][0]["attrs"]["x"] = 1
    out["links"][0]["a"] = "elsewhere"
    assert doc == cluster


def test_null_link_values_same_document(monkeypatch):
    """Nulls the link columns complete (id generated, capacity from the catalog, no tech key)."""
    doc = _small()
    doc["links"][1]["capacity_gbps"] = None
    doc["links"][2]["id"] = None
    doc["links"][3]["tech"] = None
    doc["links"][4]["latency_ns"] = None
    assert document._validate(doc)[1] is not None
    fast = Topology.from_document(copy.deepcopy(doc))
    _assert_same_topology(fast, _slow(monkeypatch, doc))
    assert "tech" not in fast.doc["links"][3]
    assert fast.doc["links"][4]["latency_ns"] == 100.0   # eth400 in the catalog


def test_null_node_value_takes_the_item_path_to_the_same_document(monkeypatch):
    doc = _small()
    doc["nodes"][0]["group"] = None            # dropped by _ordered
    assert "group" not in Topology.from_document(copy.deepcopy(doc)).doc["nodes"][0]
    _assert_same_topology(Topology.from_document(copy.deepcopy(doc)), _slow(monkeypatch, doc))


def test_load_keeps_kind_and_tech_codes_and_attr_keys(cluster):
    topo = Topology.from_document(copy.deepcopy(cluster))
    assert set(topo.__dict__["_value_codes"]) == {"node_kind", "link_tech"}
    assert {"index", "rail", "socket", "role"} <= node_attr_keys(topo)
    _assert_kept_codes_are_the_columns(topo)


def test_compile_of_a_normalized_document_is_from_document(cluster):
    fast = Topology.from_document(copy.deepcopy(cluster))
    _assert_same_topology(Topology.compile(fast.doc), fast)


def _tiers_one_by_one(topo):
    return [tiers._link_tier(topo, link) for link in range(topo.num_links)]


def test_link_tiers_are_link_tier_of_each_link(cluster):
    topo = Topology.from_document(copy.deepcopy(cluster))
    assert tiers._link_tiers(topo) == _tiers_one_by_one(topo)
    assert {"nvlink", "pcie", "nic-leaf", "inter-socket", "root-complex", "memory"} <= set(tiers._link_tiers(topo))


def test_cpu_link_tiers_read_each_links_sockets():
    """[cpu0]--pcie--[cpu1]  [cpu2]--pcie--[cpu3]  [cpu1]--pcie--[cpu2], sockets 0 1 0 0: the
    memo on (tech, sockets) tells the same-socket pair (root-complex) from the two-socket ones
    (inter-socket)."""
    nodes = [{"id": f"cpu{i}", "kind": "cpu", "attrs": {"socket": s}} for i, s in enumerate([0, 1, 0, 0])]
    links = [{"a": "cpu0", "b": "cpu1", "tech": "pcie5x16"}, {"a": "cpu2", "b": "cpu3", "tech": "pcie5x16"},
             {"a": "cpu1", "b": "cpu2", "tech": "pcie5x16"}]
    topo = Topology.from_document({"format": document.FORMAT, "nodes": nodes, "links": links})
    assert tiers._link_tiers(topo) == _tiers_one_by_one(topo) == ["inter-socket", "root-complex", "inter-socket"]


def _adjacency_link_by_link(topo: Topology) -> list[list[tuple[int, int]]]:
    """The former build: every link appended at both its ends, in link order."""
    adjacency = [[] for _ in topo.node_ids]
    for l, (a, b) in enumerate(zip(topo.link_a.tolist(), topo.link_b.tolist())):
        adjacency[a].append((b, l))
        adjacency[b].append((a, l))
    return adjacency


def test_adjacency_is_the_link_by_link_lists(cluster):
    topo = Topology.from_document(copy.deepcopy(cluster))
    want = _adjacency_link_by_link(topo)
    assert len(topo.adjacency) == len(want) == topo.num_nodes
    assert [topo.adjacency[u] for u in reversed(range(topo.num_nodes))] == want[::-1]   # built in any order
    assert topo.adjacency == want and list(topo.adjacency) == want and topo.adjacency[3:9] == want[3:9]
    assert all(type(x) is int for row in topo.adjacency for pair in row for x in pair)


def test_adjacency_rows_are_kept_and_indexed_as_a_list():
    """[a]==[b] twice (links 0 and 2), [b]--[c] (link 1); [d] alone."""
    nodes = [{"id": n, "kind": "switch"} for n in "abcd"]
    links = [{"a": "a", "b": "b", "tech": "eth400"}, {"a": "c", "b": "b", "tech": "eth400"},
             {"a": "b", "b": "a", "tech": "eth400", "id": "ba"}]
    topo = Topology.from_document({"format": document.FORMAT, "nodes": nodes, "links": links})
    adj = topo.adjacency
    assert adj[1] == [(0, 0), (2, 1), (0, 2)] and adj[0] == [(1, 0), (1, 2)] and adj[3] == []
    assert adj[np.int64(1)] is adj[1] is adj[-3]
    with pytest.raises(IndexError):
        adj[4]
    with pytest.raises(TypeError):
        adj["a"]


def test_resource_tiers_are_resource_tier_of_each_resource(cluster):
    topo = Topology.from_document(copy.deepcopy(cluster))
    assert tiers.resource_tiers(topo) == [tiers.resource_tier(topo, r) for r in range(topo.num_resources)]


def _switches_and_cpus(roles: list, sockets: list) -> dict:
    """[sw0]--eth400--[sw1]--eth400--[sw2]… (roles ``roles``) and [cpu0]--upi--[cpu1]--upi--[cpu2]…
    (sockets ``sockets``; ``"absent"``: no socket)."""
    nodes = [{"id": f"sw{i}", "kind": "switch", "attrs": {"role": r}} for i, r in enumerate(roles)]
    nodes += [{"id": f"cpu{i}", "kind": "cpu", "attrs": {} if s == "absent" else {"socket": s}}
              for i, s in enumerate(sockets)]
    links = [{"a": f"sw{i}", "b": f"sw{i + 1}", "tech": "eth400"} for i in range(len(roles) - 1)]
    links += [{"a": f"cpu{i}", "b": f"cpu{i + 1}", "tech": t} for i in range(len(sockets) - 1)
              for t in ("upi-spr", "pcie5x16")]
    return {"format": document.FORMAT, "nodes": nodes, "links": links}


def test_link_tiers_by_codes_tell_values_as_the_memo_does():
    """Roles and sockets that are equal across types (1 / 1.0 / True), None, absent or strings:
    the codes give every link the tier of its own, as the tuple memo does."""
    doc = _switches_and_cpus(["leaf", "spine", "core", "spine", "tor", 1, 1.0, True, "leaf"],
                             [0, 1, 1.0, True, None, "absent", "1", 0, 0])
    topo = Topology.from_document(doc)
    want = _tiers_one_by_one(topo)
    assert tiers._link_tiers(topo) == tiers._link_tiers_itemwise(topo) == want
    assert {"leaf-spine", "spine-core", "fabric", "inter-socket", "root-complex"} <= set(want)


@pytest.mark.parametrize("where", ["roles", "sockets"])
def test_unhashable_role_or_socket_raises_as_before(where):
    doc = _switches_and_cpus(["leaf", ["spine"]] if where == "roles" else ["leaf", "spine"],
                             [0, [1]] if where == "sockets" else [0, 1])
    topo = Topology.from_document(doc)
    with pytest.raises(TypeError):
        tiers._link_tiers_itemwise(topo)
    with pytest.raises(TypeError):
        tiers._link_tiers(topo)


# ---------------------------------------------------------------------------- property
_TECHS = ["pcie5x16", "eth400", "nvlink4x18", "ddr5x8", "upi-spr"]


@st.composite
def _documents(draw):
    """Small documents mixing what the columns path must complete or refuse: keys in any order,
    optional keys absent or null, ints and floats, extras, generated ids, and now and then one
    fault (a duplicate id, a self-loop, an unknown tech or node, a zero capacity, a nested extra)."""
    n = draw(st.integers(2, 6))
    nodes = [_shuffled(draw, {"id": f"n{i}", "kind": draw(st.sampled_from(["gpu", "cpu", "nic", "switch"])),
                              **_some(draw, {"group": st.sampled_from(["g0", None]),
                                             "attrs": st.fixed_dictionaries({"socket": st.integers(0, 1)}, optional={
                                                 "role": st.sampled_from(["leaf", "spine"]),
                                                 "port_gbps": st.sampled_from([400, 400.0]),
                                                 "note": st.sampled_from(["x", 1, None])}),
                                             "capacity_gbps": st.sampled_from([100, 50.5])})})
             for i in range(n)]
    links = []
    for j in range(draw(st.integers(1, 8))):
        a, b = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        link = {"a": f"n{a}", "b": f"n{b}", "tech": draw(st.sampled_from(_TECHS + [None]))}
        link.update(_some(draw, {"id": st.sampled_from([f"l{j}", None]), "capacity_gbps": st.sampled_from([100, 12.5, None]),
                                 "capacity_basis": st.sampled_from(["raw", "effective", "explicit", None]),
                                 "latency_ns": st.sampled_from([0, 5, 7.5, -0.0, None]), "bundle": st.just(2),
                                 "capacity_ab_gbps": st.just(10.0), "attrs": st.just({"cable": "dac"})}))
        if link["tech"] is None and link.get("capacity_gbps") is None:
            link["capacity_gbps"] = 25
        links.append(_shuffled(draw, link))
    doc = {"format": document.FORMAT, "groups": [{"id": "g0", "kind": "host"}], "nodes": nodes, "links": links,
           **_some(draw, {"capacity_basis": st.just("raw")})}
    fault = draw(st.sampled_from([None] * 6 + ["dup", "loop", "tech", "end", "zero", "nested"]))
    if fault == "dup":
        nodes.append(dict(nodes[0]))
    elif fault == "loop":
        links[0]["b"] = links[0]["a"]
    elif fault in ("tech", "end", "zero"):
        links[-1].update({"tech": {"tech": "warp"}, "end": {"a": "ghost"}, "zero": {"capacity_gbps": 0}}[fault])
    elif fault == "nested":
        nodes[-1]["extra"] = {"x": [1]}
    return doc


def _some(draw, strategies: dict) -> dict:
    return {k: draw(s) for k, s in strategies.items() if draw(st.booleans())}


def _shuffled(draw, item: dict) -> dict:
    return dict(draw(st.permutations(list(item.items()))))


def _outcome(load):
    try:
        return load(), None
    except InvalidTopology as exc:
        return None, (exc.message, exc.problems)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_generated_documents_same_both_ways(doc):
    with pytest.MonkeyPatch.context() as monkeypatch:
        slow, slow_error = _outcome(lambda: _slow(monkeypatch, doc))
    fast, fast_error = _outcome(lambda: Topology.from_document(copy.deepcopy(doc)))
    assert fast_error == slow_error
    if fast is not None:
        _assert_same_topology(fast, slow)


# ---------------------------------------------------------------------------- owned documents
def _owned_outcome(doc):
    """from_document of a copy of ``doc`` handed over (owned) and of ``doc`` itself copied; a
    document refused is left as it was even when owned (validation runs before any change)."""
    given = copy.deepcopy(doc)
    owned = _outcome(lambda: Topology.from_document(given, owned=True))
    if owned[1] is not None:
        assert _same_json(given, doc)
    copied = _outcome(lambda: Topology.from_document(doc))
    return owned, copied


def test_owned_document_completed_in_place(cluster):
    """The links and nodes handed over become the topology's own, completed to the same dicts."""
    doc = copy.deepcopy(cluster)
    owned = Topology.from_document(doc, owned=True)
    _assert_same_topology(owned, Topology.from_document(cluster))
    assert owned.doc["links"] is doc["links"] and owned.doc["nodes"] is doc["nodes"]


def test_owned_small_document_same(monkeypatch):
    """Keys given out of order, an extra key before the added ones, generated ids, a null tech:
    the in-place path moves or rebuilds them to the copied document's order."""
    doc = _small()
    doc["links"][1]["capacity_gbps"] = None
    doc["links"][2]["id"] = None
    doc["links"][3]["tech"] = None
    doc["links"].append({"tech": "eth400", "b": "leaf0", "a": "h0/gpu0"})   # keys in reverse
    doc["links"].append({"id": "x", "a": "leaf0", "b": "h0/gpu0", "tech": "eth400", "bundle": 3})
    assert document._validate(doc)[1] is not None
    owned = Topology.from_document(copy.deepcopy(doc), owned=True)
    _assert_same_topology(owned, Topology.from_document(doc))
    _assert_same_topology(owned, _slow(monkeypatch, doc))
    assert list(owned.doc["links"][-1]) == ["id", "a", "b", "tech", "capacity_gbps", "capacity_basis",
                                            "latency_ns", "bundle"]
    assert list(owned.doc["links"][-2]) == ["id", "a", "b", "tech", "capacity_gbps", "capacity_basis",
                                            "latency_ns"]


def test_inline_document_never_mutated(cluster):
    """A scenario's inline topology, and any document from_document is given without ``owned``,
    stays exactly as it was (the path given by reference is the only one loaded in place)."""
    from designer.engine.traffic.scenario import normalize_scenario

    doc = copy.deepcopy(cluster)
    before = json.dumps(doc)
    Topology.from_document(doc)
    sc = normalize_scenario({"format": "fabricscope.scenario/1", "topology": doc, "workload": []})
    assert json.dumps(doc) == before and sc.topology.doc["links"] is not doc["links"]


def test_loaded_topology_normalized_in_place(cluster):
    """The loader's document (fresh per call) is the one completed in place."""
    from designer.engine.traffic.scenario import normalize_scenario

    loaded = []

    def loader(ref):
        loaded.append(copy.deepcopy(cluster))
        return loaded[-1]

    sc = normalize_scenario({"format": "fabricscope.scenario/1", "topology": "t.json", "workload": []},
                            topology_loader=loader)
    assert sc.topology.doc["links"] is loaded[0]["links"]
    _assert_same_topology(sc.topology, Topology.from_document(cluster))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_generated_documents_owned_same_as_copied(doc):
    before = json.dumps(doc)
    (owned, owned_error), (copied, copied_error) = _owned_outcome(doc)
    assert owned_error == copied_error
    assert json.dumps(doc) == before   # the copying path left its input alone
    if owned is not None:
        _assert_same_topology(owned, copied)


def test_owned_links_are_completed_at_the_first_read_of_doc(cluster):
    """Loaded in place, the links keep their given keys until someone reads ``doc`` (a
    simulation never does); then they are the copied document's, whichever thread reads first."""
    import threading

    doc = copy.deepcopy(cluster)
    given = [dict(link) for link in doc["links"]]
    owned = Topology.from_document(doc, owned=True)
    assert [dict(link) for link in doc["links"]] == given          # not completed yet
    readers = [threading.Thread(target=lambda: owned.doc) for _ in range(4)]
    for t in readers:
        t.start()
    for t in readers:
        t.join()
    assert _same_json(owned.doc, Topology.from_document(cluster).doc)
    assert owned.doc["links"] is doc["links"] and "_finish_doc" not in owned.__dict__
