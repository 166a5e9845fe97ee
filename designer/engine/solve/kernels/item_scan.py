"""A JSON scanner of arrays of flat objects — a topology document's "nodes" and "links" — into
columns, over raw bytes; with the ends of links looked up in an id table (:mod:`.id_table`).

Entry point: ``scan_items``. The caller (:mod:`designer.engine.document.columnar`) converts the
columns, checks every rule the document's validation has, and for anything this declines (any
status but ``ITEMS_OK``) reads the document as before: orjson, then the located validation.

Bounds contract
---------------
Every read of ``piece`` is below ``len(piece)`` (each index is tested against it first). Every
write is checked against its output's length before it is made: ``fields`` holds
``len(classes)`` regions of ``field_size`` bytes (field f's from ``f * field_size``), ``refs``
one slot per item and reference key, ``present`` one per item. Trusted: ``key_bytes``, ``key_ptr`` and
``table`` are what ``id_table_build`` accepted; ``names``/``name_ptr`` cut the names' bytes.
"""
from __future__ import annotations

import numpy as np

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import (ITEMS_FULL, ITEMS_OK, ITEMS_OUTSIDE, ITEMS_UNKNOWN_REF,
                                                     VALUE_NUMBER, VALUE_OBJECT, VALUE_REF, VALUE_STRING)
from designer.engine.solve.kernels.id_table import find_until
# The token helpers the flow scanner uses too: one definition each.
from designer.engine.solve.kernels.json_scan import _is_number_byte, _plain_string_end, _skip_ws

__all__ = ["scan_items"]


@kernel
def _number_end(piece, i):
    """The end of the run of number bytes (0-9 + - . e E) from ``piece[i]`` (``i`` when none;
    the caller has orjson check the grammar of what the run holds)."""
    n = len(piece)
    while i < n and _is_number_byte(piece[i]):
        i += 1
    return i


@kernel
def _literal_end(piece, i):
    """The index after ``true``, ``false`` or ``null`` at ``piece[i]``, else -1."""
    n = len(piece)
    if i + 4 <= n and piece[i] == 116 and piece[i + 1] == 114 and piece[i + 2] == 117 and piece[i + 3] == 101:
        return i + 4
    if i + 4 <= n and piece[i] == 110 and piece[i + 1] == 117 and piece[i + 2] == 108 and piece[i + 3] == 108:
        return i + 4
    if (i + 5 <= n and piece[i] == 102 and piece[i + 1] == 97 and piece[i + 2] == 108 and piece[i + 3] == 115
            and piece[i + 4] == 101):
        return i + 5
    return -1


@kernel
def _scalar_end(piece, i):
    """The index after the scalar (plain string, number run, literal) at ``piece[i]``, else -1."""
    if i >= len(piece):
        return -1
    if piece[i] == 34:
        end = _plain_string_end(piece, i)
        return end + 1 if end >= 0 else -1
    end = _number_end(piece, i)
    if end > i:
        return end
    return _literal_end(piece, i)


@kernel
def _object_end(piece, i):
    """The index after the object of scalars opened at ``piece[i]`` (``{ ws }`` or ``{ ws string
    ws : ws scalar (ws , ws string ws : ws scalar)* ws }``), else -1."""
    n = len(piece)
    i = _skip_ws(piece, i + 1)
    if i < n and piece[i] == 125:  # '}'
        return i + 1
    while True:
        if i >= n or piece[i] != 34:
            return -1
        end = _plain_string_end(piece, i)
        if end < 0:
            return -1
        i = _skip_ws(piece, end + 1)
        if i >= n or piece[i] != 58:  # ':'
            return -1
        i = _scalar_end(piece, _skip_ws(piece, i + 1))
        if i < 0:
            return -1
        i = _skip_ws(piece, i)
        if i < n and piece[i] == 125:
            return i + 1
        if i >= n or piece[i] != 44:  # ','
            return -1
        i = _skip_ws(piece, i + 1)


@kernel
def _key_of(piece, start, end, names, name_ptr):
    """Which name ``piece[start:end]`` is (its index), or -1."""
    for k in range(len(name_ptr) - 1):
        lo, hi = name_ptr[k], name_ptr[k + 1]
        if hi - lo == end - start:
            same = True
            for j in range(hi - lo):
                if piece[start + j] != names[lo + j]:
                    same = False
                    break
            if same:
                return k
    return -1


@kernel
def _copy(piece, start, end, fields, at, limit, tail):
    """Copy ``piece[start:end]`` then the byte ``tail`` to ``fields[at:]``, below ``limit``: the
    new ``at``, or -1 when it does not fit."""
    if at + (end - start) + 1 > limit:
        return -1
    for j in range(start, end):
        fields[at] = piece[j]
        at += 1
    fields[at] = tail
    return at + 1


@kernel
def _value_span(piece, i, cls):
    """Where the value of class ``cls`` (not VALUE_REF) at ``piece[i]`` lies: (first byte to
    copy, end of the copy, index after the value, the byte written after it); the index after is
    -1 when the value is not of that class."""
    n = len(piece)
    if cls == VALUE_STRING:
        end = _plain_string_end(piece, i) if i < n and piece[i] == 34 else -1
        return i + 1, end, end + 1 if end > i + 1 else -1, 0   # (an empty string: no key allows it)
    if cls == VALUE_NUMBER:
        end = _number_end(piece, i)
        return i, end, end if end > i else -1, 44
    after = _object_end(piece, i) if i < n and piece[i] == 123 else -1
    return i, after, after, 0


@kernel
def _close_absent(classes, seen, item, fields, field_size, field_used):
    """Write the absent entry of every string and object field the item did not give (a NUL,
    so each such field holds one entry per item). False when a field is full."""
    for f in range(len(classes)):
        if (seen >> f) & 1 == 0 and (classes[f] == VALUE_STRING or classes[f] == VALUE_OBJECT):
            if field_used[f] + 1 > field_size:
                return False
            fields[f * field_size + field_used[f]] = 0
            field_used[f] += 1
    return True


@kernel
def _ref_slots(classes):
    """Per key its place among the VALUE_REF keys (-1 for another class), and their number."""
    ref_slot, n_refs = np.full(len(classes), -1, dtype=np.int64), 0
    for k in range(len(classes)):
        if classes[k] == VALUE_REF:
            ref_slot[k] = n_refs
            n_refs += 1
    return ref_slot, n_refs


# D: the member grammar with each value read in place: a helper taking the seven output arrays
# spent most of the scan's time in their reference counting (perf: NRT_incref/decref 55 %)
@kernel
def _members(piece, i, ref_base, ref_slot, names, name_ptr, classes, key_bytes, key_ptr, table, fields,
             field_size, field_used, refs):
    """Read the members of the object whose ``{`` precedes ``piece[i]`` (whitespace skipped), up
    to its ``}``: (status, the index after the ``}``, the bits of the keys it gives); its
    references go to ``refs[ref_base + ref_slot[key]]``."""
    n, seen = len(piece), 0
    if i < n and piece[i] == 125:  # '}': an empty object
        return ITEMS_OK, i + 1, seen
    while True:
        end = _plain_string_end(piece, i) if i < n and piece[i] == 34 else -1
        key = _key_of(piece, i + 1, end, names, name_ptr) if end > i else -1
        if key < 0 or (seen >> key) & 1:
            return ITEMS_OUTSIDE, i, seen   # not a string, a key this does not read, or one given twice
        seen |= 1 << key
        i = _skip_ws(piece, end + 1)
        if i >= n or piece[i] != 58:  # ':'
            return ITEMS_OUTSIDE, i, seen
        i = _skip_ws(piece, i + 1)
        if classes[key] == VALUE_REF:
            if i >= n or piece[i] != 34:
                return ITEMS_OUTSIDE, i, seen
            found, end = find_until(piece, i + 1, 34, key_bytes, key_ptr, table)
            if found < 0 or end >= n:
                return ITEMS_UNKNOWN_REF if end < n else ITEMS_OUTSIDE, i, seen
            refs[ref_base + ref_slot[key]] = found
            i = _skip_ws(piece, end + 1)
        else:
            start, stop, after, tail = _value_span(piece, i, classes[key])
            if after < 0:
                return ITEMS_OUTSIDE, i, seen
            at = _copy(piece, start, stop, fields, key * field_size + field_used[key], (key + 1) * field_size, tail)
            if at < 0:
                return ITEMS_FULL, i, seen
            field_used[key] = at - key * field_size
            i = _skip_ws(piece, after)
        if i < n and piece[i] == 125:  # '}'
            return ITEMS_OK, i + 1, seen
        if i >= n or piece[i] != 44:  # ','
            return ITEMS_OUTSIDE, i, seen
        i = _skip_ws(piece, i + 1)


@kernel
def scan_items(piece, names, name_ptr, classes, key_bytes, key_ptr, table, fields, field_size, field_used,
               refs, present, counts):
    """Read ``piece``, the bytes after the ``[`` of an array of objects, up to its closing
    ``]``, against this subset of JSON (ws: space, tab, newline, carriage return)::

        array  := ws ']' | ws item (ws ',' ws item)* ws ']'
        item   := '{' ws '}' | '{' ws member (ws ',' ws member)* ws '}'     each key at most once
        member := name ws ':' ws value                  name: one of ``names``, value: of its class

    where a string holds no byte below 0x20 and no backslash. Classes (``classes[k]`` of key k):
    VALUE_STRING, a non-empty string; VALUE_NUMBER, a non-empty run of the bytes ``0-9 + - . e
    E`` (the caller has orjson check its grammar); VALUE_OBJECT, ``{}`` or an object whose
    values are strings, number runs, ``true``, ``false`` or ``null``; VALUE_REF, a string that is
    a key of ``table`` (as :func:`id_table_build` filled it). Writes per item: key k's value to
    its field (the region of ``fields`` from ``k * field_size``; ``field_used[k]``: bytes
    written, zero on entry) as its class says, its references to ``refs[item * R + r]`` for
    the r-th of the R keys of class VALUE_REF (-1 where absent), the bits of the keys it gives
    to ``present[item]``. ``counts`` gets (items, the index of the closing ``]``). Returns
    ITEMS_OK, or why it declined (outputs then of no use): ITEMS_OUTSIDE, ITEMS_FULL,
    ITEMS_UNKNOWN_REF."""
    n, n_keys = len(piece), len(classes)
    if len(field_used) < n_keys or len(counts) < 2 or n_keys > 62 or len(fields) < n_keys * field_size:
        return ITEMS_FULL
    ref_slot, n_refs = _ref_slots(classes)
    item, i = 0, _skip_ws(piece, 0)
    if i < n and piece[i] == 93:  # ']': an empty array
        counts[0], counts[1] = 0, i
        return ITEMS_OK
    while True:
        if i >= n or piece[i] != 123:  # '{'
            return ITEMS_OUTSIDE
        if item >= len(present) or (item + 1) * n_refs > len(refs):
            return ITEMS_FULL
        refs[item * n_refs:(item + 1) * n_refs] = -1
        status, i, seen = _members(piece, _skip_ws(piece, i + 1), item * n_refs, ref_slot, names, name_ptr,
                                   classes, key_bytes, key_ptr, table, fields, field_size, field_used, refs)
        if status != ITEMS_OK:
            return status
        if not _close_absent(classes, seen, item, fields, field_size, field_used):
            return ITEMS_FULL
        present[item] = seen
        item += 1
        i = _skip_ws(piece, i)
        if i < n and piece[i] == 93:  # ']'
            counts[0], counts[1] = item, i
            return ITEMS_OK
        if i >= n or piece[i] != 44:  # ','
            return ITEMS_OUTSIDE
        i = _skip_ws(piece, i + 1)
