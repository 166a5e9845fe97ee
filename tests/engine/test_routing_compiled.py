"""The AOT routing kernels (``path_lengths``/``path_entries`` of ``routing/assemble.py``,
``hashed_rows`` of ``routing/hashing.py``) and the numpy paths they replace give the same
``Routes``, array for array (dtype, values, order), on several host templates, fabrics, failure
sets, NIC policies and multipath modes; without the AOT module the numpy paths answer; the
kernels decline (-1) rather than read or write out of range; the JIT build of the kernels agrees
with the numpy answer too. Also the order-preserving helpers of ``router._classify`` and
``fabric._register_pairs`` against the ``np.unique`` answers they replace.
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.solve.kernels import loader as _kernel_loader
from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import FailureSet, assemble, hashing, router
from designer.engine.routing.context import cached_context
from designer.engine.routing.csr import dense_ids, group_keys
from designer.engine.routing.fabric import _pair_ranks
from designer.engine.routing.hashing import FABRIC_SALT, flow_hash, hashed_rows
from designer.engine.routing.nic_policies import resolve
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows

needs_aot = pytest.mark.skipif(_kernel_loader.aot_kernels() is None, reason="AOT kernels not built")

FIELDS = ("flow_ptr", "flow_res", "owner", "share", "src", "first", "count", "status", "_subject", "_nic",
          "weight", "stripes", "class_code")

CLUSTERS = {
    "dgx-rail": ("dgx-h100", 4, {"fabric": "rail-optimized", "leaves_per_rail": 2}),
    "dgx-storage": ("dgx-h100", 2, {"fabric": "rail-optimized", "storage": 2}),
    "mi300x-leafspine": ("amd-mi300x", 4, {"fabric": "leaf-spine", "hosts_per_rack": 2}),
    "nvl72": ("gb200-nvl72", 2, {"fabric": "rail-optimized"}),
}


def _topology(name: str) -> Topology:
    template, hosts, options = CLUSTERS[name]
    return Topology.from_document(build_cluster(template, hosts, **options))


def _flows(topo: Topology, stride: int = 1) -> Flows:
    """Every GPU (and storage box) to every other endpoint, and one GPU to itself."""
    ends = np.array([i for i, k in enumerate(topo.node_kind) if k in ("gpu", "storage")], dtype=np.int64)
    src, dst = np.meshgrid(ends, ends, indexing="ij")
    off = src != dst
    src, dst = np.append(src[off], ends[0])[::stride], np.append(dst[off], ends[0])[::stride]
    return Flows.from_pairs(src, dst, 1e9)


def _failures(topo: Topology, which: str) -> FailureSet:
    if which == "healthy":
        return FailureSet()
    kinds = topo.node_kind
    down = [next(i for i, k in enumerate(kinds) if k == "nic"), [i for i, k in enumerate(kinds) if k == "gpu"][3]]
    if which == "nvswitch":   # an NVSwitch (fewer striped NVLink alternatives), else a PCIe switch
        down.append(next((i for i, k in enumerate(kinds) if k == "nvswitch"),
                         next(i for i, k in enumerate(kinds) if k in ("pcie_switch", "cpu"))))
    return FailureSet.coerce((down, (0, len(topo.link_a) // 2)))


def _route(topo, failures, flows, policy, multipath, seed=7):
    name, strategy = resolve(policy)
    ctx = cached_context(topo, failures)
    return router.Router(ctx, flows, strategy, multipath, seed, name).run()


def _assert_same_routes(a, b) -> None:
    for field in FIELDS:
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and x.shape == y.shape, field
        assert x.tobytes() == y.tobytes(), field   # every bit, NaN or not
    assert a.class_names == b.class_names


def _without_aot(monkeypatch) -> None:
    monkeypatch.setattr(assemble, "aot_kernels", lambda: None)
    monkeypatch.setattr(hashing, "aot_kernels", lambda: None)


def _counting_compiled(monkeypatch) -> list:
    """Record whether each assembly went through the kernels (True) or declined (False)."""
    used, compiled = [], assemble._compiled_paths

    def counted(*args):
        out = compiled(*args)
        used.append(out is not None)
        return out

    monkeypatch.setattr(assemble, "_compiled_paths", counted)
    return used


@needs_aot
@pytest.mark.parametrize("cluster", sorted(CLUSTERS))
@pytest.mark.parametrize("failures", ["healthy", "nic_gpu_link", "nvswitch"])
@pytest.mark.parametrize("policy", ["affinity", "pxn", "any", "static"])
@pytest.mark.parametrize("multipath", ["hash", "split"])
def test_compiled_routes_equal_the_numpy_routes(monkeypatch, cluster, failures, policy, multipath):
    topo = _topology(cluster)
    fail = _failures(topo, failures)
    flows = _flows(topo, stride=7 if multipath == "split" and policy == "any" else 1)
    used = _counting_compiled(monkeypatch)
    compiled = _route(topo, fail, flows, policy, multipath)
    assert used and all(used)   # the kernels answered
    monkeypatch.undo()
    _without_aot(monkeypatch)
    used = _counting_compiled(monkeypatch)
    plain = _route(topo, fail, flows, policy, multipath)
    assert used == [False] * len(used)
    assert compiled.num_paths > 0
    _assert_same_routes(compiled, plain)


@needs_aot
@pytest.mark.parametrize("seed", [0, 1, 12345, -3, 2**62 + 5])
def test_hashed_rows_kernel_equals_the_numpy_expression(monkeypatch, seed):
    rng = np.random.default_rng(abs(seed) % 1000)
    n = 5000
    flows = Flows.from_pairs(rng.integers(0, 10**6, n), rng.integers(-5, 10**9, n), 1.0)
    flows.pattern[:] = rng.integers(0, 2**31 - 1, n).astype(flows.pattern.dtype)
    flows.index[:] = rng.integers(-2**40, 2**62, n).astype(flows.index.dtype)
    first = rng.integers(-1, 1000, n).astype(np.int64)
    count = rng.integers(-1, 70, n).astype(np.int64)
    expected = first + np.where(first >= 0, (flow_hash(flows, seed, FABRIC_SALT)
                                             % np.maximum(count, 1).astype(np.uint64)).astype(np.int64), 0)
    got = hashed_rows(flows, seed, FABRIC_SALT, first, count)
    assert got.dtype == np.int64 and np.array_equal(got, expected)
    assert hashing._compiled_rows(flows, seed, FABRIC_SALT, first, count) is not None
    _without_aot(monkeypatch)
    assert np.array_equal(hashed_rows(flows, seed, FABRIC_SALT, first, count), expected)


def _a_small_assembly():
    """A hand-made assembly: singles, an intra piece (host-mapped) with a choice per path, rows."""
    tab_ptr = np.array([0, 2, 3, 3, 5], dtype=np.int64)   # intra rows 0..1 (base 0), rows 0..1 (base 3)
    tab_data = np.array([1, 0, 2, 40, 41], dtype=np.int64)
    pieces = np.array([0, 0, -1, -1, 0, 0,
                       1, 1, 0, 0, 0, 2,
                       2, 2, -1, -1, 3, 1], dtype=np.int64)
    firsts = np.array([5, -1, 0, 0, 0, -1], dtype=np.int64)   # 2 flows, 3 columns
    hosts = np.array([1, 0], dtype=np.int64)
    owner = np.array([0, 0, 1], dtype=np.int64)
    choices = np.array([0, 1, 0], dtype=np.int64)
    host_base = np.array([0, 3], dtype=np.int64)
    host_flat = np.array([10, 11, 12, 20, 21, 22], dtype=np.int64)
    return pieces, firsts, hosts, choices, owner, 2, tab_ptr, tab_data, host_base, host_flat


def _run_kernels(k, pieces, firsts, hosts, choices, owner, n, tab_ptr, tab_data, host_base, host_flat):
    flow_ptr = np.empty(len(owner) + 1, dtype=np.int64)
    total = k.path_lengths(pieces, firsts, hosts, choices, owner, n, tab_ptr, tab_data, flow_ptr)
    if total < 0:
        return None
    flow_res = np.empty(total, dtype=np.int64)
    if k.path_entries(pieces, firsts, hosts, choices, owner, n, tab_ptr, tab_data, host_base, host_flat,
                      flow_ptr, flow_res) < 0:
        return None
    return flow_ptr.tolist(), flow_res.tolist()


# Flow 0 (two paths): single 5, intra row 0 / row 1 (choice 0 / 1) through host 1, the second
# table's row 0; flow 1: no single, intra row 0 through host 0, no row of the second table.
SMALL_ANSWER = ([0, 5, 9, 11], [5, 21, 20, 40, 41, 5, 22, 40, 41, 11, 10])


def _kernel_namespaces():
    spaces = [pytest.param("jit", id="jit")]
    if _kernel_loader.aot_kernels() is not None:
        spaces.append(pytest.param("aot", id="aot"))
    return spaces


def _kernels(which: str):
    if which == "aot":
        return _kernel_loader.aot_kernels()
    from designer.engine.solve.kernels import jit as _maxmin_kernels   # imports numba: the JIT build of the same code

    return _maxmin_kernels


@pytest.mark.parametrize("which", _kernel_namespaces())
def test_path_kernels_on_a_hand_made_assembly(which):
    assert _run_kernels(_kernels(which), *_a_small_assembly()) == SMALL_ANSWER


@pytest.mark.parametrize("which", _kernel_namespaces())
@pytest.mark.parametrize("spoil", ["row past the piece", "choice past the rows", "owner", "host", "token",
                                   "pointer past the data", "column", "single with a choice"])
def test_path_kernels_decline_out_of_range(which, spoil):
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in _a_small_assembly()]
    pieces, firsts, hosts, choices, owner, _, tab_ptr, _, host_base, _ = args
    if spoil == "row past the piece":
        firsts[4] = 1          # flow 1's table row 1 of a piece of one row
    elif spoil == "choice past the rows":
        choices[1] = 2
    elif spoil == "owner":
        owner[2] = 2
    elif spoil == "host":
        hosts[0] = 2
    elif spoil == "token":
        host_base[1] = 5       # host 1's tokens past host_flat
    elif spoil == "pointer past the data":
        tab_ptr[4] = 6
    elif spoil == "column":
        pieces[13] = 3
    else:
        pieces[3] = 0
    assert _run_kernels(_kernels(which), *args) is None


@needs_aot
def test_a_declined_assembly_is_the_numpy_one(monkeypatch):
    """When the kernel declines, the numpy gather answers (same routes as without the module)."""
    topo = _topology("dgx-rail")
    flows = _flows(topo)
    kernels = _kernel_loader.aot_kernels()

    class Declining:
        def __getattr__(self, name):
            return getattr(kernels, name)

        @staticmethod
        def path_lengths(*args):
            return -1

    monkeypatch.setattr(assemble, "aot_kernels", lambda: Declining())
    used = _counting_compiled(monkeypatch)
    declined = _route(topo, FailureSet(), flows, "affinity", "split")
    assert used and not any(used)
    monkeypatch.undo()
    _assert_same_routes(declined, _route(topo, FailureSet(), flows, "affinity", "split"))


def _unique_groups(cols):
    distinct, first, inverse = np.unique(dense_ids(cols), return_index=True, return_inverse=True)
    return len(distinct), first, inverse.reshape(-1)


@pytest.mark.parametrize("widths", [(3,), (241, 241, 241, 2), (5000, 5000, 3), (2**40, 7), (1, 1)])
def test_lexicographic_ids_group_and_order_as_dense_ids(widths):
    rng = np.random.default_rng(len(widths))
    n = 20_000
    cols = [rng.integers(-1, w - 1, n, endpoint=True).astype(np.int64) for w in widths]
    cols[0][:50] = -1
    keys = router._lexicographic_ids(cols, n)
    distinct, first, inverse = group_keys(keys)
    count, first_u, inverse_u = _unique_groups(cols)
    assert len(distinct) == count
    assert np.array_equal(first, first_u) and np.array_equal(inverse, inverse_u)


def test_pair_ranks_equal_unique_and_searchsorted():
    rng = np.random.default_rng(3)
    for space, n in ((64, 10), (900, 100_000), (10**8, 5000)):
        keys = rng.integers(-1, space, n).astype(np.int64)
        needed, at = _pair_ranks(keys, space)
        expected = np.unique(keys[keys >= 0])
        assert needed.dtype == expected.dtype and np.array_equal(needed, expected)
        assert np.array_equal(at, np.where(keys >= 0, np.searchsorted(expected, keys), len(expected)))
    keys = np.array([-3, 0, 5, -1], dtype=np.int64)   # below -1: the np.unique path
    needed, at = _pair_ranks(keys, 64)
    assert needed.tolist() == [0, 5] and at.tolist() == [2, 0, 1, 2]


@pytest.mark.parametrize("cluster", sorted(CLUSTERS))
@pytest.mark.parametrize("policy", ["affinity", "pxn", "static"])
def test_gateways_bound_per_node_equal_those_bound_per_flow(monkeypatch, cluster, policy):
    """``nic_policies._bind`` binds the distinct nodes met, then gathers per flow; against the
    per-flow binding (the threshold at 0, then out of reach), with a NIC down and storage ends."""
    from designer.engine.routing import nic_policies

    topo = _topology(cluster)
    fail = _failures(topo, "nic_gpu_link")
    flows = _flows(topo)
    monkeypatch.setattr(nic_policies, "_PER_NODE_MIN", 0)
    per_node = _route(topo, fail, flows, policy, "hash")
    monkeypatch.setattr(nic_policies, "_PER_NODE_MIN", 10**12)
    _assert_same_routes(per_node, _route(topo, fail, flows, policy, "hash"))


@pytest.mark.parametrize("which", _kernel_namespaces())
@pytest.mark.parametrize("case", ["column", "base", "choice"])
def test_layout_checks_do_not_wrap(which, case):
    """Found in review: the layout checks multiplied and added in int64, so a column of 2^32 - 1
    with 2^32 flows, or a base / choice column near 2^63, wrapped and passed; the AOT build then
    read far outside its arrays (a segfault). Checked by division now: refused."""
    a = lambda *v: np.array(v, dtype=np.int64)   # noqa: E731
    none = np.zeros(0, dtype=np.int64)
    flow_ptr = np.empty(2, dtype=np.int64)
    k = _kernels(which)
    if case == "column":
        got = k.path_lengths(a(2, 2**32 - 1, -1, -1, 0, 1), a(0), none, none, a(0), 2**32, a(0, 1), a(5), flow_ptr)
    elif case == "base":
        got = k.path_lengths(a(2, 0, -1, -1, 2**63 - 1, 1), a(0), none, none, a(0), 1, a(0, 1), a(5), flow_ptr)
    else:
        got = k.path_lengths(a(2, 0, -1, 2**63 - 1, 0, 1), a(0), none, a(0), a(0), 1, a(0, 1), a(5), flow_ptr)
    assert got == -1


def test_negative_node_ids_bind_per_flow_as_before(monkeypatch):
    """Found in review: per-node binding marked a negative node id on another node's slot, so the
    flow lost its gateway (NO_NIC) where the per-flow binding had wrapped it; ids outside the
    nodes now take the per-flow binding, as before."""
    from designer.engine.routing import nic_policies, nic_tables

    topo = _topology("dgx-rail")
    ctx = cached_context(topo, FailureSet())
    n = nic_policies._PER_NODE_MIN
    gpus = np.flatnonzero(np.array([k == "gpu" for k in topo.node_kind]))
    nodes = np.resize(gpus[1:], n).astype(np.int64)
    nodes[0] = gpus[0] - len(topo.node_ids)        # node gpus[0] (met nowhere else), as a negative id
    hosts = ctx.node_hidx[nodes].astype(np.int64)
    todo, storage = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    per_node, per_flow = np.full(n, -9, dtype=np.int64), np.full(n, -9, dtype=np.int64)
    nic_policies._bind(ctx, per_node, nodes, hosts, todo, storage, nic_tables.affinity)
    monkeypatch.setattr(nic_policies, "_PER_NODE_MIN", 10 ** 12)   # the per-flow binding
    nic_policies._bind(ctx, per_flow, nodes, hosts, todo, storage, nic_tables.affinity)
    assert per_flow[0] >= 0 and per_node.tolist() == per_flow.tolist()
