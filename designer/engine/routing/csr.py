"""CSR building blocks of routing: segment registries, memoized lookups, row gathers.

Routing keeps every list of lists (alternatives of a segment, resources of a path) as CSR
arrays — a pointer array and a flat data array — so that a million flows are assembled with a
few numpy gathers instead of Python loops.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SegTable", "lookup", "dense_ids", "group_keys", "gather_rows", "range_positions"]


class SegTable:
    """Registry of segment alternatives: each alternative is a CSR row of *tokens* (local tokens
    for intra-host segments, global resources for fabric ones) with a striping weight (1 unless
    given). ``first[key]``/``count[key]``.

    Rows come as lists (:meth:`add`) or as ready CSR blocks (:meth:`add_csr`: the fabric's
    switch paths, 400k tokens on a 16,384-GPU ring, are enumerated as arrays); :meth:`arrays`
    joins them in registration order.
    """

    def __init__(self):
        self.n_rows = 0
        self.index: dict = {}
        self._parts: list = []   # each a list of rows, or a (lengths, tokens) pair of arrays
        # Per part: its rows' weights (a list), or the number of rows (all of weight 1).
        self._weight_parts: list = []

    @property
    def weights(self) -> list[float]:
        """The weight of each row, in order."""
        return self.arrays()[2].tolist()

    def add(self, key, alternatives: list[list[int]], weights: list[float] | None = None) -> tuple[int, int]:
        got = self.index.get(key)
        if got is None:
            got = self.index[key] = (self.n_rows, len(alternatives))
            if not self._parts or not isinstance(self._parts[-1], list):
                self._parts.append([])
                self._weight_parts.append([])
            self._parts[-1].extend(alternatives)
            self._weight_parts[-1].extend(weights if weights is not None else [1.0] * len(alternatives))
            self.n_rows += len(alternatives)
        return got

    def add_csr(self, key, lengths: np.ndarray, tokens: np.ndarray) -> tuple[int, int]:
        """:meth:`add` of ``len(lengths)`` rows of weight 1, row ``r`` being the next
        ``lengths[r]`` of ``tokens``."""
        got = self.index.get(key)
        if got is None:
            got = self.index[key] = (self.n_rows, len(lengths))
            self._parts.append((lengths, tokens))
            self._weight_parts.append(len(lengths))
            self.n_rows += len(lengths)
        return got

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR pointer and tokens of the rows, and the weight of each row.

        Array parts are joined by one concatenate, without a conversion each, and weigh 1
        without a list of ones: the fabric table of a 16,384-GPU tree has 4,080 of them."""
        lens, data = [], []
        for part in self._parts:
            if isinstance(part, list):
                lens.append(np.fromiter((len(r) for r in part), dtype=np.int64, count=len(part)))
                data.append(np.fromiter((t for r in part for t in r), dtype=np.int64, count=int(lens[-1].sum())))
            else:
                lens.append(part[0])
                data.append(part[1])
        ptr = np.zeros(self.n_rows + 1, dtype=np.int64)
        if lens:
            np.cumsum(np.concatenate(lens).astype(np.int64, copy=False), out=ptr[1:])
        tokens = np.concatenate(data).astype(np.int64, copy=False) if data else np.zeros(0, dtype=np.int64)
        weights = np.ones(self.n_rows)   # array parts' rows weigh 1
        at = 0
        for w in self._weight_parts:
            if isinstance(w, list):
                weights[at:at + len(w)] = w
                at += len(w)
            else:
                at += w
        return ptr, tokens, weights


def lookup(keys: np.ndarray, compute, space: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Map int64 keys (-1 allowed) to (first, count) by computing each distinct key once.

    When the key space is small (``space``), a dense table replaces ``np.unique``: O(n), no sort.
    """
    if space is not None and space <= max(4 * len(keys), 1 << 16):
        needed = np.zeros(space + 1, dtype=bool)
        needed[keys] = True  # key -1 lands on the extra last slot
        first = np.full(space + 1, -1, dtype=np.int64)
        count = np.zeros(space + 1, dtype=np.int64)
        for key in np.flatnonzero(needed[:space]).tolist():
            first[key], count[key] = compute(key)
        if needed[space]:
            first[space], count[space] = compute(-1)
        return first[keys], count[keys]
    uniq, inverse = np.unique(keys, return_inverse=True)
    first = np.empty(len(uniq), dtype=np.int64)
    count = np.empty(len(uniq), dtype=np.int64)
    for k, key in enumerate(uniq.tolist()):
        first[k], count[k] = compute(key)
    return first[inverse], count[inverse]


def dense_ids(cols: list[np.ndarray]) -> np.ndarray:
    """Combine small non-negative integer columns into one dense int64 id per row (re-densified
    with a 1-D unique whenever the product of ranges would overflow)."""
    key = np.zeros(len(cols[0]), dtype=np.int64)
    span = 1
    for col in cols:
        col = col.astype(np.int64) + 1
        width = int(col.max()) + 1 if len(col) else 1
        if span * width >= (1 << 62):
            _, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            span = int(key.max()) + 1 if len(key) else 1
        key = key * width + col
        span *= width
    return key


def group_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(keys, return_index=True, return_inverse=True)`` of non-negative int64 keys:
    the distinct keys (increasing), the first position of each, and each key's group. A
    presence table when the keys span little (a million flows' path-class keys: a few
    thousand values), no sort."""
    span = int(keys.max()) + 1 if len(keys) else 0
    if span > max(4 * len(keys), 1 << 16):
        distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return distinct, first, inverse.reshape(-1)
    seen = np.zeros(span, dtype=bool)
    seen[keys] = True
    distinct = np.flatnonzero(seen)
    rank = np.zeros(span, dtype=np.int64)
    rank[distinct] = np.arange(len(distinct), dtype=np.int64)
    inverse = rank[keys]
    first = np.full(len(distinct), len(keys), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(keys), dtype=np.int64))
    return distinct.astype(np.int64), first, inverse


def gather_rows(ptr: np.ndarray, data: np.ndarray, rows: np.ndarray):
    """Concatenate CSR rows (row -1 = empty) → (flat values, length per row)."""
    valid = rows >= 0
    if not valid.any():
        return np.zeros(0, dtype=np.int64), np.zeros(len(rows), dtype=np.int64)
    r = np.where(valid, rows, 0)
    starts = ptr[r]
    lens = np.where(valid, ptr[r + 1] - starts, 0)
    return data[range_positions(starts, lens)], lens


def range_positions(starts: np.ndarray, lens: np.ndarray, dtype=np.int64) -> np.ndarray:
    """``concatenate([arange(s, s + k) for s, k in zip(starts, lens)])`` (of ``dtype``: int64, or
    int32 when every position fits).

    By one running sum over a buffer of ones with each range's jump at its head, in place:
    one array of the result's size instead of three (``arange + repeat(starts - offsets)``).
    Why: above 32 MB (glibc's largest mmap threshold) every such array is a fresh mapping
    faulted in page by page, and the three of them cost several times the one (1.9M ranges of
    5.7M positions).
    """
    starts, lens = np.asarray(starts, dtype=np.int64), np.asarray(lens, dtype=np.int64)
    some = lens > 0
    if not some.all():   # an empty range has no head: its jump would overwrite the next one's
        starts, lens = starts[some], lens[some]
    if len(lens) == 0:
        return np.zeros(0, dtype=dtype)
    pos = np.ones(int(lens.sum()), dtype=dtype)
    pos[0] = starts[0]
    pos[np.cumsum(lens[:-1])] = starts[1:] - (starts[:-1] + lens[:-1] - 1)
    np.cumsum(pos, out=pos)
    return pos
