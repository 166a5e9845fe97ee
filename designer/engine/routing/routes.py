"""Routed flows (:class:`Routes`): the CSR of paths the solver takes, and why a flow is unroutable.

Also the two ways routes are recombined: :func:`replace_flows` (a failure re-routes only the
flows it touches) and :func:`fold_virtual` (``any`` + ``split``, and ``affinity`` for a GPU
with several equally near NICs, route one virtual flow per NIC and fold them back into their
flow).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from designer.engine.routing.csr import gather_rows, range_positions
from designer.engine.model.topology import Topology
from designer.engine.solve.aggregate import first_in_order

__all__ = [
    "Routes", "REASONS", "path_nodes_from_resources", "replace_flows", "fold_virtual", "take_flows",
    "RoutesJoiner",
    "OK", "SRC_DOWN", "DST_DOWN", "NIC_DOWN", "NO_NIC", "NO_INTRA_SRC", "NO_INTRA_DST", "NO_FABRIC",
    "NO_INTRA", "UPLINK_DOWN", "SAME_NODE",
]

# Reason codes for unroutable flows (formatted lazily: a failure sweep can make 100k of them).
OK, SRC_DOWN, DST_DOWN, NIC_DOWN, NO_NIC, NO_INTRA_SRC, NO_INTRA_DST, NO_FABRIC, \
    NO_INTRA, UPLINK_DOWN, SAME_NODE = range(11)

REASONS = {
    SRC_DOWN: "source {node} is down",
    DST_DOWN: "destination {node} is down",
    NIC_DOWN: "{kind} {node}'s only NIC under policy {policy} is down",
    NO_NIC: "{node} has no NIC connected to the fabric",
    NO_INTRA_SRC: "no path inside the host from {node} to its NIC (transit rules or failures)",
    NO_INTRA_DST: "no path inside the host from the NIC to {node} (transit rules or failures)",
    NO_FABRIC: "no fabric path towards {node}",
    NO_INTRA: "no path inside the host to {node} (transit rules or failures)",
    UPLINK_DOWN: "{kind} {node}'s only NIC under policy {policy} has no working link to the fabric",
    SAME_NODE: "source and destination are the same node ({node})",
}


@dataclass
class Routes:
    """Routed flows. Paths (sub-flows) of flow ``f`` are ``first[f] : first[f] + count[f]``.

    Attributes
    ----------
    flow_ptr, flow_res : ndarray of int64
        CSR over *paths*: path ``p`` crosses resources ``flow_res[flow_ptr[p]:flow_ptr[p+1]]`` in
        path order — the solver's input. With no splitting there is one path per routed flow.
    owner : ndarray of int64
        Flow index of each path.
    share : ndarray of float64
        Fraction of its flow's bytes (and demand) each path carries; sums to 1 per routed flow.
        Proportional to ``stripes`` within a flow.
    src : ndarray of int64
        Source node of each flow (the first node of each of its paths).
    first, count : ndarray of int64
        Per flow: index of its first path and number of paths (0 when unroutable).
    status : ndarray of int8
        Per flow: 0 = ok, otherwise a reason code (see :meth:`reason`).
    class_code : ndarray of int16
        Per flow: index into ``class_names`` of its path class (-1 when unroutable).
    class_names : list of str
    weight : ndarray of float64
        Per path: its weight for the solver (``maxmin(..., weights=routes.weight)``), equal to
        its ``share``: weights sum to 1 per flow, so a flow competes with weight 1 on every
        resource all its paths cross (5/18, 4/18, 4/18, 5/18 for the 4 NVSwitch paths of a
        DGX H100 GPU pair; 1/k for each of k paths of an even split; 1 for an unsplit flow).
        Defaults to ``share``.
    stripes : ndarray of float64
        Per path: its striping multiplicity, the product of the striping weights of the segment
        alternatives it combines (5, 4, 4, 5 for that GPU pair: its NVLink counts; 1 for each
        path of an even split). Only ratios within a flow matter; :meth:`repeated` expands a
        path into ``stripes`` sub-flows. All 1 when not given.
    """

    topo: Topology
    flow_ptr: np.ndarray
    flow_res: np.ndarray
    owner: np.ndarray
    share: np.ndarray
    src: np.ndarray
    first: np.ndarray
    count: np.ndarray
    status: np.ndarray
    class_code: np.ndarray
    class_names: list[str]
    nic_policy: str = "affinity"
    _subject: np.ndarray = field(default=None, repr=False)
    _nic: np.ndarray = field(default=None, repr=False)   # per flow: the dead NIC a reason names
    weight: np.ndarray = None
    stripes: np.ndarray = None
    # (distinct Routes, per flow its route there) when these were laid out by take_flows: see
    # copies(). Not compared, not shown.
    copied_from: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.weight is None:
            self.weight = np.asarray(self.share, dtype=np.float64).copy()
        if self.stripes is None:
            self.stripes = np.ones(len(self.owner))

    @property
    def num_flows(self) -> int:
        return len(self.status)

    @property
    def num_paths(self) -> int:
        return len(self.owner)

    def ok(self) -> np.ndarray:
        """Boolean mask of routed flows."""
        return self.status == OK

    def copies(self) -> tuple | None:
        """(per path the distinct path it copies, per distinct path its first copy or None, the
        distinct paths' ``flow_ptr``, ``flow_res``) when these routes were laid out from fewer
        distinct ones (:func:`take_flows`), else None: path ``p`` crosses exactly the resources
        of distinct path ``copy_of[p]``, with its share, weight and stripes. Lets the solver
        group identical paths on the distinct ones
        (:func:`~designer.engine.solve.aggregate.aggregate_copies`).

        The first copies are found from the flows (3.2 M for the 100,000-GPU tree, not its
        11.6 M paths): when each distinct route is first taken in order and the distinct paths
        are laid out in route order, route ``j``'s paths are first copied by the first flow
        taking it, in order; otherwise None (the solver finds them on the paths)."""
        if self.copied_from is None:
            return None
        distinct, rep = self.copied_from
        copy_of = range_positions(distinct.first[rep], distinct.count[rep])
        taken = first_in_order(rep, distinct.num_flows)
        in_order = taken is not None and np.array_equal(distinct.first, np.cumsum(distinct.count) - distinct.count)
        firsts = range_positions(self.first[taken], distinct.count) if in_order else None
        return copy_of, firsts, distinct.flow_ptr, distinct.flow_res

    def path_class(self, f: int) -> str | None:
        code = int(self.class_code[f])
        return self.class_names[code] if code >= 0 else None

    def path_resources(self, p: int) -> np.ndarray:
        return self.flow_res[self.flow_ptr[p]:self.flow_ptr[p + 1]]

    def path_nodes(self, p: int) -> list[int]:
        """Node indices of path ``p`` in order (rebuilt from its link resources)."""
        return path_nodes_from_resources(self.topo, int(self.src[self.owner[p]]), self.path_resources(p))

    def flow_paths(self, f: int) -> list[list[int]]:
        """Every path (as node indices) of flow ``f``; empty when unroutable."""
        return [self.path_nodes(p) for p in range(int(self.first[f]), int(self.first[f] + self.count[f]))]

    def failed_nic(self, f: int) -> str | None:
        """The NIC whose failure (down, or no working uplink) made flow ``f`` unroutable, if any:
        ``h3/nic5`` for "GPU h3/gpu5's only NIC under policy affinity is down"."""
        if self._nic is None or self.status[f] == OK or self._nic[f] < 0:
            return None
        return self.topo.node_ids[int(self._nic[f])]

    def replace_flows(self, idx: np.ndarray, sub: Routes) -> Routes:
        """These routes with the flows ``idx`` (sorted) replaced by ``sub`` (routed for exactly
        those flows, in that order): how a failure re-routes only the flows it touches."""
        return replace_flows(self, idx, sub)

    def repeated(self) -> Routes:
        """The same routes with every path of k ``stripes`` repeated as k sub-flows of one stripe
        each, share and weight divided by k (so each weighs ``1 / stripes of its flow``): the
        former repeated-sub-flow formulation, with the per-flow normalization. Weighted max-min
        is additive on a path (k flows of weight w/k on one path get together what one flow of
        weight w gets), so solving either gives the same per-flow rates; kept to check exactly
        that (tests), and for tools that want one sub-flow per stripe.

        Raises
        ------
        ValueError
            When a path's ``stripes`` is not a positive integer.
        """
        k = np.rint(self.stripes).astype(np.int64)
        if len(k) and (np.any(k < 1) or np.any(np.abs(self.stripes - k) > 1e-9 * k)):
            raise ValueError("only integer stripes can be expanded into repeated sub-flows")
        path = np.repeat(np.arange(self.num_paths, dtype=np.int64), k)
        values, lens = gather_rows(self.flow_ptr, self.flow_res, path)
        flow_ptr = np.zeros(len(path) + 1, dtype=np.int64)
        np.cumsum(lens, out=flow_ptr[1:])
        count = np.bincount(self.owner[path], minlength=self.num_flows).astype(np.int64)
        first = np.zeros(self.num_flows, dtype=np.int64)
        np.cumsum(count[:-1], out=first[1:])
        return Routes(self.topo, flow_ptr, values, self.owner[path], (self.share / k)[path], self.src, first,
                      count, self.status, self.class_code, list(self.class_names), self.nic_policy,
                      self._subject, self._nic, (self.weight / k)[path], np.ones(len(path)))

    def reason(self, f: int) -> str | None:
        """Why flow ``f`` is unroutable (None when it is routed)."""
        code = int(self.status[f])
        if code == OK:
            return None
        ids = self.topo.node_ids
        subject = int(self._subject[f])
        name = ids[subject] if subject >= 0 else "?"
        kind = self.topo.node_kind[subject] if subject >= 0 else "node"
        return REASONS[code].format(node=name, kind=kind.upper() if kind in ("gpu", "nic") else kind,
                                    policy=self.nic_policy)




def path_nodes_from_resources(topo: Topology, start: int, resources) -> list[int]:
    """Node sequence of a path from its start node and its ordered resources.

    Parameters
    ----------
    topo : Topology
    start : int
        Index of the path's first node when it crosses no link (otherwise the first link's tail).
    resources : sequence of int
        The path's resources in order (node resources are skipped).

    Returns
    -------
    list of int
        Node indices from ``start`` to the path's last node.
    """
    two_l = 2 * topo.num_links
    resources = np.asarray(resources).tolist()
    link_a, link_b = _link_ends(topo)
    first = next((r for r in resources if r < two_l), None)
    if first is not None:
        # The first link's tail: the flow's source, or the NVSwitch of the plane it left from
        # (a flow from an NVSwitch starts at whichever switch of the plane its stripe uses).
        start = link_a[first >> 1] if (first & 1) == 0 else link_b[first >> 1]
    nodes = [start]
    for r in resources:
        if r < two_l:
            nodes.append(link_b[r >> 1] if (r & 1) == 0 else link_a[r >> 1])
    return nodes


def _link_ends(topo: Topology) -> tuple[list[int], list[int]]:
    """(tail, head) node of every link as Python lists, cached on the topology: a result lists
    20,000 flows' paths, and indexing a list is several times cheaper than a numpy scalar."""
    ends = topo.__dict__.get("_link_ends_lists")
    if ends is None:
        ends = topo.__dict__["_link_ends_lists"] = (topo.link_a.tolist(), topo.link_b.tolist())
    return ends


def replace_flows(base: Routes, idx: np.ndarray, sub: Routes) -> Routes:
    """``base`` with the flows ``idx`` (sorted) replaced by ``sub`` (see :meth:`Routes.replace_flows`)."""
    n = base.num_flows
    in_sub = np.zeros(n, dtype=bool)
    in_sub[idx] = True
    pos = np.full(n, -1, dtype=np.int64)
    pos[idx] = np.arange(len(idx))
    count = base.count.copy()
    count[idx] = sub.count
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(count[:-1], out=first[1:])
    total = int(count.sum())
    owner = np.repeat(np.arange(n, dtype=np.int64), count)
    k = np.arange(total, dtype=np.int64) - first[owner]
    use_sub = in_sub[owner]
    src_path = base.first[owner] + k
    if use_sub.any():
        src_path[use_sub] = sub.first[pos[owner[use_sub]]] + k[use_sub] + base.num_paths
    # Pool both path sets, then gather the chosen paths in flow order (CSR concatenation).
    pool_ptr = np.concatenate([base.flow_ptr[:-1], sub.flow_ptr + len(base.flow_res)])
    pool_res = np.concatenate([base.flow_res, sub.flow_res])
    pool_share = np.concatenate([base.share, sub.share])
    pool_weight = np.concatenate([base.weight, sub.weight])
    pool_stripes = np.concatenate([base.stripes, sub.stripes])
    starts = pool_ptr[src_path]
    lens = pool_ptr[src_path + 1] - starts
    flow_ptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(lens, out=flow_ptr[1:])
    gather = np.arange(int(flow_ptr[-1]), dtype=np.int64) + np.repeat(starts - flow_ptr[:-1], lens)
    names, class_code = _merge_classes(base, idx, sub)
    status = base.status.copy()
    status[idx] = sub.status
    return Routes(base.topo, flow_ptr, pool_res[gather], owner, pool_share[src_path], base.src, first, count,
                  status, class_code, names, base.nic_policy, _per_flow(base._subject, sub._subject, idx, n),
                  _per_flow(base._nic, sub._nic, idx, n), pool_weight[src_path], pool_stripes[src_path])


def _merge_classes(base: Routes, idx: np.ndarray, sub: Routes) -> tuple[list[str], np.ndarray]:
    """Class names of ``base`` extended with those of ``sub``, and the merged per-flow codes."""
    names = list(base.class_names)
    remap = np.array([names.index(c) if c in names else names.append(c) or len(names) - 1
                      for c in sub.class_names] + [-1], dtype=np.int16)
    class_code = base.class_code.copy()
    class_code[idx] = remap[sub.class_code]   # code -1 → the trailing -1
    return names, class_code


def _per_flow(a, b, idx: np.ndarray, n: int) -> np.ndarray:
    out = a.copy() if a is not None else np.full(n, -1, dtype=np.int64)
    if b is not None:
        out[idx] = b
    return out


def _index_type(size: int):
    """The smaller integer type that indexes ``size`` items."""
    return np.int32 if size < 2**31 else np.int64


def take_flows(r: Routes, rep: np.ndarray, src: np.ndarray) -> Routes:
    """Routes of ``len(rep)`` flows where flow ``i`` has exactly the paths, shares, weights,
    stripes, status and class of flow ``rep[i]`` of ``r``; ``src`` (node index per flow) is the
    new flows' sources (those of their ``rep``). Laid out as the router lays out its own
    result (paths in flow order, ``first`` the running count), so routing flows once per
    distinct route and taking them gives the arrays routing every flow would have. The result
    remembers ``(r, rep)`` (``Routes.copied_from``: what the solver can group on)."""
    n = len(rep)
    count = r.count[rep]
    first = np.zeros(n, dtype=np.int64)
    np.cumsum(count[:-1], out=first[1:])
    total = int(count.sum())
    owner = np.repeat(np.arange(n, dtype=np.int64), count)
    # A flow's paths are consecutive, and so are their entries: both gathered as one range per
    # flow (524,256 ranges for the 16,384-GPU tree, not 1.9M paths' rows).
    # Entry positions in int32 when they fit: that tree's 4.3M are 17 MB, not 34 MB (above
    # glibc's 32 MB mmap threshold, so a fresh mapping faulted in every time), at the same CPU
    # in-process. Not the path positions: four gathers by int32 indices cost more than they save.
    rep_first = r.first[rep]
    path = range_positions(rep_first, count)
    entry_lo = r.flow_ptr[rep_first]
    entries = range_positions(entry_lo, r.flow_ptr[rep_first + count] - entry_lo, dtype=_index_type(len(r.flow_res)))
    values = r.flow_res[entries]
    del entries
    flow_ptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(np.diff(r.flow_ptr)[path], out=flow_ptr[1:])
    per_flow = (lambda a: None if a is None else a[rep])
    return Routes(r.topo, flow_ptr, values, owner, r.share[path], np.asarray(src, dtype=np.int64), first,
                  count, r.status[rep], r.class_code[rep], list(r.class_names), r.nic_policy,
                  per_flow(r._subject), per_flow(r._nic), r.weight[path], r.stripes[path], (r, rep))


def fold_virtual(r: Routes, flows, rep: np.ndarray, start: np.ndarray) -> Routes:
    """Routes of virtual flows (``rep[v]`` = original flow, consecutive) → routes of the
    originals: each keeps the paths of its routable virtual flows, shares divided evenly
    among them, and solver weights with them (weights = shares, so the original weighs 1 in
    all, not 1 per NIC: on its GPU's PCIe link it competes as one flow); ``stripes`` are
    unchanged. An original is unroutable (with the first reason) only if all of them are."""
    n = len(start)
    ok_v = r.status == OK
    live = np.bincount(rep, weights=ok_v, minlength=n)
    owner = rep[r.owner]
    share = r.share / np.maximum(live[owner], 1)
    count = np.add.reduceat(r.count, start) if len(start) else np.zeros(0, np.int64)
    status = np.where(live > 0, OK, r.status[start]).astype(np.int8)
    subject = np.where(live > 0, -1, r._subject[start])
    nic = np.where(live > 0, -1, r._nic[start])
    class_code = np.full(n, -1, dtype=np.int16)
    ok_idx = np.flatnonzero(ok_v)
    flows_ok, first_ok = np.unique(rep[ok_idx], return_index=True)
    class_code[flows_ok] = r.class_code[ok_idx[first_ok]]
    return Routes(r.topo, r.flow_ptr, r.flow_res, owner, share, flows.src.astype(np.int64), r.first[start],
                  count.astype(np.int64), status, class_code, r.class_names, r.nic_policy, subject, nic,
                  share.copy(), r.stripes)


class RoutesJoiner:
    """Routes of consecutive blocks of flows (each routed on its own), joined as the routes of
    all of them: paths in flow order, ``first``/``owner``/``flow_ptr`` shifted by the blocks
    before, class codes renumbered into one list of names (in order of first appearance over the
    blocks).

    Each block is copied into its place as soon as it is added, so only one block is alive beside
    the result. Per-path and per-entry buffers are reserved at ``max_entries`` (a path has at
    least one entry) and shrunk in place at the end: pages never written are never mapped, so the
    reservation costs address space only.
    """

    _FLOW_FIELDS = {"src": np.int64, "first": np.int64, "count": np.int64, "status": np.int8,
                    "_subject": np.int64, "_nic": np.int64}
    _PATH_FIELDS = {"owner": np.int64, "share": np.float64, "weight": np.float64, "stripes": np.float64}

    def __init__(self, topo: Topology, n_flows: int, max_entries: int):
        self.topo, self.nic_policy, self.max_entries = topo, None, max_entries
        self.flow = {k: np.empty(n_flows, dtype=t) for k, t in self._FLOW_FIELDS.items()}
        self.class_code = np.empty(n_flows, dtype=np.int16)
        self.path = {k: np.empty(max_entries, dtype=t) for k, t in self._PATH_FIELDS.items()}
        self.flow_ptr = np.empty(max_entries + 1, dtype=np.int64)
        self.flow_ptr[0] = 0
        self.flow_res = np.empty(max_entries, dtype=np.int64)
        self.names: list[str] = []
        self.flows = self.paths = self.entries = 0

    def add(self, part: Routes) -> None:
        """Append the routes of the next block of flows.

        Raises
        ------
        OverflowError
            When the blocks so far have more entries than ``max_entries``.
        """
        f, p, e = self.flows, self.paths, self.entries
        nf, np_, ne = part.num_flows, part.num_paths, len(part.flow_res)
        if e + ne > self.max_entries:
            raise OverflowError(f"more than {self.max_entries:,} path entries")
        self.nic_policy = part.nic_policy
        for k in self._FLOW_FIELDS:
            self.flow[k][f:f + nf] = getattr(part, k)
        self.flow["first"][f:f + nf] += p
        remap = np.array([self.names.index(c) if c in self.names else self.names.append(c) or len(self.names) - 1
                          for c in part.class_names] + [-1], dtype=np.int16)
        self.class_code[f:f + nf] = remap[part.class_code]   # code -1 → the trailing -1
        for k in self._PATH_FIELDS:
            self.path[k][p:p + np_] = getattr(part, k)
        self.path["owner"][p:p + np_] += f
        self.flow_ptr[p + 1:p + np_ + 1] = part.flow_ptr[1:]
        self.flow_ptr[p + 1:p + np_ + 1] += e
        self.flow_res[e:e + ne] = part.flow_res
        self.flows, self.paths, self.entries = f + nf, p + np_, e + ne

    def routes(self) -> Routes:
        """The joined routes (the buffers shrunk to what the blocks filled)."""
        for arr, used in [(self.flow_ptr, self.paths + 1), (self.flow_res, self.entries),
                          *[(a, self.paths) for a in self.path.values()]]:
            arr.resize(used, refcheck=False)   # in place: realloc gives the tail back
        f, pa = self.flow, self.path
        return Routes(self.topo, self.flow_ptr, self.flow_res, pa["owner"], pa["share"], f["src"], f["first"],
                      f["count"], f["status"], self.class_code, self.names, self.nic_policy, f["_subject"],
                      f["_nic"], pa["weight"], pa["stripes"])
