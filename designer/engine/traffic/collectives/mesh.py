"""Channels over a direct GPU mesh (AMD Infinity Fabric / xGMI: no switch between the GPUs).

On an NVSwitch host every channel's hop ``i → i+1`` stripes over the switches, so rotations of
one ring order load the fabric evenly. On a direct mesh (every GPU pair joined by its own link,
e.g. 8 x MI300X with 7 xGMI links per GPU) a rotation reuses the same successor links in every
channel, and a ring gets one link's bandwidth. RCCL instead spreads its channels over all of a
GPU's links: its topology search subtracts each ring's bandwidth from the links it uses before
looking for the next one, and its pre-computed MI300X models list rings whose hops together
cover every xGMI link (ROCm/rccl ``src/graph/rome_models.cc``, 8-GPU 7-link models; README "each
pair of GPUs are connected with dedicated XGMI links in a fully-connected topology",
ROCm/rccl#1270). The channels here follow that rule with constructions of our own:

- one host: directed Hamiltonian cycles that use every directed GPU⇄GPU link at most once — a
  decomposition of the complete digraph into ``m − 1`` rings where one exists (every ``m`` except
  4 and 6, Tillson 1980), found by a small depth-first search; otherwise as many disjoint rings
  as the search finds greedily;
- several hosts: rings must enter and leave each host at rail NICs with every inter-host hop
  rail-aligned. Each channel crosses a host along a Hamiltonian *path* from GPU ``a`` to GPU
  ``b`` (rails ``a`` and ``b``); the ``m/2`` zig-zag paths ``k, k+1, k−1, k+2, …, k+m/2``
  (Walecki's decomposition of the complete graph, ``m`` even) taken both ways give ``m`` paths
  that use every directed link exactly once, start at every GPU once and end at every GPU once —
  so every NIC sends one channel and receives one. The next host walks the reverse path
  (``b`` to ``a``), as the NVSwitch rings alternate direction.

The tree's intra-host chains use the same paths (the chain of channel ``c`` is the path starting
at its head GPU ``c``).
"""
from __future__ import annotations

import functools

import numpy as np

from designer.engine.traffic.collectives.domains import block_key, nvswitch_plane

__all__ = ["chain_paths", "direct_mesh", "mesh_ring_orders", "rail_paths", "ring_cycles"]

#: Depth-first steps allowed when looking for a full ring decomposition (m = 8 needs ~150; the
#: impossible m = 4 and 6 would otherwise search exhaustively).
SEARCH_STEPS = 20000


def direct_mesh(topo, block: np.ndarray) -> bool:
    """Whether the GPUs of ``block`` (three or more, one host, no NVSwitch in it) are joined
    pairwise by direct GPU⇄GPU links — a switchless mesh whose channels must be spread over
    the links (:func:`ring_cycles`)."""
    gpus = [int(g) for g in block]
    if len(gpus) < 3 or any(topo.node_kind[g] != "gpu" for g in gpus):
        return False
    members = set(gpus)
    for g in gpus:   # cheap first: NVSwitch-host GPUs have no direct GPU peer at all
        peers = {v for v, _ in topo.adjacency[g] if v in members}
        if len(peers) != len(gpus) - 1:
            return False
    return not nvswitch_plane(topo, block_key(topo, gpus[0]))


def _hamiltonian_cycles(m: int, used: set, steps: list):
    """Directed Hamiltonian cycles of the complete digraph on ``0..m−1`` from vertex 0 that avoid
    the edges in ``used`` (the edges are added to ``used`` while a cycle is yielded)."""
    path, seen = [0], {0}

    def extend():
        steps[0] += 1
        if steps[0] > SEARCH_STEPS:
            raise TimeoutError
        u = path[-1]
        if len(path) == m:
            if (u, 0) not in used:
                used.add((u, 0))
                yield list(path)
                used.discard((u, 0))
            return
        for v in range(m):
            if v in seen or (u, v) in used:
                continue
            used.add((u, v))
            seen.add(v)
            path.append(v)
            yield from extend()
            path.pop()
            seen.discard(v)
            used.discard((u, v))

    yield from extend()


def _full_decomposition(m: int) -> list[list[int]] | None:
    used: set = set()
    steps = [0]
    found: list[list[int]] = []

    def place(k: int) -> bool:
        if k == m - 1:
            return True
        for cycle in _hamiltonian_cycles(m, used, steps):
            found.append(cycle)
            if place(k + 1):
                return True
            found.pop()
        return False

    try:
        return found if place(0) else None
    except TimeoutError:
        return None


def _greedy_cycles(m: int) -> list[list[int]]:
    """Disjoint directed Hamiltonian cycles taken one at a time, first found (no backtracking)."""
    used: set = set()
    cycles: list[list[int]] = []
    while True:
        steps = [0]
        try:
            cycle = next(_hamiltonian_cycles(m, used, steps), None)
        except TimeoutError:
            cycle = None
        if cycle is None:
            return cycles
        cycles.append(cycle)
        used.update((cycle[i], cycle[(i + 1) % m]) for i in range(m))


@functools.lru_cache(maxsize=64)
def ring_cycles(m: int) -> tuple[tuple[int, ...], ...]:
    """Link-disjoint directed rings over ``m`` fully meshed GPUs (local positions ``0..m−1``).

    Every directed link ``i → j`` is used by at most one ring; ``m − 1`` rings (all links) where
    such a decomposition exists, else the rings a greedy search finds (m = 4: two).

    >>> ring_cycles(3)
    ((0, 1, 2), (0, 2, 1))
    >>> len(ring_cycles(8))
    7
    """
    if m < 2:
        return ((0,),) if m == 1 else ()
    if m == 2:
        return ((0, 1),)
    cycles = _full_decomposition(m) or _greedy_cycles(m)
    return tuple(tuple(c) for c in cycles)


@functools.lru_cache(maxsize=64)
def rail_paths(m: int) -> tuple[tuple[int, ...], ...]:
    """``m`` Hamiltonian paths over ``m`` fully meshed GPUs (``m`` even) using every directed link
    exactly once; path ``a`` starts at GPU ``a`` and every GPU ends exactly one path.

    Path ``k < m/2`` is the zig-zag ``k, k+1, k−1, k+2, k−2, …, k+m/2`` (mod m); path ``k + m/2``
    is path ``k`` reversed.

    >>> rail_paths(4)
    ((0, 1, 3, 2), (1, 2, 0, 3), (2, 3, 1, 0), (3, 0, 2, 1))
    """
    if m % 2 or m < 2:
        raise ValueError(f"rail paths need an even GPU count, not {m}")
    half = m // 2
    offsets = [0]
    for d in range(1, half):
        offsets += [d, -d]
    offsets.append(half)
    forward = [tuple((k + o) % m for o in offsets) for k in range(half)]
    return tuple(forward + [p[::-1] for p in forward])


def chain_paths(topo, blocks: list) -> list[int] | None:
    """The tree's chain order per head position on a direct mesh: ``chain[c]`` is the local
    order starting at GPU ``c`` (:func:`rail_paths`), or None where the blocks are not equal,
    even-sized direct meshes (the rotation chain is used there)."""
    m = len(blocks[0]) if blocks else 0
    if m < 4 or m % 2 or any(len(b) != m or not direct_mesh(topo, b) for b in blocks):
        return None
    return [list(p) for p in rail_paths(m)]


def _one_host(block: np.ndarray, channels: int | None) -> list[np.ndarray]:
    cycles = ring_cycles(len(block))
    count = channels or len(cycles)
    return [block[list(cycles[k % len(cycles)])] for k in range(count)]


def mesh_ring_orders(topo, blocks: list, channels: int | None = None,
                     rails: list[int] | None = None) -> list[np.ndarray] | None:
    """Ring orders over direct-mesh hosts, or None when the participants' hosts are not direct
    meshes (NVSwitch hosts, PCIe-only hosts, unequal or odd-sized blocks across hosts).

    Parameters
    ----------
    blocks : list of ndarray
        Participants per host (:func:`~.common.host_blocks`).
    channels : int, optional
        Number of channels (default: one per ring of :func:`ring_cycles` on one host, one per
        rail path of :func:`rail_paths` across hosts).
    rails : list of int, optional
        Local positions whose NICs are up; a path is kept only if both its rails are.
    """
    if not blocks or not all(direct_mesh(topo, b) for b in blocks):
        return None
    if len(blocks) == 1:
        return _one_host(blocks[0], channels)
    m = len(blocks[0])
    if m % 2 or any(len(b) != m for b in blocks):
        return None
    paths = list(rail_paths(m))
    if rails is not None:
        up = set(rails)
        paths = [p for p in paths if p[0] in up and p[-1] in up]
        if not paths:
            return []
    count = channels or len(paths)
    orders = []
    for k in range(count):
        path = np.asarray(paths[k % len(paths)], dtype=np.int64)
        orders.append(np.concatenate([b[path if h % 2 == 0 else path[::-1]] for h, b in enumerate(blocks)]))
    return orders
