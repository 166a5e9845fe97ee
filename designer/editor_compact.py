"""The editor's document with each repeated host interior sent once (``fabricscope.editor-document/1``).

A generated cluster is thousands of copies of one server: a 100,000-GPU design (12,500 DGX-H100)
is 253 MB of JSON of which 96 % is 12,500 identical host interiors under different id prefixes.
The browser spent 1–3 s receiving, decoding and parsing that text before any editor code ran
(docs/PERFORMANCE.md, "100,000 GPUs in the browser"). This form states each distinct interior
once and lists which host uses which; ``static/js/editor/compact.js`` rebuilds the document —
identical, key order and list order included — before the editor sees it.

The form (only the editor's document URL serves it; the API and exports keep the document)::

    {"format": "fabricscope.editor-document/1",
     "document": {<the document's keys in order; "nodes" and "links" lists whose items are the
                   elements themselves, or an integer k: host k's interior at that place>},
     "host_templates": [{"nodes": [...], "links": [...]}],   # ids relative to the host
     "hosts": [["h0", 0], ["h1", 0], ...],                   # host group id, its template
     "node_shapes": [...], "link_shapes": [...]}              # see below

An element outside the templates that shares everything but its id (a node) or its id and ends
(a link) with another is ``[shape, id]`` / ``[shape, id, a, b]``: its shape is the element with
those fields null, in their places (100,000 GPUs: 300,000 NIC and fabric links in a few shapes).

A host's interior is the run of consecutive nodes whose ``group`` is the host's group id, and
the run of consecutive links whose ``id``, ``a`` and ``b`` all start with ``<host id>/``; in a
template those ids lose the prefix and a node's ``group`` is null (its place kept). A host is
templated only when its node run and its link run are each the only one it has and its interior
(with the prefix removed) is shared with at least one other host; everything else stays as it
is. So the form never changes what the document says: at worst it is the document in a wrapper.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

__all__ = ["COMPACT_FORMAT", "COMPACT_MIN_NODES", "compact_document"]

COMPACT_FORMAT = "fabricscope.editor-document/1"
# Below this many devices the document is sent as it is: a few MB parse in milliseconds, and one
# form fewer for small designs (every test journey) to go through.
COMPACT_MIN_NODES = 10_000


def compact_document(document: dict, min_nodes: int = COMPACT_MIN_NODES) -> dict | None:
    """``document`` in the editor's compact form, or None when it has fewer than ``min_nodes``
    nodes or no two hosts share an interior (the caller then sends the document itself).

    Parameters
    ----------
    document : dict
        A validated ``fabricscope.topology/1`` document (not modified; the result shares its
        element objects).
    min_nodes : int
        The smallest node count worth compacting.
    """
    nodes, links = document.get("nodes"), document.get("links")
    if not isinstance(nodes, list) or not isinstance(links, list) or len(nodes) < min_nodes:
        return None
    hosts = {g["id"] for g in document.get("groups") or () if isinstance(g, dict) and g.get("kind") == "host"}
    node_runs = _runs(nodes, lambda n: n.get("group") if n.get("group") in hosts else None,
                      lambda n, host: n.get("group") == host)
    link_runs = _runs(links, lambda link: _link_host(link, hosts), _inside)
    templates, used_by = _templates(nodes, links, node_runs, link_runs)
    shared = {h: t for h, t in used_by.items() if len(templates[t][1]) > 1}
    if not shared:
        return None
    kept = sorted({t for t in shared.values()})
    renumber = {t: k for k, t in enumerate(kept)}
    order = {h: k for k, h in enumerate(shared)}
    body = {k: v for k, v in document.items() if k not in ("nodes", "links")}
    node_shapes, link_shapes = _Shapes(NODE_NAMES), _Shapes(LINK_NAMES)
    body["nodes"] = node_shapes.encode(_listed(nodes, node_runs, order))
    body["links"] = link_shapes.encode(_listed(links, link_runs, order))
    return {"format": COMPACT_FORMAT,
            "document": {k: body[k] for k in document},
            "host_templates": [orjson.loads(templates[t][0]) for t in kept],
            "hosts": [[h, renumber[shared[h]]] for h in shared],
            "node_shapes": node_shapes.shapes, "link_shapes": link_shapes.shapes}


# The fields an element's shape leaves out (every element of a shape says its own).
NODE_NAMES = ("id",)
LINK_NAMES = ("id", "a", "b")


class _Shapes:
    """Elements that differ only in ``names`` (a link's id and ends): a shared shape — the
    element with those fields null, in their places — and per element ``[shape, *values]``."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names
        self.shapes: list[dict] = []

    def encode(self, items: list) -> list:
        key_of, names = self._key, self.names
        keys = [key_of(x) if type(x) is dict else None for x in items]
        counts = Counter(keys)
        index: dict = {}
        out: list[Any] = []
        for item, key in zip(items, keys):
            if key is None or counts[key] < 2:
                out.append(item)
                continue
            shape = index.get(key)
            if shape is None:
                shape = index[key] = len(self.shapes)
                self.shapes.append(orjson.loads(key))
            row = [shape]
            for name in names:
                row.append(item[name])
            out.append(row)
        return out

    def _key(self, item: dict) -> bytes | None:
        """The element's shape as JSON text — the element with ``names`` null in their places:
        keys in order, 1, 1.0 and true apart, as JSON has them; None when a named field is
        missing or not a string (that element is sent as it is)."""
        names = self.names
        for name in names:
            if type(item.get(name)) is not str:
                return None
        try:
            return orjson.dumps({k: (None if k in names else v) for k, v in item.items()})
        except TypeError:  # not plain JSON (orjson.JSONEncodeError is one)
            return None


def _link_host(link: dict, hosts: set) -> str | None:
    """The host a link lies inside (its id and both ends under ``<host>/``), else None."""
    a = link.get("a")
    host = a.partition("/")[0] if type(a) is str and "/" in a else None
    return host if host in hosts and _inside(link, host) else None


def _inside(link: dict, host: str) -> bool:
    """Whether ``link`` lies inside ``host`` (a host :func:`_link_host` found: no "/" in its id)."""
    prefix = host + "/"
    a, b, link_id = link.get("a"), link.get("b"), link.get("id")
    return (type(a) is str and type(b) is str and type(link_id) is str
            and a.startswith(prefix) and b.startswith(prefix) and link_id.startswith(prefix))


def _runs(items: list, host_of, in_host) -> dict[str, tuple[int, int] | None]:
    """host → (start, end) of its one run of consecutive items; None for a host with two runs.
    ``host_of(item)``: the item's host or None; ``in_host(item, host)``: ``host_of(item) ==
    host``, cheaper (a run is checked against the host it began with)."""
    runs: dict[str, tuple[int, int] | None] = {}
    i, n = 0, len(items)
    while i < n:
        host = host_of(items[i])
        if host is None:
            i += 1
            continue
        j = i + 1
        while j < n and in_host(items[j], host):
            j += 1
        runs[host] = (i, j) if host not in runs else None
        i = j
    return runs


def _templates(nodes, links, node_runs, link_runs) -> tuple[list, dict]:
    """The distinct interiors (``[text, hosts using it]``) and each host's template index, for
    the hosts with exactly one node run and at most one link run."""
    by_text: dict[bytes, int] = {}
    templates: list = []
    used_by: dict[str, int] = {}
    for host, span in node_runs.items():
        link_span = link_runs.get(host, (0, 0))   # a host without links inside: none
        if span is None or link_span is None:
            continue
        text = _interior(host, nodes[span[0]:span[1]], links[link_span[0]:link_span[1]])
        if text is None:
            continue
        index = by_text.setdefault(text, len(templates))
        if index == len(templates):
            templates.append([text, []])
        templates[index][1].append(host)
        used_by[host] = index
    return templates, used_by


def _interior(host: str, nodes: list, links: list) -> bytes | None:
    """The host's nodes and links with ``<host>/`` taken off their ids (a node's group null), as
    JSON text: equal texts, equal interiors. None when a node id lacks the prefix."""
    prefix, cut = host + "/", len(host) + 1
    out_nodes = []
    for node in nodes:
        node_id = node.get("id")
        if not isinstance(node_id, str) or not node_id.startswith(prefix):
            return None
        out_nodes.append({**node, "id": node_id[cut:], "group": None})
    out_links = [{**link, "id": link["id"][cut:], "a": link["a"][cut:], "b": link["b"][cut:]} for link in links]
    try:
        return orjson.dumps({"nodes": out_nodes, "links": out_links})
    except TypeError:  # not plain JSON (orjson.JSONEncodeError is one): leave this host as it is
        return None


def _listed(items: list, runs: dict, order: dict) -> list[Any]:
    """``items`` with each templated host's run replaced by that host's index."""
    starts = {span[0]: (host, span[1]) for host, span in runs.items() if span is not None and host in order}
    out: list[Any] = []
    i, n = 0, len(items)
    while i < n:
        hit = starts.get(i)
        if hit is None:
            out.append(items[i])
            i += 1
        else:
            out.append(order[hit[0]])
            i = hit[1]
    return out
