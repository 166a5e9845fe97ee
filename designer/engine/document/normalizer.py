"""Normalizing a valid ``fabricscope.topology/1`` document: canonical key order, link ids filled
in, every link's capacity, basis and latency completed from the catalog.

:func:`normalize_valid` is the second half of :func:`designer.engine.document.normalize`, which
validates first: it takes a document :func:`~designer.engine.document.validator.validate` found
valid and, when the column-wise acceptance (:mod:`.accept`) vouched for every node and link, the
columns it read — then the lists are built from those columns instead of item by item, and the
columns :meth:`Topology._assemble <designer.engine.model.topology.Topology>` reads are returned
with the document.
"""
from __future__ import annotations

import copy
import operator
from collections import deque
from functools import partial
from itertools import repeat

import numpy as np

from designer.engine.catalog import DEFAULT_BASIS, TECHS
from designer.engine.document.keys import unknown_keys
from designer.engine.document.rules import FORMAT

__all__ = ["normalize_valid", "migrate_unknown_keys", "LEGACY_FIELDS"]

_NODE_ORDER = ("id", "kind", "group", "capacity_gbps", "attrs")
_LINK_ORDER = ("id", "a", "b", "tech", "capacity_gbps", "capacity_basis", "latency_ns")
_GROUP_ORDER = ("id", "kind", "parent", "template", "attrs")


def normalize_valid(doc: dict, accepted: dict | None, *, owned: bool = False) -> tuple[dict, dict | None]:
    """The normalized copy of a valid document, and the columns ``Topology._assemble`` reads
    (None unless ``accepted``, the columns the column-wise acceptance read: ``{"nodes": ...,
    "links": ...}``). ``owned``: see :func:`designer.engine.document.validator._normalize`."""
    basis = doc.get("capacity_basis") or DEFAULT_BASIS
    out = {"format": FORMAT, "name": doc.get("name", "")}
    for k, v in doc.items():
        if k not in ("format", "name", "groups", "nodes", "links"):
            out[k] = _copy(v)
    out["groups"] = [_ordered(g, _GROUP_ORDER) for g in doc.get("groups") or []]
    if accepted is None or _explicit_none(accepted["nodes"], _NODE_ORDER):
        out["nodes"] = [_ordered(n, _NODE_ORDER) for n in doc["nodes"]]
        out["links"] = _normalize_links(doc["links"], basis)
        return out, None
    out["nodes"], node_cols = _normalize_accepted_nodes(doc["nodes"], accepted["nodes"], owned)
    out["links"], link_cols = _normalize_accepted_links(doc["links"], accepted["links"], basis, owned)
    return out, {**node_cols, **link_cols}


def _copy(v):
    """Copy of a JSON value (faster than ``copy.deepcopy`` for the small attrs dicts).

    Recursive, but only ever called on validated documents, whose values nest at most
    ``LIMITS["max_depth"]`` levels (:func:`~.validator.validate` measures that with an explicit stack), far
    from Python's recursion limit; 500 levels inside ``attrs`` used to be a RecursionError here.
    """
    cls = v.__class__
    if cls is dict:
        return {k: (x if x.__class__ in _SCALARS else _copy(x)) for k, x in v.items()}
    if cls is list:
        return [x if x.__class__ in _SCALARS else _copy(x) for x in v]
    return v if cls in _SCALARS else copy.deepcopy(v)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _ordered(item: dict, order: tuple) -> dict:
    """``item``'s keys of ``order`` that are not None, in that order, then its other keys in
    their order; values copied (scalars as they are: no call per scalar, ~300k items at 16k GPUs)."""
    out = {}
    for k in order:
        v = item.get(k)
        if v is not None:
            out[k] = v if v.__class__ in _SCALARS else _copy(v)
    if len(out) != len(item):   # keys outside ``order`` (or None values): copy the extras
        for k, v in item.items():
            if k not in out and k not in order:
                out[k] = _copy(v)
    return out


_LINK_KEYS = frozenset(_LINK_ORDER)


def _normalize_links(links: list, basis: str) -> list:
    """Every link in ``_LINK_ORDER`` (id filled in; capacity, basis and latency completed), then
    its extra keys in their order. Validated input: the ``_LINK_ORDER`` values are scalars."""
    used = None   # ids given, built at the first link without one (most documents have none)
    out = []
    for l in links:
        get = l.get
        lid, tech_name, cap, link_basis, lat = (get("id"), get("tech"), get("capacity_gbps"),
                                                get("capacity_basis"), get("latency_ns"))
        if lid is None and used is None:
            used = {x["id"] for x in links if x.get("id") is not None}
        tech = TECHS.get(tech_name) if tech_name is not None else None
        if cap is None:
            link_basis = link_basis or basis
            if link_basis == "explicit":
                link_basis = basis
            cap = tech.raw_gbps if link_basis == "raw" else tech.effective_gbps
        else:
            cap = float(cap)
            link_basis = link_basis or "explicit"
        if lat is None:
            lat = tech.latency_ns if tech is not None else 0.0
        new = {"id": lid if lid is not None else _fresh_id(f"{l['a']}-{l['b']}", used), "a": l["a"], "b": l["b"]}
        if tech_name is not None:
            new["tech"] = tech_name
        new["capacity_gbps"] = cap
        new["capacity_basis"] = link_basis
        new["latency_ns"] = lat
        if not _LINK_KEYS.issuperset(l):
            for k, v in l.items():
                if k not in _LINK_KEYS:
                    new[k] = _copy(v)
        out.append(new)
    return out


def _fresh_id(base: str, used: set) -> str:
    lid, n = base, 1
    while lid in used:
        n += 1
        lid = f"{base}#{n}"
    used.add(lid)
    return lid


# ---------------------------------------------------------------------------- accepted lists
# When the column-wise acceptance vouched for every node and link (scalars everywhere but flat
# ``attrs``), the lists are normalized from the columns it read instead of item by item, to
# the same dicts, without a Python step per field of every item. Each function
# also returns the columns of the normalized lists that Topology._assemble reads.

def _explicit_none(accepted: dict, order: tuple) -> bool:
    """Whether some item gives None to a key of ``order`` (:func:`_ordered` drops it)."""
    return any(type(None) in accepted["types"].get(key, ()) for key in order)


def _some_none(accepted: dict, key: str, count: int) -> bool:
    """Whether ``key`` is None (absent, or null) on one of the ``count`` items."""
    return len(accepted["present"].get(key, ())) != count or type(None) in accepted["types"][key]


def _canonical(shape: tuple, order: tuple) -> tuple:
    return tuple(k for k in order if k in shape) + tuple(k for k in shape if k not in order)


def _normalize_accepted_nodes(nodes: list, accepted: dict, owned: bool = False) -> tuple[list, dict]:
    """``[_ordered(n, _NODE_ORDER) for n in nodes]`` for accepted nodes without a None value in
    an ``_NODE_ORDER`` key: a copy of each (keys already in order, the common case) with its
    ``attrs`` copied — or, ``owned``, the node itself — or :func:`_ordered` for a node whose keys
    are in another order."""
    columns, distinct = accepted["columns"], accepted["distinct_shapes"]
    if owned:   # an accepted node in key order is already normalized: its own dict and attrs
        out, attrs = nodes, list(columns.get("attrs") or [None] * len(nodes))
    else:
        out = list(map(dict.copy, nodes))
        attrs = [a if a is None else a.copy() for a in columns.get("attrs") or [None] * len(nodes)]
        for node, a in zip(out, attrs):
            if a is not None:
                node["attrs"] = a
    reorder = {shape for shape in distinct if _canonical(shape, _NODE_ORDER) != shape}
    if reorder:
        for i in _having_shape(accepted, reorder):
            out[i] = _ordered(nodes[i], _NODE_ORDER)
            attrs[i] = out[i].get("attrs")
    absent = len(nodes) * [None]
    return out, {"node_ids": columns["id"], "node_index": accepted["index"],
                 "node_kind": columns["kind"],
                 "node_group": columns.get("group") or absent, "node_attrs": attrs,
                 "node_attr_keys": frozenset(accepted["attr_keys"]), "node_kind_codes": accepted["kind_codes"],
                 "node_capacity": columns.get("capacity_gbps") or list(absent)}


def _normalize_accepted_links(links: list, accepted: dict, basis: str, owned: bool = False) -> tuple[list, dict]:
    """:func:`_normalize_links` of accepted links, built from their columns (``owned``: the
    links themselves, completed in place)."""
    columns, count = accepted["columns"], len(links)

    def column(key):
        return columns.get(key) or [None] * count

    tech, a, b = column("tech"), columns["a"], columns["b"]
    ids = column("id")
    if _some_none(accepted, "id", count):
        used = {lid for lid in ids if lid is not None}
        ids = [lid if lid is not None else _fresh_id(f"{x}-{y}", used) for lid, x, y in zip(ids, a, b)]
    codes = accepted.get("tech_codes")   # kept by the acceptance (None: no link has a tech)
    catalog = _catalog_link_values(set(tech) if codes is None else set(codes[0]), basis)
    capacity, bases, latency = _completed_link_values(accepted, tech, basis, catalog, codes)
    finish = None
    if owned:   # completed in place when the document is first read (Topology.doc): most runs never do
        completed = {"id": ids, "capacity_gbps": capacity, "capacity_basis": bases, "latency_ns": latency}
        out = links
        finish = partial(_complete_links_in_place, links, accepted, completed, catalog)
    else:
        out = [{"id": i, "a": x, "b": y, "tech": t, "capacity_gbps": c, "capacity_basis": s, "latency_ns": v}
               for i, x, y, t, c, s, v in zip(ids, a, b, tech, capacity, bases, latency)]
        if _some_none(accepted, "tech", count):
            for i in [i for i, t in enumerate(tech) if t is None]:
                del out[i]["tech"]
        _add_link_extras(out, links, accepted)
    return out, {"link_ids": ids, "link_index": accepted["index"], "link_tech": tech, "link_tech_codes": codes,
                 "link_a": accepted["a"], "link_b": accepted["b"],
                 "link_capacity": capacity, "link_latency": latency,
                 **_link_value_arrays(accepted, catalog, codes, capacity, latency),
                 "link_capacity_ab": column("capacity_ab_gbps"),
                 "link_capacity_ba": column("capacity_ba_gbps"), "finish_links": finish}


def _completed_link_values(accepted: dict, tech: list, basis: str, catalog: dict,
                           codes: tuple | None = None) -> tuple[list, list, list]:
    """Per link: ``capacity_gbps``, ``capacity_basis`` and ``latency_ns`` as
    :func:`_normalize_links` completes them: first every link's from its tech (one lookup per
    link, C-level; ``catalog``: :func:`_catalog_link_values`), then link by link for the few
    links that give a capacity, basis or latency (17k of 191k at 16,384 GPUs, instead of
    three comprehensions over every link). ``codes``: the techs'
    :func:`~designer.engine.numbers.first_appearance_codes` when validation kept them."""
    columns = accepted["columns"]
    if _on_every_link(accepted, "capacity_gbps", len(tech)):   # a normalized document: every value given
        given_basis = columns.get("capacity_basis")
        capacity = list(map(float, columns["capacity_gbps"]))
        bases = ["explicit"] * len(tech) if given_basis is None else [b or "explicit" for b in given_basis]
        latency = list(columns["latency_ns"]) if _on_every_link(accepted, "latency_ns", len(tech)) else None
        if latency is not None:
            return capacity, bases, latency
    capacity = _per_tech({t: v["capacity_gbps"] for t, v in catalog.items()}, tech, codes)
    bases = [_link_basis(None, basis)] * len(tech)
    latency = _per_tech({t: v["latency_ns"] for t, v in catalog.items()}, tech, codes)
    given, given_basis = columns.get("capacity_gbps"), columns.get("capacity_basis")
    for i in set(_positions(accepted, "capacity_gbps")) | set(_positions(accepted, "capacity_basis")):
        c, b = given[i] if given else None, given_basis[i] if given_basis else None
        if c is None:
            capacity[i], bases[i] = _catalog_capacity(tech[i], b, basis), _link_basis(b, basis)
        else:
            capacity[i], bases[i] = float(c), b or "explicit"
    for i, v in zip(_positions(accepted, "latency_ns"), accepted["present"].get("latency_ns", ())):
        if v is not None:
            latency[i] = v
    return capacity, bases, latency


def _on_every_link(accepted: dict, key: str, count: int) -> bool:
    """Whether every one of the ``count`` links gives ``key`` a value (not null)."""
    return len(accepted["present"].get(key, ())) == count and type(None) not in accepted["types"][key]


def _link_value_arrays(accepted: dict, catalog: dict, codes: tuple | None, capacity: list,
                       latency: list) -> dict:
    """``link_capacity_array`` and ``link_latency_array``: the float64 arrays Topology._assemble
    makes of the ``capacity`` and ``latency`` lists (``float(c)``, ``float(v or 0.0)``), by the
    tech codes — each tech's value converted once, then the links that give their own — instead
    of a conversion of 191k objects each (at 16,384 GPUs). Empty (assemble
    converts the lists) without tech codes, or when a capacity is not known from its tech."""
    if codes is None:
        return {}
    count = len(capacity)
    if _on_every_link(accepted, "capacity_gbps", count) and _on_every_link(accepted, "latency_ns", count):
        # Every link gives both (a normalized document): the given values, converted at once
        # (a latency of -0.0 becomes 0.0, as ``float(v or 0.0)`` makes it).
        latencies = np.array(latency, dtype=np.float64)
        latencies[latencies == 0.0] = 0.0
        return {"link_capacity_array": np.array(capacity, dtype=np.float64), "link_latency_array": latencies}
    distinct, code = codes
    tech_capacity = [np.nan if catalog[t]["capacity_gbps"] is None else float(catalog[t]["capacity_gbps"])
                     for t in distinct]
    capacities = np.array(tech_capacity, dtype=np.float64)[code]
    given = sorted({*_positions(accepted, "capacity_gbps"), *_positions(accepted, "capacity_basis")})
    capacities[given] = [float(capacity[i]) for i in given]
    if np.isnan(capacities).any():   # a link without tech nor capacity: not accepted, but never assume
        return {}
    latencies = np.array([float(catalog[t]["latency_ns"] or 0.0) for t in distinct], dtype=np.float64)[code]
    given = list(_positions(accepted, "latency_ns"))
    latencies[given] = [float(latency[i] or 0.0) for i in given]
    return {"link_capacity_array": capacities, "link_latency_array": latencies}


def _per_tech(value_of: dict, tech: list, codes: tuple | None) -> list:
    """``value_of[t]`` for every link's tech ``t``: gathered by the tech codes when there are
    some (one numpy take of the distinct values' objects, not a lookup per link)."""
    if codes is None:
        return list(map(value_of.__getitem__, tech))
    distinct, code = codes
    values = np.empty(len(distinct), dtype=object)
    values[:] = [value_of[t] for t in distinct]
    return values[code].tolist()


def _link_basis(given: str | None, basis: str) -> str:
    """The ``capacity_basis`` of a link taking its capacity from the catalog."""
    return basis if (given or basis) == "explicit" else (given or basis)


def _catalog_capacity(tech: str, given_basis: str | None, basis: str) -> float:
    figures = TECHS[tech]
    return figures.raw_gbps if _link_basis(given_basis, basis) == "raw" else figures.effective_gbps


def _catalog_link_values(techs: set, basis: str) -> dict:
    """Tech (None too) -> the completed values of a link that gives none of them."""
    return {t: {"capacity_gbps": None if t is None else _catalog_capacity(t, None, basis),
                "capacity_basis": _link_basis(None, basis),
                "latency_ns": 0.0 if t is None else TECHS[t].latency_ns} for t in techs | {None}}


def _positions(accepted: dict, key: str):
    """Indices of the items that have ``key``."""
    if key in accepted["positions"]:
        return accepted["positions"][key].tolist()
    return range(len(accepted["shape_codes"])) if key in accepted["present"] else ()


def _having_shape(accepted: dict, shapes) -> list:
    """Indices (ascending) of the items whose key tuple is one of ``shapes``: from the kept
    shape codes, not a test of every item's tuple (103k nodes, 896 of them reordered at
    16,384 GPUs)."""
    wanted = [code for code, shape in enumerate(accepted["shape_list"]) if shape in shapes]
    return np.flatnonzero(np.isin(accepted["shape_codes"], wanted)).tolist()


# Keys every normalized link has: what the completion sets on a link in place.
_COMPLETED_LINK_KEYS = ("id", "capacity_gbps", "capacity_basis", "latency_ns")


def _complete_links_in_place(links: list, accepted: dict, completed: dict, catalog: dict) -> list:
    """``links`` made :func:`_normalize_links`' dicts in place: the completed values set (a key
    a link has keeps its place, one it lacks is added last), keys then out of order moved to
    the end in order (an extra key given before an added one, keys given in another order),
    a null ``tech`` deleted. ``completed``: key -> every link's value (:data:`_COMPLETED_LINK_KEYS`);
    ``catalog``: tech -> the values of a link giving none (:func:`_catalog_link_values`).

    Every link first takes its tech's values in one ``dict.update`` (one C-level pass), then
    the links that give a capacity, basis or latency (17k of 191k at 16,384 GPUs) their own:
    191k dicts fewer (~37 MB) and none to free."""
    if _some_none(accepted, "id", len(links)):   # first: keys are added in _in_place_order's order
        _set_each(links, "id", completed["id"])
    tech = accepted["columns"].get("tech") or [None] * len(links)
    deque(map(dict.update, links, map(catalog.__getitem__, tech)), maxlen=0)
    given = sorted({*_positions(accepted, "capacity_gbps"), *_positions(accepted, "capacity_basis"),
                    *_positions(accepted, "latency_ns")})
    if given:
        giving = [links[i] for i in given]
        for key in ("capacity_gbps", "capacity_basis", "latency_ns"):
            _set_each(giving, key, [completed[key][i] for i in given])
    same: dict[tuple, tuple] = {}   # one object per set of keys to move, told apart by identity
    moves = {shape: same.setdefault(keys, keys) for shape in accepted["distinct_shapes"]
             if (keys := _keys_to_move(_in_place_order(shape)))}
    for keys in same:   # the links of the shapes moving these keys, found by their shape codes
        shapes = {shape for shape, moved in moves.items() if moved is keys}
        moving = list(map(links.__getitem__, _having_shape(accepted, shapes)))
        for key in keys:   # pop then set again: the key goes last, its value unchanged
            _set_each(moving, key, list(map(dict.pop, moving, repeat(key))))
    if type(None) in accepted["types"].get("tech", ()):   # a tech given as null is dropped
        for link in links:
            if "tech" in link and link["tech"] is None:
                del link["tech"]
    return links


def _set_each(items: list, key: str, values: list) -> None:
    # operator.setitem: a vectorcall, ~40% faster than dict.__setitem__ here
    deque(map(operator.setitem, items, repeat(key), values), maxlen=0)


def _in_place_order(shape: tuple) -> tuple:
    """The keys of a link of key tuple ``shape`` once its completed values are set in place."""
    return shape + tuple(k for k in _COMPLETED_LINK_KEYS if k not in shape)


def _keys_to_move(keys: tuple) -> tuple:
    """The fewest keys to move, in order, to the end of a dict of ``keys`` to put them in
    :func:`_normalize_links`' order: those after the longest start of that order the dict
    already has in order (``(id, a, b, tech, bundle, capacity_gbps, capacity_basis,
    latency_ns)`` -> ``(bundle,)``)."""
    order = _canonical(keys, _LINK_ORDER)
    kept = len(order)
    while [k for k in keys if k in order[:kept]] != list(order[:kept]):
        kept -= 1
    return order[kept:]


def _add_link_extras(out: list, links: list, accepted: dict) -> None:
    """Append each link's keys outside ``_LINK_ORDER`` (``bundle``, ``attrs``, …) in its order."""
    extras = {shape: keys for shape in accepted["distinct_shapes"]
              if (keys := tuple(k for k in shape if k not in _LINK_KEYS))}
    if extras:
        shape_list, shape_codes = accepted["shape_list"], accepted["shape_codes"]
        for i in _having_shape(accepted, extras):
            new, link = out[i], links[i]
            for k in extras[shape_list[shape_codes[i]]]:
                new[k] = _copy(link[k])


# ---------------------------------------------------------------------------- migration
# Where :func:`migrate_unknown_keys` keeps the fields an older document held outside the known
# ones: one free-form object inside ``attrs``, so no moved key is read as a physical attrs value
# (``attrs.*_gbps`` must be a capacity) or collides with an attrs key of the same name.
LEGACY_FIELDS = "legacy_fields"


def migrate_unknown_keys(doc: dict) -> tuple[dict, list[str]]:
    """A document stored before unknown fields were refused, with each unknown field moved under
    ``attrs.legacy_fields`` of its item (top-level ones under the document's ``attrs``).

    Unknown fields used to be stored as they were; such a revision would now fail validation each
    time it is read (simulate, patch, export). This keeps every value, in a place the rule allows,
    without guessing what a misspelled field meant. Only fields whose item has no ``attrs`` or an
    object there move: anything else is left for the validator to report.

    Parameters
    ----------
    doc : dict
        A parsed document (not modified).

    Returns
    -------
    (dict, list of str)
        The migrated copy (``doc`` itself when nothing moved) and the paths of the moved fields
        (``links[12].degrade``), in document order.
    """
    if not isinstance(doc, dict):
        return doc, []
    moved: list[str] = []
    out = _migrated_item(doc, "document", "", moved)
    for name, level in (("groups", "group"), ("nodes", "node"), ("links", "link")):
        items = doc.get(name)
        if isinstance(items, list):
            new = [_migrated_item(item, level, f"{name}[{i}].", moved) if item.__class__ is dict else item
                   for i, item in enumerate(items)]
            if any(a is not b for a, b in zip(new, items)):
                out = out if out is not doc else dict(doc)
                out[name] = new
    return out, moved


def _migrated_item(item: dict, level: str, prefix: str, moved: list) -> dict:
    """``item`` with its unknown keys under ``attrs.legacy_fields`` (``item`` itself when it has
    none, or when its ``attrs`` is not an object or already holds ``legacy_fields``)."""
    unknown = unknown_keys(item, level)
    attrs = item.get("attrs")
    if not unknown or not (attrs is None or attrs.__class__ is dict) or LEGACY_FIELDS in (attrs or {}):
        return item
    out = {k: v for k, v in item.items() if k not in unknown}
    out["attrs"] = {**(attrs or {}), LEGACY_FIELDS: {k: item[k] for k in unknown}}
    moved.extend(f"{prefix}{k}" for k in unknown)
    return out
