"""Fabric routing: uplinks from hosts to switches, equal-cost switch paths (ECMP), uplink choice.

- *Uplinks*: the alive links from a host node (a NIC, usually) or a host-less endpoint to a
  fabric forwarder, as CSR (:func:`build_uplinks`).
- *Switch paths*: equal-cost shortest paths (hop count) between two switches, enumerated once
  per (first switch, last switch) pair (:class:`FabricPaths`, at most
  :data:`~designer.engine.routing.limits.MAX_EQUAL_COST_PATHS`), every pair a routing call
  needs at once (:meth:`FabricPaths.prepare_pairs`).
- *Per flow* (:func:`fabric_segments`): the uplink pair (hashed among the fewest-hop pairs when a
  gateway has several uplinks), then the switch paths between their switches; ``multipath``
  later picks one by hash or splits over all of them.
"""
from __future__ import annotations

import numpy as np

from designer.engine.routing.csr import SegTable, range_positions
from designer.engine.routing.hashing import UPLINK_SALT, flow_hash
from designer.engine.routing.limits import MAX_EQUAL_COST_PATHS
from designer.engine.model.topology import ENDPOINT_KINDS, Topology, value_codes

__all__ = ["Uplinks", "build_uplinks", "node_classes", "FabricPaths", "fabric_segments"]


class Uplinks:
    """Alive uplinks as CSR: node ``u``'s are ``up_link[up_ptr[u]:up_ptr[u+1]]`` (link indices),
    reaching switches ``up_sw[...]``; ``wired[u]``: ``u`` has an uplink at all, alive or not."""

    __slots__ = ("wired", "up_ptr", "up_link", "up_sw")

    def __init__(self, wired, up_ptr, up_link, up_sw):
        self.wired, self.up_ptr, self.up_link, self.up_sw = wired, up_ptr, up_link, up_sw


def node_classes(topo: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Per node: outside every host; of an endpoint kind (cached on the topology)."""
    got = topo.__dict__.get("_fabric_node_classes")
    if got is None:
        # From the kind and host codes the topology keeps (one value per distinct kind / host,
        # not per node: no Python step per node).
        kinds, kind_code = value_codes(topo, "node_kind")
        hosts, host_code = value_codes(topo, "node_host")
        got = topo.__dict__["_fabric_node_classes"] = (
            np.array([h is None for h in hosts], dtype=bool)[host_code],
            np.array([k in ENDPOINT_KINDS for k in kinds], dtype=bool)[kind_code])
    return got


def build_uplinks(topo: Topology, link_failed: np.ndarray, forwarder: np.ndarray) -> Uplinks:
    """For every host node with a link to the fabric, and every host-less endpoint: its alive
    links to fabric forwarders (in link order).

    A link u→v is an uplink when v is a fabric node of a forwarding kind and u is not (a host
    node or a host-less endpoint): so at most one direction of a link is.

    Parameters
    ----------
    topo : Topology
    link_failed : ndarray of bool
        Per link: down.
    forwarder : ndarray of bool
        Per node: an alive fabric node that forwards.

    Returns
    -------
    Uplinks
    """
    hostless, endpoint = node_classes(topo)
    fabric_side = hostless & ~endpoint
    a, b = topo.link_a, topo.link_b
    ab = ~fabric_side[a] & fabric_side[b]
    ba = ~fabric_side[b] & fabric_side[a]
    link = np.flatnonzero(ab | ba)
    u = np.where(ab[link], a[link], b[link])
    v = np.where(ab[link], b[link], a[link])
    wired = np.zeros(topo.num_nodes, dtype=bool)
    wired[u] = True
    alive = ~link_failed[link] & forwarder[v]
    link, u, v = link[alive], u[alive], v[alive]
    order = np.argsort(u, kind="stable")   # per node, its links in link order
    up_ptr = np.zeros(topo.num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=topo.num_nodes), out=up_ptr[1:])
    return Uplinks(wired, up_ptr, link[order].astype(np.int64), v[order].astype(np.int64))


# Pairs whose switch paths are enumerated together (and targets searched together): the
# temporaries of a batch stay within tens of MB (1,024 pairs x 64 partial paths x a spine's
# 68 steps, when every step must be scanned).
_PAIRS_PER_BATCH = 1024


class FabricPaths:
    """Shortest paths between fabric switches over the alive links between forwarders, with
    per-target distance tables and per-pair path lists cached (shared by every context whose
    failures leave the fabric untouched)."""

    def __init__(self, topo: Topology, link_failed: np.ndarray, forwarder: np.ndarray):
        self.topo = topo
        self._links = np.flatnonzero(~link_failed & forwarder[topo.link_a] & forwarder[topo.link_b])
        self._adj: list[list[tuple[int, int]]] | None = None
        # Distances live in forwarder-rank space (a few thousand switches), not node space
        # (~100k nodes at 16k GPUs, most of them inside hosts): a per-target table of node size
        # cost 0.8 MB each, over 2 GB at 16k GPUs. ``rank`` maps node -> rank (-1: not a forwarder).
        self.rank = np.full(topo.num_nodes, -1, dtype=np.int64)
        fwd = np.flatnonzero(forwarder)
        self.rank[fwd] = np.arange(len(fwd))
        self._csr = self._forwarder_csr(fwd)
        self.dist: dict[int, np.ndarray] = {}
        self._steps_of: dict[int, list] = {}
        self.pair_paths: dict[tuple[int, int], list[list[int]]] = {}
        # Per (x, y): the switch paths as (row lengths, tokens) arrays (prepare_pairs).
        self.pair_rows: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._step_csr = None
        self._step_key = None

    @property
    def adj(self) -> list[list[tuple[int, int]]]:
        """Per node: its alive links to other forwarders as (neighbour, link), in link order
        (built when first asked: routing reads the CSR tables, not these 100k lists)."""
        if self._adj is None:
            topo, links = self.topo, self._links
            self._adj = [[] for _ in range(topo.num_nodes)]
            for l, a, b in zip(links.tolist(), topo.link_a[links].tolist(), topo.link_b[links].tolist()):
                self._adj[a].append((b, l))
                self._adj[b].append((a, l))
        return self._adj

    def _forwarder_csr(self, fwd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The alive forwarder-to-forwarder adjacency as CSR over forwarder ranks (each row in
        any order: only distances are read from it)."""
        a, b = self.topo.link_a[self._links], self.topo.link_b[self._links]
        u, v = self.rank[np.concatenate([a, b])], self.rank[np.concatenate([b, a])]
        order = np.argsort(u, kind="stable")
        ptr = np.zeros(len(fwd) + 1, dtype=np.int64)
        np.cumsum(np.bincount(u, minlength=len(fwd)), out=ptr[1:])
        return ptr, v[order]

    def distances_to(self, target: int) -> np.ndarray:
        """Hop distance to switch ``target`` of every forwarder, indexed by forwarder rank
        (``dist[self.rank[node]]``; -1 unreachable). Cached.

        Breadth-first, one numpy gather per hop level (a fabric is a few levels deep), instead
        of one Python step per switch.
        """
        dist = self.dist.get(target)
        if dist is None:
            ptr, nbr = self._csr
            dist = np.full(len(ptr) - 1, -1, dtype=np.int64)
            t = self.rank[target]
            if t >= 0:
                dist[t] = 0
                frontier, level = np.array([t], dtype=np.int64), 0
                while len(frontier):
                    level += 1
                    starts, lens = ptr[frontier], ptr[frontier + 1] - ptr[frontier]
                    pos = np.arange(int(lens.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
                    reached = nbr[pos]
                    frontier = np.unique(reached[dist[reached] < 0])
                    dist[frontier] = level
            self.dist[target] = dist
        return dist

    def distance(self, x: int, y: int) -> int:
        """Hop count from switch ``x`` to switch ``y`` over alive fabric links (-1: none)."""
        r = self.rank[x]
        return int(self.distances_to(y)[r]) if r >= 0 else (0 if x == y else -1)

    def _steps(self, u: int) -> list[tuple[int, int, list[int]]]:
        """Every step out of forwarder ``u``, in (neighbour, link) order: (neighbour, its rank,
        the resources of the step: link direction, then the neighbour's node resource). Cached."""
        steps = self._steps_of.get(u)
        if steps is None:
            topo, node_res, rank = self.topo, self.topo.node_resource, self.rank
            steps = self._steps_of[u] = [
                (v, int(rank[v]), [topo.link_resource(l, u)] + ([int(node_res[v])] if node_res[v] >= 0 else []))
                for v, l in sorted(self.adj[u])]
        return steps

    def switch_paths(self, x: int, y: int) -> list[list[int]]:
        """Equal-cost paths switch x → switch y as resource lists (links and node resources of the
        switches), at most MAX_EQUAL_COST_PATHS, in depth-first order (next hops by neighbour,
        then link). Cached."""
        paths = self.pair_paths.get((x, y))
        if paths is None:
            lengths, tokens = self.rows_of(x, y)
            ends = np.cumsum(lengths).tolist()
            flat = tokens.tolist()
            paths = self.pair_paths[(x, y)] = [flat[e - n:e] for e, n in zip(ends, lengths.tolist())]
        return paths

    def rows_of(self, x: int, y: int) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`switch_paths` of (x, y) as (length of each path, their resources one after the
        other)."""
        rows = self.pair_rows.get((x, y))
        if rows is None:
            self.prepare_pairs(np.array([x], dtype=np.int64), np.array([y], dtype=np.int64))
            rows = self.pair_rows[(x, y)]
        return rows

    def prepare_pairs(self, xs: np.ndarray, ys: np.ndarray) -> None:
        """Enumerate the switch paths of every pair (xs[k], ys[k]) not cached yet, in batches.

        Why: one depth-first walk per pair is a Python step per next hop (226k for the 2,528
        leaf pairs of a 16,384-GPU ring). Here every pair of one hop count
        advances one level per numpy pass. The walk emits paths in lexicographic order of their
        next-hop choices and stops at the cap; expanding each level's partial paths in order and
        keeping each pair's first MAX_EQUAL_COST_PATHS gives the same paths (every partial path
        lies on a shortest path, so it completes). Pairs are independent, so batches of
        :data:`_PAIRS_PER_BATCH` bound the temporaries (an all-to-all can need 100k pairs).
        """
        todo = [(x, y) for x, y in dict.fromkeys(zip(xs.tolist(), ys.tolist())) if (x, y) not in self.pair_rows]
        for lo in range(0, len(todo), _PAIRS_PER_BATCH):
            self._prepare_batch(todo[lo:lo + _PAIRS_PER_BATCH])

    def _prepare_batch(self, todo: list[tuple[int, int]]) -> None:
        x = np.array([p[0] for p in todo], dtype=np.int64)
        y = np.array([p[1] for p in todo], dtype=np.int64)
        targets = sorted(set(y.tolist()))
        self._distances_of(targets)
        table = np.stack([self.dist[t] for t in targets])   # row r: distances to targets[r]
        row = np.searchsorted(np.array(targets, dtype=np.int64), y)
        rx = self.rank[x]
        hops = np.where(rx >= 0, table[row, np.maximum(rx, 0)], -1)
        target_rank = self.rank[np.array(targets, dtype=np.int64)]   # per row of ``table``
        for d in np.unique(hops).tolist():
            sel = np.flatnonzero(hops == d)
            lengths, tokens, count = self._paths_of_hops(d, x[sel], rx[sel], table, row[sel], target_rank)
            ends = np.cumsum(count)
            row_ends = np.concatenate([[0], np.cumsum(lengths)])
            for i, end, n in zip(sel.tolist(), ends.tolist(), count.tolist()):
                first = end - n
                self.pair_rows[todo[i]] = (lengths[first:end], tokens[row_ends[first]:row_ends[end]])

    def _paths_of_hops(self, d: int, x: np.ndarray, rx: np.ndarray, table: np.ndarray, row: np.ndarray,
                       target_rank: np.ndarray):
        """The paths of pairs whose source ``x`` (rank ``rx``) is ``d`` hops from its target
        (``table[row]``: the target's distances; ``target_rank[row]``: its rank): per path its
        length and tokens, per pair its path count."""
        node_res = self.topo.node_resource
        start = node_res[x]
        if d < 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(len(x), np.int64)
        ptr, nbr, link_res, nbr_res = self._steps_csr()
        pair = np.arange(len(x), dtype=np.int64)   # per partial path: its pair, in path order
        cur = rx
        levels = []
        for level in range(1, d + 1):
            parent, step = _first_children(ptr, nbr, table, row, pair, cur, d - level, len(x),
                                           (self._step_keys(), target_rank))
            levels.append((parent, step))
            pair, cur = pair[parent], nbr[step]
        # Walk back from the last level: column 0 the source's own resource, then per hop the
        # link direction and the next switch's resource (-1 where a switch has none).
        cols = np.full((len(pair), 1 + 2 * d), -1, dtype=np.int64)
        at = np.arange(len(pair), dtype=np.int64)
        for level in range(d, 0, -1):
            parent, step = levels[level - 1]
            s = step[at]
            cols[:, 2 * level - 1], cols[:, 2 * level] = link_res[s], nbr_res[s]
            at = parent[at]
        cols[:, 0] = start[pair]
        present = cols >= 0
        return (present.sum(axis=1).astype(np.int64), cols[present],
                np.bincount(pair, minlength=len(x)).astype(np.int64))

    def _steps_csr(self):
        """Every step out of every forwarder as CSR over forwarder ranks, each forwarder's in
        (neighbour, link) order (:meth:`_steps`'s): neighbour rank, link resource, the
        neighbour's node resource (-1: none)."""
        if self._step_csr is None:
            topo, links = self.topo, self._links
            u = np.concatenate([topo.link_a[links], topo.link_b[links]])
            v = np.concatenate([topo.link_b[links], topo.link_a[links]])
            l = np.concatenate([links, links])
            order = np.lexsort((l, v, self.rank[u]))
            u, v, l = u[order], v[order], l[order]
            ptr = np.zeros(int((self.rank >= 0).sum()) + 1, dtype=np.int64)
            np.cumsum(np.bincount(self.rank[u], minlength=len(ptr) - 1), out=ptr[1:])
            self._step_csr = (ptr, self.rank[v], 2 * l + (topo.link_a[l] != u), topo.node_resource[v])
        return self._step_csr

    def _step_keys(self) -> np.ndarray:
        """Per step of :meth:`_steps_csr`: ``rank of its switch × forwarders + neighbour rank``,
        non-decreasing (a switch's steps are in neighbour order, and ranks follow node order)."""
        if self._step_key is None:
            ptr, nbr = self._steps_csr()[:2]
            width = len(ptr) - 1
            self._step_key = np.repeat(np.arange(width, dtype=np.int64) * width, np.diff(ptr)) + nbr
        return self._step_key

    def _distances_of(self, targets: list[int]) -> None:
        """:meth:`distances_to` of every target not cached yet, all in one breadth-first search
        that carries a bit per target (``_hop_counts``)."""
        todo = [t for t in targets if t not in self.dist]
        ranked = [t for t in todo if self.rank[t] >= 0]
        for lo in range(0, len(ranked), _PAIRS_PER_BATCH):
            batch = ranked[lo:lo + _PAIRS_PER_BATCH]
            for t, dist in zip(batch, _hop_counts(*self._csr, self.rank[batch])):
                self.dist[t] = dist
        for t in todo:
            self.distances_to(t)


def _hop_counts(ptr: np.ndarray, nbr: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Hop count from each of ``sources`` to every vertex of the CSR graph (rows: sources; -1:
    unreachable), by one breadth-first search whose frontier holds, per vertex, a bitset of the
    sources that reach it at this level: a level is one gather and one OR-reduction per vertex.

    Why: one search per target (:meth:`FabricPaths.distances_to`) repeats the walk for each of
    the 512 leaves of a 16,384-GPU ring; this is one walk for all of them (scipy's csgraph is
    slower here, and costs more to import than the search).
    """
    n, k = len(ptr) - 1, len(sources)
    bit = np.arange(k, dtype=np.int64)
    # The bitsets in 64-bit words (the OR-reduction handles 8 times fewer elements), read
    # bytewise: a little-endian word's bytes are its bits 0-7, 8-15, …, so byte j of a row holds
    # the sources 8j..8j+7 either way. With the mask fill below this replaced uint8 bitsets
    # and index lists.
    frontier = np.zeros((n, (k + 63) // 64), dtype="<u8")
    frontier.view(np.uint8)[sources, bit // 8] = (1 << (bit % 8)).astype(np.uint8)   # sources are distinct
    # A level's new bits, unpacked, are one mask over the table (read transposed): no
    # nonzero() index lists, no scattered writes.
    hops = np.full((k, n), -1, dtype=np.int64)
    hops[bit, sources] = 0
    seen = frontier.copy()
    has = np.flatnonzero(ptr[1:] > ptr[:-1])
    level = 0
    while frontier.any():
        level += 1
        reached = np.zeros_like(frontier)
        if len(has):   # rows without neighbours are empty, so each has-row's run ends where the next starts
            reached[has] = np.bitwise_or.reduceat(frontier[nbr], ptr[has], axis=0)
        frontier = reached & ~seen
        seen |= frontier
        new = np.unpackbits(frontier.view(np.uint8), axis=1, count=k, bitorder="little").view(bool)
        np.copyto(hops, level, where=new.T)
    return hops


def _next_hops(ptr, nbr, table, row, cur, remaining: int, last_hop):
    """The steps out of ``cur`` to a switch ``remaining`` hops from the target of ``table[row]``
    (per partial path), found once per distinct (target, switch): per distinct one the start and
    number of its steps in the returned step array, and each partial path's distinct one.
    ``last_hop``: (:meth:`FabricPaths._step_keys`, rank of each row's target)."""
    width = len(ptr) - 1
    distinct, combo = _distinct(row * width + cur, len(table) * width)
    d_row, d_cur = distinct // width, distinct % width
    if remaining == 0:
        # The step lands on the target itself: its steps from a switch are one run of the
        # (switch, neighbour)-sorted steps, found by binary search. Scanning all the switch's
        # steps instead was 78% of the steps scanned for a 16,384-GPU ring (a spine's 68 for 1).
        step_key, target_rank = last_hop
        key = d_cur * width + target_rank[d_row]
        lo = np.searchsorted(step_key, key, side="left")
        lens = np.searchsorted(step_key, key, side="right") - lo
        return _running_starts(lens), lens, range_positions(lo, lens), combo
    deg = ptr[d_cur + 1] - ptr[d_cur]
    degrees = np.unique(deg).tolist()
    if len(degrees) > _MAX_DEGREE_GROUPS:
        return _scanned_hops(ptr, nbr, table, d_row, d_cur, remaining) + (combo,)
    return _scanned_by_degree(ptr, nbr, table, d_row, d_cur, remaining, deg, degrees) + (combo,)


# Key spaces up to this many bytes per key are deduplicated by a presence table (_distinct).
_DENSE_BYTES_PER_KEY = 64


def _distinct(keys: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` of keys in ``[0, space)``: by a presence table
    (no sort) when the space is at most 64 bytes per key, since scanning it costs less than
    sorting them."""
    if space > _DENSE_BYTES_PER_KEY * len(keys):
        distinct, inverse = np.unique(keys, return_inverse=True)
        return distinct, inverse.reshape(-1)
    seen = np.zeros(space, dtype=bool)
    seen[keys] = True
    distinct = np.flatnonzero(seen)
    rank = np.empty(space, dtype=np.int64)   # only the distinct keys' entries are written and read
    rank[distinct] = np.arange(len(distinct), dtype=np.int64)
    return distinct, rank[keys]


# Above this many distinct switch degrees among the switches scanned, one flat scan
# (:func:`_scanned_hops`) instead of one matrix per degree.
_MAX_DEGREE_GROUPS = 8


def _running_starts(lens: np.ndarray) -> np.ndarray:
    return np.cumsum(lens) - lens


def _scanned_hops(ptr, nbr, table, d_row, d_cur, remaining: int):
    """(start, count, steps) of the steps out of switch ``d_cur[k]`` to a switch ``remaining``
    hops from the target of ``table[d_row[k]]``, every step of each switch scanned (in order)."""
    owner, step = _expand(ptr, np.arange(len(nbr), dtype=np.int64), d_cur)
    ok = table[d_row[owner], nbr[step]] == remaining
    owner, step = owner[ok], step[ok]
    lens = np.bincount(owner, minlength=len(d_cur))
    return _running_starts(lens), lens, step


def _scanned_by_degree(ptr, nbr, table, d_row, d_cur, remaining: int, deg, degrees):
    """:func:`_scanned_hops`, the switches of one degree scanned as one (switches × degree)
    matrix: no per-step owner, position and row arrays. Each degree's steps are laid out
    together (the callers read them through start and count only).

    Why: three hops from the target a pod spine's 68 steps are scanned for its 4 up-links (1.8M
    steps for the tree of a 16,384-GPU ring); the flat scan's per-step owner, position and row
    gathers were most of its time."""
    flat, n_cols = table.reshape(-1), table.shape[1]
    start = np.zeros(len(d_cur), dtype=np.int64)
    lens = np.zeros(len(d_cur), dtype=np.int64)
    found, offset = [], 0
    for g in degrees:
        if g == 0:
            continue
        sel = np.flatnonzero(deg == g)
        steps = ptr[d_cur[sel]][:, None] + np.arange(g, dtype=np.int64)
        ok = flat[(d_row[sel] * n_cols)[:, None] + nbr[steps]] == remaining
        n_ok = np.count_nonzero(ok, axis=1)
        lens[sel] = n_ok
        start[sel] = offset + _running_starts(n_ok)
        found.append(steps[ok])   # row-major: each switch's steps in order
        offset += len(found[-1])
    return start, lens, (np.concatenate(found) if found else np.zeros(0, dtype=np.int64))


def _expand(ptr, values, at, lens=None):
    """For each k and each entry of CSR row ``at[k]`` (its first ``lens[k]`` if given), in
    order: (k, that entry of ``values``)."""
    return _expand_runs(ptr[at], ptr[at + 1] - ptr[at] if lens is None else lens, values)


def _expand_runs(starts, lens, values):
    """For each k and each of ``values[starts[k]:starts[k] + lens[k]]``, in order: (k, it)."""
    owner = np.repeat(np.arange(len(starts), dtype=np.int64), lens)
    return owner, values[range_positions(starts, lens)]


def _first_children(ptr, nbr, table, row, pair, cur, remaining: int, n_pairs: int, last_hop):
    """(partial path, step) of the next hops of the partial paths at ``cur``, in order, the first
    MAX_EQUAL_COST_PATHS of each pair only (partial paths sorted by ``pair``; ``table[row[p]]``:
    distances to pair p's target).

    Why in rounds: finding next hops scans every step of a switch (a pod spine's down-links
    too), and once a pair has 64 children its later partial paths add none. Round r scans the
    partial paths of rank [2^r - 1, 2^(r+1) - 1) in their pair, for pairs still short of the
    cap; only the children kept are generated.
    """
    limit = MAX_EQUAL_COST_PATHS
    n = len(pair)
    starts = np.flatnonzero(np.concatenate([[True], pair[1:] != pair[:-1]])) if n else np.zeros(0, np.int64)
    run = np.diff(np.concatenate([starts, [n]]))
    rank = np.arange(n, dtype=np.int64) - np.repeat(starts, run)
    first = np.zeros(n, dtype=np.int64)    # per partial path: where its next hops start in ``found``
    count = np.zeros(n, dtype=np.int64)
    found, offset, children = [], 0, np.zeros(n_pairs, dtype=np.int64)
    lo, width = 0, 1
    while True:
        sel = np.flatnonzero((rank >= lo) & (rank < lo + width) & (children[pair] < limit))
        if len(sel) == 0:
            break
        hop_start, hop_count, hop_step, combo = _next_hops(ptr, nbr, table, row[pair[sel]], cur[sel], remaining,
                                                           last_hop)
        first[sel] = offset + hop_start[combo]
        count[sel] = hop_count[combo]
        children += np.bincount(pair[sel], weights=count[sel], minlength=n_pairs).astype(np.int64)
        found.append(hop_step)
        offset += len(hop_step)
        lo, width = lo + width, 2 * width
    before = np.cumsum(count) - count
    before -= np.repeat(before[starts], run)   # children of the pair's earlier partial paths
    steps = np.concatenate(found) if found else np.zeros(0, np.int64)
    return _expand_runs(first, np.clip(limit - before, 0, count), steps)


def fabric_segments(ctx, table: SegTable, flows, idx: np.ndarray, gs: np.ndarray, gd: np.ndarray, seed: int):
    """Fabric part of flows ``idx`` from gateway ``gs`` to gateway ``gd`` (global nodes).

    Uplink choice (hash among the gateways' uplinks that reach the other side soonest), then the
    equal-cost switch paths, registered in ``table`` keyed by switch pair (so few distinct keys).
    ``ctx`` is the :class:`~designer.engine.routing.context.RoutingContext`.

    Returns
    -------
    first, count, up_res, down_res : ndarray of int64
        Per flow: first fabric alternative in ``table`` and their number (0 when none), and the
        uplink and downlink resources (-1 when none).
    """
    topo, up_ptr = ctx.topo, ctx.up_ptr
    n_up = np.diff(up_ptr)   # per node: its uplinks
    ns, nd = n_up[gs], n_up[gd]
    valid = (ns > 0) & (nd > 0)
    # Without a node of several uplinks no flow is multi: its four per-flow passes are saved.
    multi = valid & ((ns > 1) | (nd > 1)) if bool((n_up > 1).any()) else None
    if len(ctx.up_link) == 0:
        return np.full(len(idx), -1), np.zeros(len(idx), np.int64), np.full(len(idx), -1), np.full(len(idx), -1)
    nf = len(ctx.forwarders)
    if multi is not None and multi.any():
        us, ud = up_ptr[gs], up_ptr[gd]  # index into up_* arrays: first uplink
        _choose_uplinks(ctx, flows.take(idx[multi]), seed, gs, gd, us, ud, multi)
        us, ud = np.where(valid, us, 0), np.where(valid, ud, 0)
        link_s, sw_s = ctx.up_link[us], ctx.up_sw[us]
        link_d, sw_d = ctx.up_link[ud], ctx.up_sw[ud]
        up_res = 2 * link_s + (topo.link_a[link_s] != gs)
        down_res = 2 * link_d + (topo.link_a[link_d] != sw_d)
        keys = np.where(valid, ctx.forwarder_rank[sw_s] * nf + ctx.forwarder_rank[sw_d], -1)
    else:
        # Every flow takes its gateways' first uplinks: read them (and the switch pair key's two
        # terms) per node, then per flow.
        sw_node, up_node, down_node = _first_uplinks(ctx, n_up)
        rank_node = ctx.forwarder_rank[sw_node]
        up_res, down_res = up_node[gs], down_node[gd]
        keys = np.where(valid, (rank_node * nf)[gs] + rank_node[gd], -1)

    first, count = _register_pairs(ctx, table, keys, nf)
    count = np.where(first >= 0, count, 0)
    return first, count, np.where(count > 0, up_res, -1), np.where(count > 0, down_res, -1)


def _register_pairs(ctx, table: SegTable, keys: np.ndarray, nf: int):
    """Per flow (switch pair key ``rank(x) * nf + rank(y)``, -1 none): the first row and the
    number of rows of that pair's switch paths in ``table`` ((-1, 0) for -1), the pairs
    registered in increasing key order.

    Why not :func:`~designer.engine.routing.csr.lookup`: its two per-key tables span every
    switch pair (896² for a 16,384-GPU ring, 13 MB a call), and its per-key callback cost
    more than the registration itself."""
    needed, at = _pair_ranks(keys, nf * nf)
    xs, ys = ctx.forwarders[needed // nf], ctx.forwarders[needed % nf]
    ctx.fabric.prepare_pairs(xs, ys)
    rows = ctx.fabric.pair_rows
    got = [table.add_csr(key, *rows[pair]) for key, pair in zip(needed.tolist(), zip(xs.tolist(), ys.tolist()))]
    first_of = np.array([g[0] for g in got] + [-1], dtype=np.int64)   # the extra last one: key -1
    count_of = np.array([g[1] for g in got] + [0], dtype=np.int64)
    return first_of[at], count_of[at]


def _pair_ranks(keys: np.ndarray, space: int):
    """(the distinct keys >= 0 of ``keys``, increasing, as ``np.unique`` gives them; per key its
    position among them, ``len(distinct)`` for a negative key). By a presence table when the ``space`` of
    keys is small against their number, else by ``np.unique`` and ``np.searchsorted``.

    Why: 1,024 GPUs' all-to-all has 1.04M fabric flows over 7,968 switch pairs: a table of a few
    hundred kB costs a fraction of the sort and the binary searches."""
    if len(keys) and space <= max(4 * len(keys), 1 << 16) and int(keys.min()) >= -1:
        seen = np.zeros(space + 1, dtype=bool)   # key -1 lands on the extra last slot
        seen[keys] = True
        needed = np.flatnonzero(seen[:space])
        rank = np.empty(space + 1, dtype=np.int64)
        rank[needed] = np.arange(len(needed), dtype=np.int64)
        rank[space] = len(needed)
        return needed, rank[keys]
    needed = np.unique(keys[keys >= 0])
    return needed, np.where(keys >= 0, np.searchsorted(needed, keys), len(needed))


def _first_uplinks(ctx, n_up: np.ndarray):
    """Per node: the switch of its first uplink, and that link's resource towards the switch
    and back (what a flow leaving and one entering through the node cross; arbitrary for a node
    without uplinks, whose flows do not route)."""
    first = np.where(n_up > 0, ctx.up_ptr[:-1], 0)
    link, sw = ctx.up_link[first], ctx.up_sw[first]
    nodes = np.arange(len(n_up))
    return sw, 2 * link + (ctx.topo.link_a[link] != nodes), 2 * link + (ctx.topo.link_a[link] != sw)


def _choose_uplinks(ctx, flows, seed: int, gs, gd, us, ud, multi) -> None:
    """Gateways with several uplinks (dual-port NICs): among the (source uplink, destination
    uplink) pairs with the fewest switch hops, pick one by the flow hash (``flows`` are those of
    ``multi``, in order)."""
    h = flow_hash(flows, seed, salt=UPLINK_SALT)
    for k, (i, a, b) in enumerate(zip(np.flatnonzero(multi).tolist(), gs[multi].tolist(), gd[multi].tolist())):
        cands = _nearest_uplink_pairs(ctx, a, b)
        if cands:
            us[i], ud[i] = cands[int(h[k] % np.uint64(len(cands)))]


def _nearest_uplink_pairs(ctx, a: int, b: int) -> list[tuple[int, int]]:
    """(uplink of a, uplink of b) pairs, as indices into ``up_*``, with the fewest switch hops."""
    best, cands = None, []
    for ia in range(int(ctx.up_ptr[a]), int(ctx.up_ptr[a + 1])):
        for ib in range(int(ctx.up_ptr[b]), int(ctx.up_ptr[b + 1])):
            d = ctx.fabric.distance(int(ctx.up_sw[ia]), int(ctx.up_sw[ib]))
            if d < 0:
                continue
            if best is None or d < best:
                best, cands = d, [(ia, ib)]
            elif d == best:
                cands.append((ia, ib))
    return cands

