"""Column-wise acceptance of a topology document's nodes and links: a fast *yes* for the common,
valid document, or "don't know" — never a wrong yes.

:func:`designer.engine.document.validate` walks every node and link in Python to locate each
problem (~300k items at 16,384 GPUs). A valid document has no problem to
locate, so :func:`accept_nodes` and :func:`accept_links` first test the same rules on whole columns
(one comprehension per field, set inclusions, one regular-expression search over all ids joined,
numpy range tests on the numbers). They accept only what they can vouch for, with rules at least
as strict as the item walk's (exact ``str``/``int``/``float`` types, no nested extra field, every
capacity positive even on a link declared down); anything else — a problem, or merely something
unusual — returns None/False and the item walk runs as before and reports exactly what it did.
So the problems validate returns are unchanged; only the time to find that there are none.

:func:`node_columns` and :func:`link_columns` keep what the acceptance read (columns, key shapes,
the set of value types per key, end indices) so that normalize and compile need not read the
items again (103k nodes and 191k links at 16,384 GPUs).
"""
from __future__ import annotations

import operator
from itertools import chain, compress, repeat

import numpy as np

from designer.engine.catalog import NODE_KINDS, TECHS
from designer.engine.document.rules import (BASES, DIRECTION_KEYS, LARGEST_QUANTITY, LIMITS, SMALLEST_NORMAL,
                                            UNPRINTABLE, radix_ok)
from designer.engine.numbers import first_appearance_codes
from designer.engine.solve.id_index import IdIndex

__all__ = ["accept_nodes", "accept_links", "node_columns", "link_columns"]

_NONE = type(None)
_SCALAR_TYPES = frozenset({str, int, float, bool, _NONE})
_NUMBER_TYPES = frozenset({int, float})
_NODE_KEYS = frozenset({"id", "kind", "group", "capacity_gbps", "attrs"})
_LINK_NUMBER_KEYS = ("capacity_gbps", "latency_ns", "capacity_ab_gbps", "capacity_ba_gbps")
_LINK_KEYS = frozenset({"id", "a", "b", "tech", "capacity_basis", "attrs", *_LINK_NUMBER_KEYS})


def accept_nodes(nodes: list, group_ids) -> set | None:
    """The node ids when every node certainly passes :func:`document._check_nodes`, else None."""
    accepted = node_columns(nodes, group_ids)
    return None if accepted is None else set(accepted["columns"]["id"])


def accept_links(links: list, node_ids) -> bool:
    """Whether every link certainly passes :func:`document._check_links`."""
    if not isinstance(node_ids, dict):
        node_ids = dict(zip(node_ids, range(len(node_ids))))
    return link_columns(links, node_ids) is not None


def node_columns(nodes: list, group_ids) -> dict | None:
    """:func:`accept_nodes` keeping what it read (None: not accepted): :func:`_read`'s
    ``columns``, ``present``, ``positions``, ``types``, ``shape_list``, ``shape_codes`` and
    ``distinct_shapes``, ``index`` (node id → position), ``attr_keys`` (the keys of all the
    nodes' attrs) and ``kind_codes`` (:func:`~designer.engine.numbers.first_appearance_codes`
    of the kinds)."""
    accepted = _read(nodes, _NODE_KEYS)
    if accepted is None:
        return None
    columns, present, types = accepted["columns"], accepted["present"], accepted["types"]
    ids = columns.get("id")   # required: an id missing from some node is refused (types)
    if ids is None or len(ids) != len(present["id"]) or not _valid_ids(ids, types["id"]):
        return None
    index = dict(zip(ids, range(len(ids))))
    if len(index) != len(ids):   # a duplicate id
        return None
    kinds = present.get("kind")   # required too
    if kinds is None or len(kinds) != len(nodes) or types["kind"] != {str}:
        return None
    # Codes, not a set: the distinct kinds are checked, the codes kept for the topology.
    kind_codes = first_appearance_codes(kinds)
    if not set(kind_codes[0]) <= NODE_KINDS.keys():
        return None
    if not types.get("group", set()) - {_NONE} <= {str} \
            or not set(present.get("group", ())) - {None} <= set(group_ids):
        return None
    if not _positive_numbers(present.get("capacity_gbps", ()), types.get("capacity_gbps")):
        return None
    attr_keys = _attr_keys(present.get("attrs", ()), types.get("attrs"))
    if attr_keys is None:
        return None
    accepted["index"], accepted["attr_keys"], accepted["kind_codes"] = index, attr_keys, kind_codes
    return accepted


def link_columns(links: list, node_index: dict, node_ids: list | None = None) -> dict | None:
    """:func:`accept_links` keeping what it read (None: not accepted): as :func:`node_columns`,
    with ``a``/``b``, the end node indices (int64 arrays) in ``node_index`` (id → position;
    ``node_ids``, optional: the ids in position order, to look the ends up in compiled code),
    ``index`` (None: the link id → position dict is left to Topology, which builds it when first
    read) and ``tech_codes`` (of the ``tech`` column, None where absent; None when no link has a
    tech)."""
    accepted = _read(links, _LINK_KEYS)
    if accepted is None or not _link_ids_ok(accepted, len(links)):
        return None
    ends = _link_ends(accepted, len(links), node_index, node_ids)
    if ends is None:
        return None
    tech_codes = _tech_codes(accepted)
    if tech_codes is _REFUSED or not _link_values_ok(accepted, tech_codes):
        return None
    accepted["a"], accepted["b"] = ends
    accepted["index"] = None   # Topology's link_index: built when first read
    accepted["tech_codes"] = tech_codes
    return accepted


_REFUSED = object()   # what _tech_codes returns for a tech column it does not accept


def _link_ids_ok(accepted: dict, count: int) -> bool:
    """Every given link id valid (:func:`_valid_ids`) and none given twice."""
    present, types = accepted["present"], accepted["types"]
    ids = present.get("id", [])
    complete = len(ids) == count and _NONE not in types.get("id", ())
    if not complete:
        ids = [i for i in ids if i is not None]
    if not _valid_ids(ids, types.get("id", set()) - {_NONE}):
        return False
    # A set, not the id -> position dict Topology keeps: a simulation never asks a link by id,
    # so Topology builds that dict at the first lookup (a set is cheaper to build).
    return len(set(ids)) == len(ids)   # else a duplicate id


def _link_ends(accepted: dict, count: int, node_index: dict, node_ids: list | None) -> tuple | None:
    """The ``a`` and ``b`` node indices of every link (int64 arrays), None when an end is missing,
    not a string, not a node, or both ends are one node (a self-loop)."""
    columns, present, types = accepted["columns"], accepted["present"], accepted["types"]
    a, b = columns.get("a"), columns.get("b")
    if a is None or b is None or types["a"] != {str} or types["b"] != {str} \
            or len(present["a"]) != count or len(present["b"]) != count:
        return None
    by_bytes = IdIndex.of(node_ids) if node_ids is not None and len(node_ids) == len(node_index) else None
    ends = _indices(a, node_index, by_bytes), _indices(b, node_index, by_bytes)
    if ends[0] is None or ends[1] is None or bool(np.any(ends[0] == ends[1])):   # unknown end, self-loop
        return None
    return ends


def _tech_codes(accepted: dict):
    """:func:`first_appearance_codes` of the ``tech`` column (kept, as the kinds'), None when no
    link has a tech, :data:`_REFUSED` when a tech is not a catalog name (or not a string)."""
    tech, types = accepted["columns"].get("tech"), accepted["types"]
    if not types.get("tech", set()) <= {str, _NONE}:
        return _REFUSED
    if tech is None:
        return None
    codes = first_appearance_codes(tech)
    return codes if set(codes[0]) - {None} <= TECHS.keys() else _REFUSED


def _link_values_ok(accepted: dict, tech_codes: tuple | None) -> bool:
    """Every link has a capacity or a tech, a known basis, positive capacities, non-negative
    latencies and physical ``attrs``."""
    columns, present, types = accepted["columns"], accepted["present"], accepted["types"]
    if _no_capacity_nor_tech(columns.get("tech"), columns.get("capacity_gbps"), tech_codes):
        return False
    if not types.get("capacity_basis", set()) <= {str, _NONE} \
            or not set(present.get("capacity_basis", ())) <= {None, *BASES}:
        return False
    if not all(_positive_numbers(present.get(k, ()), types.get(k)) for k in ("capacity_gbps", *DIRECTION_KEYS)):
        return False
    return _non_negative_numbers(present.get("latency_ns", ()), types.get("latency_ns")) \
        and _attrs_ok(present.get("attrs", ()), types.get("attrs"))


def _no_capacity_nor_tech(tech: list | None, cap: list | None, tech_codes: tuple | None = None) -> bool:
    """Whether a link has neither a capacity nor a tech to take it from (columns, or None when
    no link has the key; ``tech_codes``: :func:`first_appearance_codes` of ``tech``, to find
    the links without a tech with no pass over the links)."""
    if tech is None:
        return cap is None or None in cap
    if cap is None:
        return None in tech
    if tech_codes is not None:
        distinct, codes = tech_codes
        if None not in distinct:
            return False
        return None in map(cap.__getitem__, np.flatnonzero(codes == distinct.index(None)).tolist())
    return None in tech and None in compress(tech, map(operator.is_, cap, repeat(None)))


def _indices(ends: list[str], node_index: dict, by_bytes: IdIndex | None = None) -> np.ndarray | None:
    """Position of every end in ``node_index`` (ids already known to be exact strings), None
    when one is not a node: one lookup per end, which is also the membership test — in compiled
    code by ``by_bytes`` (the same ids) when it can vouch for every end, else by the dict."""
    found = by_bytes.positions(ends) if by_bytes is not None else None
    if found is not None:
        return found
    try:
        return np.fromiter(map(node_index.__getitem__, ends), dtype=np.int64, count=len(ends))
    except KeyError:
        return None


# ---------------------------------------------------------------------------- columns

def _types(values) -> set:
    return set(map(type, values))


def _read(items: list, known: frozenset) -> dict | None:
    """What every acceptance test reads of a list of dicts, or None when one is not a dict, a
    key is not a string, or an unknown key holds a structured value (the item walk bounds its
    depth): ``columns`` (key → ``item.get(key)`` of every item, aligned: None where absent, as
    the item walk reads it; none for an unknown key only some items have: never read),
    ``present`` (key → the values of the items that have the key), ``positions`` (key only some
    items have → their indices, an int64 array), ``types`` (key → the set of those values'
    types), ``shape_list`` and ``shape_codes`` (:func:`first_appearance_codes` of the items'
    key tuples: the distinct ones, and each item's position there) and ``distinct_shapes``
    (the set of them)."""
    if items and _types(items) != {dict}:
        return None
    # One hashing pass gives both the distinct key tuples and each item's (a set, then a lookup
    # per item, hashed every tuple twice), the tuples not
    # kept (191k fewer objects alive: ~15 MB).
    shape_list, shape_codes = first_appearance_codes(map(tuple, items), len(items))
    keys = set(chain.from_iterable(shape_list))
    if not all(k.__class__ is str for k in keys):
        return None
    columns, present, positions = {}, {}, {}
    in_every_shape = {k for k in keys if all(k in shape for shape in shape_list)}
    for k in in_every_shape:
        columns[k] = present[k] = list(map(dict.get, items, repeat(k)))
    if keys - in_every_shape:
        _read_partial_keys(items, keys - in_every_shape, known, shape_list, shape_codes, columns, present,
                           positions)
    types = {k: _types(v) for k, v in present.items()}
    if any(not t <= _SCALAR_TYPES for k, t in types.items() if k not in known):
        return None
    return {"columns": columns, "present": present, "positions": positions, "types": types,
            "distinct_shapes": set(shape_list), "shape_list": shape_list, "shape_codes": shape_codes}


def _read_partial_keys(items: list, keys: set, known: frozenset, shape_list: list, shape_codes: np.ndarray,
                       columns: dict, present: dict, positions: dict) -> None:
    """Columns of keys only some shapes have. A key on few items (``capacity_gbps``,
    ``latency_ns``, ``bundle``: 17k of 191k links at 16,384 GPUs) is read from those items only
    (not a full pass per key); a key on most (``tech``: 175k) in one C-level pass, its
    present values picked by a mask. Only a known key gets a column (``bundle``'s was never
    read)."""
    for k in keys:
        mask = np.isin(shape_codes, [code for code, shape in enumerate(shape_list) if k in shape])
        having = positions[k] = np.flatnonzero(mask)
        if 8 * len(having) > len(items):
            column = list(map(dict.get, items, repeat(k)))
            present[k] = list(compress(column, mask.tolist()))
            if k in known:
                columns[k] = column
            continue
        having = having.tolist()
        values = present[k] = [items[i][k] for i in having]
        if k in known:
            column = columns[k] = [None] * len(items)
            for i, v in zip(having, values):
                column[i] = v


def _valid_ids(ids: list, types: set) -> bool:
    """Every id (of ``types``) an exact ``str`` of 1 to ``max_id_length`` characters, all
    printable (one search over the ids joined by a space, itself printable)."""
    if not ids:
        return True
    if types != {str}:
        return False
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    if lengths.min() < 1 or lengths.max() > LIMITS["max_id_length"]:
        return False
    joined = " ".join(ids)
    # Printable ASCII has nothing _UNPRINTABLE matches, and testing its bytes is ~5x faster.
    return (joined.isascii() and _printable_ascii(joined)) or UNPRINTABLE.search(joined) is None


def _printable_ascii(text: str) -> bool:
    """``text.isprintable()`` of an ASCII ``text``: every byte 0x20-0x7e (one numpy test of the
    bytes, cheaper than ``isprintable`` on the 191k link ids joined)."""
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return not bool(np.any(codes - np.uint8(0x20) >= np.uint8(0x7f - 0x20)))   # below 0x20 wraps


def _numbers(values: list, types: set | None) -> np.ndarray | None:
    """Float64 array of exact ints and floats (None values dropped), None when another type is
    present or an int does not fit a float; ``types``: the values' types (None: not known)."""
    if types is None:
        types = _types(values)
    if not types <= _NUMBER_TYPES | {_NONE}:
        return None
    present = [v for v in values if v is not None] if _NONE in types else values
    try:
        return np.array(present, dtype=np.float64)
    except OverflowError:
        return None


def _positive_numbers(values: list, types: set | None = None) -> bool:
    """Capacities: finite and at least the smallest normal float (the item walk's positive
    rule; a zero on a link declared down is left to it)."""
    arr = _numbers(values, types)
    return arr is not None and bool(np.all((arr >= SMALLEST_NORMAL) & (arr <= LARGEST_QUANTITY)))


def _non_negative_numbers(values: list, types: set | None = None) -> bool:
    arr = _numbers(values, types)
    return arr is not None and bool(np.all((arr >= 0) & (arr <= LARGEST_QUANTITY)))


def _attrs_ok(attrs_column: list, types: set | None) -> bool:
    """Every ``attrs`` an object of scalars whose ``*_gbps`` values are capacities and ``*_ns``
    values latencies (:func:`document._check_attrs`); nested attrs go to the item walk."""
    return _attr_keys(attrs_column, types) is not None


def _attr_keys(attrs_column: list, types: set | None) -> set | None:
    """The keys of all the ``attrs`` when :func:`_attrs_ok`, else None."""
    if types is not None and _NONE not in types:
        attrs = attrs_column
    else:
        attrs = [a for a in attrs_column if a is not None]
        types = _types(attrs)
    if not attrs:
        return set()
    if types - {_NONE} != {dict}:
        return None
    if not _types(chain.from_iterable(map(dict.values, attrs))) <= _SCALAR_TYPES:
        return None
    keys = set(chain.from_iterable(attrs))
    return keys if all(_attr_values_ok(attrs, key) for key in keys) else None


def _attr_values_ok(attrs: list, key) -> bool:
    """One attr key's values over every ``attrs`` pass the item walk's rule for it (capacities,
    latencies, a switch's radix); the item walk locates what does not."""
    if key == "radix":
        return all(radix_ok(a.get("radix")) for a in attrs)
    if key.__class__ is not str or not (key.endswith("_gbps") or key.endswith("_ns")):
        return True
    values = [a[key] for a in attrs if key in a]
    if any(v is None for v in values):
        return False
    return (_positive_numbers if key.endswith("_gbps") else _non_negative_numbers)(values)
