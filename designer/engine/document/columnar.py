"""A topology file read straight into columns: a fast *yes* for the usual, valid, normalized
file (what ``build`` and ``normalize`` write), or "don't know" — never a wrong yes.

Why: at 100,000 GPUs (628,968 nodes, 1,262,180 links, 259 MB) parsing the file into 1.9 million
dicts and validating them column by column was ~45 % of a ``simulate`` (docs/PERFORMANCE.md,
"100,000 GPUs"), and the dicts ~1.3 GB that a simulation never reads. Here the compiled scanner
(``scan_items``, :mod:`designer.engine.solve.kernels.item_scan`) reads the "nodes" and "links"
arrays from the raw bytes into one buffer per field (ids, kinds, groups, techs, bases, number
tokens, attrs texts; link ends looked up in the node-id table on the way), orjson reads the rest
of the document (the frame: format, name, groups, fabric, ...) and the number tokens, and every
rule of :func:`~designer.engine.document.validator.validate` is tested on whole columns, with
the same helpers the column-wise acceptance (:mod:`.accept`) uses.

It accepts only a subset: no backslash anywhere, nodes with the keys ``id kind group
capacity_gbps attrs`` (attrs: an object of scalars), links with ``id a b capacity_gbps
capacity_basis latency_ns`` on every link and optionally ``tech`` and ``bundle`` (a number), no
null value, no other key. Anything else — a problem, or merely something unusual (``status``,
per-direction capacities, link attrs, a link completed from the catalog) — returns None and the
caller reads the file as before (orjson, then the located validation), which reports exactly
what it did. So the errors are unchanged; only the time to find that there are none.

The document itself is not built: :func:`read_columns` returns the normalized frame (nodes and
links empty) with a ``finish_links`` that fills them in — the same document
:func:`~designer.engine.document.validator.normalize_handed_over` makes of the file — when it
is first read (``Topology.doc``; a simulation never reads it).
"""
from __future__ import annotations

import re

import numpy as np
import orjson

from designer.engine.catalog import NODE_KINDS, TECHS
from designer.engine.document.accept import _attr_keys, _non_negative_numbers, _positive_numbers, _valid_ids
from designer.engine.document.normalizer import normalize_valid
from designer.engine.document.rules import BASES, LIMITS
from designer.engine.document.validator import _validate, normalize_handed_over
from designer.engine.numbers import first_appearance_codes
from designer.engine.solve.kernels.constants import ITEMS_OK, VALUE_NUMBER, VALUE_OBJECT, VALUE_REF, VALUE_STRING
from designer.engine.solve.kernels.loader import aot_kernels, kernels as any_kernels

__all__ = ["read_columns", "JIT_WORTH_BYTES"]

# Below this size the reader runs only with the ahead-of-time kernels: importing numba for its JIT
# (~0.5 s CPU, docs/PERFORMANCE.md) costs more than the reader saves on a small file (~2.5 s CPU
# per 100 MB at 100,000 GPUs).
JIT_WORTH_BYTES = 32 * 1024 * 1024

# key -> value class, in the order of the fields the scanner writes.
_NODE_KEYS = {"id": VALUE_STRING, "kind": VALUE_STRING, "group": VALUE_STRING, "capacity_gbps": VALUE_NUMBER,
              "attrs": VALUE_OBJECT}
_LINK_KEYS = {"id": VALUE_STRING, "a": VALUE_REF, "b": VALUE_REF, "tech": VALUE_STRING,
              "capacity_gbps": VALUE_NUMBER, "capacity_basis": VALUE_STRING, "latency_ns": VALUE_NUMBER,
              "bundle": VALUE_NUMBER}
_LINK_REQUIRED = ("id", "a", "b", "capacity_gbps", "capacity_basis", "latency_ns")
_ABSENT = {"": None}   # an empty string entry is an absent value (the scanner refuses empty strings)


def _opening(key: str):
    return re.compile(rb'"' + key.encode() + rb'"[ \t\n\r]*:[ \t\n\r]*\[')


_NODES, _LINKS = _opening("nodes"), _opening("links")


def read_columns(data: bytes, kernels=None) -> tuple[dict, dict] | None:
    """``(doc, columns)`` of the topology file ``data`` (its raw bytes), or None when this reader
    cannot vouch for it. ``doc``: the normalized document without its nodes and links (filled in
    by ``columns["finish_links"]()``); ``columns``: what ``Topology._assemble`` reads (as
    ``normalize_valid`` returns them). ``kernels``: the kernel namespace (default: the AOT one,
    or the JIT for a file of ``JIT_WORTH_BYTES`` or more)."""
    kernels = kernels or aot_kernels() or (any_kernels() if len(data) >= JIT_WORTH_BYTES else None)
    if kernels is None or not isinstance(data, bytes) or b"\\" in data:
        return None
    found = _scan_arrays(kernels, data)
    if found is None:
        return None
    frame, nodes, links = found
    if _validate(frame)[0]:   # format, name, groups, top-level keys: the frame's own rules
        return None
    node_cols = _node_columns(nodes, frame)
    link_cols = None if node_cols is None else _link_columns(kernels, links)
    if link_cols is None:
        return None
    doc = normalize_valid(frame, None)[0]
    return doc, {**node_cols, **link_cols, "finish_links": _filler(doc, data)}


def _filler(doc: dict, data: bytes):
    """What fills ``doc``'s nodes and links with the file's normalized ones: the file parsed and
    normalized as the dict path does (``normalize_handed_over``), its lists moved over (the
    frame's keys, in the same order, are the normalized document's)."""
    def fill() -> None:
        full = normalize_handed_over(orjson.loads(data))
        doc["nodes"], doc["links"] = full["nodes"], full["links"]

    return fill


# ---------------------------------------------------------------------------- the scan

def _scan_arrays(kernels, data: bytes) -> tuple[dict, dict, dict] | None:
    """The frame (the document parsed with ``[]`` for "nodes" and "links") and what the scanner
    read of each array, or None.

    Exact: with no backslash every quote delimits a string, so the frame holding the token
    ``"nodes"`` once, as a top-level key whose value is ``[]``, makes the cut array the
    document's "nodes" (the same for "links"); the scanner read that array's whole content."""
    opening = _NODES.search(data)
    if opening is None:
        return None
    nodes = _scan(kernels, data, opening.end(), _NODE_KEYS, _empty_table())
    if nodes is None:
        return None
    table = _id_table(kernels, nodes["fields"]["id"], nodes["count"])
    links_opening = _LINKS.search(data, 0, opening.start()) or _LINKS.search(data, nodes["end"])
    if table is None or links_opening is None:
        return None
    links = _scan(kernels, data, links_opening.end(), _LINK_KEYS, table)
    if links is None:
        return None
    cuts = sorted([(opening.end(), nodes["end"]), (links_opening.end(), links["end"])])
    if cuts[0][1] >= cuts[1][0]:
        return None
    text = b"".join([data[:cuts[0][0]], data[cuts[0][1]:cuts[1][0]], data[cuts[1][1]:]])
    if text.count(b'"nodes"') != 1 or text.count(b'"links"') != 1:
        return None
    try:
        frame = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(frame) is not dict or frame.get("nodes") != [] or frame.get("links") != [] or "build" in frame:
        return None   # ("build": the scenario reads such a document as a build request)
    return frame, nodes, links


def _empty_table():
    return np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64)


def _scan(kernels, data: bytes, start: int, keys: dict, table) -> dict | None:
    """What ``scan_items`` read of the array whose content starts at ``data[start]``: ``count``
    items, ``end`` (the index of its ``]`` in ``data``), ``present`` (key -> bool mask),
    ``fields`` (key -> the bytes written for a string, number or object key) and ``refs``
    (an (items, references) int64 array), or None."""
    piece = np.frombuffer(data, dtype=np.uint8, offset=start)
    size = len(piece) + 1
    # Bounds from the size (every item takes at least '{}' and a separator); pages never
    # written cost nothing.
    max_items = size // 3 + 1
    n_refs = sum(cls == VALUE_REF for cls in keys.values())
    names = [k.encode() for k in keys]
    name_ptr = np.cumsum([0, *map(len, names)], dtype=np.int64)
    fields, used = np.empty(len(keys) * size, dtype=np.uint8), np.zeros(len(keys), dtype=np.int64)
    refs, present = np.empty(max_items * n_refs, dtype=np.int64), np.empty(max_items, dtype=np.int64)
    counts = np.zeros(2, dtype=np.int64)
    status = kernels.scan_items(piece, np.frombuffer(b"".join(names), dtype=np.uint8), name_ptr,
                                np.array(list(keys.values()), dtype=np.int64), *table, fields, size, used, refs,
                                present, counts)
    if status != ITEMS_OK:
        return None
    count, end = counts.tolist()
    present = present[:count]
    return {"count": count, "end": start + end,
            "present": {k: (present >> bit) & 1 == 1 for bit, k in enumerate(keys)},
            "fields": {k: fields[bit * size: bit * size + used[bit]] for bit, k in enumerate(keys)
                       if keys[k] != VALUE_REF},
            "refs": refs[:count * n_refs].reshape(count, n_refs)}


def _id_table(kernels, ids: np.ndarray, count: int):
    """The id table (``key_bytes``, ``key_ptr``, ``table``) of the node ids the scanner wrote
    (each followed by a NUL), or None when it cannot hold them (a duplicate id, ids chosen to
    collide: the dict path decides)."""
    ends = np.flatnonzero(ids == 0)
    if len(ends) != count:
        return None
    key_ptr = np.concatenate(([0], ends + 1)).astype(np.int64) - np.arange(count + 1, dtype=np.int64)
    key_bytes = np.ascontiguousarray(ids[ids != 0])
    table = np.full(1 << (2 * count).bit_length(), -1, dtype=np.int64)
    return (key_bytes, key_ptr, table) if kernels.id_table_build(key_bytes, key_ptr, table) == count else None


def _unique(kernels, ids: np.ndarray, count: int) -> bool:
    """Whether the ``count`` ids the scanner wrote (each followed by its NUL) are all different:
    the id table refuses a duplicate (or keys it cannot hold: then 'not known', False)."""
    ptr = np.concatenate(([0], np.flatnonzero(ids == 0) + 1)).astype(np.int64)
    table = np.full(1 << (2 * count).bit_length(), -1, dtype=np.int64)
    return len(ptr) == count + 1 and kernels.id_table_build(np.ascontiguousarray(ids), ptr, table) == count


# ---------------------------------------------------------------------------- conversions

def _strings(field: np.ndarray, count: int) -> list | None:
    """The ``count`` strings of a string or object field (each written with a NUL after it),
    None when the bytes are not UTF-8."""
    try:
        out = field.tobytes().decode("utf-8").split("\0")
    except UnicodeDecodeError:
        return None
    out.pop()   # after the last NUL
    return out if len(out) == count else None


def _optional_strings(field: np.ndarray, count: int) -> list | None:
    """:func:`_strings` with None for an absent value."""
    out = _strings(field, count)
    return None if out is None else list(map(_ABSENT.get, out, out))


def _numbers(field: np.ndarray, given: int) -> list | None:
    """The number tokens of a number field (each written with a comma after it) as orjson reads
    them (int or float; this checks their grammar), None when one is not a JSON number."""
    if not given:
        return []
    try:
        values = orjson.loads(b"[" + field[:-1].tobytes() + b"]")
    except orjson.JSONDecodeError:
        return None
    return values if len(values) == given else None


def _spread(values: list, mask: np.ndarray) -> list:
    """A list with ``values`` where ``mask`` is True, None elsewhere."""
    out = np.full(len(mask), None, dtype=object)
    out[mask] = values
    return out.tolist()


# ---------------------------------------------------------------------------- the rules

def _node_columns(nodes: dict, frame: dict) -> dict | None:
    """The node columns ``Topology._assemble`` reads, when every node passes the item walk's
    rules (``validator._check_nodes``, and the frame ``validator._validate``'s), else None."""
    count, present, fields = nodes["count"], nodes["present"], nodes["fields"]
    if count > LIMITS["max_nodes"] or not (present["id"].all() and present["kind"].all()):
        return None
    ids, kinds = _strings(fields["id"], count), _strings(fields["kind"], count)
    if ids is None or kinds is None or not _valid_ids(ids, {str} if ids else set()):
        return None
    index = dict(zip(ids, range(count)))
    kind_codes = first_appearance_codes(kinds)
    groups = _optional_strings(fields["group"], count)
    group_ids = {g["id"] for g in frame.get("groups") or []}
    if len(index) != count or not set(kind_codes[0]) <= NODE_KINDS.keys() or groups is None \
            or not set(groups) - {None} <= group_ids:
        return None
    capacity = _numbers(fields["capacity_gbps"], int(present["capacity_gbps"].sum()))
    if capacity is None or not _positive_numbers(capacity):
        return None
    attrs = _node_attrs(fields["attrs"], count)
    if attrs is None:
        return None
    return {"node_ids": ids, "node_index": index, "node_kind": kinds, "node_group": groups,
            "node_attrs": attrs[0], "node_attr_keys": frozenset(attrs[1]), "node_kind_codes": kind_codes,
            "node_capacity": _spread(capacity, present["capacity_gbps"])}


def _node_attrs(field: np.ndarray, count: int) -> tuple[list, set] | None:
    """Per node its ``attrs`` (None where absent) and the keys of all of them, when they pass
    ``validator._check_attrs``: each distinct text parsed once, its dict shared by the nodes
    that give that text (read-only, as ``Topology.node_attrs`` is)."""
    texts = _strings(field, count)
    if texts is None:
        return None
    distinct, codes = first_appearance_codes(texts)
    try:
        parsed = [orjson.loads(t) if t else None for t in distinct]
    except orjson.JSONDecodeError:
        return None
    keys = _attr_keys(parsed, None)
    if keys is None:
        return None
    table = np.empty(len(parsed), dtype=object)
    table[:] = parsed
    return table[codes].tolist(), keys


def _link_columns(kernels, links: dict) -> dict | None:
    """The link columns ``Topology._assemble`` reads, when every link passes the item walk's
    rules (``validator._check_links``), else None."""
    count, present, fields = links["count"], links["present"], links["fields"]
    if count > LIMITS["max_links"] or not all(present[k].all() for k in _LINK_REQUIRED):
        return None
    ids = _strings(fields["id"], count)
    ends = links["refs"]
    if ids is None or not _valid_ids(ids, {str} if ids else set()) or bool(np.any(ends[:, 0] == ends[:, 1])):
        return None
    tech, bases = _optional_strings(fields["tech"], count), _strings(fields["capacity_basis"], count)
    if tech is None or bases is None or not set(bases) <= set(BASES):
        return None
    tech_codes = first_appearance_codes(tech)
    capacity, latency = _numbers(fields["capacity_gbps"], count), _numbers(fields["latency_ns"], count)
    if not set(tech_codes[0]) - {None} <= TECHS.keys() or capacity is None or latency is None \
            or _numbers(fields["bundle"], int(present["bundle"].sum())) is None:
        return None
    if not (_positive_numbers(capacity) and _non_negative_numbers(latency)) \
            or not _unique(kernels, fields["id"], count):
        return None
    latencies = np.array(latency, dtype=np.float64)
    latencies[latencies == 0.0] = 0.0   # -0.0 as ``float(v or 0.0)`` makes it
    capacities = np.array(capacity, dtype=np.float64)
    return {"link_ids": ids, "link_index": None, "link_tech": tech, "link_tech_codes": tech_codes,
            "link_a": np.ascontiguousarray(ends[:, 0]), "link_b": np.ascontiguousarray(ends[:, 1]),
            "link_capacity": capacity, "link_latency": latency,
            "link_capacity_array": capacities, "link_latency_array": latencies,
            "link_capacity_ab": [None] * count, "link_capacity_ba": [None] * count}
