"""Path assembly of :meth:`Router._assemble`: per-flow pieces → the CSR of paths, in one gather.

A path is the concatenation, in piece order, of one row of each present piece (an intra-host
segment mapped through its host, a fabric or NVLink-domain alternative, or a single resource).
Instead of gathering every piece's rows and interleaving them (one per-entry pass set per piece),
every row a path can take is first made a *segment* of one table of global resources — single
resources as rows of one, the (host, intra row) pairs that occur resolved once — so a path is a
short list of segment ids, and all paths are one row gather of their segments laid end to end
(per-entry work once, whatever the number of pieces; the per-path work is on int32 ids). With
the AOT module, :func:`_compiled_paths` writes the same entries in one compiled pass instead.

``tests/engine/test_routing_assemble.py`` checks the result against a per-path Python
concatenation of the same pieces.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve.kernels.constants import PIECE_INTRA, PIECE_ROWS, PIECE_SINGLE
from designer.engine.solve.kernels.loader import aot_kernels
from designer.engine.routing.csr import gather_rows

__all__ = ["assemble_paths"]


def assemble_paths(ctx, pieces, counts, owner, combo, fab_hash, tables):
    """(flow_ptr, flow_res, stripes) of the paths ``owner`` (flow of each path) and ``combo`` (its
    combination index, piece 0 the least significant digit of the mixed radix ``counts``).

    Parameters
    ----------
    ctx : RoutingContext
        Maps an intra piece's local tokens to global resources through its host.
    pieces, counts : list
        :meth:`Router._pieces` and, per piece, the number of alternatives each flow combines.
    owner, combo : ndarray of int64
        Per path: its flow (routed flows only) and its combination index (None when every
        routed flow has one path).
    fab_hash : ndarray of uint64, callable or None
        Per flow: the fabric hash under ``multipath="hash"`` (one fabric alternative by hash), or
        ``fab_hash(first, count)`` giving the hashed rows themselves
        (:func:`~designer.engine.routing.hashing.hashed_rows`); None under ``split`` (every
        alternative, by ``combo``).
    tables : dict
        ``{"intra"|"fabric"|"domain": (ptr, tokens, weight per row)}``.

    Returns
    -------
    flow_ptr, flow_res : ndarray of int64
    stripes : ndarray of float64
        Per path: the product of the striping weights of the rows it takes, in piece order.
    """
    total = len(owner)
    routed = np.zeros(len(counts[0]) if counts else 0, dtype=bool)
    routed[owner] = True
    every = bool(routed.all())
    stripes = np.ones(total)
    picks = []   # per piece: (per flow first row or resource, -1 absent; per path offset or None)
    for piece, c in zip(pieces, counts):
        # Unrouted flows' rows may be half-built (no alternative): never look them up.
        first = piece[1] if every else np.where(routed, piece[1], -1)
        choice = None
        # Without combo (one path per routed flow) or more than one alternative somewhere, every
        # choice is 0 and combo stays as it is.
        if combo is not None and len(c) and int(c.max()) > 1:
            csub = c[owner]
            choice = combo % csub
            combo = combo // csub
        if piece[0] == "fabric" and fab_hash is not None:
            first = (fab_hash(first, piece[2]) if callable(fab_hash)
                     else first + np.where(first >= 0, _hash_pick(fab_hash, piece[2]), 0))
        if piece[0] != "single":
            _stripe(stripes, tables[piece[0]][2], first, choice, owner)
        picks.append((first, choice))
    compiled = _compiled_paths(ctx, pieces, picks, owner, tables)
    if compiled is not None:
        return (*compiled, stripes)
    seg_ptr, seg_data, segs = _segments(ctx, pieces, picks, owner, tables)
    del picks   # the temporaries go as soon as they are read: each fresh page costs a fault
    # Path-major, piece-minor: the segments of path 0, then of path 1, … (-1: piece absent).
    n_cols = len(segs)
    seq = np.stack(segs, axis=1).reshape(-1) if segs else np.zeros(0, dtype=np.int32)
    del segs
    # Segment lengths with a trailing 0 for id -1: one gather for every (path, piece), no mask.
    lens = np.append(np.diff(seg_ptr), 0).astype(np.int32)[seq]
    flow_ptr = np.zeros(total + 1, dtype=np.int64)
    if n_cols:
        per_piece = lens.reshape(total, n_cols)
        path_len = per_piece[:, 0].astype(np.int64)
        for k in range(1, n_cols):   # column adds: an axis-1 sum over a few pieces is slower
            path_len += per_piece[:, k]
        np.cumsum(path_len, out=flow_ptr[1:])
        del per_piece, path_len
    # Absent pieces (id -1) and empty rows have length 0: the gather repeats them 0 times, so
    # they need not be filtered out first (two 1.2M-entry compressions for the 16k ring's tree).
    flow_res = _gather_segments(seg_ptr, seg_data, seq, lens, int(flow_ptr[-1]))
    return flow_ptr, flow_res, stripes


def _compiled_paths(ctx, pieces, picks, owner, tables):
    """(flow_ptr, flow_res) of the paths by the AOT kernels ``path_lengths``/``path_entries``,
    or None without them or for inputs they do not take (the numpy gather then answers).

    Why: the numpy gather lays every path's segment ids end to end and expands them with
    repeat/cumsum temporaries as long as the 8.3M entries of 1,024 GPUs' all-to-all (1.07M
    paths); the compiled pass reads each path's rows straight from the tables (intra rows mapped
    through the flow's host), with no temporaries. Same entries in the same order: each path is
    still its pieces' rows in piece order (checked against the numpy path in
    tests/engine/test_routing_compiled.py)."""
    kernels = aot_kernels()
    if kernels is None:
        return None
    n = len(pieces[0][1]) if pieces else 0
    tab = _joined_tables(ctx, tables)
    host_base, host_flat = ctx.host_res_base, ctx.host_res_flat
    if tab is None or owner.dtype != np.int64 or host_base.dtype != np.int64 or host_flat.dtype != np.int64:
        return None
    tab_ptr, tab_data, row_base = tab
    layout, firsts, hosts, choices, host_cols = [], [], [], [], {}
    for piece, (first, choice) in zip(pieces, picks):
        if first.dtype != np.int64 or len(first) != n:
            return None
        if not (first >= 0).any():
            continue   # absent on every flow: no entry
        kind = {"single": PIECE_SINGLE, "intra": PIECE_INTRA}.get(piece[0], PIECE_ROWS)
        host_col = -1
        if kind == PIECE_INTRA:
            host = piece[3]
            if host.dtype != np.int64 or len(host) != n:
                return None
            host_col = host_cols.setdefault(id(host), len(hosts))
            if host_col == len(hosts):
                hosts.append(host)
        choice_col = -1
        if choice is not None:
            if choice.dtype != np.int64:
                return None
            choice_col = len(choices)
            choices.append(choice)
        base, rows = row_base.get(piece[0], (0, 0))
        layout += [kind, len(firsts), host_col, choice_col, base, rows]
        firsts.append(first)
    flow_ptr = np.empty(len(owner) + 1, dtype=np.int64)
    args = (np.array(layout, dtype=np.int64), _joined(firsts), _joined(hosts), _joined(choices),
            np.ascontiguousarray(owner), n, tab_ptr, tab_data)
    total = kernels.path_lengths(*args, flow_ptr)
    if total < 0:
        return None
    flow_res = np.empty(total, dtype=np.int64)
    if kernels.path_entries(*args, np.ascontiguousarray(host_base), np.ascontiguousarray(host_flat),
                            flow_ptr, flow_res) < 0:
        return None
    return flow_ptr, flow_res


def _joined(columns: list) -> np.ndarray:
    """Equal-length int64 columns end to end (the one column itself when there is one)."""
    if len(columns) == 1:
        return np.ascontiguousarray(columns[0])
    return np.concatenate(columns) if columns else np.zeros(0, dtype=np.int64)


def _joined_tables(ctx, tables):
    """The intra, fabric and domain tables as one: (pointers, int64 data, {kind: (where its rows
    start in the pointers, how many)}); None when a table is not a plain int64 CSR (pointers
    from 0 to its data's length), as the numpy path's segment table assumes."""
    ptrs, datas, row_base, at_ptr, at_data = [], [], {}, 0, 0
    for kind in ("intra", "fabric", "domain"):
        ptr, data, _ = tables[kind]
        if (ptr.dtype != np.int64 or data.dtype != np.int64 or len(ptr) == 0 or ptr[0] != 0
                or ptr[-1] != len(data)):
            return None
        row_base[kind] = (at_ptr, len(ptr) - 1)
        ptrs.append(ptr + at_data)
        datas.append(data)
        at_ptr += len(ptr)
        at_data += len(data)
    return np.concatenate(ptrs), np.concatenate(datas), row_base


def _hash_pick(fab_hash, count):
    """Per flow: the fabric alternative its hash picks among ``count`` (0 when none)."""
    return (fab_hash % np.maximum(count, 1).astype(np.uint64)).astype(np.int64)


def _stripe(stripes, weight, first, choice, owner) -> None:
    """Multiply ``stripes`` (per path) by the striping weight of the row each path takes (1 when
    the piece is absent: ``x * 1.0 == x`` exactly, so skipping a factor 1 changes no bit)."""
    if len(weight) == 0 or bool(np.all(weight == 1.0)):
        return
    if choice is None:
        # One alternative per flow: usually a row of weight 1 (the only path of its segment).
        used = np.zeros(len(weight) + 1, dtype=bool)
        used[first] = True   # -1 lands on the extra last slot
        if bool(np.all(weight[used[:-1]] == 1.0)):
            return
        per_flow = np.where(first >= 0, weight[np.maximum(first, 0)], 1.0)
        stripes *= per_flow[owner]
    else:
        rows = first[owner]
        present = rows >= 0
        stripes[present] *= weight[rows[present] + choice[present]]


def _gather_segments(seg_ptr, seg_data, seq, lens, total: int) -> np.ndarray:
    """The rows ``seq`` (of lengths ``lens``, ``total`` in all) of the segment CSR laid end to
    end (int64 resources); positions in int32 when they fit (half the memory traffic of the
    per-entry passes)."""
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    index = np.int32 if max(total, len(seg_data)) < 2**31 else np.int64
    lens = lens.astype(index, copy=False)
    starts = seg_ptr.astype(index)[seq]   # the table is small: cast it, not the gather
    starts -= np.cumsum(lens, dtype=index)
    starts += lens
    pos = np.repeat(starts, lens)
    del starts, seq, lens
    pos += np.arange(total, dtype=index)
    return seg_data[pos]


def _segments(ctx, pieces, picks, owner, tables):
    """One segment table (CSR of global resources) for every row the paths take, and per piece
    with any present the per-path segment id (int32, -1 when absent): the single resources met
    first (in increasing order), then the (host, intra row) pairs met, then the fabric and
    domain rows."""
    kinds = [piece[0] for piece in pieces]
    single_res, single_seg = _used_singles([first for kind, (first, _) in zip(kinds, picks) if kind == "single"])
    n_single = len(single_res)
    intra_ptr, intra_data, _ = tables["intra"]
    n_intra = max(len(intra_ptr) - 1, 1)
    # (host, row) keys of the intra pieces: per flow, or per path when the piece stripes.
    intra_keys = {}
    for k, (piece, (first, choice)) in enumerate(zip(pieces, picks)):
        if piece[0] == "intra" and (first >= 0).any():
            key = np.where(first >= 0, piece[3] * n_intra + first, -1)
            intra_keys[k] = key if choice is None else _with_choice(key[owner], choice)
    pair_ids, pair_keys = _dense_pairs(intra_keys, len(ctx.host_res_base) * n_intra, first_id=n_single)
    host, row = np.divmod(pair_keys, n_intra)
    pair_vals, pair_lens = gather_rows(intra_ptr, intra_data, row)
    pair_vals = ctx.host_res_flat[ctx.host_res_base[np.repeat(host, pair_lens)] + pair_vals]
    fab_ptr, fab_data, _ = tables["fabric"]
    dom_ptr, dom_data, _ = tables["domain"]
    lens = np.concatenate([np.ones(n_single, dtype=np.int64), pair_lens, np.diff(fab_ptr), np.diff(dom_ptr)])
    seg_ptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=seg_ptr[1:])
    seg_data = np.concatenate([single_res, pair_vals, fab_data, dom_data])
    offset = {"fabric": n_single + len(pair_keys),
              "domain": n_single + len(pair_keys) + len(fab_ptr) - 1}
    rows = {"fabric": len(fab_ptr) - 1, "domain": len(dom_ptr) - 1}
    segs = []
    for k, (kind, (first, choice)) in enumerate(zip(kinds, picks)):
        if kind == "intra":
            if k in pair_ids:
                seg = pair_ids[k]
                segs.append(seg if choice is not None else seg[owner])   # keys were per path then
            continue
        if not (first >= 0).any():
            continue
        if kind == "single":
            to_seg = single_seg
        else:   # row r of this kind is segment offset + r; the extra last entry maps row -1 to -1
            to_seg = np.append(np.arange(rows[kind], dtype=np.int32) + np.int32(offset[kind]), np.int32(-1))
        seg = to_seg[first]
        segs.append(seg[owner] if choice is None else _with_choice(seg[owner], choice))
    return seg_ptr, seg_data, segs


def _used_singles(firsts: list) -> tuple[np.ndarray, np.ndarray]:
    """The resources the single pieces ``firsts`` (per flow, -1 absent) take, increasing, and
    the int32 map resource -> its segment (the extra last entry maps -1 to -1).

    Why not every resource as a segment: a 16,384-GPU ring has ~450k resources, a small part of
    them crossed singly (uplinks, downlinks), and the table's per-segment arrays were built over
    all of them on every call (with the unfiltered gather of :func:`assemble_paths`, for each of
    the ring's three planner candidates)."""
    n = max((int(f.max()) + 1 for f in firsts if len(f)), default=0)
    seen = np.zeros(n + 1, dtype=bool)   # resource -1 lands on the extra last slot
    for f in firsts:
        seen[f] = True
    used = np.flatnonzero(seen[:n])
    seg = np.full(n + 1, -1, dtype=np.int32)
    seg[used] = np.arange(len(used), dtype=np.int32)
    return used.astype(np.int64), seg


def _with_choice(first_per_path, choice):
    """Per path: its row ``first + choice`` (-1 stays -1: an absent piece has one alternative)."""
    return np.where(first_per_path >= 0, first_per_path + choice, -1)


def _dense_pairs(keys: dict, space: int, first_id: int):
    """Number the distinct non-negative keys met in ``keys`` (arrays by piece) from ``first_id``
    on, in increasing order: (per piece its int32 ids, -1 kept; the distinct keys). A presence
    table when ``space`` is small, ``np.unique`` otherwise."""
    total = sum(len(k) for k in keys.values())
    if space <= max(4 * total, 1 << 16):
        seen = np.zeros(space + 1, dtype=bool)   # key -1 lands on the extra last slot
        for k in keys.values():
            seen[k] = True
        distinct = np.flatnonzero(seen[:space])
        rank = np.full(space + 1, -1, dtype=np.int32)
        rank[distinct] = np.arange(first_id, first_id + len(distinct), dtype=np.int32)
        return {p: rank[k] for p, k in keys.items()}, distinct.astype(np.int64)
    flat = np.concatenate([k[k >= 0] for k in keys.values()]) if keys else np.zeros(0, np.int64)
    distinct = np.unique(flat)
    return {p: np.where(k >= 0, np.searchsorted(distinct, np.maximum(k, 0)) + first_id, -1).astype(np.int32)
            for p, k in keys.items()}, distinct
