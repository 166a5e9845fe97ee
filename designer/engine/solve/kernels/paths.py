"""Route assembly of :mod:`designer.engine.routing.assemble`: the CSR of paths written straight from
the segment tables, through the AOT module only (routing never imports numba).

Entry points: ``path_lengths``, ``path_entries``.

A path is the concatenation, in piece order, of one row per present piece; ``pieces`` holds
:data:`~.constants.PIECE_FIELDS` int64 per present piece: its kind (``PIECE_*``), the column of
its first row per flow in ``firsts`` (n_flows each), of its host per flow in ``hosts`` (intra; -1
otherwise), of its choice per path in ``choices`` (len(owner) each; -1: none), and where its rows
start in ``tab_ptr`` and how many it has.

Bounds contract
---------------
Nothing is trusted: every index is checked against the real array lengths, by division or
subtraction, never by a product or sum that can wrap int64 (a crafted layout segfaulted the
process). A kernel that meets one out of range returns -1, and the caller assembles with numpy,
which gives its own answer or error.
"""
from __future__ import annotations

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import PIECE_FIELDS, PIECE_INTRA, PIECE_ROWS, PIECE_SINGLE

__all__ = ["path_lengths", "path_entries"]


# D: one check per field of a piece layout, each its own bound (kinds, columns, row ranges)
@kernel
def _layout_ok(pieces, firsts, hosts, choices, n_flows, n_paths, tab_ptr):
    """Do the columns and row ranges ``pieces`` names lie inside the arrays?"""
    n_pieces = len(pieces) // PIECE_FIELDS
    if n_flows < 0 or len(pieces) != n_pieces * PIECE_FIELDS:
        return False
    for q in range(n_pieces):
        at = q * PIECE_FIELDS
        kind, col, host_col, choice_col = pieces[at], pieces[at + 1], pieces[at + 2], pieces[at + 3]
        # Divisions, not products: (col + 1) * n_flows could wrap int64 and pass (found in review).
        if kind < 0 or kind > PIECE_ROWS or col < 0 or (n_flows > 0 and col >= len(firsts) // n_flows):
            return False
        if kind == PIECE_SINGLE:
            if choice_col >= 0:
                return False
            continue
        if kind == PIECE_INTRA and (host_col < 0 or (n_flows > 0 and host_col >= len(hosts) // n_flows)):
            return False
        if choice_col >= 0 and n_paths > 0 and choice_col >= len(choices) // n_paths:
            return False
        base, rows = pieces[at + 4], pieces[at + 5]
        if base < 0 or rows < 0 or base >= len(tab_ptr) or rows >= len(tab_ptr) - base:
            return False
    return True


@kernel
def path_lengths(pieces, firsts, hosts, choices, owner, n_flows, tab_ptr, tab_data, flow_ptr):
    """Fill ``flow_ptr`` (len(owner) + 1) with the CSR pointers of the paths ``owner`` (flow of
    each path); returns the number of entries, -1 when an index is out of range."""
    n_pieces = len(pieces) // PIECE_FIELDS
    n_paths = len(owner)
    if len(flow_ptr) != n_paths + 1 or not _layout_ok(pieces, firsts, hosts, choices, n_flows, n_paths, tab_ptr):
        return -1
    flow_ptr[0] = 0
    total = 0
    for p in range(n_paths):
        f = owner[p]
        if f < 0 or f >= n_flows:
            return -1
        for q in range(n_pieces):   # the row lookup is written out: as a function, much slower
            at = q * PIECE_FIELDS
            row = firsts[pieces[at + 1] * n_flows + f]
            if row < 0:
                continue   # piece absent
            if pieces[at] == PIECE_SINGLE:
                total += 1
                continue
            if pieces[at + 3] >= 0:
                row += choices[pieces[at + 3] * n_paths + p]
            if row < 0 or row >= pieces[at + 5]:
                return -1
            lo, hi = tab_ptr[pieces[at + 4] + row], tab_ptr[pieces[at + 4] + row + 1]
            if lo < 0 or lo > hi or hi > len(tab_data):
                return -1
            total += hi - lo
        flow_ptr[p + 1] = total
    return total


# D: a branch per piece kind (single, table row, intra row via its host), each write bounds-checked
@kernel
def path_entries(pieces, firsts, hosts, choices, owner, n_flows, tab_ptr, tab_data, host_base,
                 host_flat, flow_ptr, flow_res):
    """Write the entries of the paths :func:`path_lengths` measured into ``flow_res``: a single
    piece's resource, a table row's entries (an intra row's local tokens mapped through the
    flow's host: ``host_flat[host_base[host] + token]``). Call only after :func:`path_lengths`
    returned ``len(flow_res)`` for the same arguments. Returns 0, -1 when an index is out of range
    or a path would not end where ``flow_ptr`` says (nothing is written outside ``flow_res``)."""
    n_pieces = len(pieces) // PIECE_FIELDS
    n_paths = len(owner)
    if (len(flow_ptr) != n_paths + 1 or flow_ptr[0] != 0 or flow_ptr[n_paths] != len(flow_res)
            or not _layout_ok(pieces, firsts, hosts, choices, n_flows, n_paths, tab_ptr)):
        return -1
    at_entry = 0
    for p in range(n_paths):
        f = owner[p]
        end = flow_ptr[p + 1]
        if f < 0 or f >= n_flows or at_entry != flow_ptr[p] or end > len(flow_res):
            return -1
        for q in range(n_pieces):   # written out as in path_lengths
            at = q * PIECE_FIELDS
            row = firsts[pieces[at + 1] * n_flows + f]
            if row < 0:
                continue
            kind = pieces[at]
            if kind == PIECE_SINGLE:
                if at_entry >= end:
                    return -1
                flow_res[at_entry] = row
                at_entry += 1
                continue
            if pieces[at + 3] >= 0:
                row += choices[pieces[at + 3] * n_paths + p]
            if row < 0 or row >= pieces[at + 5]:
                return -1
            lo, hi = tab_ptr[pieces[at + 4] + row], tab_ptr[pieces[at + 4] + row + 1]
            if lo < 0 or lo > hi or hi > len(tab_data) or at_entry + (hi - lo) > end:
                return -1
            if kind == PIECE_ROWS:
                for j in range(lo, hi):
                    flow_res[at_entry] = tab_data[j]
                    at_entry += 1
                continue
            host = hosts[pieces[at + 2] * n_flows + f]
            if host < 0 or host >= len(host_base):
                return -1
            base = host_base[host]
            for j in range(lo, hi):
                k = base + tab_data[j]
                if k < 0 or k >= len(host_flat):
                    return -1
                flow_res[at_entry] = host_flat[k]
                at_entry += 1
    return 0 if at_entry == len(flow_res) else -1
