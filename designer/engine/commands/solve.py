"""``solve``: max-min fair rates for flows over explicit paths of links.

Input (a file, or ``-`` for stdin)::

    {"links": [{"id": "l1", "capacity_gbps": 100.0}, ...],
     "flows": [{"id": "f1", "links": ["l1", "l2"], "demand_gbps": null, "bytes": 1e9}, ...]}

Each link id is one independent resource (a direction, if you model duplex links, is its own
link). ``demand_gbps`` is optional (null or absent = no cap); ``bytes`` is required with
``--timeline`` only. Output (standard output, or the file given with ``-o``)::

    {"rates_gbps": {"f1": 33.3}, "bottleneck": {"f1": "l1"}, "utilization": {"l1": 1.0}}

``bottleneck`` is null for a demand-limited flow. With ``--timeline`` every flow starts at 0 and the
rates are re-solved at each completion; the output adds ``"completion_s": {"f1": 0.24}`` (null for a
flow that never finishes: it crosses a zero-capacity link or has demand 0) and ``"events_s"``.
"""
from __future__ import annotations

import json
import math
import operator
from functools import partial
from itertools import chain, repeat

import numpy as np
import orjson

from designer.engine.solve.kernels.loader import aot_kernels
from designer.engine.commands._scenario_io import (OBJECT_LAYOUTS, ObjectWriter, array_chunks, array_region,
                                                   dumps, gc_paused, loads, numbers_json, object_heads,
                                                   object_json, read_bytes, split_strings, write_data)
from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.solve.id_index import IdIndex

__all__ = ["add_arguments", "run", "parse_problem", "read_problem", "answer", "answer_json"]


def add_arguments(parser) -> None:
    parser.add_argument("file", help="problem JSON file, or - to read standard input")
    parser.add_argument("--timeline", action="store_true",
                        help="fluid mode: flows carry 'bytes'; re-solve at every completion and "
                             "print completion_s per flow")
    parser.add_argument("--indent", type=int, default=2,
                        help="JSON indentation (default 2; 0 = compact)")
    parser.add_argument("-o", "--output", help="write the answer here instead of standard output")


def _is_number(value) -> bool:
    """A JSON number the solver can take: an int or float, not bool, finite as a float (an int
    beyond float range — 400 digits — is not: ``math.isfinite`` would raise OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _document(data: bytes, path: str) -> dict:
    try:
        doc = loads(data)
    except json.JSONDecodeError as exc:
        raise InvalidWorkload(f"{path}: not valid JSON", [Problem("", f"not valid JSON: {exc}")]) from None
    except UnicodeDecodeError:
        raise InvalidWorkload(f"{path}: not UTF-8 text", [Problem("", "not UTF-8 text")]) from None
    if not isinstance(doc, dict):
        raise InvalidWorkload("the document must be a JSON object", [Problem("", "must be an object")])
    return doc


def _parse_links(doc, problems: list[Problem]) -> tuple[list[str], list[float]]:
    links = doc.get("links")
    if not isinstance(links, list):
        problems.append(Problem("links", "must be a list of {id, capacity_gbps}"))
        return [], []
    ids, caps, seen = [], [], set()
    for i, link in enumerate(links):
        where = f"links[{i}]"
        if not isinstance(link, dict):
            problems.append(Problem(where, "must be an object"))
            continue
        lid, cap = link.get("id"), link.get("capacity_gbps")
        if not isinstance(lid, str) or not lid:
            problems.append(Problem(f"{where}.id", "must be a non-empty string"))
        elif lid in seen:
            problems.append(Problem(f"{where}.id", f"duplicate link id {lid!r}"))
        if not _is_number(cap) or cap < 0:
            problems.append(Problem(f"{where}.capacity_gbps", f"must be a number >= 0 (got {cap!r})"))
        seen.add(lid)
        ids.append(lid)
        caps.append(float(cap) if _is_number(cap) else 0.0)
    return ids, caps


def _parse_flow(i, flow, index, timeline, problems) -> tuple[list[int], float, float]:
    where = f"flows[{i}]"
    path = flow.get("links")
    if not isinstance(path, list):
        problems.append(Problem(f"{where}.links", "must be a list of link ids"))
        path = []
    hops = []
    for k, lid in enumerate(path):
        if not isinstance(lid, str) or lid not in index:
            problems.append(Problem(f"{where}.links[{k}]", f"unknown link id {lid!r}"))
        else:
            hops.append(index[lid])
    demand = flow.get("demand_gbps")
    if demand is not None and (not _is_number(demand) or demand < 0):
        problems.append(Problem(f"{where}.demand_gbps", f"must be null or a number >= 0 (got {demand!r})"))
    elif demand is None and not path:
        problems.append(Problem(f"{where}.links", "a flow crossing no link needs a demand_gbps"))
    size = flow.get("bytes")
    if timeline and (not _is_number(size) or size < 0):
        problems.append(Problem(f"{where}.bytes", f"must be a number >= 0 with --timeline (got {size!r})"))
    return (hops, float(demand) if _is_number(demand) else math.inf,
            float(size) if _is_number(size) else 0.0)


_NONE = type(None)


def _column(items: list, key: str) -> list:
    # dict.get over the whole list at C speed; raises TypeError if an item is not an object.
    return list(map(dict.get, items, repeat(key)))


def _all_str(items: list) -> bool:
    try:
        "".join(items)  # the quickest "all are str" test: join raises TypeError on anything else
    except TypeError:
        return False
    return True


def _ids_ok(ids: list) -> bool:
    return _all_str(ids) and "" not in (unique := set(ids)) and len(unique) == len(ids)


def _numbers(values: list, *, allow_none: bool):
    """float64 array of JSON numbers >= 0 (None -> inf when allowed), or None if any value is not."""
    types = set(map(type, values))
    if not types <= ({int, float, _NONE} if allow_none else {int, float}):
        return None
    try:
        arr = np.array(values, dtype=np.float64)  # None -> nan
    except (OverflowError, ValueError, TypeError):
        return None
    none = np.isnan(arr)  # None, or a NaN literal the stdlib read: tell them apart only if both
    if int(none.sum()) != values.count(None):
        none = np.fromiter(map(operator.is_, values, repeat(None)), dtype=bool, count=len(values))
    good = np.isfinite(arr) & (arr >= 0)
    if not (good | none).all():
        return None
    arr[none] = np.inf
    return arr


def _sizes_if_any(values: list) -> np.ndarray:
    # Without --timeline "bytes" is informative only: kept where it is a finite number, else 0.
    if values.count(None) == len(values):  # the usual case, at C speed: no flow gives bytes
        return np.zeros(len(values))
    types = set(map(type, values))
    if types <= {int, float, _NONE}:
        try:
            arr = np.array(values, dtype=np.float64)  # None -> nan
        except OverflowError:  # an integer beyond float range
            arr = None
        if arr is not None:
            arr[~np.isfinite(arr)] = 0.0
            return arr
    return np.array([float(v) if _is_number(v) else 0.0 for v in values], dtype=np.float64)


def _paths_flat(paths: list, index: dict, scan=None):
    """(path lengths, link indices of all paths end to end), or None if a path is not a list of
    known link ids. ``scan(lens)``: the indices read from the chunk's raw bytes
    (:meth:`~designer.engine.solve.id_index.IdIndex.path_positions`), or None; then (or without
    ``scan``) the dict maps them."""
    try:  # list.__len__ also checks that every path is a list (TypeError otherwise)
        lens = np.fromiter(map(list.__len__, paths), dtype=np.int64, count=len(paths))
    except TypeError:
        return None
    res = scan(lens) if scan is not None else None
    if res is None:
        res = _indices_by_dict(paths, index, int(lens.sum()))
    return None if res is None else (lens, res)


def _indices_by_dict(paths: list, index: dict, count: int):
    try:
        return np.fromiter(map(index.__getitem__, chain.from_iterable(paths)), dtype=np.int64, count=count)
    except (KeyError, TypeError):  # unknown id, or an unhashable value in a path
        return None


def _flow_columns(flows: list, index: dict, timeline: bool, scan=None):
    """(ids, demands, sizes, path lengths, link indices) of these flows, or None (see _parse_bulk);
    ``scan``: see :func:`_paths_flat`."""
    try:
        flow_ids = _column(flows, "id")
        dem = _numbers(_column(flows, "demand_gbps"), allow_none=True)
        size = (_numbers(_column(flows, "bytes"), allow_none=False) if timeline
                else _sizes_if_any(_column(flows, "bytes")))
    except TypeError:  # a flow that is not an object
        return None
    paths = (_paths_flat(_column(flows, "links"), index, scan) if dem is not None and size is not None
             else None)
    return None if paths is None else (flow_ids, dem, size, *paths)


def _parse_bulk(doc: dict, timeline: bool):
    """The solver arrays, checked column by column (no Python loop per flow), or None when any
    check fails: the caller then re-parses one flow at a time to locate every problem."""
    return _parse_columns(doc.get("links"), [doc.get("flows")], timeline)


def _link_columns(links):
    """(link ids, capacities) of the "links" list, or None (see _parse_bulk)."""
    if type(links) is not list:
        return None
    try:
        link_ids, caps = _column(links, "id"), _numbers(_column(links, "capacity_gbps"), allow_none=False)
    except TypeError:  # a link that is not an object
        return None
    return (link_ids, caps) if caps is not None and _ids_ok(link_ids) else None


def _parse_columns(links, flow_chunks, timeline: bool, pieces=None):
    """:func:`_parse_bulk` of ``links`` and of the flows given as consecutive lists (the whole
    list, or :func:`array_chunks`' chunks, each freed once its columns are taken); ``pieces``:
    the chunks' raw bytes (``Chunks.pieces``), scanned by the link ids' :class:`IdIndex`
    (:meth:`~designer.engine.solve.id_index.IdIndex.path_positions`) instead of a dict lookup per hop."""
    columns = _link_columns(links)
    if columns is None:
        return None
    link_ids, caps = columns
    # Keyed by fresh copies of the ids, side by side in memory: path lookups compare against them
    # faster than against ids scattered among the link objects
    # (the dict path: without the AOT kernels, or for a chunk the scanner declines).
    index = {(lid + "\0")[:-1]: k for k, lid in enumerate(link_ids)}
    scanner = IdIndex.of(link_ids) if pieces else None
    scans = (partial(scanner.path_positions, piece) for piece in pieces) if scanner is not None else ()
    parts, seen = [], set()
    for flows, scan in zip(flow_chunks, chain(scans, repeat(None))):
        part = _flow_columns(flows, index, timeline, scan) if type(flows) is list else None
        if part is None or not _all_str(part[0]):
            return None
        seen.update(part[0])  # the ids are hashed while this chunk is still in the cache
        parts.append(part)
    parts = parts or [_flow_columns([], index, timeline)]
    flow_ids = list(chain.from_iterable(part[0] for part in parts))
    dem, size, lens, res = (np.concatenate([part[k] for part in parts]) for k in range(1, 5))
    if len(seen) != len(flow_ids) or "" in seen or (np.isinf(dem) & (lens == 0)).any():
        return None  # a duplicate or empty id, or a flow with no link and no demand
    ptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    return link_ids, flow_ids, caps, ptr, res, dem, size


# Smaller documents are parsed whole: the cut is for memory and page faults, which only large
# documents (see array_chunks) make costly.
_CHUNKED_MIN_BYTES = 1 << 20


# The flows of documents from this size on are first offered to the compiled scanner
# (_scanned_problem); below, a parse costs a few ms either way.
_SCANNED_MIN_BYTES = 1 << 20


def read_problem(path: str, *, timeline: bool = False):
    """:func:`parse_problem` of the document at ``path`` (``-``: standard input).

    A large valid document's flows are read by one compiled pass over their bytes
    (:func:`_scanned_problem`), or else parsed a slice of flows at a time (:func:`array_chunks`),
    so the flows' Python objects never all exist at once; anything the scan, the cut or the
    column checks do not vouch for is parsed whole, as before, with the same located errors.
    """
    data = read_bytes(path)
    scanned = _scanned_problem(data, timeline) if len(data) >= _SCANNED_MIN_BYTES else None
    if scanned is not None:
        return scanned
    split = array_chunks(data, "flows") if len(data) >= _CHUNKED_MIN_BYTES else None
    if split is not None:
        frame, chunks = split
        with gc_paused():
            parsed = _parse_columns(frame.get("links"), chunks, timeline, chunks.pieces)
        if parsed is not None:
            return parsed
    return parse_problem(_document(data, path), timeline=timeline)


def _scanned_problem(data: bytes, timeline: bool):
    """:func:`parse_problem`'s arrays for the valid document ``data``, its flows read by the link
    ids' :meth:`~designer.engine.solve.id_index.IdIndex.scan_flows` (a strict subset of JSON, compiled,
    only with the AOT kernels), or None when the scan or a check here declines: then the caller
    reads the document as before.

    Why: the chunked path parses every flow into Python objects (orjson), scans the paths and
    checks the parsed objects column by column; this one reads the bytes once, with no Python
    object per flow, which is much faster on large inputs (docs/PERFORMANCE.md).

    Exact: the number tokens are parsed by orjson (as the flows were) and converted by numpy as
    the column checks did; the ids are the strict UTF-8 decoding of the very bytes orjson would
    have decoded (no backslash: no escape)."""
    region = _flows_region(data)
    if region is None:
        return None
    frame, start, end = region
    with gc_paused():
        columns = _link_columns(frame.get("links"))
        index = IdIndex.of(columns[0]) if columns is not None else None
        scan = index.scan_flows(data, start, end) if index is not None else None
        flows = _scanned_columns(scan, timeline) if scan is not None else None
    if flows is None:
        return None
    ptr = np.zeros(len(scan.lens) + 1, dtype=np.int64)
    np.cumsum(scan.lens, out=ptr[1:])
    return columns[0], flows[0], columns[1], ptr, scan.hops, flows[1], flows[2]


def _flows_region(data: bytes):
    """:func:`array_region` of the "flows" array: cut at the last ']' (free to find) when
    "flows" is the last key, as the engine writes it, else at the first '}]' (a longer search)."""
    for last in (True, False):
        region = array_region(data, "flows", last=last)
        if region is not None and type(region[0].get("links")) is list:
            return region
    return None


def _scanned_columns(scan, timeline: bool):
    """(flow ids, demands, sizes) of a :class:`~designer.engine.solve.id_index.FlowScan` as
    :func:`_flow_columns` gives them, or None where it would not give them (then neither would
    this: the document is read as before)."""
    try:
        flow_ids = str(scan.ids[:-1], "utf-8").split("\0") if len(scan.ids) else []
        demands = _given_numbers(scan.demands, scan.demand_given, np.inf, must_be_valid=True)
        sizes = _given_numbers(scan.sizes, scan.size_given, 0.0, must_be_valid=timeline)
    except (UnicodeDecodeError, orjson.JSONDecodeError, OverflowError):
        return None
    if len(flow_ids) != len(scan.lens) or demands is None or sizes is None:
        return None
    if timeline and not scan.size_given.all():
        return None   # --timeline: every flow needs its bytes
    return flow_ids, demands, sizes


def _given_numbers(tokens: bytes, given: np.ndarray, default: float, *, must_be_valid: bool):
    """float64 per flow: the number token of each flow ``given`` one (orjson reads them, as it
    read the flows), else ``default``. With ``must_be_valid`` None unless each is a finite
    number >= 0 (as _numbers); otherwise a non-finite one is 0 (as _sizes_if_any)."""
    out = np.full(len(given), default)
    if not tokens:
        return out if not given.any() else None
    values = np.array(orjson.loads(b"[" + tokens[:-1] + b"]"), dtype=np.float64)
    if len(values) != int(given.sum()):
        return None
    finite = np.isfinite(values)
    if must_be_valid and not (finite & (values >= 0)).all():
        return None
    values[~finite] = 0.0
    out[given] = values
    return out


def parse_problem(doc: dict, *, timeline: bool = False):
    """Turn the ``solve`` JSON document into solver arrays.

    A valid document is checked and converted column by column (ids, capacities, demands, paths
    mapped through one id -> index dict into CSR); only an invalid one is walked flow by flow to
    locate its problems.

    Returns
    -------
    link_ids, flow_ids : list of str
    capacity_gbps, flow_ptr, flow_res, demand_gbps, bytes_ : ndarray
        Capacities and demands in Gb/s (no demand: ``inf``), sizes in bytes (0 where a flow
        gives none), CSR ``flow_ptr`` (n_flows + 1) / ``flow_res`` (int64 link indices).

    Raises
    ------
    InvalidWorkload
        With every located problem (``flows[3].links[1]: unknown link id 'l9'``).
    """
    with gc_paused():
        parsed = _parse_bulk(doc, timeline)
        return parsed if parsed is not None else _parse_located(doc, timeline)


def _parse_located(doc: dict, timeline: bool):
    # One flow at a time, collecting every located problem; run only when the bulk checks of
    # _parse_bulk found something wrong (or something they do not vouch for).
    problems: list[Problem] = []
    link_ids, caps = _parse_links(doc, problems)
    index = {lid: k for k, lid in enumerate(link_ids) if isinstance(lid, str)}
    flows = doc.get("flows")
    if not isinstance(flows, list):
        problems.append(Problem("flows", "must be a list of {id, links, demand_gbps}"))
        flows = []
    flow_ids, ptr, res, dem, size, seen = [], [0], [], [], [], set()
    for i, flow in enumerate(flows):
        if not isinstance(flow, dict):
            problems.append(Problem(f"flows[{i}]", "must be an object"))
            continue
        fid = flow.get("id")
        if not isinstance(fid, str) or not fid or fid in seen:
            problems.append(Problem(f"flows[{i}].id", f"must be a unique non-empty string (got {fid!r})"))
        seen.add(fid)
        hops, demand, nbytes = _parse_flow(i, flow, index, timeline, problems)
        flow_ids.append(fid)
        res += hops
        ptr.append(len(res))
        dem.append(demand)
        size.append(nbytes)
    if problems:
        raise InvalidWorkload(f"invalid solve input ({len(problems)} problems)", problems)
    return (link_ids, flow_ids, np.array(caps, dtype=np.float64), np.array(ptr, dtype=np.int64),
            np.array(res, dtype=np.int64), np.array(dem, dtype=np.float64), np.array(size, dtype=np.float64))


def answer(link_ids, flow_ids, alloc, result=None) -> dict:
    """The ``solve`` output document, built from whole arrays (``tolist`` + ``zip``).

    Parameters
    ----------
    link_ids, flow_ids : list of str
    alloc : Allocation
        From :func:`designer.engine.solve.solver.maxmin` (rates in Gb/s, bottleneck link index or -1).
    result : TimelineResult, optional
        From :func:`designer.engine.solve.timeline.timeline`: adds ``completion_s`` (seconds, null when
        the flow never finishes) and ``events_s``.
    """
    names = np.array([*link_ids, None], dtype=object)  # bottleneck -1 (demand-limited) -> None
    out = {
        "rates_gbps": dict(zip(flow_ids, alloc.rates_gbps.tolist())),
        "bottleneck": dict(zip(flow_ids, names[alloc.bottleneck].tolist())),
        "utilization": dict(zip(link_ids, alloc.utilization.tolist())),
    }
    if result is not None:
        completion = result.completion_s.astype(object)
        completion[~np.isfinite(result.completion_s)] = None
        out["completion_s"] = dict(zip(flow_ids, completion.tolist()))
        out["events_s"] = np.asarray(result.events_s, dtype=np.float64).tolist()
    return out


def answer_json(link_ids, flow_ids, alloc, result=None, *, indent: int | None = 2) -> bytes:
    """The bytes :func:`dumps` writes for :func:`answer`, without building its dicts.

    Why: the three per-flow dicts of :func:`answer` cost a cold key-string touch per insertion on
    large answers; here each object is joined from orjson's encodings of the id list and of the
    value list: with the AOT kernels in one compiled pass (:func:`_compiled_objects`), else from a
    bytes object per key and per value. Layouts other than orjson's (indent 2 or compact), or ids it cannot
    split back, take the dict path.
    """
    layout = OBJECT_LAYOUTS.get(indent or 0)
    kernels = aot_kernels() if layout else None
    out = _compiled_objects(kernels, layout, link_ids, flow_ids, alloc, result) if kernels else None
    if out is not None:
        return _answer_document(out, result, indent)
    try:
        flows = object_heads(flow_ids, layout) if layout else None
        links = object_heads(link_ids, layout) if flows is not None else None
        names = split_strings(link_ids, b"\0") if link_ids else []
    except TypeError:  # a string orjson refuses (lone surrogate): the stdlib encodes the answer
        links = None
    if links is None or names is None:
        return dumps(answer(link_ids, flow_ids, alloc, result), indent=indent)
    names = np.array([b'"' + n + b'"' for n in names] + [b"null"], dtype=object)  # -1 -> null
    out = {
        "rates_gbps": object_json(flows, numbers_json(alloc.rates_gbps), layout),
        "bottleneck": object_json(flows, names[alloc.bottleneck].tolist(), layout),
        "utilization": object_json(links, numbers_json(alloc.utilization), layout),
    }
    if result is not None:  # a flow that never finishes (inf) -> null, as in answer()
        out["completion_s"] = object_json(flows, numbers_json(result.completion_s), layout)
    return _answer_document(out, result, indent)


def _answer_document(objects: dict, result, indent) -> bytes:
    """The answer from its objects' JSON (``objects``) and the events of ``result``."""
    doc = {key: orjson.Fragment(value) for key, value in objects.items()}
    if result is not None:
        doc["events_s"] = np.asarray(result.events_s, dtype=np.float64).tolist()
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)


def _compiled_objects(kernels, layout, link_ids, flow_ids, alloc, result) -> dict | None:
    """:func:`answer_json`'s objects written by :class:`ObjectWriter` (the AOT ``write_object``),
    or None for ids it does not vouch for (then :func:`answer_json`'s own path)."""
    try:
        flows, links = ObjectWriter(kernels, flow_ids, layout), ObjectWriter(kernels, link_ids, layout)
        names = split_strings(link_ids, b"\0") if link_ids else []
    except TypeError:  # a string orjson refuses (lone surrogate)
        return None
    if not (flows.ok and links.ok) or names is None:
        return None
    # the bottleneck values: each link's encoded id in quotes, then null (bottleneck -1)
    quoted = [b'"' + name + b'"' for name in names] + [b"null"]
    choice_ptr = np.cumsum([0, *map(len, quoted)], dtype=np.int64)
    out = {"rates_gbps": flows.numbers(alloc.rates_gbps),
           "bottleneck": flows.picked(b"".join(quoted), choice_ptr, alloc.bottleneck),
           "utilization": links.numbers(alloc.utilization)}
    if result is not None:  # a flow that never finishes (inf) -> null, as in answer()
        out["completion_s"] = flows.numbers(result.completion_s)
    return out if all(value is not None for value in out.values()) else None


def run(args) -> int:
    # The collector stays paused from reading to writing: re-enabled between the steps, its first
    # collection would scan the young objects of the parsed document (a sizeable share of the
    # command's CPU on a large input read whole), and nothing here makes reference cycles.
    with gc_paused():
        return _solve_and_write(args)


def _solve_and_write(args) -> int:
    from designer.engine.solve.solver import maxmin

    link_ids, flow_ids, cap, ptr, res, dem, size = read_problem(args.file, timeline=args.timeline)
    alloc = maxmin(cap, ptr, res, dem)
    result = None
    if args.timeline:
        from designer.engine.solve.timeline import timeline
        result = timeline(cap, ptr, res, size, dem)
    write_data(answer_json(link_ids, flow_ids, alloc, result, indent=args.indent), args.output, end=b"\n")
    return 0
