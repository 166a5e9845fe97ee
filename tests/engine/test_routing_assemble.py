"""Path assembly (``routing/assemble.py``) against a per-path Python concatenation of the same
pieces, and block routing (``router._route_blocks``) against one Router call.

    host h0: gpu0..gpu7 ─ NVSwitches ─ nic0..nic7 ─┐
    host h1: gpu0..gpu7 ─ NVSwitches ─ nic0..nic7 ─┴─ rail-optimized leaves / spines

The reference walks every routed flow and every combination of its pieces' alternatives (piece 0
the least significant digit), takes each piece's row — the fabric one by the flow hash under
``hash`` — maps intra-host tokens through the host, and multiplies the striping weights in piece
order: what :meth:`Router._assemble` produced before it was vectorized. Blocks: an all-to-all
(plus a GPU to itself, and failures) routed in blocks of 7 flows has every ``Routes`` field of
one call, and its max-min rates are exactly those of one call.
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.solve.maxmin import maxmin
from designer.engine.routing import FailureSet, router
from designer.engine.routing.context import cached_context
from designer.engine.routing.hashing import FABRIC_SALT, flow_hash
from designer.engine.routing.nic_policies import resolve
from designer.engine.routing.routes import OK
from designer.engine.model.topology import Topology
from designer.engine.traffic.flows import Flows

FIELDS = ("flow_ptr", "flow_res", "owner", "share", "src", "first", "count", "status", "_subject", "_nic",
          "weight", "stripes")


def _topology(template: str, hosts: int = 2) -> Topology:
    return Topology.from_document(build_cluster(template, hosts, fabric="rail-optimized"))


def _alltoall(topo: Topology) -> Flows:
    """Every GPU to every other one, and one GPU to itself (unroutable)."""
    gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)
    src, dst = np.meshgrid(gpus, gpus, indexing="ij")
    off = src != dst
    return Flows.from_pairs(np.append(src[off], gpus[0]), np.append(dst[off], gpus[0]), 1e9)


def _reference(r: router.Router, pieces) -> tuple[list[list[int]], list[float]]:
    """Per path, in order: its resources and its stripes product, by plain Python loops."""
    ctx = r.ctx
    tables = {"intra": r.intra.arrays(), "fabric": r.fabric.arrays(), "domain": r.domain.arrays()}
    fab_hash = flow_hash(r.flows, r.seed, salt=FABRIC_SALT) if r.multipath == "hash" else None
    counts = [r._alternatives(p) for p in pieces]
    paths, stripes = [], []
    for f in range(r.n):
        if r.status[f] != OK:
            continue
        for combo in range(int(np.prod([int(c[f]) for c in counts]))):
            res, weight = [], 1.0
            for piece, c in zip(pieces, counts):
                choice, combo = combo % int(c[f]), combo // int(c[f])
                if piece[0] == "single":
                    res += [int(piece[1][f])] if piece[1][f] >= 0 else []
                    continue
                first = int(piece[1][f])
                if first < 0:
                    continue
                if piece[0] == "fabric" and fab_hash is not None:
                    choice = int(fab_hash[f] % np.uint64(max(int(piece[2][f]), 1)))
                ptr, data, w = tables[piece[0]]
                row = data[ptr[first + choice]:ptr[first + choice + 1]].tolist()
                weight *= float(w[first + choice])
                if piece[0] == "intra":
                    base = int(ctx.host_res_base[int(piece[3][f])])
                    row = [int(ctx.host_res_flat[base + t]) for t in row]
                res += row
            paths.append(res)
            stripes.append(weight)
    return paths, stripes


def _route_capturing(monkeypatch, ctx, flows, policy: str, multipath: str):
    name, strategy = resolve(policy)
    seen = {}
    assemble = router.Router._assemble

    def capture(self, src, pieces):
        seen["router"], seen["pieces"] = self, pieces
        return assemble(self, src, pieces)

    monkeypatch.setattr(router.Router, "_assemble", capture)
    return router.Router(ctx, flows, strategy, multipath, 11, name).run(), seen


@pytest.mark.parametrize("template", ["dgx-h100", "amd-mi300x", "gb200-nvl72"])
@pytest.mark.parametrize("policy", ["affinity", "pxn", "any"])
@pytest.mark.parametrize("multipath", ["hash", "split"])
def test_assembly_matches_per_path_reference(monkeypatch, template, policy, multipath):
    topo = _topology(template)
    flows = _alltoall(topo)
    if policy == "any" and multipath == "split":
        flows = flows.take(np.arange(0, len(flows), 5))   # fanned out per NIC: keep it small
    routes, seen = _route_capturing(monkeypatch, cached_context(topo, FailureSet()), flows, policy, multipath)
    # Under a fanned-out policy the captured router is the one of the virtual flows (one per
    # NIC); folding them back keeps its paths and stripes as they are.
    paths, stripes = _reference(seen["router"], seen["pieces"])
    assert len(paths) == routes.num_paths > 0
    assert [routes.path_resources(p).tolist() for p in range(routes.num_paths)] == paths
    np.testing.assert_array_equal(routes.stripes, np.array(stripes))


def test_assembly_with_failures_matches_reference(monkeypatch):
    """An NVSwitch and a NIC down: fewer intra alternatives, some flows unroutable."""
    topo = _topology("dgx-h100")
    down = [next(i for i, k in enumerate(topo.node_kind) if k == "nvswitch"),
            next(i for i, k in enumerate(topo.node_kind) if k == "nic")]
    ctx = cached_context(topo, FailureSet.coerce((down, ())))
    routes, seen = _route_capturing(monkeypatch, ctx, _alltoall(topo), "affinity", "split")
    paths, stripes = _reference(seen["router"], seen["pieces"])
    assert (routes.status != OK).sum() > 1
    assert [routes.path_resources(p).tolist() for p in range(routes.num_paths)] == paths
    np.testing.assert_array_equal(routes.stripes, np.array(stripes))


@pytest.mark.parametrize("policy,multipath", [("affinity", "hash"), ("pxn", "split"), ("any", "hash")])
def test_blocks_route_as_one_call(monkeypatch, policy, multipath):
    topo = _topology("dgx-h100", hosts=3)
    flows = _alltoall(topo)
    down = [next(i for i, k in enumerate(topo.node_kind) if k == "nic")]
    ctx = cached_context(topo, FailureSet.coerce((down, ())))
    name, strategy = resolve(policy)
    one = router._route_blocks(ctx, flows, strategy, multipath, 5, name)
    monkeypatch.setattr(router, "_ONE_BLOCK_FLOWS", 10)
    monkeypatch.setattr(router, "_BLOCK_FLOWS", 7)
    blocks = router._route_blocks(ctx, flows, strategy, multipath, 5, name)
    assert len(flows) > 10 * 7 and (one.status != OK).any()
    for field in FIELDS:
        a, b = getattr(blocks, field), getattr(one, field)
        assert a.dtype == b.dtype, field
        np.testing.assert_array_equal(a, b, err_msg=field)
    # The same class per flow (names may be numbered in another order).
    named = lambda r: [r.class_names[c] if c >= 0 else None for c in r.class_code.tolist()]   # noqa: E731
    assert named(blocks) == named(one)
    cap = topo.resource_capacity_gbps()
    rates_one = maxmin(cap, one.flow_ptr, one.flow_res, weights=one.weight).rates_gbps
    rates_blocks = maxmin(cap, blocks.flow_ptr, blocks.flow_res, weights=blocks.weight).rates_gbps
    np.testing.assert_array_equal(rates_blocks, rates_one)


def test_simulated_rates_in_blocks_equal_one_call(monkeypatch):
    """The whole simulation of a 64-GPU all-to-all (8 DGX H100, 4,032 flows) with routing in
    blocks of 500 flows: every flow's rate and completion exactly as with one Router call."""
    from designer.engine.analysis.simulate import prepare, solve_prepared

    topo = _topology("dgx-h100", hosts=8)
    work = [{"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e9}]

    def solved():
        prep = prepare({"topology": topo, "workload": work, "mode": "steady"})
        return prep, solve_prepared(prep)

    one_prep, one = solved()
    monkeypatch.setattr(router, "_ONE_BLOCK_FLOWS", 1000)
    monkeypatch.setattr(router, "_BLOCK_FLOWS", 500)
    cached_context(topo, FailureSet()).__dict__.pop("_recent_routes", None)   # route again
    blocks_prep, blocks = solved()
    assert len(one_prep.flows) == 64 * 63
    assert blocks_prep.routes is not one_prep.routes
    np.testing.assert_array_equal(blocks.flow_rate_gbps, one.flow_rate_gbps)
    np.testing.assert_array_equal(blocks.flow_completion_s, one.flow_completion_s)
    np.testing.assert_array_equal(blocks_prep.routes.flow_res, one_prep.routes.flow_res)


@pytest.mark.parametrize("high", [1, 7, 5000, 10**12])
def test_group_keys_is_numpy_unique(high):
    """Small key spans (presence table) and large ones (sort) give np.unique's three arrays."""
    from designer.engine.routing.csr import group_keys

    keys = np.random.default_rng(high).integers(0, high, 20_000)
    got = group_keys(keys)
    want = np.unique(keys, return_index=True, return_inverse=True)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b.reshape(-1))


def test_blocks_over_the_entry_limit_are_refused(monkeypatch):
    """The limit holds over all blocks, not per block."""
    from designer.engine.errors import LimitExceeded

    topo = _topology("dgx-h100", hosts=3)
    flows = _alltoall(topo)
    ctx = cached_context(topo, FailureSet())
    name, strategy = resolve("affinity")
    entries = len(router._route_blocks(ctx, flows, strategy, "hash", 0, name).flow_res)
    monkeypatch.setattr(router, "_ONE_BLOCK_FLOWS", 10)
    monkeypatch.setattr(router, "_BLOCK_FLOWS", 100)
    monkeypatch.setattr(router, "MAX_PATH_ENTRIES", entries - 1)
    with pytest.raises(LimitExceeded):
        router._route_blocks(ctx, flows, strategy, "hash", 0, name)
    monkeypatch.setattr(router, "MAX_PATH_ENTRIES", entries)
    assert len(router._route_blocks(ctx, flows, strategy, "hash", 0, name).flow_res) == entries


def test_dense_pairs_table_and_sort_agree():
    """The presence-table and the sorted numbering of (host, intra row) keys give the same ids."""
    from designer.engine.routing.assemble import _dense_pairs

    rng = np.random.default_rng(3)
    keys = {0: np.where(rng.random(500) < 0.2, -1, rng.integers(0, 300, 500)), 4: rng.integers(-1, 300, 80)}
    small_ids, small_keys = _dense_pairs(keys, 300, first_id=7)
    big_ids, big_keys = _dense_pairs(keys, 10**9, first_id=7)   # beyond the table: np.unique
    np.testing.assert_array_equal(small_keys, big_keys)
    for p in keys:
        np.testing.assert_array_equal(small_ids[p], big_ids[p])
        assert small_ids[p].dtype == np.int32
        np.testing.assert_array_equal(small_ids[p] < 0, keys[p] < 0)
        np.testing.assert_array_equal(small_keys[small_ids[p][keys[p] >= 0] - 7], keys[p][keys[p] >= 0])


def test_flow_hash_is_the_plain_splitmix_expression():
    """The in-place flow hash has the bits of the expression it computes (int64 and int32
    columns, negative values included)."""
    from designer.engine.routing.hashing import mix

    rng = np.random.default_rng(5)
    for dtype in (np.int64, np.int32):
        f = Flows.from_pairs(rng.integers(0, 10**6, 300), rng.integers(-5, 10**6, 300))
        f.index[:] = rng.integers(-3, 10**9, 300)
        f.src, f.dst, f.index = f.src.astype(dtype), f.dst.astype(dtype), f.index.astype(dtype)
        for seed, salt in ((0, 0xEC3), (2**63 + 12345, 0x51AB)):
            with np.errstate(over="ignore"):
                h = mix(f.src.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) ^ np.uint64(seed & (2**63 - 1)))
                h = mix(h ^ f.dst.astype(np.uint64))
                h = mix(h ^ (f.pattern.astype(np.uint64) << np.uint64(40)) ^ f.index.astype(np.uint64))
                h = mix(h ^ np.uint64(salt))
            np.testing.assert_array_equal(flow_hash(f, seed, salt), h)


@pytest.mark.parametrize("seed", range(4))
def test_range_positions_concatenates_ranges(seed):
    """Empty ranges (every other one in seed 0's first half) and a leading or trailing empty one."""
    from designer.engine.routing.csr import range_positions

    rng = np.random.default_rng(seed)
    lens = rng.integers(0, 4, 500)
    lens[0], lens[-1] = (0, 0) if seed % 2 == 0 else (3, 1)
    if seed == 0:
        lens[:250:2] = 0
    starts = rng.integers(0, 1000, 500)
    want = np.concatenate([np.arange(s, s + k) for s, k in zip(starts, lens)]).astype(np.int64)
    got = range_positions(starts, lens)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    assert len(range_positions(starts, np.zeros(500, np.int64))) == 0
    small = range_positions(starts, lens, dtype=np.int32)   # the positions take_flows gathers by
    assert small.dtype == np.int32
    np.testing.assert_array_equal(small, want)
    assert range_positions(starts, np.zeros(500, np.int64), dtype=np.int32).dtype == np.int32
