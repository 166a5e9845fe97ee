"""JSON scanners of the ``solve`` reader, over raw bytes the caller vouches for, with the
link ids looked up in an id table (:mod:`.id_table`) on the way.

Entry points: ``scan_paths``, ``scan_flows``.

- ``scan_paths``: the "links" arrays of a chunk of flow objects orjson already parsed (no
  backslash in the document, so every quote opens or closes a string); the caller
  (``solve.id_index.IdIndex.path_positions``) checks every count against orjson's.
- ``scan_flows``: the whole "flows" array of a ``solve`` document, in place of orjson and
  ``scan_paths``: the caller (``designer/engine/commands/solve.py``) found the array by
  ``array_region`` (no backslash anywhere, the frame valid JSON) and converts the number tokens
  and the ids; anything outside the subset it reads is declined and the caller reads the document
  as before (orjson, then its own checks and located errors).

Both return a status code (:mod:`.constants`: ``SCAN_*``, ``FLOWS_*``), never raise.

Bounds contract
---------------
Every read of ``piece`` is below ``len(piece)`` (each index is tested against it first), and
every write is checked against its output's length before it is made (``scan_flows`` also checks
``flags``, ``id_ptr`` and ``counts`` against ``lens`` on entry). Trusted: ``key_bytes``,
``key_ptr`` and ``table`` are what ``id_table_build`` accepted.
"""
from __future__ import annotations

from designer.engine.solve.kernels.compiler import kernel
from designer.engine.solve.kernels.constants import (FLOW_BYTES, FLOW_DEMAND, FLOW_ID, FLOW_LINKS, FLOWS_FULL,
                                                     FLOWS_NO_CAP, FLOWS_OK, FLOWS_OUTSIDE, SCAN_COUNTS,
                                                     SCAN_LINKS_KEYS, SCAN_NOT_AN_OBJECT, SCAN_NOT_STRINGS,
                                                     SCAN_OK, SCAN_TRUNCATED, SCAN_UNKNOWN_ID)
from designer.engine.solve.kernels.id_table import find_until

__all__ = ["scan_paths", "scan_flows"]


# --------------------------------------------------------------------------- tokens

@kernel
def _is_ws(c):
    return c == 32 or c == 10 or c == 13 or c == 9   # space, newline, carriage return, tab


@kernel
def _skip_ws(piece, i):
    n = len(piece)
    while i < n and (piece[i] == 32 or piece[i] == 10 or piece[i] == 13 or piece[i] == 9):
        i += 1
    return i


@kernel
def _string_end(piece, i):
    """The index of the quote closing the string opened at ``piece[i]`` (no escapes), or -1."""
    n = len(piece)
    i += 1
    while i < n and piece[i] != 34:
        i += 1
    return i if i < n else -1


@kernel
def _is_links(piece, start, end):
    # the key "links": l i n k s
    return (end - start == 5 and piece[start] == 108 and piece[start + 1] == 105
            and piece[start + 2] == 110 and piece[start + 3] == 107 and piece[start + 4] == 115)


@kernel
def _scan_path(piece, i, key_bytes, key_ptr, table, limit, out, at):
    """Read the "links" array whose value starts at ``piece[i]``: write its ids' indices to
    ``out[at:]`` (at most ``limit``). Returns (status, index after the array, ids read)."""
    n = len(piece)
    if i >= n or piece[i] != 91:  # '['
        return SCAN_NOT_STRINGS, i, 0
    i = _skip_ws(piece, i + 1)
    if i < n and piece[i] == 93:  # ']': an empty path
        return SCAN_OK, i + 1, 0
    count = 0
    while True:
        if i >= n or piece[i] != 34:  # '"'
            return SCAN_NOT_STRINGS, i, count
        k, end = find_until(piece, i + 1, 34, key_bytes, key_ptr, table)   # to the closing quote
        if end >= n:
            return SCAN_TRUNCATED, i, count
        if k < 0:
            return SCAN_UNKNOWN_ID, i, count
        if count >= limit or at + count >= len(out):
            return SCAN_COUNTS, i, count
        out[at + count] = k
        count += 1
        i = _skip_ws(piece, end + 1)
        if i < n and piece[i] == 93:  # ']'
            return SCAN_OK, i + 1, count
        if i >= n or piece[i] != 44:  # ','
            return SCAN_NOT_STRINGS, i, count
        i = _skip_ws(piece, i + 1)


# --------------------------------------------------------------------------- scan_paths

@kernel
def _links_value_at(piece, i, depth):
    """The string opened at ``piece[i]``, ``depth`` containers deep: (status, the index after
    it, the index of its value when it is the key "links" directly inside a flow object, else
    -1). A string followed by ':' is a key; any other is a value, followed by ',' or '}'."""
    n = len(piece)
    start, end = i + 1, _string_end(piece, i)
    if end < 0:
        return SCAN_TRUNCATED, i, -1
    if depth == 0:
        return SCAN_NOT_AN_OBJECT, i, -1
    if depth != 1:
        return SCAN_OK, end + 1, -1
    j = _skip_ws(piece, end + 1)
    if j >= n:
        return SCAN_TRUNCATED, i, -1
    if piece[j] != 58:  # ':'
        if piece[j] != 44 and piece[j] != 125:
            return SCAN_NOT_STRINGS, i, -1
        return SCAN_OK, end + 1, -1
    if not _is_links(piece, start, end):
        return SCAN_OK, end + 1, -1
    return SCAN_OK, end + 1, _skip_ws(piece, j + 1)


# D: one pass over the bytes, one branch per token kind (string, opening, closing, other)
@kernel
def scan_paths(piece, key_bytes, key_ptr, table, lens, out):
    """Write into ``out`` the link indices of the "links" array of every flow object of
    ``piece``, the raw bytes of a JSON array's items (``[`` + piece + ``]`` is valid JSON without a
    backslash, so every quote opens or closes a string). ``lens`` holds orjson's path length of
    each flow, ``out`` their sum. Returns SCAN_OK when the objects are ``len(lens)``, each with
    exactly one key "links" (a string followed by ':' directly inside the flow object) whose
    value is an array of known ids only, as many as ``lens`` says; else the failure's SCAN_* code
    (``out`` then holds nothing of use). ``table``: as :func:`id_table_build` filled it."""
    n = len(piece)
    n_flows = len(lens)
    flow, depth, at, links_keys = -1, 0, 0, 0
    i = 0
    while i < n:
        c = piece[i]
        if c == 34:  # '"': a string; directly inside a flow object, maybe the key "links"
            status, i, value = _links_value_at(piece, i, depth)
            if status != SCAN_OK:
                return status
            if value < 0:
                continue
            links_keys += 1
            if links_keys > 1:
                return SCAN_LINKS_KEYS
            status, i, count = _scan_path(piece, value, key_bytes, key_ptr, table, lens[flow], out, at)
            if status != SCAN_OK:
                return status
            if count != lens[flow]:
                return SCAN_COUNTS
            at += count
            continue
        if c == 123 or c == 91:  # '{' '['
            if depth == 0:
                if c != 123:
                    return SCAN_NOT_AN_OBJECT
                flow += 1
                if flow >= n_flows:
                    return SCAN_COUNTS
                links_keys = 0
            depth += 1
        elif c == 125 or c == 93:  # '}' ']'
            depth -= 1
            if depth < 0:
                return SCAN_TRUNCATED
            if depth == 0 and links_keys != 1:
                return SCAN_LINKS_KEYS
        elif depth == 0 and c != 44 and not _is_ws(c):
            return SCAN_NOT_AN_OBJECT  # a number or a literal among the items
        i += 1
    if depth != 0:
        return SCAN_TRUNCATED
    if flow + 1 != n_flows or at != len(out):
        return SCAN_COUNTS
    return SCAN_OK


# --------------------------------------------------------------------------- scan_flows

@kernel
def _plain_string_end(piece, i):
    """The index of the quote closing the string opened at ``piece[i]``, or -1 when the bytes
    end first or the string holds a control byte (invalid JSON) or a backslash (an escape)."""
    n = len(piece)
    i += 1
    while i < n:
        c = piece[i]
        if c == 34:
            return i
        if c < 32 or c == 92:
            return -1
        i += 1
    return -1


# D: byte-by-byte comparisons with the four key literals (each ``and`` counts), no other logic
@kernel
def _flow_key(piece, start, end):
    """Which key of a flow ``piece[start:end]`` is (FLOW_*), or 0 for any other."""
    size, p = end - start, start
    if size == 2 and piece[p] == 105 and piece[p + 1] == 100:  # id
        return FLOW_ID
    if _is_links(piece, start, end):
        return FLOW_LINKS
    if (size == 5 and piece[p] == 98 and piece[p + 1] == 121 and piece[p + 2] == 116
            and piece[p + 3] == 101 and piece[p + 4] == 115):  # bytes
        return FLOW_BYTES
    if (size == 11 and piece[p] == 100 and piece[p + 1] == 101 and piece[p + 2] == 109
            and piece[p + 3] == 97 and piece[p + 4] == 110 and piece[p + 5] == 100
            and piece[p + 6] == 95 and piece[p + 7] == 103 and piece[p + 8] == 98
            and piece[p + 9] == 112 and piece[p + 10] == 115):  # demand_gbps
        return FLOW_DEMAND
    return 0


@kernel
def _is_number_byte(c):
    # 0-9 + - . e E: every byte a JSON number can hold (orjson checks the grammar afterwards)
    return (48 <= c <= 57) or c == 43 or c == 45 or c == 46 or c == 101 or c == 69


@kernel
def _number_or_null(piece, i, nums, at):
    """Read the value at ``piece[i]``: ``null`` (returns (index after, at, False)) or a number
    token, copied to ``nums[at:]`` followed by a comma (returns (index after, new at, True)).
    The index is -1 for anything else, -2 when ``nums`` is full."""
    n = len(piece)
    if (i + 4 <= n and piece[i] == 110 and piece[i + 1] == 117 and piece[i + 2] == 108
            and piece[i + 3] == 108):  # null
        return i + 4, at, False
    j = i
    while j < n and _is_number_byte(piece[j]):
        j += 1
    if j == i:
        return -1, at, False
    if at + (j - i) + 1 > len(nums):
        return -2, at, False
    for k in range(i, j):
        nums[at] = piece[k]
        at += 1
    nums[at] = 44  # ','
    return j, at + 1, True


@kernel
def _key_end(piece, i):
    """The index of the quote closing the plain string that opens at ``piece[i]``, or -1 when
    none does (:func:`_plain_string_end`)."""
    if i >= len(piece) or piece[i] != 34:  # '"'
        return -1
    return _plain_string_end(piece, i)


@kernel
def _value_start(piece, i):
    """The index of the value after ``ws ':' ws`` from ``piece[i]``, or -1 when there is none."""
    n = len(piece)
    i = _skip_ws(piece, i)
    if i >= n or piece[i] != 58:  # ':'
        return -1
    i = _skip_ws(piece, i + 1)
    return i if i < n else -1


@kernel
def _read_id(piece, i, ids, at):
    """Read the id at ``piece[i]`` (``i`` in range), a non-empty plain string: copy its bytes and
    a NUL to ``ids[at:]``. Returns (the index after it, the new ``at``); the index is -1 for
    anything else, -2 when ``ids`` cannot hold it (as :func:`_number_or_null`)."""
    end = _plain_string_end(piece, i) if piece[i] == 34 else -1
    if end <= i + 1:
        return -1, at  # not a string, or the empty id
    if at + (end - i) > len(ids):
        return -2, at
    for k in range(i + 1, end):
        ids[at] = piece[k]
        at += 1
    ids[at] = 0
    return end + 1, at + 1


@kernel
def _flow_status(seen, given, path_len):
    """FLOWS_OK for a flow with these keys (``seen``), numbers (``given``) and path length, else
    why it is declined: no id or no links (FLOWS_OUTSIDE), no link and no demand (FLOWS_NO_CAP)."""
    if seen & (FLOW_ID | FLOW_LINKS) != FLOW_ID | FLOW_LINKS:
        return FLOWS_OUTSIDE
    if path_len == 0 and not given & FLOW_DEMAND:
        return FLOWS_NO_CAP
    return FLOWS_OK


@kernel
def _buffers_fit(lens, flags, id_ptr, counts):
    """Do ``flags``, ``id_ptr`` and ``counts`` hold what scan_flows writes for ``len(lens)`` flows
    (no bounds checks in compiled code: its writes must stay in these lengths)?"""
    return len(flags) >= len(lens) and len(id_ptr) > len(lens) and len(counts) >= 4


# D: one pass along the grammar below, a branch per token and key (a per-member helper doubled its time)
@kernel
def scan_flows(piece, key_bytes, key_ptr, table, lens, out, ids, id_ptr, dem_nums, size_nums, flags, counts):
    """Read ``piece``, the bytes between the brackets of a ``solve`` document's "flows" array,
    against this subset of JSON (ws: space, tab, newline, carriage return only)::

        content := ws | ws flow (ws ',' ws flow)* ws
        flow    := '{' ws member (ws ',' ws member)* ws '}'     each key at most once
        member  := '"id"' ws ':' ws string                      non-empty; required
                 | '"links"' ws ':' ws '[' ws (id (ws ',' ws id)*)? ws ']'     required
                 | ('"demand_gbps"' | '"bytes"') ws ':' ws (number | 'null')

    where a string holds no byte below 0x20 and no backslash, an ``id`` is a string whose bytes
    are a key of ``table`` (as :func:`id_table_build` filled it) and a number is a non-empty run
    of the bytes ``0-9 + - . e E`` (the caller has orjson check its grammar). Writes, for flow f:
    ``lens[f]`` its path length, its link indices to ``out`` (end to end), its id's bytes and a
    NUL to ``ids`` from ``id_ptr[f]`` (``id_ptr[n_flows]``: the bytes written), FLOW_DEMAND /
    FLOW_BYTES in ``flags[f]`` where it gives that number (the tokens, each followed by a comma,
    in ``dem_nums`` / ``size_nums``). ``counts`` gets (flows, hops, demand bytes, size bytes).
    Returns FLOWS_OK, or the reason it declined (outputs then of no use): FLOWS_OUTSIDE,
    FLOWS_FULL, FLOWS_NO_CAP, or scan_paths' SCAN_* code for a "links" value."""
    n = len(piece)
    if not _buffers_fit(lens, flags, id_ptr, counts):
        return FLOWS_FULL
    flow, hops, id_at, dem_at, size_at = 0, 0, 0, 0, 0
    i = _skip_ws(piece, 0)
    while i < n:
        if piece[i] != 123:  # '{'
            return FLOWS_OUTSIDE
        if flow >= len(lens):
            return FLOWS_FULL
        seen, given, path_len = 0, 0, 0
        i = _skip_ws(piece, i + 1)
        while True:  # one member
            end = _key_end(piece, i)
            if end < 0:
                return FLOWS_OUTSIDE
            key = _flow_key(piece, i + 1, end)
            if key == 0 or seen & key:
                return FLOWS_OUTSIDE  # a key this does not read, or one given twice
            seen |= key
            i = _value_start(piece, end + 1)
            if i < 0:
                return FLOWS_OUTSIDE
            if key == FLOW_ID:
                id_ptr[flow] = id_at
                i, id_at = _read_id(piece, i, ids, id_at)
            elif key == FLOW_LINKS:
                status, i, path_len = _scan_path(piece, i, key_bytes, key_ptr, table, len(out) - hops,
                                                 out, hops)
                if status != SCAN_OK:
                    return status
                hops += path_len
            else:
                if key == FLOW_DEMAND:
                    i, dem_at, number = _number_or_null(piece, i, dem_nums, dem_at)
                else:
                    i, size_at, number = _number_or_null(piece, i, size_nums, size_at)
                if number:
                    given |= key
            if i < 0:
                return FLOWS_FULL if i == -2 else FLOWS_OUTSIDE  # a value outside the subset, or no room
            i = _skip_ws(piece, i)
            if i < n and piece[i] == 44:  # ','
                i = _skip_ws(piece, i + 1)
                continue
            if i < n and piece[i] == 125:  # '}'
                break
            return FLOWS_OUTSIDE
        status = _flow_status(seen, given, path_len)
        if status != FLOWS_OK:
            return status
        lens[flow] = path_len
        flags[flow] = given
        flow += 1
        i = _skip_ws(piece, i + 1)
        if i < n:
            if piece[i] != 44:  # ','
                return FLOWS_OUTSIDE
            i = _skip_ws(piece, i + 1)
            if i >= n:
                return FLOWS_OUTSIDE  # a trailing comma
    id_ptr[flow] = id_at
    counts[0], counts[1], counts[2], counts[3] = flow, hops, dem_at, size_at
    return FLOWS_OK
