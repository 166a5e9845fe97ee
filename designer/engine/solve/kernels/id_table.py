"""Id tables of :mod:`designer.engine.solve.id_index`: an open-addressing table over the
ids' UTF-8 bytes, instead of a Python dict, looked up from NUL-joined strings (a topology's link
ends) here, or from the raw JSON bytes of ``solve`` flows (:mod:`.json_scan`).

Entry points: ``id_table_build``, ``find_joined``.

FNV-1a, 32 bits, linear probing. FNV-1a is not keyed, so ids chosen to collide are bounded:
each key sits at most :data:`~.constants.MAX_PROBES` slots past its own, and a lookup compares at
most :data:`~.constants.MAX_COMPARED_PER_BYTE` bytes of other keys per byte of the key; a table
that would break either bound is refused and the caller's dict (keyed SipHash) answers.

Bounds contract
---------------
``id_table_build`` checks everything it indexes by: the table's length (a power of two above the
number of keys) and that ``key_ptr`` cuts ``key_bytes`` (from 0, never decreasing, to its end).
Lookups (:func:`find_until`, ``find_joined``) trust ``key_bytes``/``key_ptr``/``table`` to be what
``id_table_build`` accepted (every table entry -1 or a key index), read ``data`` only below
``len(data)`` and write ``out`` only below ``len(out)``.
"""
from __future__ import annotations

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import MAX_COMPARED_PER_BYTE, MAX_PROBES

# The entry points; :mod:`.json_scan` also looks ids up with find_until.
__all__ = ["id_table_build", "find_joined"]

_FNV_OFFSET, _FNV_PRIME, _MASK32 = 2166136261, 16777619, 0xFFFFFFFF  # FNV-1a, 32 bits (no overflow)


@kernel
def _fnv1a(data, start, end):
    h = _FNV_OFFSET
    for i in range(start, end):
        h = ((h ^ data[i]) * _FNV_PRIME) & _MASK32
    return h


@kernel
def _same_bytes(data, start, end, key_bytes, key_start, key_end):
    if end - start != key_end - key_start:
        return False
    for i in range(end - start):
        if data[start + i] != key_bytes[key_start + i]:
            return False
    return True


@kernel
def _common_prefix(data, start, end, key_bytes, key_start, key_end):
    """How many leading bytes ``data[start:end]`` and the key agree on, as a lookup's
    comparison reads them (:func:`_same_bytes`: nothing when the lengths differ)."""
    if end - start != key_end - key_start:
        return 0
    for i in range(end - start):
        if data[start + i] != key_bytes[key_start + i]:
            return i
    return end - start


@kernel
def find_until(data, start, stop, key_bytes, key_ptr, table):
    """(the key index of ``data[start:end]``, or -1; ``end``): the bytes from ``start`` up to the
    first byte ``stop`` (or the end of ``data``), hashed on the way and looked up in ``table``."""
    n, end, h = len(data), start, _FNV_OFFSET
    while end < n and data[end] != stop:
        h = ((h ^ data[end]) * _FNV_PRIME) & _MASK32
        end += 1
    mask = len(table) - 1
    slot = h & mask
    for _ in range(MAX_PROBES + 1):   # every key sits at most MAX_PROBES past its slot
        k = table[slot]
        if k < 0 or _same_bytes(data, start, end, key_bytes, key_ptr[k], key_ptr[k + 1]):
            return k, end
        slot = (slot + 1) & mask
    return -1, end


@kernel
def id_table_build(key_bytes, key_ptr, table):
    """Fill ``table`` (a power-of-two length above the number of keys, all -1) with the index of
    each key ``key_bytes[key_ptr[k]:key_ptr[k + 1]]`` at its FNV-1a slot (linear probing, each
    key at most :data:`MAX_PROBES` slots past its own). Returns the number of keys, or -1 if the
    table cannot hold them, ``key_ptr`` does not cut ``key_bytes`` (no bounds checks in compiled
    code), a key is there twice, or keys crowd one place — more than :data:`MAX_PROBES` slots,
    or more than :data:`MAX_COMPARED_PER_BYTE` bytes of other keys compared per byte of a key on
    the way to it (the caller then uses its dict)."""
    n = len(key_ptr) - 1
    mask = len(table) - 1
    if n < 0 or len(table) <= n or len(table) & mask or key_ptr[0] != 0 or key_ptr[n] != len(key_bytes):
        return -1
    for k in range(n):
        if key_ptr[k + 1] < key_ptr[k]:
            return -1
    for k in range(n):
        start, end = key_ptr[k], key_ptr[k + 1]
        slot = _fnv1a(key_bytes, start, end) & mask
        probes = 0
        compared = 0   # bytes a lookup of this key compares before reaching it
        while table[slot] >= 0:
            other = table[slot]
            same = _common_prefix(key_bytes, start, end, key_bytes, key_ptr[other], key_ptr[other + 1])
            if same == end - start and key_ptr[other + 1] - key_ptr[other] == same:
                return -1   # a duplicate
            compared += same
            probes += 1
            if probes > MAX_PROBES or compared > MAX_COMPARED_PER_BYTE * (end - start) + MAX_PROBES:
                return -1   # crowded (ids chosen to collide?): no table, the caller's dict answers
            slot = (slot + 1) & mask
        table[slot] = k
    return n


@kernel
def find_joined(joined, key_bytes, key_ptr, table, out):
    """Write into ``out`` the key index of each piece of ``joined`` cut at its 0 bytes (the
    strings of a list joined by NUL). Returns ``len(out)`` when there are exactly that many
    pieces and the table holds every one, else -1 (an unknown piece, or another number of
    pieces: a string held a NUL). ``table``: as :func:`id_table_build` filled it."""
    n, count = len(joined), len(out)
    if count == 0:
        return 0 if n == 0 else -1
    start, found = 0, 0
    while True:
        k, end = find_until(joined, start, 0, key_bytes, key_ptr, table)
        if found >= count or k < 0:
            return -1
        out[found] = k
        found += 1
        if end >= n:
            return found if found == count else -1
        start = end + 1
