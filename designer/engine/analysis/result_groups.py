"""A result's per-resource records grouped by symmetry, and expanded back on demand.

A 100,000-GPU simulation loads 1.4 million resources (each link direction, each node resource),
and in a symmetric cluster most of them repeat one another host by host: ``h0/gpu0-pcie0:a>b``,
``h1/gpu0-pcie0:a>b``, ... carry the same tech, tier, capacity, load and utilization. Written
one JSON record each they were 243 MB of a 364 MB result (docs/PERFORMANCE.md, "100,000 GPUs").

:func:`group_resources` stores them as columns of **groups**: records equal in every field but
their name, whose names differ only in their first number (``h{n}/gpu0-pcie0``). A group keeps
its name's prefix and suffix, its values once, and the numbers and the positions of its
elements in the original list, each as an arithmetic run ``{"from", "step", "count"}`` when
they are one (the common, symmetric case) or as a plain list. Nothing is rounded or merged
that differs: two records land in one group only when every value is equal (``==`` on the
floats the record holds), so :func:`expand_resources` gives back the records exactly — equal
values, keys in the same order, the same list order. One group's elements are read with
``expand_resources(grouped, group=k)`` (CLI: ``expand RESULT --group K``).

Format (``fabricscope.resource-groups/1``, docs/FORMATS.md "Results")::

    {"format": "fabricscope.resource-groups/1", "count": 1403473,
     "groups": {"prefix": [...], "suffix": [...], "kind": [...], "dir": [...], "tech": [...],
                "tier": [...], "capacity_gbps": [...], "load_gbps": [...], "utilization": [...],
                "numbers": [...], "positions": [...]}}

``kind`` is ``"link"`` (the name is the record's ``link``; its ``id`` is ``link:dir``) or
``"node"`` (the name is the ``id``; ``link``, ``dir`` and ``tech`` are null). A number of -1
means the name has no number (it is the prefix alone).
"""
from __future__ import annotations

import re

import numpy as np

from designer.engine.numbers import first_appearance_codes as first_codes

__all__ = ["GROUPS_FORMAT", "GROUP_FROM", "FIELDS", "group_resources", "group_resource_arrays", "expand_resources",
           "compact_result", "expand_result", "is_grouped"]

GROUPS_FORMAT = "fabricscope.resource-groups/1"
# Results with at least this many resource records are written grouped by the CLI and stored
# grouped (below it, the plain list is small and what every older reader expects).
GROUP_FROM = 100_000
FIELDS = ("id", "link", "dir", "tech", "tier", "capacity_gbps", "load_gbps", "utilization")
_VALUES = ("dir", "tech", "tier", "capacity_gbps", "load_gbps", "utilization")
_NUMBER = re.compile(r"[0-9]+")


def is_grouped(value) -> bool:
    """Whether ``value`` is a :func:`group_resources` table (not a list of records)."""
    return isinstance(value, dict) and value.get("format") == GROUPS_FORMAT


def _split(name: str) -> tuple[str, int, str]:
    """``(prefix, number, suffix)`` of a name around its first number; ``(name, -1, "")`` when it
    has none, or when that number does not print back as written (a leading zero: ``h01``)."""
    m = _NUMBER.search(name)
    if m is None:
        return name, -1, ""
    digits = m.group()
    number = int(digits)
    if str(number) != digits:
        return name, -1, ""
    return name[:m.start()], number, name[m.end():]


def _columns(records: list[dict]) -> dict | None:
    """The records' fields as columns, or None when a record is not of :data:`FIELDS`' shape
    (in that order) or its ``id`` does not follow from its name (then nothing is grouped)."""
    if not all(tuple(r) == FIELDS for r in records):
        return None
    cols = {k: [r[k] for r in records] for k in FIELDS}
    for rid, link, direction, tech in zip(cols["id"], cols["link"], cols["dir"], cols["tech"]):
        if link is None:
            if direction is not None or tech is not None:
                return None
        elif direction is None or rid != f"{link}:{direction}":
            return None
    return cols


def group_resources(records: list[dict]) -> dict | None:
    """The records grouped by symmetry (module docstring), or None when they cannot be (a
    record of another shape): the caller keeps the list then.

    Parameters
    ----------
    records : list of dict
        A result's ``resources`` (:data:`FIELDS`, in that order).

    Returns
    -------
    dict or None
        ``fabricscope.resource-groups/1``; ``expand_resources(out) == records``. None also when
        there would be more than half as many groups as records (grouping would not pay).
    """
    cols = _columns(records)
    if cols is None:
        return None
    names = [lid if lid is not None else rid for rid, lid in zip(cols["id"], cols["link"])]
    split, parts = {}, []
    for name in names:   # two directions share a link's name: split once
        got = split.get(name)
        if got is None:
            got = split[name] = _split(name)
        parts.append(got)
    if any(p[1] > 2 ** 62 for p in split.values()):   # a number beyond int64 in a name: not grouped
        return None
    keys: dict[tuple, int] = {}
    gid = [keys.setdefault((prefix, suffix, lid is None, *values), len(keys))
           for (prefix, _, suffix), lid, *values in zip(parts, cols["link"], *(cols[k] for k in _VALUES))]
    if 2 * len(keys) > len(records):   # little symmetry: the groups would not be smaller
        return None
    order = np.argsort(np.asarray(gid, dtype=np.int64), kind="stable")
    numbers = np.fromiter((p[1] for p in parts), dtype=np.int64, count=len(parts))[order]
    bounds = np.searchsorted(np.asarray(gid, dtype=np.int64)[order], np.arange(len(keys) + 1))
    out = {k: [] for k in ("prefix", "suffix", "kind", *_VALUES)}
    for prefix, suffix, is_node, *values in keys:
        out["prefix"].append(prefix)
        out["suffix"].append(suffix)
        out["kind"].append("node" if is_node else "link")
        for k, v in zip(_VALUES, values):
            out[k].append(v)
    out["numbers"] = _runs(numbers, bounds)
    out["positions"] = _runs(order, bounds)
    return {"format": GROUPS_FORMAT, "count": len(records), "groups": out}


def group_resource_arrays(entity: np.ndarray, names: list[str], node_from: int, direction: np.ndarray,
                          tech: np.ndarray, techs: list, tier: np.ndarray, tiers: list, capacity: np.ndarray,
                          load: np.ndarray, utilization: np.ndarray) -> dict | None:
    """:func:`group_resources` of records given as arrays (what the simulation holds), without
    making a dict per record: the same groups, in the same order, whose expansion gives the
    records the simulation would have listed.

    Parameters
    ----------
    entity : int array
        Per record, its name's index in ``names``; names from ``node_from`` on are node
        resources (``link``, ``dir``, ``tech`` null), the others links.
    direction : int array
        Per record: 0 ``a>b``, 1 ``b>a`` (ignored for a node).
    tech, tier : int arrays
        Per record, an index into ``techs`` (str or None) and ``tiers``.
    capacity, load, utilization : float64 arrays
        Per record, in Gb/s and as a fraction; a non-finite utilization is written null. Values
        are grouped by their bits, so equal floats share a group and nothing is rounded.
    """
    templates, tcode, numbers = _split_names(names, node_from)
    if numbers.dtype == object:   # a number beyond int64 in a name: not grouped
        return None
    if len(entity) == 0:
        return {"format": GROUPS_FORMAT, "count": 0, "groups": {k: [] for k in (
            "prefix", "suffix", "kind", *_VALUES, "numbers", "positions")}}
    numbers = numbers[entity]
    is_node = entity >= node_from
    direction = np.where(is_node, 2, direction).astype(np.int64)
    tech, tier = np.asarray(tech, dtype=np.int64), np.asarray(tier, dtype=np.int64)
    # Template, direction, tech and tier packed into one key (each code below its count, so two
    # records' packed keys are equal exactly when all four are): three fewer sort keys.
    packed = _packed(tcode[entity], (direction, 3), (tech, len(techs)), (tier, len(tiers)))
    codes = [packed] if packed is not None else [tcode[entity], direction, tech, tier]
    keys = [*codes, *(np.ascontiguousarray(a, dtype=np.float64).view(np.int64) for a in (capacity, load, utilization))]
    order = np.lexsort(keys[::-1])   # records of equal keys stay in their order
    change = np.zeros(len(order), dtype=bool)
    change[0] = True
    for key in keys:
        sorted_key = key[order]
        change[1:] |= sorted_key[1:] != sorted_key[:-1]
    starts = np.flatnonzero(change)
    if 2 * len(starts) > len(order):   # little symmetry: the groups would not be smaller
        return None
    rank = np.empty(len(starts), dtype=np.int64)
    rank[np.argsort(order[starts], kind="stable")] = np.arange(len(starts))   # first-appearance order
    group = np.empty(len(order), dtype=np.int64)
    group[order] = rank[np.cumsum(change) - 1]
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(len(starts) + 1))
    first = order[bounds[:-1]]
    util = utilization[first]
    # Each column by one look-up per group (no branch per group: 402,040 at 100,000 GPUs).
    codes = tcode[entity[first]].tolist()
    out = {"prefix": list(map([t[0] for t in templates].__getitem__, codes)),
           "suffix": list(map([t[1] for t in templates].__getitem__, codes)),
           "kind": list(map(["node" if t[2] else "link" for t in templates].__getitem__, codes))}
    node_first = is_node[first]
    out["dir"] = list(map(("a>b", "b>a", None).__getitem__, direction[first].tolist()))   # 2: a node
    out["tech"] = list(map([*techs, None].__getitem__, np.where(node_first, len(techs), tech[first]).tolist()))
    out["tier"] = list(map(list(tiers).__getitem__, tier[first].tolist()))
    out["capacity_gbps"] = np.asarray(capacity[first], dtype=np.float64).tolist()
    out["load_gbps"] = np.asarray(load[first], dtype=np.float64).tolist()
    out["utilization"] = util.tolist()
    for k in np.flatnonzero(~np.isfinite(util)).tolist():
        out["utilization"][k] = None
    out["numbers"] = _runs(numbers[order], bounds)
    out["positions"] = _runs(order, bounds)
    return {"format": GROUPS_FORMAT, "count": len(entity), "groups": out}


def _packed(first: np.ndarray, *codes: tuple[np.ndarray, int]) -> np.ndarray:
    """One int64 per record from non-negative codes, ``((first · n1 + c1) · n2 + c2) …`` for
    ``codes`` = ``(c_i, n_i)`` with every ``c_i < n_i``: equal exactly when every code is. None
    when the product of the counts could pass 2**62 (then the codes stay separate keys)."""
    span = int(first.max()) + 1 if len(first) else 1
    for _, count in codes:
        span *= max(count, 1)
    if span >= 1 << 62:
        return None
    key = first.astype(np.int64)
    for code, count in codes:
        key = key * max(count, 1) + code
    return key


def _split_each(names: list[str], node_from: int) -> tuple[list[tuple], np.ndarray, np.ndarray]:
    """:func:`_split_names` name by name."""
    parts = [_split(n) for n in names]
    templates, tcode = first_codes([(p, s, k >= node_from) for k, (p, _, s) in enumerate(parts)])
    return templates, tcode, np.array([p[1] for p in parts], dtype=object if any(
        p[1] > 2 ** 62 for p in parts) else np.int64)


def _split_names(names: list[str], node_from: int) -> tuple[list[tuple], np.ndarray, np.ndarray]:
    """:func:`_split` of every name: the distinct ``(prefix, suffix, is_node)`` in order of first
    appearance, each name's index there and its number (-1: none). On the bytes of all the names
    at once when they are ASCII without a control character (every topology id is printable),
    else name by name; the same answer either way (tests/engine/test_result_groups.py)."""
    joined = "\n".join(names)
    if not names or not joined.isascii():
        return _split_each(names, node_from)
    buf = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
    # Printable (0x20-0x7e: below 0x20 wraps) but for the newlines joining the names, and no name
    # holding a newline itself: ``isprintable`` without a copy of the text.
    newline = buf == 10
    if bool(np.any((buf - np.uint8(0x20) >= np.uint8(0x7f - 0x20)) & ~newline)) \
            or int(np.count_nonzero(newline)) != len(names) - 1:
        return _split_each(names, node_from)
    lengths = np.fromiter(map(len, names), dtype=np.int64, count=len(names))
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
    first, run_end = _digit_runs(buf, starts)
    width = run_end - first
    has = first < starts + lengths
    if bool(np.any(width[has] > 18)):   # a number beyond int64: name by name (Python ints)
        return _split_each(names, node_from)
    # A number: inside the name, not written with a leading zero.
    has &= ~((width > 1) & (buf[np.minimum(first, len(buf) - 1)] == 48))
    numbers = np.zeros(len(names), dtype=np.int64)
    for j in range(int(width[has].max()) if has.any() else 0):
        more = has & (j < width)
        numbers[more] = numbers[more] * 10 + (buf[first[more] + j].astype(np.int64) - 48)
    numbers[~has] = -1
    # Each name's template: its number's digits replaced by one "\x01" (never in a printable id).
    keep = np.ones(len(buf), dtype=bool)
    drop_from, drop_len = first[has] + 1, width[has] - 1
    offset_in_run = np.arange(drop_len.sum()) - np.repeat(np.cumsum(drop_len) - drop_len, drop_len)
    drop = np.repeat(drop_from, drop_len) + offset_in_run
    keep[drop] = False
    marked = buf.copy()
    marked[first[has]] = 1
    shapes = marked[keep].tobytes().decode("ascii").split("\n")
    distinct, code = first_codes(shapes)
    node = np.arange(len(names)) >= node_from
    templates, tcode = first_codes((2 * code + node).tolist())
    out = []
    for key in templates:
        prefix, _, suffix = distinct[key // 2].partition("\x01")
        out.append((prefix, suffix, bool(key % 2)))
    return out, tcode, numbers


def _digit_runs(buf: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per start: the position of the first digit at or after it and the end of that digit
    run (both ``len(buf)`` when there is none). From the runs' edges only: a name's start
    follows a newline, so it is never inside a run (every digit's position, and every other
    byte's, were arrays of ~8 and ~25 million at 100,000 GPUs)."""
    digit = (buf >= 48) & (buf <= 57)
    edge = np.flatnonzero(digit[1:] != digit[:-1]) + 1   # a digit run starts or stops here
    end = np.array([len(buf)], dtype=np.int64)
    head = np.zeros(1 if len(buf) and digit[0] else 0, dtype=np.int64)   # a run at the very start
    run_start = np.concatenate([head, edge[digit[edge]], end])
    run_stop = np.concatenate([edge[~digit[edge]], end])
    first = run_start[np.searchsorted(run_start, starts)]
    # The stop after ``first`` (the sentinel ``len(buf)`` when first is the end itself).
    after = np.minimum(np.searchsorted(run_stop, first, side="right"), len(run_stop) - 1)
    return first, run_stop[after]


def _runs(values: np.ndarray, bounds: np.ndarray) -> list:
    """Each group's slice ``values[bounds[k]:bounds[k + 1]]`` as ``{"from", "step", "count"}``
    when it is an arithmetic run (one check for all groups at once), else as a list."""
    starts, ends = bounds[:-1], bounds[1:]
    counts = ends - starts
    diffs = np.diff(values)
    step = np.zeros(len(starts), dtype=np.int64)
    long = counts > 1
    step[long] = diffs[starts[long]]
    # A pair (i, i+1) inside a group breaks the run when its step differs from the group's first.
    inside = np.ones(len(diffs), dtype=bool)
    inside[ends[:-1] - 1] = False   # the pair across two groups' boundary
    group_of = np.repeat(np.arange(len(starts)), counts)[:-1] if len(values) else np.zeros(0, dtype=np.int64)
    broken = np.zeros(len(starts), dtype=bool)
    bad = inside & (diffs != step[group_of])
    broken[group_of[bad]] = True
    first = values[starts].tolist() if len(values) else []
    # Every group as a run, then the broken ones as lists (one comprehension, no branch per group:
    # 402,040 groups twice for the 100,000-GPU tree).
    out = [{"from": f, "step": s, "count": n} for f, s, n in zip(first, step.tolist(), counts.tolist())]
    for k in np.flatnonzero(broken).tolist():
        out[k] = values[starts[k]:ends[k]].tolist()
    return out


def _elements(run) -> list[int]:
    if isinstance(run, dict):
        return list(range(run["from"], run["from"] + run["step"] * run["count"], run["step"])) if run["step"] \
            else [run["from"]] * run["count"]
    return list(run)


def _records_of(groups: dict, k: int) -> tuple[list[int], list[dict]]:
    """Group ``k``'s element positions and records."""
    prefix, suffix, kind = groups["prefix"][k], groups["suffix"][k], groups["kind"][k]
    direction, tech, tier, cap, load, util = (groups[f][k] for f in _VALUES)
    names = [prefix if n < 0 else f"{prefix}{n}{suffix}" for n in _elements(groups["numbers"][k])]
    if kind == "node":
        records = [{"id": name, "link": None, "dir": None, "tech": None, "tier": tier, "capacity_gbps": cap,
                    "load_gbps": load, "utilization": util} for name in names]
    else:
        records = [{"id": f"{name}:{direction}", "link": name, "dir": direction, "tech": tech, "tier": tier,
                    "capacity_gbps": cap, "load_gbps": load, "utilization": util} for name in names]
    return _elements(groups["positions"][k]), records


def expand_resources(grouped: dict, group: int | None = None) -> list[dict]:
    """The records of :func:`group_resources`' table, in their original order; with ``group``,
    only that group's elements (in their order).

    Raises
    ------
    ValueError
        ``grouped`` is not a resource-group table, or ``group`` is not one of its groups.
    """
    if not is_grouped(grouped):
        raise ValueError(f"not a {GROUPS_FORMAT} table")
    groups = grouped["groups"]
    total = len(groups["prefix"])
    if group is not None:
        if not isinstance(group, int) or not 0 <= group < total:
            raise ValueError(f"group {group!r} is not one of the {total} groups (0 to {total - 1})")
        return _records_of(groups, group)[1]
    out: list = [None] * grouped["count"]
    for k in range(total):
        positions, records = _records_of(groups, k)
        for p, rec in zip(positions, records):
            out[p] = rec
    return out


def compact_result(result: dict, *, group_from: int = GROUP_FROM) -> dict:
    """``result`` with its ``resources`` grouped when it holds at least ``group_from`` records
    (and they can be grouped); otherwise ``result`` itself. The other keys are shared, not copied."""
    resources = result.get("resources")
    if not isinstance(resources, list) or len(resources) < group_from:
        return result
    grouped = group_resources(resources)
    return result if grouped is None else {k: (grouped if k == "resources" else v) for k, v in result.items()}


def expand_result(result: dict) -> dict:
    """``result`` with grouped ``resources`` expanded to their records (itself when not grouped)."""
    if not is_grouped(result.get("resources")):
        return result
    return {k: (expand_resources(v) if k == "resources" else v) for k, v in result.items()}
