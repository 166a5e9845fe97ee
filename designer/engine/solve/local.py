"""Re-solve only the part of a max-min problem a change touches, proven by a certificate.

A failure removes some paths, adds others and may change a few capacities; most flows of a large
collective keep their rates. :func:`maxmin_local` starts from a known allocation (the baseline's),
re-solves a growing set of *free* paths against the capacity the other (*fixed*) paths leave, and
stops when the result passes the max-min optimality certificate on every resource the free and
removed paths touch:

- every resource carries at most its capacity (fixed loads never grow, free paths are solved
  within what is left);
- every path below its demand has a *bottleneck*: a saturated resource on which no other path has
  a larger rate / weight (the condition :func:`designer.engine.solve.maxmin.assert_valid_allocation`
  checks; the weighted max-min allocation is the unique allocation satisfying it).

A fixed path whose bottleneck lies outside the touched resources keeps its certificate (nothing on
that resource changed), so the check is local too. A fixed path that fails it, and the fixed paths
that out-rank a free path on its bottleneck, become free; the loop ends when nothing fails (then the
allocation is the max-min fair one, to the tolerance ``rtol``) or gives up (``None``: solve the
whole problem) once the free set passes ``max_paths``.

Why it is fast: under a ring all-reduce every flow shares one connected component, but a NIC failure
only frees capacity on the resources of the flows it disconnects, which no other flow is
bottlenecked on; the certificate holds after one small solve instead of a re-solve of the cluster.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from designer.engine.solve.maxmin import maxmin

__all__ = ["LocalFill", "maxmin_local", "remove_load"]


@dataclass
class LocalFill:
    """The allocation after a local re-solve (per path and per resource, full length)."""

    rates_gbps: np.ndarray
    level: np.ndarray
    bottleneck: np.ndarray
    load_gbps: np.ndarray
    free: np.ndarray         # the paths re-solved in the end (the free set)
    rounds: int              # local solves until the certificate held

    @property
    def resolved_paths(self) -> int:
        return len(self.free)


def _rows(ptr: np.ndarray, res: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(entries, lengths) of CSR rows ``rows``, concatenated."""
    starts, lens = ptr[rows], ptr[rows + 1] - ptr[rows]
    total = int(lens.sum())
    pos = np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return res[pos], lens


def remove_load(load: np.ndarray, ptr, res, rows: np.ndarray, rates: np.ndarray) -> None:
    """Subtract from ``load`` (in place) the load of paths ``rows`` at ``rates``."""
    entries, lens = _rows(ptr, res, rows)
    np.subtract.at(load, entries, np.repeat(rates[rows], lens))


class _Load:
    """The load per resource while free paths are re-solved: the fixed paths' load plus the free
    paths' (``used`` resources), read only where the certificate looks (no pass over every
    resource per round: the job loop re-solves a few paths of millions)."""

    def __init__(self, fixed: np.ndarray, used: np.ndarray, free_load: np.ndarray):
        self.fixed, self.used, self.free_load = fixed, used, free_load    # ``used`` sorted, distinct

    def at(self, idx: np.ndarray) -> np.ndarray:
        out = self.fixed[idx]
        if len(self.used):
            pos = np.minimum(np.searchsorted(self.used, idx), len(self.used) - 1)
            out = out + np.where(self.used[pos] == idx, self.free_load[pos], 0.0)
        return out

    def saturated(self, cap: np.ndarray, idx: np.ndarray, rtol: float) -> np.ndarray:
        return self.at(idx) >= cap[idx] * (1 - rtol)


def maxmin_local(capacity_gbps, flow_ptr, flow_res, demand_gbps, weights, rates_gbps, level, bottleneck,
                 fixed_load_gbps, free, crossing, touched, *, rtol: float = 1e-10,
                 max_paths: int | None = None, in_place: bool = False, names: bool = True) -> LocalFill | None:
    """The weighted max-min allocation of a problem known to differ little from a solved one.

    Parameters
    ----------
    capacity_gbps, flow_ptr, flow_res, demand_gbps, weights : ndarray
        The new problem, as :func:`designer.engine.solve.maxmin.maxmin` takes it (validated by the
        caller), P paths over R resources.
    rates_gbps, level, bottleneck : ndarray, shape (P,)
        The known allocation of every path that is not in ``free`` (Gb/s, rate / weight, resource
        or -1); entries of ``free`` paths are ignored.
    fixed_load_gbps : ndarray, shape (R,)
        Load of the non-free paths at those rates (removed paths already subtracted).
    free : ndarray of int
        Paths that must be solved (new paths, paths on a resource whose capacity changed).
    crossing : callable
        ``crossing(resources) -> (entry_resource, entry_path)``: every (resource, path) entry of
        the new problem on those resources (repeats allowed).
    touched : ndarray of int
        Resources whose load or capacity changed outside the free paths (those of removed paths,
        changed capacities): their fixed paths are re-checked.
    rtol : float
        Relative tolerance of the certificate (saturation, largest level).
    max_paths : int, optional
        Give up (return None) when the free set grows past this many paths.
    in_place : bool
        Update ``rates_gbps``, ``level``, ``bottleneck`` and ``fixed_load_gbps`` (which becomes
        the whole load) instead of copies: the job loop's event re-solve, a few paths of millions.
        After a None they hold a partial update: the caller solves the whole problem.
    names : bool
        Check that every re-solved path's bottleneck is the one a whole solve would name (else
        None). The rates do not depend on it; the job loop, which reads no bottleneck, skips it.

    Returns
    -------
    LocalFill or None
        None when the free set outgrew ``max_paths`` or a non-finite rate showed up (solve the
        whole problem instead).
    """
    cap = np.asarray(capacity_gbps, dtype=np.float64)
    if in_place:
        rates, lev, bneck, fixed_load = rates_gbps, level, bottleneck, fixed_load_gbps
    else:
        rates, lev, bneck, fixed_load = rates_gbps.copy(), level.copy(), bottleneck.copy(), fixed_load_gbps.copy()
    free = np.unique(np.asarray(free, dtype=np.int64))
    touched = np.unique(np.asarray(touched, dtype=np.int64))
    limit = len(rates) if max_paths is None else max_paths
    for rounds in range(1, 64):
        if len(free) > limit:
            return None
        load = _solve_free(cap, flow_ptr, flow_res, demand_gbps, weights, free, fixed_load, rates, lev, bneck)
        if load is None:
            return None
        more = _violations(cap, flow_ptr, flow_res, free, touched, crossing, load, lev, bneck, rtol)
        if more is None:       # a free path fails and freeing fixed paths cannot help
            return None
        if not len(more):
            if names and _ambiguous(cap, flow_ptr, flow_res, free, touched, crossing, load, lev, bneck, rtol):
                return None
            fixed_load[load.used] += load.free_load     # now the whole load
            return LocalFill(rates, lev, bneck, fixed_load, free, rounds)
        remove_load(fixed_load, flow_ptr, flow_res, more, rates)
        free = np.union1d(free, more)
    return None


def _solve_free(cap, ptr, res, dem, w, free, fixed_load, rates, lev, bneck) -> _Load | None:
    """Solve the free paths against the capacity the fixed ones leave (in place); the new load.

    The sub-problem keeps the resources' relative order (``np.unique``), so ties between resources
    resolve as in a whole solve (the compiled filling orders its heap by share, then index)."""
    if not len(free):
        return _Load(fixed_load, np.zeros(0, dtype=np.int64), np.zeros(0))
    entries, lens = _rows(ptr, res, free)
    used, local = np.unique(entries, return_inverse=True)
    sub_ptr = np.zeros(len(free) + 1, dtype=np.int64)
    np.cumsum(lens, out=sub_ptr[1:])
    with np.errstate(invalid="ignore"):
        left = np.maximum(cap[used] - fixed_load[used], 0.0)
    left[np.isinf(cap[used])] = np.inf
    alloc = maxmin(left, sub_ptr, local.astype(np.int64), dem[free], weights=w[free])
    if not np.isfinite(alloc.rates_gbps).all():
        return None
    rates[free] = alloc.rates_gbps
    lev[free] = alloc.flow_level
    bneck[free] = np.where(alloc.bottleneck >= 0, used[np.maximum(alloc.bottleneck, 0)], -1)
    return _Load(fixed_load, used, alloc.load_gbps)


def _ambiguous(cap, ptr, res, free, touched, crossing, load, lev, bneck, rtol) -> bool:
    """Whether a path near the change could be named for more than one bottleneck.

    The rates are unique, the names are not: a path that is the largest on two saturated
    resources (or at its demand and the largest on one) is frozen by whichever the whole solve
    reaches first, an order a local solve does not reproduce. Only then does the caller solve the
    whole problem, so that the bottlenecks (``new_bottlenecks`` of a diff) are the whole solve's.
    """
    entries, _ = _rows(ptr, res, free)
    _, near = crossing(np.union1d(np.unique(entries), touched))
    paths = np.union1d(near, free)
    entries, lens = _rows(ptr, res, paths)
    owner = np.repeat(paths, lens)
    er, ep = crossing(np.unique(entries))
    top = np.zeros(len(cap))
    np.maximum.at(top, er, lev[ep])
    explains = load.saturated(cap, entries, rtol) & (lev[owner] >= top[entries] * (1 - rtol))
    pairs = np.unique(owner[explains] * len(cap) + entries[explains])
    names = np.bincount(pairs // len(cap), minlength=len(lev))[paths] + (bneck[paths] < 0)
    return bool((names > 1).any())


def _member(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Which entries of ``x`` are in ``values`` (sorted, distinct): no array over every path or
    resource (the job loop's problem has millions of both, its change a few dozen)."""
    if not len(values):
        return np.zeros(len(x), dtype=bool)
    return values[np.minimum(np.searchsorted(values, x), len(values) - 1)] == x


def _violations(cap, ptr, res, free, touched, crossing, load, lev, bneck, rtol) -> np.ndarray | None:
    """Fixed paths that must become free for the certificate to hold (empty: it holds; None: a
    free path fails with no fixed path to free on its bottleneck)."""
    entries, _ = _rows(ptr, res, free)
    region = np.union1d(entries, touched)
    er, ep = crossing(region)
    # The largest level on each resource of the region, over all its paths (free ones solved).
    top = np.zeros(len(region))
    np.maximum.at(top, np.searchsorted(region, er), lev[ep])
    fixed = ~_member(free, ep)
    # A fixed path bottlenecked in the region must still be bottlenecked there.
    b = bneck[ep]
    recheck = fixed & (b >= 0) & _member(region, b)
    bb = b[recheck]
    held = load.saturated(cap, bb, rtol) & (lev[ep[recheck]] >= top[np.searchsorted(region, bb)] * (1 - rtol))
    lost = ep[recheck][~held]
    # A free path must out-rank every fixed path on its bottleneck: free the ones above it.
    bounded = free[bneck[free] >= 0]
    fb = bneck[bounded]
    held = load.saturated(cap, fb, rtol) & (lev[bounded] >= top[np.searchsorted(region, fb)] * (1 - rtol))
    bad_free = bounded[~held]
    above = ep[fixed & _member(np.unique(bneck[bad_free]), er)]
    if len(bad_free) and not len(above):
        return None
    return np.unique(np.concatenate([lost, above]))
