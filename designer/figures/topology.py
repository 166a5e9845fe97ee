"""Topology views: layout geometry, node-link traces, the unified topology and host drill-down.

A big cluster draws each host as a super-node coloured by its hottest internal link; the
figure then carries every host's internals as compact numbers (:func:`host_details`) and the
browser asks the server for the drill-down figure of a clicked host (:func:`expand_host`).
"""
from __future__ import annotations

from collections import Counter, defaultdict

from designer.figures.base import empty_figure, figure
from designer.figures.hostlayout import host_tree_layout
from designer.figures.model import LINK_HOVER, Doc, Loads, failed_targets, link_customdata, natural
from designer.figures.style import (
    FAILED_COLOR, IDLE_COLOR, KIND_STYLE, LABEL_FIT, UTIL_SCALE, fmt_gbps, kind_label, num, pct, rnd, text_fits,
    util_color)

__all__ = ["COLLAPSE_HOSTS_ABOVE", "fit_label", "label_gaps", "label_fits", "ROLE_ROW", "graph_traces", "layout_positions",
           "topology_figure", "host_details", "host_figure", "expand_host"]

# Hosts drawn in full up to this many; above, hosts are super-nodes expanded on click.
COLLAPSE_HOSTS_ABOVE = 16
ROLE_ROW = {"core": 3, "spine": 2, "leaf": 1, "tor": 1}
_KIND_ORDER = list(KIND_STYLE)
_EDGE_BINS = ["idle"] + list(range(10)) + ["failed"]
# Width of a topology's plot area at the page's default zoom (1280 px window), for labels' fit.
PLOT_WIDTH_PX = 1100


# ================================================================================ node-link traces
def graph_traces(nodes: list[dict], edges: list[dict], *, labels: bool) -> list[dict]:
    """Traces of a node-link drawing, shared by the topology, collapsed and host views.

    Parameters
    ----------
    nodes : list of dict
        ``{"id", "x", "y", "kind", "hover", "label", "failed", "u" (super-nodes: utilization 0–1)}``.
    edges : list of dict
        ``{"x0", "y0", "x1", "y1", "u", "cd", "failed"}`` (``cd``: :func:`link_customdata`). Edges are binned by utilization into
        one line trace per colour (Plotly lines have one colour per trace); a marker at each
        edge's middle carries the hover text and the colour bar.
    labels : bool
        Print node labels (off for big drawings).
    """
    return _edge_traces(edges) + _node_traces(nodes, labels)


def _edge_bin(e: dict):
    if e.get("failed"):
        return "failed"
    return "idle" if e["u"] <= 0 else min(int(e["u"] * 10), 9)


def _edge_line(key) -> dict:
    if key == "idle":
        return {"color": IDLE_COLOR, "width": 1}
    if key == "failed":
        return {"color": FAILED_COLOR, "width": 2, "dash": "dot"}
    return {"color": util_color((key + 0.5) / 10), "width": 1.2 + 0.3 * key}


def _edge_traces(edges: list[dict]) -> list[dict]:
    bins = defaultdict(list)
    for e in edges:
        bins[_edge_bin(e)].append(e)
    traces = []
    for key in (k for k in _EDGE_BINS if bins.get(k)):
        xs, ys = [], []
        for e in bins[key]:
            xs += [e["x0"], e["x1"], None]
            ys += [e["y0"], e["y1"], None]
        traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "line": _edge_line(key),
                       "hoverinfo": "skip", "showlegend": False, "name": f"links {key}"})
    if edges:
        traces.append(_edge_hover_trace(edges))
    return traces


def _edge_hover_trace(edges: list[dict]) -> dict:
    # SVG scatter at every size: the pages' plotly.js bundle (cartesian) has no WebGL traces.
    return {"type": "scatter", "mode": "markers", "name": "links",
            "x": [(e["x0"] + e["x1"]) / 2 for e in edges],
            "y": [(e["y0"] + e["y1"]) / 2 for e in edges],
            "customdata": [e["cd"] for e in edges], "hovertemplate": LINK_HOVER, "showlegend": False,
            "marker": {"size": 5, "symbol": "diamond", "color": [round(e["u"], 3) for e in edges],
                       "colorscale": UTIL_SCALE, "cmin": 0, "cmax": 1, "showscale": True,
                       "colorbar": {"title": {"text": "link<br>utilization"}, "tickformat": ".0%",
                                    "thickness": 12, "len": 0.8}}}


def _node_marker(kind: str, group: list[dict]) -> dict:
    if kind == "host":
        return {"symbol": "square", "size": 16, "color": [round(n.get("u", 0.0), 3) for n in group],
                "colorscale": UTIL_SCALE, "cmin": 0, "cmax": 1, "line": {"width": 1, "color": "#555"}}
    symbol, color, _ = KIND_STYLE.get(kind, ("circle", "#7f8a9a", kind))
    return {"symbol": symbol, "size": 9, "color": color, "line": {"width": 0.5, "color": "#333"}}


# Node labels show only where they fit between their row neighbours at the current zoom (the
# rule: style.LABEL_FIT["node"]); results.js redoes the choice on every zoom from trace ``meta``.


def label_gaps(nodes: list[dict]) -> dict[str, float]:
    """Room of every node's label (data units): the distance to its nearest neighbour in its row
    (same ``y``), the drawing's width for a node alone in its row."""
    rows = defaultdict(list)
    for n in nodes:
        rows[n["y"]].append(n)
    xs = [n["x"] for n in nodes]
    span = (max(xs) - min(xs) + 1.0) if xs else 1.0
    gaps = {}
    for row in rows.values():
        row.sort(key=lambda n: n["x"])
        for i, n in enumerate(row):
            near = [abs(n["x"] - row[j]["x"]) for j in (i - 1, i + 1) if 0 <= j < len(row)]
            gaps[n["id"]] = min(near) if near else span
    return gaps


def label_fits(label: str, gap: float, px_per_unit: float) -> bool:
    """Whether ``label`` fits ``gap`` data units at ``px_per_unit`` (style.LABEL_FIT["node"])."""
    return bool(label) and text_fits(label, gap * px_per_unit, LABEL_FIT["node"])


def _node_traces(nodes: list[dict], labels: bool) -> list[dict]:
    by_kind = defaultdict(list)
    for n in nodes:
        by_kind[n["kind"]].append(n)
    gaps = label_gaps(nodes)
    xs = [n["x"] for n in nodes]
    ppu = PLOT_WIDTH_PX / ((max(xs) - min(xs) + 1.0) if xs else 1.0)
    traces = []
    for kind in sorted(by_kind, key=lambda k: _KIND_ORDER.index(k) if k in KIND_STYLE else 99):
        group = by_kind[kind]
        traces.append(_node_trace(kind, group, [round(gaps[n["id"]], 3) for n in group], ppu, labels))
        failed = [n for n in group if n.get("failed")]
        if failed:
            traces.append({"type": "scatter", "mode": "markers", "name": "failed", "showlegend": False,
                           "x": [n["x"] for n in failed], "y": [n["y"] for n in failed], "hoverinfo": "skip",
                           "marker": {"symbol": "x-thin-open", "size": 16,
                                      "line": {"width": 3, "color": FAILED_COLOR}}})
    return traces


def _node_trace(kind: str, group: list[dict], room: list[float], ppu: float, labels: bool) -> dict:
    """Markers of one kind; labels that fit ``room`` (data units) at ``ppu`` px per unit, the rest in ``meta``."""
    names = [n.get("label", "") if labels else "" for n in group]
    trace = {"type": "scatter", "mode": "markers+text" if any(names) else "markers", "name": kind_label(kind),
             "x": [n["x"] for n in group], "y": [n["y"] for n in group],
             "text": [t if label_fits(t, g, ppu) else "" for t, g in zip(names, room)],
             "textposition": "top center", "textfont": {"size": 9},
             "hovertext": [n["hover"] for n in group], "hoverinfo": "text",
             "customdata": [n["id"] for n in group], "marker": _node_marker(kind, group), "cliponaxis": False}
    if kind == "host":  # super-nodes as big as their row leaves room for (128 in a row: ~7 px, not a bar)
        trace["marker"]["size"] = [round(min(16.0, max(5.0, 0.8 * g * ppu)), 1) for g in room]
    if any(names):
        trace["meta"] = {"labels": names, "gaps": room}
    return trace


# ================================================================================ layout geometry
def _host_rows(doc: Doc, members: list[str], links: list[dict] | None = None) -> tuple[dict, int, int]:
    """Host-relative positions ``{node: (x, y)}`` (y 0 at the top, down to ``-(rows - 1)``), width, rows.

    The PCIe tree of :func:`designer.figures.hostlayout.host_tree_layout` (the editor draws hosts
    the same way); ``links`` are the host's internal links (default: found in the document).
    """
    if links is None:
        links = internal_links(doc).get(doc.host_of.get(members[0]) if members else None, [])
    pos, width, rows = host_tree_layout({n: doc.kind(n) for n in members}, [(l["a"], l["b"]) for l in links],
                                        {n: doc.role(n) for n in members})
    return {n: (x, -r) for n, (x, r) in pos.items()}, width, rows


def internal_links(doc: Doc) -> dict[str, list[dict]]:
    """``{host: [links with both ends in the host]}``."""
    internal = defaultdict(list)
    for link in doc.links:
        h = doc.host_of.get(link["a"])
        if h and h == doc.host_of.get(link["b"]):
            internal[h].append(link)
    return internal


def layout_positions(doc: Doc, collapsed: bool) -> tuple[dict, list]:
    """Auto layout: fabric tiers on top, hosts side by side below (or one super-node each).

    Returns positions ``{node or host: (x, y)}`` and host boxes ``(host, x0, x1, y0, y1)``. The
    document's own ``layout.positions`` (editor coordinates, y down) win when they cover every
    drawn node.
    """
    members = doc.members()
    pos, boxes, x = _place_hosts(doc, members, collapsed)
    loose = [n for n in doc.nodes if doc.host_of[n] is None and doc.kind(n) != "switch"]
    for j, n in enumerate(sorted(loose, key=lambda n: (doc.kind(n), natural(n)))):
        pos[n] = (x + 0.5 + 1.2 * j, 0.0)
    _place_switches(doc, pos, max(x + 1.2 * len(loose), 1.0), collapsed)
    if not collapsed and doc.positions and all(n in doc.positions for n in doc.nodes):
        pos = {n: (float(p[0]), -float(p[1])) for n, p in doc.positions.items() if n in doc.nodes}
        boxes = _boxes_from_positions(doc, pos, members)
    # 3 decimals: far below a pixel at any zoom the page allows, and ~12 bytes less per coordinate.
    return {n: (round(x, 3), round(y, 3)) for n, (x, y) in pos.items()}, boxes


def _place_hosts(doc: Doc, members: dict, collapsed: bool) -> tuple[dict, list, float]:
    """Hosts left to right (one unit each when collapsed); returns positions, boxes, next x."""
    pos, boxes, x = {}, [], 0.0
    internal = {} if collapsed else internal_links(doc)
    for h in doc.hosts:
        if collapsed:
            pos[h] = (x + 0.5, 0.0)
            x += 1.0
            continue
        rel, width, depth = _host_rows(doc, members[h], internal.get(h, []))
        for n, (rx, ry) in rel.items():
            pos[n] = (x + rx, ry)
        boxes.append((h, x, x + width, -(depth - 1), 0.0))
        x += width + 1.5
    return pos, boxes, x


def _place_switches(doc: Doc, pos: dict, total: float, collapsed: bool) -> None:
    """Fabric switches in rows by role (leaf, spine, core), each row spread over ``total``."""
    tiers = defaultdict(list)
    for n in doc.nodes:
        if doc.host_of[n] is None and doc.kind(n) == "switch":
            tiers[ROLE_ROW.get(doc.role(n), 1)].append(n)
    gap = 2.5 if collapsed else 2.0
    for row, ids in tiers.items():
        ids.sort(key=natural)
        step = total / len(ids)
        for j, n in enumerate(ids):
            pos[n] = ((j + 0.5) * step, gap * row + (0 if collapsed else 0.5))


def _boxes_from_positions(doc: Doc, pos: dict, members: dict) -> list:
    boxes = []
    for h in doc.hosts:
        xs = [pos[n][0] for n in members[h] if n in pos]
        ys = [pos[n][1] for n in members[h] if n in pos]
        if xs:
            pad = 0.04 * (max(xs) - min(xs) + 1)
            boxes.append((h, min(xs) - pad, max(xs) + pad, min(ys) - pad, max(ys) + pad))
    return boxes


# ================================================================================ unified topology
def _host_heat(doc: Doc, loads: Loads) -> dict[str, tuple[float, str | None]]:
    """Hottest internal link (or capacity node) of every host: ``(utilization, resource id)``."""
    heat = {h: (0.0, None) for h in doc.hosts}
    for link in doc.links:
        h = doc.host_of.get(link["a"])
        if h and h == doc.host_of.get(link["b"]):
            u = loads.link(link)["u"]
            if u > heat[h][0]:
                heat[h] = (u, link["id"])
    for rid, r in loads.nodes.items():
        h = doc.host_of.get(rid)
        if h and num(r.get("utilization"), 0.0) > heat[h][0]:
            heat[h] = (num(r.get("utilization"), 0.0), rid)
    return heat


def _node_hover(doc: Doc, nid: str, loads: Loads, failed: dict) -> str:
    n = doc.nodes.get(nid) or {}
    attrs = n.get("attrs") or {}
    bits = [f"<b>{nid}</b>", kind_label(n.get("kind"))]
    bits += [f"{k} {v}" for k, v in attrs.items() if k in ("model", "role", "rail", "socket")]
    r = loads.nodes.get(nid)
    if r:
        bits.append(f"internal: {fmt_gbps(r.get('load_gbps'))} / {fmt_gbps(r.get('capacity_gbps'))} "
                    f"({pct(r.get('utilization'))})")
    if nid in failed:
        bits.append(f"<b>FAILED ({failed[nid]})</b>")
    return "<br>".join(bits)


def topology_figure(result: dict, topology_doc: dict | None, *, collapsed: bool | None = None) -> dict:
    """Unified topology coloured by utilization (max of both directions of each link).

    Parameters
    ----------
    result : dict
        ``fabricscope.result/1``.
    topology_doc : dict or None
        ``fabricscope.topology/1`` the result was computed on.
    collapsed : bool, optional
        Draw each host as one super-node coloured by its hottest internal link; default when the
        document has more than :data:`COLLAPSE_HOSTS_ABOVE` hosts. The figure's ``fabricscope.hosts``
        then holds every host's internals (:func:`host_details`) for drill-down.
    """
    title = "Unified topology · link utilization"
    if not topology_doc or not topology_doc.get("nodes"):
        return empty_figure("topology", title, "No topology document available for this result.")
    doc, loads, failed = Doc(topology_doc), Loads(result), failed_targets(result)
    if collapsed is None:
        collapsed = len(doc.hosts) > COLLAPSE_HOSTS_ABOVE
    pos, boxes = layout_positions(doc, collapsed)
    heat = _host_heat(doc, loads)
    key = (lambda n: doc.host_of.get(n) or n) if collapsed else (lambda n: n)
    edges, table = _topology_edges(doc, loads, failed, pos, key)
    nodes = _topology_nodes(doc, loads, failed, pos, heat if collapsed else {})
    traces = graph_traces(nodes, edges, labels=True)
    shapes, notes, fits = _host_boxes(boxes, heat, failed)
    hottest = max(heat.items(), key=lambda kv: kv[1][0], default=(None, (0.0, None)))
    subtitle = (f"{len(doc.hosts)} hosts as super-nodes, coloured by hottest internal link · click a host to expand"
                if collapsed else f"{len(doc.hosts)} hosts · hover a link for load/capacity")
    layout = {"xaxis": {"visible": False}, "yaxis": {"visible": False, "scaleanchor": None},
              "shapes": shapes, "annotations": notes, "dragmode": "pan",
              "title": {"text": f"{title}<br><span style='font-size:12px'>{subtitle}</span>"},
              "margin": {"l": 20, "r": 20, "t": 70, "b": 40},
              "legend": {"orientation": "h", "y": -0.02, "x": 0, "yanchor": "top"}}
    extra = {"collapsed": collapsed, "hosts_total": len(doc.hosts), "label_boxes": fits,
             "hottest_host": hottest[0], "hottest_host_link": hottest[1][1]}
    if collapsed:
        extra["hosts"] = host_details(doc, loads, failed)
    return figure("topology", title, traces, layout, table=table, height=620 if not collapsed else 560, **extra)


def _topology_nodes(doc: Doc, loads: Loads, failed: dict, pos: dict, heat: dict) -> list[dict]:
    """Nodes to draw: super-nodes for the hosts in ``heat`` (collapsed view), devices otherwise.

    Every device and switch carries its label; :func:`label_fits` decides which show at a zoom.
    """
    counts = defaultdict(Counter)
    if heat:
        for n, h in doc.host_of.items():
            if h:
                counts[h][doc.kind(n)] += 1
    nodes = []
    for nid in pos:
        if nid in heat:
            nodes.append(_super_node(doc, nid, pos[nid], heat[nid], failed, counts[nid]))
        elif nid in doc.nodes:
            x, y = pos[nid]
            nodes.append({"id": nid, "x": x, "y": y, "kind": doc.kind(nid), "label": nid.split("/")[-1],
                          "hover": _node_hover(doc, nid, loads, failed), "failed": nid in failed})
    return nodes


def _topology_edges(doc, loads, failed, pos, key):
    """Edges to draw (aggregated per super-node pair when collapsed) and the link table."""
    agg: dict = {}
    for link in doc.links:
        a, b = key(link["a"]), key(link["b"])
        lu = loads.link(link)
        bad = failed.get(link["id"]) or failed.get(link["a"]) or failed.get(link["b"])
        if a == b or a not in pos or b not in pos:
            continue  # internal links of a super-node: summarized by its colour
        k = (a, b) if natural(a) <= natural(b) else (b, a)
        cur = agg.setdefault(k, {"u": -1.0, "n": 0, "bad": 0})
        cur["n"] += 1
        cur["bad"] += bool(bad)
        if lu["u"] > cur["u"] or (bad and not cur.get("mode")):
            cur.update(u=lu["u"], link=link, lu=lu, mode=bad)
    rows = [[a, b, e["n"], e["link"]["id"], e["link"].get("tech"), rnd(e["lu"]["cap"], 2), rnd(e["lu"]["ab"][0], 2),
             rnd(e["lu"]["ba"][0], 2), rnd(e["u"])] for (a, b), e in agg.items()]
    edges = [_aggregated_edge(a, b, e, pos) for (a, b), e in agg.items()]
    table = {"columns": ["a", "b", "links", "hottest link", "tech", "capacity_gbps", "load_a>b_gbps",
                         "load_b>a_gbps", "utilization_max"], "rows": rows}
    return edges, table


def _aggregated_edge(a: str, b: str, e: dict, pos: dict) -> dict:
    note = ""
    if e["n"] > 1:
        failed_n = f", {e['bad']} failed" if e["bad"] else ""
        note = f"<br>{a} ⇄ {b}: {e['n']} links{failed_n}, hottest shown"
    link = e["link"]
    cd = link_customdata(link["id"], link.get("tech"), link["a"], link["b"], e["lu"]["ab"], e["lu"]["ba"], note,
                         e["mode"])
    return {"x0": pos[a][0], "y0": pos[a][1], "x1": pos[b][0], "y1": pos[b][1], "u": max(e["u"], 0.0),
            "cd": cd, "failed": e["bad"] == e["n"]}


def _super_node(doc: Doc, host: str, xy, heat, failed, counts: Counter) -> dict:
    u, rid = heat
    hover = (f"<b>{host}</b> · {doc.templates.get(host) or 'host'}<br>{counts.get('gpu', 0)} GPU, "
             f"{counts.get('nic', 0)} NIC<br>hottest internal: {rid or '—'} ({pct(u)})<br><i>click to expand</i>")
    return {"id": host, "x": xy[0], "y": xy[1], "kind": "host", "u": u, "label": "", "hover": hover,
            "failed": host in failed}


# Level of detail of host-box labels (the rule: style.LABEL_FIT["box"]); the browser redoes the
# choice on every zoom (results.js fitLabels) from ``fabricscope.label_boxes``.


def fit_label(width_px: float, full: str, short: str) -> str:
    """The longest of ``full``, ``short`` (plain text) or ``""`` that fits ``width_px`` pixels."""
    for text in (full, short):
        if text_fits(text, width_px, LABEL_FIT["box"]):
            return text
    return ""


def _label_html(text: str, host: str) -> str:
    return text.replace(host, f"<b>{host}</b>", 1) if text else ""


def _host_boxes(boxes, heat, failed):
    """Box shapes and labels of expanded hosts; labels that do not fit the box are shortened or dropped.

    Returns shapes, annotations and ``label_boxes`` (``[[annotation index, x0, x1, full, short]]``,
    data units, for the browser to redo the fit at every zoom).
    """
    shapes, notes, fits = [], [], []
    span = max((b[2] for b in boxes), default=1.0) - min((b[1] for b in boxes), default=0.0) + 0.5
    for h, x0, x1, y0, y1 in boxes:
        u, _ = heat.get(h, (0.0, None))
        shapes.append({"type": "rect", "layer": "below", "x0": x0 - 0.25, "x1": x1 + 0.25, "y0": y0 - 0.45,
                       "y1": y1 + 0.45, "line": {"width": 2 if u >= 0.999 else 1,
                                                 "color": FAILED_COLOR if h in failed else util_color(u)},
                       "fillcolor": "rgba(127,138,154,0.07)"})
        full, short = f"{h} · hottest {pct(u)}", h
        text = fit_label((x1 - x0 + 0.5) * PLOT_WIDTH_PX / span, full, short)
        fits.append([len(notes), round(x0 - 0.25, 3), round(x1 + 0.25, 3), full, short, h])
        notes.append({"x": (x0 + x1) / 2, "y": y0 - 0.5, "yanchor": "top", "showarrow": False,
                      "text": _label_html(text, h), "font": {"size": 11}, "hovertext": full})
    return shapes, notes, fits


# ================================================================================ host drill-down
def _local(host: str, s: str) -> str:
    return s[len(host) + 1:] if s.startswith(host + "/") else s


def host_details(doc: Doc, loads: Loads, failed: dict) -> dict:
    """Compact internals of every host, sent with a collapsed topology for drill-down.

    ``{"shapes": [{"nodes": [[local id, kind, x, y]], "links": [[local id, ia, ib, tech]]}],
    "hosts": {host: {"s": shape index, "l": [[load a>b, load b>a, capacity], ...], "f": [...]}}}``
    (Gb/s); hosts from one template share a shape, so the payload is numbers, not strings, per host.
    """
    members = doc.members()
    internal = internal_links(doc)
    shapes, shape_index, hosts, layouts = [], {}, {}, {}
    for h in doc.hosts:
        shape, idx = _host_shape(doc, h, members[h], internal[h], layouts)
        sig = repr((shape["nodes"], shape["links"]))
        if sig not in shape_index:
            shape_index[sig] = len(shapes)
            shapes.append(shape)
        vals = []
        for link in internal[h]:
            lu = loads.link(link)
            vals.append([rnd(lu["ab"][0], 2), rnd(lu["ba"][0], 2), rnd(lu["cap"], 2)])
        bad = [_local(h, t) for t in failed if t in idx or any(t == link["id"] for link in internal[h])]
        hosts[h] = {"s": shape_index[sig], "l": vals, "f": bad}
    return {"shapes": shapes, "hosts": hosts}


def _host_shape(doc: Doc, host: str, members: list[str], links: list[dict],
                cache: dict | None = None) -> tuple[dict, dict]:
    """One host's devices (host-relative rows) and internal links, by local id; and node → index.

    ``cache`` maps a host's structure (local ids, kinds, roles, links) to its layout: hosts of one
    template are laid out once (128 PCIe-tree layouts were a quarter of a 1,024-GPU page's time).
    """
    order = sorted(members, key=lambda n: natural(_local(host, n)))
    sig = (tuple((_local(host, n), doc.kind(n), doc.role(n)) for n in order),
           tuple(sorted((_local(host, link["a"]), _local(host, link["b"])) for link in links)))
    rel_local = None if cache is None else cache.get(sig)
    if rel_local is None:
        rel, _, _ = _host_rows(doc, members, links)
        rel_local = {_local(host, n): p for n, p in rel.items()}
        if cache is not None:
            cache[sig] = rel_local
    idx = {n: i for i, n in enumerate(order)}
    nodes = [[_local(host, n), doc.kind(n), round(rel_local[_local(host, n)][0], 3), rel_local[_local(host, n)][1]]
             for n in order]
    shape_links = [[_local(host, link["id"]), idx[link["a"]], idx[link["b"]], link.get("tech")] for link in links]
    return {"nodes": nodes, "links": shape_links}, idx


def host_figure(result: dict, topology_doc: dict, host: str) -> dict:
    """Drill-down of one host: its internal devices and links coloured by utilization.

    Built from the same compact data a collapsed topology carries (:func:`expand_host`).
    """
    doc = Doc(topology_doc)
    if host not in doc.hosts:
        return empty_figure("host", f"Host {host}", f"No host {host!r} in this topology.")
    details = host_details(doc, Loads(result), failed_targets(result))
    return expand_host(details, host)


def expand_host(details: dict, host: str) -> dict:
    """Figure of one host from :func:`host_details` data (also served to the browser on a click).

    Parameters
    ----------
    details : dict
        ``fabricscope.hosts`` of a collapsed topology figure, or a slice of it holding ``host``.
    host : str
        Host group id.
    """
    h = details["hosts"][host]
    shape = details["shapes"][h["s"]]
    bad = set(h.get("f") or [])
    nodes = [{"id": f"{host}/{n[0]}", "x": n[2], "y": n[3], "kind": n[1], "label": n[0],
              "hover": f"<b>{host}/{n[0]}</b><br>{kind_label(n[1])}",
              "failed": n[0] in bad} for n in shape["nodes"]]
    edges = [_host_edge(host, shape["nodes"], link, v, bad) for link, v in zip(shape["links"], h["l"])]
    title = f"Host {host} · internal links"
    layout = {"xaxis": {"visible": False}, "yaxis": {"visible": False}, "dragmode": "pan",
              "margin": {"l": 20, "r": 20, "t": 56, "b": 40},
              "legend": {"orientation": "h", "y": -0.02, "x": 0, "yanchor": "top"}}
    table = {"columns": ["link", "tech", "load_a>b_gbps", "load_b>a_gbps", "capacity_gbps"],
             "rows": [[f"{host}/{link[0]}", link[3], *v] for link, v in zip(shape["links"], h["l"])]}
    return figure("host", title, graph_traces(nodes, edges, labels=True), layout, table=table, height=480,
                  host=host)


def _host_edge(host: str, shape_nodes: list, link: list, values: list, bad: set) -> dict:
    (lid, ia, ib, tech), (lab, lba, cap) = link, values
    a, b = shape_nodes[ia], shape_nodes[ib]
    ua, ub = (lab or 0) / cap if cap else 0.0, (lba or 0) / cap if cap else 0.0
    cd = link_customdata(f"{host}/{lid}", tech, a[0], b[0], (lab, cap, ua), (lba, cap, ub))
    return {"x0": a[2], "y0": a[3], "x1": b[2], "y1": b[3], "u": max(ua, ub), "cd": cd, "failed": lid in bad}
