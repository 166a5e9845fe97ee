"""Max-min rates of a step's transferring paths, re-solved only where something changed.

Max-min fairness decomposes over the connected components of the path–resource graph: a path's
rate depends only on the paths it shares a *bounding* resource with, transitively. Resources of
infinite capacity never saturate (the water-filling never freezes a path at one), so they do not
connect anything. When a pattern starts sending, or some of its paths finish, only the component
holding that pattern can change its rates; every other component keeps the rates it has.

:class:`ComponentRates` keeps the components at the granularity of patterns (a component is a
set of sending patterns whose finite resources, over all their paths, overlap transitively: a
superset of the true path-level components, so never finer than exact), merges them when a
pattern starts sending and splits them when a pattern stops. At each event it re-solves each
changed component alone with the same kernel as the full solve: a small one on a compact instance
(its own resources, relabelled in index order), a large one on the whole resource array.

When one component holds every transferring path there is nothing to skip, and the bookkeeping
is pure cost (an expert all-to-all: one pattern of millions of paths, whose resource set alone
took longer than a solve). So a pattern that starts sending while no other one is sends *alone*:
no resource set, no component, and every event it changes is the plain full solve of the
transferring paths. Components are built only when a second pattern starts sending beside it;
and when the components have merged into one, that one is solved as the full solve too.

**Local events.** From :data:`LOCAL_FROM_PATHS` transferring paths up, after the loop's first
:data:`LOCAL_AFTER_EVENTS` events (the index it needs must be earned back), and when the caller
reads no bottleneck (no KV-cache transfer is tracked), an event is re-solved under the max-min
certificate of :mod:`designer.engine.solve.local` instead: the finished paths' load leaves the
kept per-resource load, the started patterns' paths are free, and the certificate frees the
paths it must (those bottlenecked where the load changed, then whatever they out-rank) until the
allocation is provably the max-min one. A pipeline's send finishing a few of its ECMP-hashed paths
re-solves a few dozen paths, not the 40,000 transferring at 100,000 GPUs. A change, or a free
set, larger than a sixteenth of the transferring paths (at most :data:`LOCAL_MAX_PATHS`) is solved
whole instead, and the load is rebuilt at the next local event.

Equality with a full re-solve at every event (the job loop's reference path,
:func:`designer.engine.traffic.jobs.dag.run_job` with ``incremental=False``): on one component
the water-filling takes the same steps in the same order (the heap orders resources by share,
then index, and the relabelling keeps the index order), except that the full solve snaps a level
within ``SNAP_RTOL`` (1e-12 relative) of the level just before it — possibly another component's
— to that level. Rates therefore agree within 1e-12 relative, and the step's times within the
tolerance ``tests/engine/test_jobs_incremental.py`` asserts.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve import solver
from designer.engine.solve.local import maxmin_local, remove_load

__all__ = ["ComponentRates", "LOCAL_FROM_PATHS", "solve_paths"]

# From this many transferring paths up, an event that only adds and removes a few paths is
# re-solved locally under the max-min certificate (:mod:`designer.engine.solve.local`): below
# it a whole solve costs less than the certificate's bookkeeping.
LOCAL_FROM_PATHS = 1_000
LOCAL_MAX_PATHS = 20_000     # ... while the change and the paths it frees stay this few,
LOCAL_AFTER_EVENTS = 100     # ... and after this many events: the resource → paths index over
                             # every path costs ~16 whole solves of a 2.2 M-path all-to-all,
                             # which a step of 18 events never earns back


def _entries(ptr: np.ndarray, paths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The CSR pointer of ``paths`` alone and the positions of their entries in the full CSR."""
    lens = ptr[paths + 1] - ptr[paths]
    sub_ptr = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum(lens, out=sub_ptr[1:])
    return sub_ptr, np.arange(sub_ptr[-1], dtype=np.int64) + np.repeat(ptr[paths] - sub_ptr[:-1], lens)


def _distinct(entries: np.ndarray, n_res: int) -> np.ndarray:
    """The distinct resource indices of ``entries``, sorted: by a sort when they are few, else by
    a mark over every resource (no sort of millions of entries: an all-to-all's component)."""
    if 8 * len(entries) < n_res:
        return np.unique(entries)
    mark = np.zeros(n_res, dtype=bool)
    mark[entries] = True
    return np.flatnonzero(mark)


def solve_paths(cap: np.ndarray, ptr: np.ndarray, res: np.ndarray, demand: np.ndarray, weight: np.ndarray,
                paths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max-min rates (Gb/s) and bottleneck resources (global index, -1: demand-limited or
    unbounded) of ``paths`` (sorted path indices) alone, on the resources they cross only (on
    the whole resource array when they cross a large part of it: relabelling would cost more)."""
    sub_ptr, pos = _entries(ptr, paths)
    entries = res[pos]
    if 8 * len(entries) >= len(cap):   # large: relabelling would cost more than the idle resources
        alloc = solver.maxmin(cap, sub_ptr, entries, demand[paths], weights=weight[paths])
        return np.asarray(alloc.rates_gbps, float), np.asarray(alloc.bottleneck, np.int64)
    # Relabelled in index order (``used`` is sorted), so the heap breaks ties as the full solve does.
    used, local = np.unique(entries, return_inverse=True)   # 10× a search of ``used`` at 300k entries
    alloc = solver.maxmin(cap[used], sub_ptr, local, demand[paths], weights=weight[paths])
    bneck = np.asarray(alloc.bottleneck, np.int64)
    return np.asarray(alloc.rates_gbps, float), np.where(bneck >= 0, used[np.maximum(bneck, 0)], -1)


class ComponentRates:
    """Rates per path, kept per component of sending patterns (module docstring).

    Parameters
    ----------
    cap : ndarray, shape (R,)
        Resource capacities (Gb/s).
    ptr, res : ndarray
        CSR of every path's resources.
    demand, weight : ndarray, shape (P,)
        Per-path demand cap (Gb/s) and weight.
    pat_paths : list of ndarray
        The paths of each pattern.
    """

    def __init__(self, cap, ptr, res, demand, weight, pat_paths):
        self.cap, self.ptr, self.res, self.demand, self.weight = cap, ptr, res, demand, weight
        self.pat_paths = pat_paths
        self.rate = np.zeros(len(demand))
        self.bneck = np.full(len(demand), -1, dtype=np.int64)
        self.comp_of_res = np.full(len(cap), -1, dtype=np.int64)
        self.pat_comp = np.full(len(pat_paths), -1, dtype=np.int64)
        self.members: dict[int, set[int]] = {}
        self.comp_res: dict[int, list[np.ndarray]] = {}
        self.dirty: set[int] = set()
        self._uniq: dict[int, np.ndarray] = {}
        self._next = 0
        self.solo = -1               # the one sending pattern, kept without components (module docstring)
        self.solo_dirty = False
        self.resolved_paths = 0      # paths re-solved, summed over events (a diagnostic)
        # Local re-solves ("Local events" in the module docstring): the allocation's levels and
        # load, valid while ``load`` is not None; what changed since the last solve.
        self.local_from = LOCAL_FROM_PATHS
        self.local_after = LOCAL_AFTER_EVENTS
        self.solves = 0
        self.level = np.zeros(len(demand))
        self.load: np.ndarray | None = None
        self._started: list[int] = []
        self._gone: list[np.ndarray] = []
        self._inverse: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        self.local_events = 0        # events answered by a local re-solve (a diagnostic)

    def _resources(self, p: int) -> np.ndarray:
        """Finite-capacity resources of every path of pattern ``p`` (cached: fixed per pattern)."""
        u = self._uniq.get(p)
        if u is None:
            u = _distinct(self.res[_entries(self.ptr, self.pat_paths[p])[1]], len(self.cap))
            u = u[np.isfinite(self.cap[u])]
            self._uniq[p] = u
        return u

    def add(self, p: int) -> None:
        """Pattern ``p`` starts sending: alone if no other pattern is, else join (and merge) the
        components it overlaps (a pattern sending alone until now gets its component first)."""
        self._started.append(p)
        if self.solo < 0 and not self.members:
            self.solo, self.solo_dirty = p, True
            return
        if self.solo >= 0:
            q, self.solo, self.solo_dirty = self.solo, -1, False
            self._join(q)
        self._join(p)

    def _join(self, p: int) -> None:
        u = self._resources(p)
        lab = self.comp_of_res[u]
        ids = np.unique(lab[lab >= 0]).tolist()
        if ids:
            cid = max(ids, key=lambda c: (sum(len(a) for a in self.comp_res[c]), -c))
            for other in ids:
                if other != cid:
                    for arr in self.comp_res.pop(other):
                        self.comp_of_res[arr] = cid
                        self.comp_res[cid].append(arr)
                    for q in self.members.pop(other):
                        self.pat_comp[q] = cid
                        self.members[cid].add(q)
                    self.dirty.discard(other)
        else:
            cid, self._next = self._next, self._next + 1
            self.members[cid], self.comp_res[cid] = set(), []
        self.comp_of_res[u] = cid
        self.comp_res[cid].append(u)
        self.members[cid].add(p)
        self.pat_comp[p] = cid
        self.dirty.add(cid)

    def changed(self, p: int, still_sending: bool) -> None:
        """Some paths of pattern ``p`` finished; ``still_sending``: it has paths left. A pattern
        that stops leaves its component, which is rebuilt from its other patterns (it may split)."""
        if p == self.solo:
            self.solo, self.solo_dirty = (p, True) if still_sending else (-1, False)
            return
        cid = int(self.pat_comp[p])
        if cid < 0:
            return
        if still_sending:
            self.dirty.add(cid)
            return
        self.pat_comp[p] = -1
        rest = self.members.pop(cid) - {p}
        for arr in self.comp_res.pop(cid):
            self.comp_of_res[arr] = -1
        self.dirty.discard(cid)
        for q in sorted(rest):
            self._join(q)

    def finished(self, paths: np.ndarray) -> None:
        """Transferring ``paths`` finished (before :meth:`changed` is called for their patterns)."""
        self._gone.append(paths)

    def solve(self, active: np.ndarray, idx: np.ndarray | None = None, names: bool = True) -> None:
        """Re-solve every changed component over its transferring paths (``active``: a mask over
        paths; ``idx``: its true positions, sorted, if the caller has them). A pattern sending
        alone, or one component holding every sending pattern, is the full solve of ``idx``.
        ``names=False``: the caller reads no bottleneck, so a large problem may be re-solved
        locally (module docstring, "Local events")."""
        paths = np.flatnonzero(active) if idx is None else idx
        self.solves += 1
        if not names and len(paths) >= self.local_from and self.solves > self.local_after:
            done = self._solve_local(active, paths)
            if done:
                self.dirty.clear()
                self.solo_dirty = False
                return
            if done is None:
                self.dirty.update(self.members)   # rates were partly updated in place: solve it all
                self.solo_dirty = self.solo >= 0
        self._started, self._gone = [], []
        self._solve_components(active, paths)
        self.load = None     # rebuilt at the next local event, if one comes

    def _solve_components(self, active: np.ndarray, paths: np.ndarray) -> None:
        if self.solo_dirty or (len(self.members) == 1 and self.dirty):
            if len(paths):
                self.rate[paths], self.bneck[paths] = solve_paths(self.cap, self.ptr, self.res, self.demand,
                                                                  self.weight, paths)
                self.resolved_paths += len(paths)
            self.solo_dirty = False
            self.dirty.clear()
            return
        for cid in sorted(self.dirty):
            paths = np.concatenate([self.pat_paths[q] for q in sorted(self.members[cid])])
            paths = np.sort(paths[active[paths]])
            if len(paths):
                self.rate[paths], self.bneck[paths] = solve_paths(self.cap, self.ptr, self.res, self.demand,
                                                                  self.weight, paths)
                self.resolved_paths += len(paths)
        self.dirty.clear()

    # ------------------------------------------------------------------------------ local events
    def _whole_load(self, paths: np.ndarray) -> np.ndarray:
        """The load of ``paths`` at their rates, per resource; their levels set from the rates."""
        self.level[paths] = self.rate[paths] / self.weight[paths]
        sub_ptr, pos = _entries(self.ptr, paths)
        return np.bincount(self.res[pos], weights=np.repeat(self.rate[paths], np.diff(sub_ptr)),
                           minlength=len(self.cap)).astype(np.float64, copy=False)   # int64 when empty

    def _crossing(self, active: np.ndarray, transferring: np.ndarray):
        """``crossing(resources)`` of :func:`~designer.engine.solve.local.maxmin_local` over the
        ``transferring`` paths. From a resource → paths index of every path (built at the first
        local event), unless those resources are crossed by more paths of other phases than the
        transferring paths have entries (an imported workload's phases reuse the same links):
        then from a scan of the transferring paths' entries, made once per event."""
        if self._inverse is None:
            counts = np.bincount(self.res, minlength=len(self.cap))
            start = np.zeros(len(self.cap) + 1, dtype=np.int64)
            np.cumsum(counts, out=start[1:])
            owner = np.repeat(np.arange(len(self.ptr) - 1, dtype=np.int64), np.diff(self.ptr))
            self._inverse = (start, owner[np.argsort(self.res, kind="stable")], np.isfinite(self.cap),
                             np.zeros(len(self.cap), dtype=bool))
        start, owner, finite, mark = self._inverse
        scan: list = []

        def crossing(resources: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            resources = resources[finite[resources]]   # an unbounded resource certifies nothing
            first, lens = start[resources], start[resources + 1] - start[resources]
            total = int(lens.sum())
            if not scan and total > 4 * len(transferring):
                _, pos = _entries(self.ptr, transferring)
                scan.append((self.res[pos], np.repeat(transferring, self.ptr[transferring + 1] - self.ptr[transferring])))
            if scan and total > 4 * len(transferring):
                er, ep = scan[0]
                mark[resources] = True     # a kept mask, cleared after use: no pass over every resource
                keep = mark[er]
                mark[resources] = False
                return er[keep], ep[keep]
            pos = np.arange(total, dtype=np.int64) + np.repeat(first - (np.cumsum(lens) - lens), lens)
            paths = owner[pos]
            keep = active[paths]
            return np.repeat(resources, lens)[keep], paths[keep]
        return crossing

    def _solve_local(self, active: np.ndarray, transferring: np.ndarray) -> bool | None:
        """The event's changes (paths that finished, patterns that started) re-solved under the
        certificate, in place. False: the change is too large to try (nothing touched); None: it
        gave up midway (rates partly updated: the caller solves the whole problem)."""
        started = [self.pat_paths[p] for p in self._started]
        new = np.concatenate(started) if started else np.zeros(0, dtype=np.int64)
        new = new[active[new]]
        gone = np.concatenate(self._gone) if self._gone else np.zeros(0, dtype=np.int64)
        self._started, self._gone = [], []
        if not len(new) and not len(gone):
            return True
        # A large change (an all-to-all's completions, a data-parallel all-reduce starting) frees
        # most of what it touches: the whole solve costs less than growing the free set to it.
        max_paths = max(1_000, min(len(transferring) // 16, LOCAL_MAX_PATHS))
        if len(new) > max_paths or len(gone) > max_paths:
            return False
        touched = np.unique(self.res[_entries(self.ptr, gone)[1]])
        if self.load is None:   # after a whole solve: the load of the paths that kept sending
            self.load = self._whole_load(np.setdiff1d(transferring, new, assume_unique=True))
        else:
            remove_load(self.load, self.ptr, self.res, gone, self.rate)
        fill = maxmin_local(self.cap, self.ptr, self.res, self.demand, self.weight, self.rate, self.level,
                            self.bneck, self.load, new, self._crossing(active, transferring), touched,
                            max_paths=max_paths, in_place=True, names=False)
        if fill is None:
            self.load = None
            return None
        self.resolved_paths += fill.resolved_paths
        self.local_events += 1
        return True
