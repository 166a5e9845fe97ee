"""The column-wise parts of a routing context equal the item-by-item walks they replace.

- Host shapes (``RoutingContext._build_shapes``, numpy codes per node and link) against
  ``_build_shapes_itemwise`` (one signature tuple per host): same shapes, numbering,
  representatives and local maps, on hosts that differ in ways a careless code would merge
  (``1`` / ``1.0`` / ``True`` attrs, ``0.0`` / ``-0.0``, list attrs, capacities, failures, lost
  uplinks, parallel links ordered by id, a node id without its host's prefix).
- Uplinks (``build_uplinks``, a numpy pass) against the former per-link walk.
- Switch paths of many pairs at once (``FabricPaths.prepare_pairs``, one numpy pass per hop
  level) against a plain depth-first walk.

The small fabric is ``mini()`` of test_routing::

    [hX/gpuI]--pcie--[hX/pcie0]--pcie--[hX/nicI]==400==[leafI]==400==[spineS]
        \\==nvlink==[hX/nvs0]           [hX/cpu0]--[hX/mem0]
"""
import numpy as np
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import FailureSet
from designer.engine.routing.context import RoutingContext
from designer.engine.routing import fabric as fabric_module
from designer.engine.routing.csr import SegTable
from designer.engine.routing.fabric import FabricPaths, build_uplinks
from designer.engine.model.topology import ENDPOINT_KINDS, Topology
from tests.engine.test_routing import mini
from tests.engine.test_routing_switch_paths import plain_paths


def itemwise(topo, failed, walks: bool):
    """The context (built column-wise unless ``walks``), and a copy with its shapes built by the
    host-by-host walk."""
    calls = []
    walk = RoutingContext._build_shapes_itemwise
    RoutingContext._build_shapes_itemwise = lambda self: calls.append(1) or walk(self)
    try:
        ctx = RoutingContext(topo, failed)
    finally:
        RoutingContext._build_shapes_itemwise = walk
    assert bool(calls) == walks
    ref = object.__new__(RoutingContext)
    ref.__dict__.update(ctx.__dict__)
    ref._build_shapes_itemwise()
    return ctx, ref


def assert_same_shapes(topo, failed=FailureSet(), walks=False):
    ctx, ref = itemwise(topo, failed, walks)
    assert len(ctx.shapes) == len(ref.shapes)
    for name in ("host_shape", "node_local", "host_res_flat", "host_res_base", "host_node_flat", "host_node_base"):
        got, want = getattr(ctx, name), getattr(ref, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    for got, want in zip(ctx.shapes, ref.shapes):
        for name in ("nodes", "kind", "local_ids", "nl", "gateway", "gateway_any", "failed", "adj", "nvlink_ll"):
            assert getattr(got, name) == getattr(want, name), name
        assert np.array_equal(got.token_cap, want.token_cap, equal_nan=True)
    return ctx


def with_attr(topo_doc_nodes, node_id, **attrs):
    for n in topo_doc_nodes:
        if n["id"] == node_id:
            n.setdefault("attrs", {}).update(attrs)


def compile_with(hosts, change):
    doc = mini(hosts=hosts).doc
    doc = {**doc, "nodes": [dict(n, attrs=dict(n.get("attrs") or {})) for n in doc["nodes"]],
           "links": [dict(l) for l in doc["links"]]}
    change(doc)
    return Topology.compile(doc)


def test_alike_hosts_share_one_shape():
    ctx = assert_same_shapes(mini(hosts=4))
    assert len(ctx.shapes) == 1 and ctx.host_shape.tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("values", [(0, 0.0), (0, False), (0.0, -0.0), (1, True), (0, [0])])
def test_attrs_that_compare_equal_but_print_differently_split_hosts(values):
    """gpu0's index: ``values[0]`` in h0 and h2, ``values[1]`` in h1. The signature holds the
    attrs' repr, so h1 shares with neither (``0 == 0.0 == False``, ``1 == True``, ``0.0 == -0.0``)."""
    def change(doc):
        for host, value in zip(("h0", "h1", "h2"), (values[0], values[1], values[0])):
            with_attr(doc["nodes"], f"{host}/gpu0", index=value)
    ctx = assert_same_shapes(compile_with(3, change))
    assert ctx.host_shape.tolist() == [0, 1, 0]


def test_capacities_failures_and_lost_uplinks_split_hosts():
    """h1: gpu1 with its own 100 Gb/s limit; h2: gpu0 down; h3: its gpu0-pcie0 link down; h4: nic1's
    uplink down (nic1 is no longer a gateway); h5: nvs0-gpu1 at 1800 instead of 3600."""
    def change(doc):
        for n in doc["nodes"]:
            if n["id"] == "h1/gpu1":
                n["capacity_gbps"] = 100.0
        for l in doc["links"]:
            if l["a"] == "h5/gpu1" and l["b"] == "h5/nvs0":
                l["capacity_gbps"] = 1800.0
    topo = compile_with(7, change)
    ids = {l: i for i, l in enumerate(topo.link_ids)}
    failed = FailureSet(frozenset([topo.node_index["h2/gpu0"]]),
                        frozenset([ids["h3/gpu0-h3/pcie0"], ids["h4/nic1-leaf1"]]))
    ctx = assert_same_shapes(topo, failed)
    assert ctx.host_shape.tolist() == [0, 1, 2, 3, 4, 5, 0]


def test_parallel_links_are_ordered_by_id_and_foreign_ids_keep_their_name():
    """Two gpu0==nvs0 links per host, the later one with the smaller id ('a-…' before 'z-…'); in h1
    the NVSwitch is called ``nvsX`` (no ``h1/`` prefix), so it sorts apart from h0's."""
    def change(doc):
        extra = []
        for h in ("h0", "h1"):
            for l in doc["links"]:
                if l["a"] == f"{h}/gpu0" and l["b"] == f"{h}/nvs0":
                    l["id"] = f"z-{h}"
                    extra.append(dict(l, id=f"a-{h}", capacity_gbps=1800.0))
        doc["links"] += extra
        for n in doc["nodes"]:
            if n["id"] == "h1/nvs0":
                n["id"] = "nvsX"
        for l in doc["links"]:
            for end in ("a", "b"):
                if l[end] == "h1/nvs0":
                    l[end] = "nvsX"
    ctx = assert_same_shapes(compile_with(3, change))
    assert ctx.host_shape.tolist() == [0, 1, 2]
    assert len(ctx.shapes[0].adj[ctx.shapes[0].local_ids.index("gpu0")]) == 3   # pcie0 and nvs0 twice


def test_nan_link_capacity_falls_back_to_the_walk():
    """NaN never equals itself in a signature: the hosts with one never share a shape."""
    def change(doc):
        for l in doc["links"]:
            if l["a"].endswith("/mem0"):
                l["capacity_gbps"] = float("nan")
    ctx = assert_same_shapes(compile_with(3, change), walks=True)
    assert ctx.host_shape.tolist() == [0, 1, 2]


def test_a_dgx_cluster_with_storage():
    topo = Topology.from_document(build_cluster("dgx-h100", 8, storage=2))
    nic = topo.node_index["h3/nic2"]
    assert_same_shapes(topo, FailureSet(frozenset([nic]), frozenset()))


# ------------------------------------------------------------------------------ uplinks
def uplinks_walk(topo, link_failed, forwarder):
    """The former build_uplinks: every link, both directions, one test each."""
    def is_uplink(u, v):
        if topo.node_host[v] is not None:
            return False
        if topo.node_host[u] is None and topo.node_kind[u] not in ENDPOINT_KINDS:
            return False
        return topo.node_kind[v] not in ENDPOINT_KINDS
    ups = [[] for _ in range(topo.num_nodes)]
    wired = np.zeros(topo.num_nodes, dtype=bool)
    for l in range(topo.num_links):
        a, b = int(topo.link_a[l]), int(topo.link_b[l])
        for u, v in ((a, b), (b, a)):
            if is_uplink(u, v):
                wired[u] = True
                if not link_failed[l] and forwarder[v]:
                    ups[u].append((l, v))
    ptr = np.concatenate([[0], np.cumsum([len(u) for u in ups])])
    return wired, ptr, [x[0] for u in ups for x in u], [x[1] for u in ups for x in u]


@pytest.mark.parametrize("down", [(), ("leaf0",), ("h1/nic0-leaf0", "storage0-sleaf0")])
def test_uplinks_equal_the_walk(down):
    """Storage boxes (host-less endpoints) included; a leaf down, or a NIC's and a box's link."""
    topo = Topology.from_document(build_cluster("dgx-h100", 4, storage=2))
    nodes = [topo.node_index[d] for d in down if d in topo.node_index]
    links = [topo.link_index[d] for d in down if d in topo.link_index]
    assert len(nodes) + len(links) == len(down)
    ctx = RoutingContext(topo, FailureSet(frozenset(nodes), frozenset(links)))
    got = build_uplinks(topo, ctx.link_failed, ctx.forwarder)
    wired, ptr, link, sw = uplinks_walk(topo, ctx.link_failed, ctx.forwarder)
    assert np.array_equal(got.wired, wired) and got.up_ptr.tolist() == ptr.tolist()
    assert got.up_link.tolist() == link and got.up_sw.tolist() == sw


# ------------------------------------------------------------------------------ switch paths
@pytest.mark.parametrize("failed_spine,batch_pairs", [(False, None), (True, None), (False, 7)])
def test_switch_paths_of_every_pair_at_once(failed_spine, batch_pairs, monkeypatch):
    """Every pair of switches of a three-tier fabric (16 leaves, 2 pod spines, 1 core bundled
    to both) in one call: pairs at 0 to 2 hops, unreachable ones when the pod spines are down;
    in one batch, or in batches of 7 pairs (and 7 searched targets)."""
    if batch_pairs is not None:
        monkeypatch.setattr(fabric_module, "_PAIRS_PER_BATCH", batch_pairs)
    topo = Topology.from_document(build_cluster("dgx-h100", 16, tiers=3, leaves_per_rail=2))
    spines = frozenset(i for i, r in enumerate(topo.node_role) if r == "spine")
    failed = FailureSet(spines, frozenset()) if failed_spine else FailureSet()
    ctx = RoutingContext(topo, failed)
    switches = ctx.forwarders.tolist()
    xs = np.repeat(np.array(switches), len(switches))
    ys = np.tile(np.array(switches), len(switches))
    batch = FabricPaths(topo, ctx.link_failed, ctx.forwarder)
    batch.prepare_pairs(xs, ys)
    counts = set()
    for x, y in zip(xs.tolist(), ys.tolist()):
        assert batch.switch_paths(x, y) == plain_paths(ctx.fabric, x, y), (topo.node_ids[x], topo.node_ids[y])
        counts.add(len(batch.switch_paths(x, y)))
    # Healthy: 1 (a switch to itself), 2 (leaf to leaf over either spine), 17 (spine to spine
    # over any of the 16 leaves or the core); both spines down leave every switch on its own.
    assert counts == ({0, 1} if failed_spine else {1, 2, 17})


@pytest.mark.parametrize("failed_spine", [False, True])
def test_distances_of_many_targets_equal_one_search_each(failed_spine):
    """Bit-parallel search over every switch as a target; an isolated extra switch (no links)
    and, with the pod spines down, leaves and core cut apart: unreachable entries are -1 in both."""
    topo = Topology.from_document(build_cluster("dgx-h100", 16, tiers=3, leaves_per_rail=2))
    doc = {**topo.doc, "nodes": topo.doc["nodes"] + [{"id": "lonely", "kind": "switch", "attrs": {}}]}
    topo = Topology.compile(doc)
    spines = frozenset(topo.node_index[s] for s in ("spine0", "spine1"))
    ctx = RoutingContext(topo, FailureSet(spines if failed_spine else frozenset(), frozenset()))
    switches = ctx.forwarders.tolist()
    assert topo.node_index["lonely"] in switches
    batch = FabricPaths(topo, ctx.link_failed, ctx.forwarder)
    batch._distances_of(switches)
    for y in switches:
        assert batch.dist[y].tolist() == ctx.fabric.distances_to(y).tolist(), topo.node_ids[y]
    assert (batch.dist[topo.node_index["lonely"]] == -1).sum() == len(switches) - 1
    assert failed_spine == any((batch.dist[y] == -1).sum() > 1 for y in switches if topo.node_ids[y] != "lonely")


def test_seg_table_joins_lists_and_blocks_in_order():
    table = SegTable()
    assert table.add("a", [[1, 2], [3]], [2.0, 1.0]) == (0, 2)
    assert table.add_csr("b", np.array([0, 3]), np.array([4, 5, 6])) == (2, 2)
    assert table.add("c", [[7]]) == (4, 1)
    assert table.add_csr("b", np.array([1]), np.array([9])) == (2, 2)     # known key: unchanged
    ptr, tokens, weights = table.arrays()
    assert ptr.tolist() == [0, 2, 3, 3, 6, 7]
    assert tokens.tolist() == [1, 2, 3, 4, 5, 6, 7]
    assert weights.tolist() == [2.0, 1.0, 1.0, 1.0, 1.0]


def test_first_appearance_codes_tell_values_as_a_dict_does():
    from designer.engine.numbers import first_appearance_codes

    nan = float("nan")
    values = ["b", None, "a", "b", 1, 1.0, True, nan, nan, float("nan"), None, "a", 2]
    distinct, codes = first_appearance_codes(values)
    want = dict.fromkeys(values)
    assert distinct == list(want) and distinct[:3] == ["b", None, "a"]
    assert codes.dtype == np.int64
    assert codes.tolist() == [distinct.index(v) for v in values]   # identity, then ==: as a dict
    assert codes.tolist()[4:10] == [3, 3, 3, 4, 4, 5]
    assert first_appearance_codes([])[0] == [] and len(first_appearance_codes([])[1]) == 0
    with pytest.raises(TypeError):
        first_appearance_codes(["a", ["b"]])


def load_with(change):
    """A 3-host DGX-H100 cluster (rail-optimized) changed by ``change``, loaded by
    ``Topology.from_document`` (validation by columns: the attrs keys are known, and a routing
    attr no node has takes no column)."""
    doc = build_cluster("dgx-h100", 3, fabric="rail-optimized")
    change(doc)
    return Topology.from_document(doc)


@pytest.mark.parametrize("key", ["nic", "rail", "socket", "role", "index"])
def test_loaded_topology_knows_its_attr_keys_and_a_rare_key_splits(key):
    """h1/gpu1 alone has ``key`` = 7 (``nic``: the only node with that key): h1 shares with no
    other host; from the compiled document (keys unknown) the same shapes."""
    def change(doc):
        with_attr(doc["nodes"], "h1/gpu1", **{key: 7})
    from designer.engine.model.topology import node_attr_keys

    loaded = load_with(change)
    assert key in node_attr_keys(loaded)
    assert node_attr_keys(Topology.compile(loaded.doc)) is None
    assert assert_same_shapes(loaded).host_shape.tolist() == [0, 1, 0]
    assert assert_same_shapes(Topology.compile(loaded.doc)).host_shape.tolist() == [0, 1, 0]


def test_loaded_topology_without_a_routing_key_groups_as_the_walk():
    topo = load_with(lambda doc: None)
    from designer.engine.model.topology import node_attr_keys

    assert "nic" not in node_attr_keys(topo)
    assert assert_same_shapes(topo).host_shape.tolist() == [0, 0, 0]
