"""Exact id → position lookups of many strings at once, in compiled code.

Why: mapping a document's references to positions (a link's ends to node positions, a ``solve``
path's link ids to link positions) is one Python dict lookup per reference, and each lookup
hashes a freshly parsed string and compares it with a key elsewhere in memory, which dominates
reading a large topology's link ends or a large ``solve`` input's path hops. Here the ids' UTF-8
bytes go into one open-addressing table (FNV-1a, the AOT kernels
``id_table_build``/``find_joined``/``scan_paths``) and the strings to look up are
joined by NUL into one buffer the kernel cuts again. A ``solve`` document's flows can also be read
whole from their raw bytes (:meth:`IdIndex.scan_flows`).

Exact, or not used: two different strings have different UTF-8 bytes and the table compares
bytes; a string holding a NUL changes the number of pieces, which the kernel checks. Every
``None`` answer means "ask the dict": the caller keeps its own lookup (and its errors) for
anything this cannot vouch for. Only with the AOT module
(:func:`~designer.engine.solve.kernels.loader.aot_kernels`): importing numba for its JIT would cost
more than it saves.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

# scan_flows' status codes and flags (a flow gives a number as its demand / its size)
from designer.engine.solve.kernels.constants import (FLOW_BYTES as _FLOW_BYTES, FLOW_DEMAND as _FLOW_DEMAND,
                                                     FLOWS_OK, SCAN_OK)
from designer.engine.solve.kernels.loader import aot_kernels

__all__ = ["IdIndex", "FlowScan"]


class FlowScan(NamedTuple):
    """What :meth:`IdIndex.scan_flows` read from a ``solve`` "flows" array, before conversion:
    per flow its path length (``lens``), whether it gives a number as its demand and as its size
    (``demand_given``, ``size_given``: bool), its id's UTF-8 bytes in ``ids`` (each followed by
    a NUL); the link indices of the paths end to end (``hops``); the number tokens of the
    demands and sizes given, each followed by a comma."""

    lens: np.ndarray
    demand_given: np.ndarray
    size_given: np.ndarray
    ids: memoryview
    hops: np.ndarray
    demands: bytes
    sizes: bytes


class IdIndex:
    """The positions of a list of unique ids, for :meth:`positions`."""

    def __init__(self, kernels, key_bytes: np.ndarray, key_ptr: np.ndarray, table: np.ndarray):
        self.kernels, self.key_bytes, self.key_ptr, self.table = kernels, key_bytes, key_ptr, table

    @classmethod
    def of(cls, ids: list) -> "IdIndex | None":
        """An index of ``ids`` (unique ``str``), or None without the AOT kernels or for ids it
        cannot hold (a duplicate, a lone surrogate)."""
        kernels = aot_kernels()
        if kernels is None:
            return None
        try:
            joined = "".join(ids)
            if joined.isascii():   # the usual case: one encode, lengths in characters = in bytes
                key_bytes, lengths = joined.encode("ascii"), np.fromiter(map(len, ids), np.int64, len(ids))
            else:
                encoded = [i.encode("utf-8") for i in ids]
                key_bytes, lengths = b"".join(encoded), np.fromiter(map(len, encoded), np.int64, len(ids))
        except (TypeError, UnicodeEncodeError):
            return None
        key_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=key_ptr[1:])
        key_bytes = np.frombuffer(key_bytes, dtype=np.uint8)
        table = np.full(1 << (2 * len(ids)).bit_length(), -1, dtype=np.int64)   # at most half full
        if kernels.id_table_build(key_bytes, key_ptr, table) != len(ids):
            return None   # a duplicate id
        return cls(kernels, key_bytes, key_ptr, table)

    def positions(self, strings: list) -> np.ndarray | None:
        """The position of every string (int64), or None when one is not an id, not a ``str``,
        holds a NUL or cannot be encoded: then the caller's own lookup decides."""
        try:
            joined = "\0".join(strings).encode("utf-8")
        except (TypeError, UnicodeEncodeError):
            return None
        out = np.empty(len(strings), dtype=np.int64)
        found = self.kernels.find_joined(np.frombuffer(joined, dtype=np.uint8), self.key_bytes, self.key_ptr,
                                         self.table, out)
        return out if found == len(strings) else None

    def path_positions(self, piece: memoryview, lens: np.ndarray) -> np.ndarray | None:
        """The positions of the ids in the "links" arrays of the flow objects whose raw JSON
        bytes are ``piece`` (what :func:`~designer.engine.commands._scenario_io.array_chunks` cut
        and orjson parsed; ``lens``: orjson's path lengths), or None when the scan
        (``scan_paths``) cannot vouch for them: then the ``solve`` reader's dict decides.

        Why: on a large ``solve`` input the dict lookup of every freshly parsed path hop is a
        large share of the process; the scan reads the raw bytes once, in compiled code. Exact,
        or not used: the scan answers *ok* only when it finds one flow object per item of orjson's
        list, each with one key "links" whose value is an array of known ids, as many as
        orjson's list holds (docs/ENGINE.md)."""
        out = np.empty(int(lens.sum()), dtype=np.int64)
        status = self.kernels.scan_paths(np.frombuffer(piece, dtype=np.uint8), self.key_bytes, self.key_ptr,
                                         self.table, lens, out)
        return out if status == SCAN_OK else None

    def scan_flows(self, data: bytes, start: int, end: int) -> FlowScan | None:
        """The flows of the "flows" array whose content is ``data[start:end]`` (what
        :func:`~designer.engine.commands._scenario_io.array_region` found), read in one
        compiled pass (``scan_flows``, docs/ENGINE.md) when they are written in its subset of
        JSON with known link ids only and unique flow ids; else None: the ``solve`` reader then
        parses them with orjson as before.

        Why: orjson builds a Python object per id, number and list of a large input, which the
        reader then maps to arrays; this pass goes from the bytes to the arrays directly, and the
        duplicate check of the ids (``id_table_build``) replaces a Python set of them
        (docs/PERFORMANCE.md has the figures)."""
        size = end - start
        piece = np.frombuffer(data, dtype=np.uint8, count=size, offset=start)
        # Bounds from the size (no count of the bytes): a flow takes at least 21 bytes and a
        # comma, {"id":"f","links":[]}, a hop 4, "l",; the pages never written cost nothing.
        max_flows = size // 22 + 1
        lens, flags = np.empty(max_flows, dtype=np.int64), np.empty(max_flows, dtype=np.uint8)
        hops, id_ptr = np.empty(size // 4 + 1, dtype=np.int64), np.empty(max_flows + 1, dtype=np.int64)
        ids, demands, sizes = (np.empty(size, dtype=np.uint8) for _ in range(3))
        counts = np.zeros(4, dtype=np.int64)
        status = self.kernels.scan_flows(piece, self.key_bytes, self.key_ptr, self.table, lens, hops, ids,
                                         id_ptr, demands, sizes, flags, counts)
        if status != FLOWS_OK:
            return None
        n_flows, n_hops, n_demand, n_size = counts.tolist()
        id_ptr = id_ptr[:n_flows + 1]
        ids = ids[:id_ptr[-1]]
        # unique ids: the table refuses a duplicate (each id with its NUL: the same test)
        if self.kernels.id_table_build(ids, id_ptr, np.full(1 << (2 * n_flows).bit_length(), -1,
                                                            dtype=np.int64)) != n_flows:
            return None
        flags = flags[:n_flows]
        return FlowScan(lens[:n_flows], (flags & _FLOW_DEMAND) != 0, (flags & _FLOW_BYTES) != 0,
                        memoryview(ids), hops[:n_hops], demands[:n_demand].tobytes(),
                        sizes[:n_size].tobytes())
