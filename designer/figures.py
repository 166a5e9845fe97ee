"""Engine results → Plotly figure dicts (DESIGN.md §3 result views).

The engine returns numbers; this module turns a ``fabricscope.result/1`` (or ``fabricscope.sweep/1``,
or a policy comparison) into small, JSON-ready Plotly figures. Everything heavy is aggregated here
so a 1,024-GPU result with a million flows ships a few hundred kB, never one point per flow:
box plots carry precomputed quartiles, histograms carry precomputed bins, big clusters draw hosts
as super-nodes with their internals sent as compact numbers (expanded in the browser on click).

Public functions
----------------
``figures_for_result(result, *, topology_doc=None) -> dict[str, dict]``
    Keys (present when the result has the data): ``topology`` (+ ``topology_collapsed`` when the
    default view is expanded), ``path``, ``tiers``, ``bottlenecks``, ``patterns``, ``rates``,
    ``timeline``, ``latency``, ``whatif_completion``, ``whatif_changes``.
``figures_for_sweep(sweep, *, selected=None) -> dict[str, dict]``
    ``ranking`` (most harmful first; bars link to ``?failure=<index>``), ``policies`` for a policy
    comparison, and ``whatif_*`` of the selected failure when its ranking entry carries a diff.
``figures_for_compare(a, b) -> dict[str, dict]``
    ``compare_completion``, ``compare_utilization``, ``compare_bottlenecks`` (B relative to A).
``path_figure``, ``host_figure``: single figures (the API serves them for a chosen flow / host).

Figure dict shape
-----------------
``{"data": [...], "layout": {...}, "config": {...}, "fabricscope": {...}}``. Pass ``data``,
``layout`` and ``config`` to ``Plotly.newPlot``; ``fabricscope`` is ours: ``kind``, ``title``,
``table`` (``{"columns": [...], "rows": [[...]]}``, the figure's data for the CSV/JSON buttons)
and, per kind, what the browser needs for interaction (``path_index`` for the flow picker,
``hosts`` for host drill-down). Colours of text, grid and background are left to
``static/js/results.js``, which applies a light or dark theme from the page's CSS variables.

Template contexts
-----------------
``result_context(job=job, result=data, topology_doc=None, selected=None)`` returns what
``templates/designer/result.html`` needs, for every job kind (simulate, sweep, compare)::

    {"figures": {...},          # key -> figure dict; embedded with {{ figures|json_script:"fs-figures" }}
     "view": "result" | "sweep" | "policies",
     "headline": {...},         # numbers printed as text (slowest pattern, max utilization, ...)
     "result_data": data,       # the result dict itself
     "failure_index": selected, # sweep ranking position detailed (the page's ?failure=<position>)
     "has_topology": bool}

The topology document defaults to ``job.revision.document``. The view adds ``job`` (optional).
Pass ``selected=int(request.GET["failure"])`` on sweep pages so a click on a ranking bar shows
that failure's diff. ``compare_context(a=data_a, b=data_b)`` returns ``{"figures",
"headline_a", "headline_b", "rows"}`` for ``templates/designer/compare.html`` (the view adds
``job_a`` / ``job_b``). Nothing is marked safe: templates escape everything, figures go through
``json_script``.
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict

__all__ = ["figures_for_result", "figures_for_sweep", "figures_for_compare", "figures_for_policies",
           "result_context", "compare_context", "empty_figure", "expand_host", "path_hops", "flow_row_record",
           "topology_figure", "host_figure", "path_figure", "path_index", "tier_figure",
           "bottleneck_figure", "pattern_figure", "rate_figure", "timeline_figure", "latency_figure",
           "whatif_figures", "ranking_figure", "policy_figure", "fmt_time", "fmt_gbps", "COLLAPSE_HOSTS_ABOVE", "TIER_ORDER"]

# Hosts drawn in full up to this many; above, hosts are super-nodes expanded on click.
COLLAPSE_HOSTS_ABOVE = 16
TIER_ORDER = ("nvlink", "pcie", "root-complex", "inter-socket", "memory", "nic-leaf", "leaf-spine",
              "spine-core", "fabric", "storage", "other")
TIER_LABELS = {"nvlink": "NVLink", "pcie": "PCIe", "root-complex": "Root complex", "inter-socket":
               "Inter-socket", "memory": "Memory", "nic-leaf": "NIC–leaf", "leaf-spine": "Leaf–spine",
               "spine-core": "Spine–core", "fabric": "Fabric", "storage": "Storage", "other": "Other"}
# Utilization colour scale: readable on white and on dark grey; red means saturated.
UTIL_SCALE = [[0.0, "#3b7dd8"], [0.35, "#43b0a6"], [0.6, "#e6c229"], [0.85, "#f0822e"], [1.0, "#d7263d"]]
IDLE_COLOR = "rgba(140,150,165,0.45)"
FAILED_COLOR = "#d7263d"
PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B", "#B279A2", "#FF9DA6",
           "#9D755D", "#8C9FB5"]
KIND_STYLE = {  # marker symbol, colour, label
    "gpu": ("square", "#76b900", "GPU"), "nvswitch": ("diamond", "#8e6cc6", "NVSwitch"),
    "pcie_switch": ("triangle-up", "#5d8fd8", "PCIe switch"), "nic": ("circle", "#e69f00", "NIC"),
    "cpu": ("hexagon", "#9aa0a8", "CPU / root complex"), "memory": ("square-open", "#b07aa1", "Memory"),
    "nvme": ("cross", "#a9805e", "NVMe"), "switch": ("circle", "#7f8a9a", "Switch"),
    "storage": ("hexagram", "#17becf", "Storage"), "host": ("square", "#7f8a9a", "Host"),
}
# Rows inside a host, top (towards the fabric) to bottom: NICs face the leaves.
HOST_ROWS = (("nic",), ("pcie_switch",), ("gpu",), ("nvswitch",), ("cpu",), ("memory", "nvme"))
ROLE_ROW = {"core": 3, "spine": 2, "leaf": 1, "tor": 1}
_CONTROL_LABELS = {"proxy_notice": "CPU proxy notices", "wqe_post": "WQE post", "doorbell": "Doorbell",
                   "wqe_fetch": "WQE fetch (NIC DMA)", "copy_launch": "Copy launch", "store_issue": "Store issue"}
_DATA_COMPONENTS = (("propagation_ns", "Propagation"), ("forwarding_ns", "Forwarding"),
                    ("serialization_ns", "Serialization"))


# ================================================================================ small helpers
def _num(x, default=None):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


def _r(x, digits=4):
    x = _num(x)
    return None if x is None else round(x, digits)


def fmt_time(s) -> str:
    """Human duration: ``'6.60 ms'``, ``'800 ms'``, ``'1.25 s'``, ``'—'`` for missing."""
    s = _num(s)
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if abs(v) < 100 else f"{v:.0f} {unit}"
    return f"{s} s"  # pragma: no cover


def fmt_gbps(x) -> str:
    """``'400 Gb/s'``, ``'3.2 Tb/s'``."""
    x = _num(x)
    if x is None:
        return "—"
    return f"{x / 1000:.3g} Tb/s" if abs(x) >= 1000 else f"{x:.3g} Gb/s"


def _pct(u) -> str:
    u = _num(u)
    return "—" if u is None else f"{u:.0%}"


def _natural(s: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s))]


def _util_color(u) -> str:
    """Colour of utilization ``u`` (0–1) on :data:`UTIL_SCALE`."""
    u = min(max(_num(u, 0.0), 0.0), 1.0)
    for (p0, c0), (p1, c1) in zip(UTIL_SCALE, UTIL_SCALE[1:]):
        if u <= p1:
            t = (u - p0) / (p1 - p0)
            a, b = (int(c0[i:i + 2], 16) for i in (1, 3, 5)), (int(c1[i:i + 2], 16) for i in (1, 3, 5))
            return "#%02x%02x%02x" % tuple(round(x + (y - x) * t) for x, y in zip(a, b))
    return UTIL_SCALE[-1][1]


def _fig(kind: str, title: str, data: list, layout: dict, *, table: dict | None = None,
         height: int = 420, **extra) -> dict:
    base = {"title": {"text": title, "x": 0.01, "xanchor": "left", "font": {"size": 15}},
            "height": height, "margin": {"l": 70, "r": 30, "t": 56, "b": 60}, "hovermode": "closest",
            "hoverlabel": {"font": {"size": 12}, "align": "left"},
            "legend": {"orientation": "h", "y": -0.18, "x": 0, "yanchor": "top"}}
    base.update(layout)
    config = {"displaylogo": False, "responsive": True,
              "toImageButtonOptions": {"format": "png", "filename": f"fabricscope-{kind}", "scale": 2},
              "modeBarButtonsToRemove": ["select2d", "lasso2d"]}
    meta = {"kind": kind, "title": title, "table": table or {"columns": [], "rows": []}, **extra}
    return {"data": data, "layout": base, "config": config, "fabricscope": meta}


def empty_figure(kind: str, title: str, message: str, *, height: int = 260) -> dict:
    """A figure that says why there is nothing to draw (instead of blank axes)."""
    hidden = {"visible": False}
    return _fig(kind, title, [], {
        "xaxis": hidden, "yaxis": hidden,
        "annotations": [{"text": message, "showarrow": False, "xref": "paper", "yref": "paper",
                         "x": 0.5, "y": 0.5, "font": {"size": 14}}]}, height=height, empty=True)


def _axis(title: str, **kw) -> dict:
    return {"title": {"text": title, "standoff": 8}, "automargin": True, **kw}


# ================================================================================ topology model
class _Doc:
    """What the figures need from a topology document: hosts, rows, links, capacities."""

    def __init__(self, doc: dict):
        self.doc = doc
        groups = {g["id"]: g for g in doc.get("groups") or []}
        self.nodes = {n["id"]: n for n in doc.get("nodes") or []}
        self.links = list(doc.get("links") or [])
        self.host_of = {nid: self._host(n.get("group"), groups) for nid, n in self.nodes.items()}
        self.hosts = sorted({h for h in self.host_of.values() if h}, key=_natural)
        self.templates = {h: (groups.get(h) or {}).get("template") for h in self.hosts}
        self.positions = ((doc.get("layout") or {}).get("positions") or {})

    @staticmethod
    def _host(group, groups):
        seen = set()
        while group and group not in seen:
            seen.add(group)
            g = groups.get(group) or {}
            if g.get("kind") == "host":
                return group
            group = g.get("parent")
        return None

    def kind(self, nid: str) -> str:
        return (self.nodes.get(nid) or {}).get("kind", "other")

    def role(self, nid: str) -> str | None:
        return ((self.nodes.get(nid) or {}).get("attrs") or {}).get("role")


def _catalog_capacity(tech):
    try:  # the engine catalog knows a tech's default (effective) capacity
        from designer.engine.catalog import TECHS
        info = TECHS.get(tech)
        return float(info.effective_gbps) if info else None
    except Exception:  # pragma: no cover - catalog import problems must not break a page
        return None


class _Loads:
    """Per link direction and per capacity node: load, capacity, utilization from ``resources``."""

    def __init__(self, result: dict):
        self.dirs: dict[str, dict] = defaultdict(dict)
        self.nodes: dict[str, dict] = {}
        self.by_id: dict[str, dict] = {}
        for r in result.get("resources") or []:
            self.by_id[r["id"]] = r
            if r.get("link"):
                self.dirs[r["link"]][r.get("dir") or "a>b"] = r
            else:
                self.nodes[r["id"]] = r

    def link(self, link: dict) -> dict:
        """``{"u": max util, "ab": (load, cap, util), "ba": (...), "cap": capacity}``."""
        d = self.dirs.get(link["id"], {})
        cap = _num(link.get("capacity_gbps")) or _catalog_capacity(link.get("tech"))
        out = {"cap": cap}
        for key, name in (("ab", "a>b"), ("ba", "b>a")):
            r = d.get(name)
            out[key] = ((_num(r.get("load_gbps"), 0.0), _num(r.get("capacity_gbps")) or cap,
                         _num(r.get("utilization"), 0.0)) if r else (0.0, cap, 0.0))
        out["u"] = max(out["ab"][2], out["ba"][2])
        if d:
            out["cap"] = max((x[1] or 0.0) for x in (out["ab"], out["ba"]))
        return out


def _failed_targets(result: dict) -> dict[str, str]:
    return {f.get("target"): f.get("mode", "down") for f in (result.get("scenario") or {}).get("failures") or []
            if f.get("target")}


def _link_hover(link: dict, lu: dict, failed: str | None = None) -> str:
    def side(label, t):
        load, cap, u = t
        return f"{label}: {fmt_gbps(load)} / {fmt_gbps(cap)} ({_pct(u)})"
    lines = [f"<b>{link['id']}</b>", f"tech {link.get('tech') or '—'}",
             side(f"{link['a']} → {link['b']}", lu["ab"]), side(f"{link['b']} → {link['a']}", lu["ba"])]
    if failed:
        lines.append(f"<b>FAILED ({failed})</b>")
    return "<br>".join(lines)


# ================================================================================ graph drawing
def _graph_traces(nodes: list[dict], edges: list[dict], *, labels: bool) -> list[dict]:
    """Traces of a node-link drawing, shared by the topology, collapsed and host views.

    ``nodes``: ``{"id", "x", "y", "kind", "hover", "label", "u" (optional, super-nodes)}``;
    ``edges``: ``{"x0", "y0", "x1", "y1", "u", "hover", "failed"}``. Edges are binned by
    utilization into one line trace per colour (Plotly lines have one colour per trace); a
    marker at each edge's middle carries the hover text and the colour bar.
    ``static/js/results.js`` (``graphTraces``) mirrors this for host drill-down.
    """
    traces = []
    bins = defaultdict(list)
    for e in edges:
        key = "failed" if e.get("failed") else ("idle" if e["u"] <= 0 else min(int(e["u"] * 10), 9))
        bins[key].append(e)
    for key in ["idle"] + list(range(10)) + ["failed"]:
        group = bins.get(key)
        if not group:
            continue
        xs, ys = [], []
        for e in group:
            xs += [e["x0"], e["x1"], None]
            ys += [e["y0"], e["y1"], None]
        if key == "idle":
            line = {"color": IDLE_COLOR, "width": 1}
        elif key == "failed":
            line = {"color": FAILED_COLOR, "width": 2, "dash": "dot"}
        else:
            line = {"color": _util_color((key + 0.5) / 10), "width": 1.2 + 0.3 * key}
        traces.append({"type": "scatter", "mode": "lines", "x": xs, "y": ys, "line": line,
                       "hoverinfo": "skip", "showlegend": False, "name": f"links {key}"})
    if edges:
        scatter = "scattergl" if len(edges) > 4000 else "scatter"
        traces.append({"type": scatter, "mode": "markers", "name": "links",
                       "x": [(e["x0"] + e["x1"]) / 2 for e in edges],
                       "y": [(e["y0"] + e["y1"]) / 2 for e in edges],
                       "hovertext": [e["hover"] for e in edges], "hoverinfo": "text", "showlegend": False,
                       "marker": {"size": 5, "symbol": "diamond", "color": [round(e["u"], 3) for e in edges],
                                  "colorscale": UTIL_SCALE, "cmin": 0, "cmax": 1, "showscale": True,
                                  "colorbar": {"title": {"text": "link<br>utilization"}, "tickformat": ".0%",
                                               "thickness": 12, "len": 0.8}}})
    by_kind = defaultdict(list)
    for n in nodes:
        by_kind[n["kind"]].append(n)
    for kind in sorted(by_kind, key=lambda k: list(KIND_STYLE).index(k) if k in KIND_STYLE else 99):
        group = by_kind[kind]
        symbol, color, label = KIND_STYLE.get(kind, ("circle", "#7f8a9a", kind))
        marker = {"symbol": symbol, "size": 9, "color": color, "line": {"width": 0.5, "color": "#333"}}
        if kind == "host":
            marker = {"symbol": "square", "size": 16, "color": [round(n.get("u", 0.0), 3) for n in group],
                      "colorscale": UTIL_SCALE, "cmin": 0, "cmax": 1, "line": {"width": 1, "color": "#555"}}
        failed = [n for n in group if n.get("failed")]
        trace = {"type": "scatter", "mode": "markers+text" if labels else "markers", "name": label,
                 "x": [n["x"] for n in group], "y": [n["y"] for n in group],
                 "text": [n.get("label", "") for n in group], "textposition": "top center",
                 "textfont": {"size": 9}, "hovertext": [n["hover"] for n in group], "hoverinfo": "text",
                 "customdata": [n["id"] for n in group], "marker": marker, "cliponaxis": False}
        traces.append(trace)
        if failed:
            traces.append({"type": "scatter", "mode": "markers", "name": "failed", "showlegend": False,
                           "x": [n["x"] for n in failed], "y": [n["y"] for n in failed], "hoverinfo": "skip",
                           "marker": {"symbol": "x-thin-open", "size": 16, "line": {"width": 3, "color": FAILED_COLOR}}})
    return traces


def _host_rows(doc: _Doc, members: list[str]) -> tuple[dict, int, int]:
    """Host-relative positions: rows of :data:`HOST_ROWS`, each row spread over the host width."""
    rows = [[n for n in members if doc.kind(n) in kinds] for kinds in HOST_ROWS]
    rest = [n for n in members if not any(doc.kind(n) in kinds for kinds in HOST_ROWS)]
    if rest:
        rows.append(rest)
    rows = [sorted(r, key=lambda n: (doc.kind(n), _natural(n))) for r in rows if r]
    width = max((len(r) for r in rows), default=1)
    pos = {}
    for depth, row in enumerate(rows):
        step = width / len(row)
        for j, n in enumerate(row):
            pos[n] = ((j + 0.5) * step, -depth)
    return pos, width, len(rows)


def _layout_positions(doc: _Doc, collapsed: bool) -> tuple[dict, list]:
    """Auto layout: fabric tiers on top, hosts side by side below (or one super-node each).

    Returns positions and host boxes ``(host, x0, x1, y0, y1)``. The document's own
    ``layout.positions`` (editor coordinates, y down) win when they cover every drawn node.
    """
    members = defaultdict(list)
    for nid, h in doc.host_of.items():
        if h:
            members[h].append(nid)
    switches = [n for n in doc.nodes if doc.host_of[n] is None and doc.kind(n) == "switch"]
    loose = [n for n in doc.nodes if doc.host_of[n] is None and doc.kind(n) != "switch"]
    pos, boxes, x = {}, [], 0.0
    depth_max = 1
    for h in doc.hosts:
        if collapsed:
            pos[h] = (x + 0.5, 0.0)
            x += 1.0
            continue
        rel, width, depth = _host_rows(doc, members[h])
        depth_max = max(depth_max, depth)
        for n, (rx, ry) in rel.items():
            pos[n] = (x + rx, ry)
        boxes.append((h, x, x + width, -(depth - 1), 0.0))
        x += width + 1.5
    for j, n in enumerate(sorted(loose, key=lambda n: (doc.kind(n), _natural(n)))):
        pos[n] = (x + 0.5 + 1.2 * j, 0.0)
    total = max(x + 1.2 * len(loose), 1.0)
    tiers = defaultdict(list)
    for n in switches:
        tiers[ROLE_ROW.get(doc.role(n), 1)].append(n)
    gap = 2.5 if collapsed else 2.0
    for row, ids in tiers.items():
        ids.sort(key=_natural)
        step = total / len(ids)
        for j, n in enumerate(ids):
            pos[n] = ((j + 0.5) * step, gap * row + (0 if collapsed else 0.5))
    if not collapsed and doc.positions and all(n in doc.positions for n in doc.nodes):
        pos = {n: (float(p[0]), -float(p[1])) for n, p in doc.positions.items() if n in doc.nodes}
        boxes = _boxes_from_positions(doc, pos, members)
    return pos, boxes


def _boxes_from_positions(doc: _Doc, pos: dict, members: dict) -> list:
    boxes = []
    for h in doc.hosts:
        xs = [pos[n][0] for n in members[h] if n in pos]
        ys = [pos[n][1] for n in members[h] if n in pos]
        if xs:
            pad = 0.04 * (max(xs) - min(xs) + 1)
            boxes.append((h, min(xs) - pad, max(xs) + pad, min(ys) - pad, max(ys) + pad))
    return boxes


def _host_heat(doc: _Doc, loads: _Loads) -> dict[str, tuple[float, str | None]]:
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
        if h and _num(r.get("utilization"), 0.0) > heat[h][0]:
            heat[h] = (_num(r.get("utilization"), 0.0), rid)
    return heat


def _node_hover(doc: _Doc, nid: str, loads: _Loads, failed: dict) -> str:
    n = doc.nodes.get(nid) or {}
    attrs = n.get("attrs") or {}
    bits = [f"<b>{nid}</b>", KIND_STYLE.get(n.get("kind"), (0, 0, n.get("kind")))[2]]
    bits += [f"{k} {v}" for k, v in attrs.items() if k in ("model", "role", "rail", "socket")]
    r = loads.nodes.get(nid)
    if r:
        bits.append(f"internal: {fmt_gbps(r.get('load_gbps'))} / {fmt_gbps(r.get('capacity_gbps'))} "
                    f"({_pct(r.get('utilization'))})")
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
        then holds every host's internals for drill-down (:func:`host_figure` in the browser).
    """
    title = "Unified topology · link utilization"
    if not topology_doc or not topology_doc.get("nodes"):
        return empty_figure("topology", title, "No topology document available for this result.")
    doc, loads, failed = _Doc(topology_doc), _Loads(result), _failed_targets(result)
    if collapsed is None:
        collapsed = len(doc.hosts) > COLLAPSE_HOSTS_ABOVE
    pos, boxes = _layout_positions(doc, collapsed)
    heat = _host_heat(doc, loads)
    key = (lambda n: doc.host_of.get(n) or n) if collapsed else (lambda n: n)
    edges, table = _topology_edges(doc, loads, failed, pos, key)
    crowded = Counter(y for n, (_, y) in pos.items() if n in doc.nodes and doc.host_of.get(n) is None)
    nodes = []
    for nid in pos:
        if collapsed and nid in heat:
            nodes.append(_super_node(doc, nid, pos[nid], heat[nid], failed))
        elif nid in doc.nodes:
            x, y = pos[nid]
            short = nid.split("/")[-1]
            show = (crowded.get(pos[nid][1], 0) <= 16) if doc.host_of[nid] is None else len(doc.hosts) <= 2
            nodes.append({"id": nid, "x": x, "y": y, "kind": doc.kind(nid), "label": short if show else "",
                          "hover": _node_hover(doc, nid, loads, failed), "failed": nid in failed})
    labels = len(pos) <= 400
    traces = _graph_traces(nodes, edges, labels=labels)
    shapes, notes = _host_boxes(boxes, heat, failed)
    hottest = max(heat.items(), key=lambda kv: kv[1][0], default=(None, (0.0, None)))
    subtitle = (f"{len(doc.hosts)} hosts as super-nodes, coloured by hottest internal link · click a host to expand"
                if collapsed else f"{len(doc.hosts)} hosts · hover a link for load/capacity")
    layout = {"xaxis": {"visible": False}, "yaxis": {"visible": False, "scaleanchor": None},
              "shapes": shapes, "annotations": notes, "dragmode": "pan",
              "title": {"text": f"{title}<br><span style='font-size:12px'>{subtitle}</span>"},
              "margin": {"l": 20, "r": 20, "t": 70, "b": 40},
              "legend": {"orientation": "h", "y": -0.02, "x": 0, "yanchor": "top"}}
    extra = {"collapsed": collapsed, "hosts_total": len(doc.hosts),
             "hottest_host": hottest[0], "hottest_host_link": hottest[1][1]}
    if collapsed:
        extra["hosts"] = _host_details(doc, loads, failed)
    return _fig("topology", title, traces, layout, table=table, height=620 if not collapsed else 560, **extra)


def _topology_edges(doc, loads, failed, pos, key):
    """Edges to draw (aggregated per super-node pair when collapsed) and the link table."""
    agg: dict = {}
    for link in doc.links:
        a, b = key(link["a"]), key(link["b"])
        lu = loads.link(link)
        bad = failed.get(link["id"]) or failed.get(link["a"]) or failed.get(link["b"])
        if a == b or a not in pos or b not in pos:
            continue  # internal links of a super-node: summarized by its colour
        k = (a, b) if _natural(a) <= _natural(b) else (b, a)
        cur = agg.setdefault(k, {"u": -1.0, "n": 0, "bad": 0})
        cur["n"] += 1
        cur["bad"] += bool(bad)
        if lu["u"] > cur["u"] or (bad and not cur.get("mode")):
            cur.update(u=lu["u"], link=link, lu=lu, mode=bad)
    rows = [[a, b, e["n"], e["link"]["id"], e["link"].get("tech"), _r(e["lu"]["cap"], 2), _r(e["lu"]["ab"][0], 2),
             _r(e["lu"]["ba"][0], 2), _r(e["u"])] for (a, b), e in agg.items()]
    edges = []
    for (a, b), e in agg.items():
        hover = _link_hover(e["link"], e["lu"], e["mode"])
        if e["n"] > 1:
            failed_n = f", {e['bad']} failed" if e["bad"] else ""
            hover = f"{a} ⇄ {b}: {e['n']} links{failed_n}, hottest shown<br>" + hover
        edges.append({"x0": pos[a][0], "y0": pos[a][1], "x1": pos[b][0], "y1": pos[b][1], "u": max(e["u"], 0.0),
                      "hover": hover, "failed": e["bad"] == e["n"]})
    table = {"columns": ["a", "b", "links", "hottest link", "tech", "capacity_gbps", "load_a>b_gbps",
                         "load_b>a_gbps", "utilization_max"], "rows": rows}
    return edges, table


def _super_node(doc: _Doc, host: str, xy, heat, failed) -> dict:
    u, rid = heat
    members = [n for n, h in doc.host_of.items() if h == host]
    counts = Counter(doc.kind(n) for n in members)
    hover = (f"<b>{host}</b> · {doc.templates.get(host) or 'host'}<br>{counts.get('gpu', 0)} GPU, "
             f"{counts.get('nic', 0)} NIC<br>hottest internal: {rid or '—'} ({_pct(u)})<br><i>click to expand</i>")
    return {"id": host, "x": xy[0], "y": xy[1], "kind": "host", "u": u, "label": "", "hover": hover,
            "failed": host in failed}


def _host_boxes(boxes, heat, failed):
    shapes, notes = [], []
    for h, x0, x1, y0, y1 in boxes:
        u, _ = heat.get(h, (0.0, None))
        shapes.append({"type": "rect", "layer": "below", "x0": x0 - 0.25, "x1": x1 + 0.25, "y0": y0 - 0.45,
                       "y1": y1 + 0.45, "line": {"width": 2 if u >= 0.999 else 1,
                                                 "color": FAILED_COLOR if h in failed else _util_color(u)},
                       "fillcolor": "rgba(127,138,154,0.07)"})
        notes.append({"x": (x0 + x1) / 2, "y": y0 - 0.5, "yanchor": "top", "showarrow": False,
                      "text": f"<b>{h}</b> · hottest {_pct(u)}", "font": {"size": 11}})
    return shapes, notes


def _host_details(doc: _Doc, loads: _Loads, failed: dict) -> dict:
    """Compact internals of every host for drill-down in the browser.

    ``{"shapes": [{"nodes": [[local id, kind, x, y]], "links": [[local id, ia, ib, tech]]}],
    "hosts": {host: {"s": shape index, "l": [[load a>b, load b>a, capacity], ...], "f": [...]}}}``;
    hosts from one template share a shape, so the payload is numbers, not strings, per host.
    """
    members = defaultdict(list)
    for n, h in doc.host_of.items():
        if h:
            members[h].append(n)
    internal = defaultdict(list)
    for link in doc.links:
        h = doc.host_of.get(link["a"])
        if h and h == doc.host_of.get(link["b"]):
            internal[h].append(link)
    shapes, shape_index, hosts = [], {}, {}
    for h in doc.hosts:
        rel, _, _ = _host_rows(doc, members[h])
        local = lambda s, h=h: s[len(h) + 1:] if s.startswith(h + "/") else s  # noqa: E731
        order = sorted(rel, key=lambda n: _natural(local(n)))
        idx = {n: i for i, n in enumerate(order)}
        nodes = [[local(n), doc.kind(n), round(rel[n][0], 3), rel[n][1]] for n in order]
        links = [[local(l["id"]), idx[l["a"]], idx[l["b"]], l.get("tech")] for l in internal[h]]
        sig = repr((nodes, links))
        if sig not in shape_index:
            shape_index[sig] = len(shapes)
            shapes.append({"nodes": nodes, "links": links})
        vals = []
        for l in internal[h]:
            lu = loads.link(l)
            vals.append([_r(lu["ab"][0], 2), _r(lu["ba"][0], 2), _r(lu["cap"], 2)])
        bad = [local(t) for t in failed if t in idx or any(t == l["id"] for l in internal[h])]
        hosts[h] = {"s": shape_index[sig], "l": vals, "f": bad}
    return {"shapes": shapes, "hosts": hosts}


def host_figure(result: dict, topology_doc: dict, host: str) -> dict:
    """Drill-down of one host: its internal devices and links coloured by utilization.

    Built from the same compact data the browser uses (``static/js/results.js`` ``hostFigure``).
    """
    doc = _Doc(topology_doc)
    if host not in doc.hosts:
        return empty_figure("host", f"Host {host}", f"No host {host!r} in this topology.")
    details = _host_details(doc, _Loads(result), _failed_targets(result))
    return expand_host(details, host)


def expand_host(details: dict, host: str) -> dict:
    """Figure of one host from :func:`_host_details` data (mirrored in results.js)."""
    h = details["hosts"][host]
    shape = details["shapes"][h["s"]]
    bad = set(h.get("f") or [])
    nodes = [{"id": f"{host}/{n[0]}", "x": n[2], "y": n[3], "kind": n[1], "label": n[0],
              "hover": f"<b>{host}/{n[0]}</b><br>{KIND_STYLE.get(n[1], (0, 0, n[1]))[2]}",
              "failed": n[0] in bad} for n in shape["nodes"]]
    edges = []
    for (lid, ia, ib, tech), (lab, lba, cap) in zip(shape["links"], h["l"]):
        a, b = shape["nodes"][ia], shape["nodes"][ib]
        ua, ub = (lab or 0) / cap if cap else 0.0, (lba or 0) / cap if cap else 0.0
        hover = (f"<b>{host}/{lid}</b><br>tech {tech or '—'}<br>{a[0]} → {b[0]}: {fmt_gbps(lab)} / {fmt_gbps(cap)} "
                 f"({_pct(ua)})<br>{b[0]} → {a[0]}: {fmt_gbps(lba)} / {fmt_gbps(cap)} ({_pct(ub)})")
        edges.append({"x0": a[2], "y0": a[3], "x1": b[2], "y1": b[3], "u": max(ua, ub), "hover": hover,
                      "failed": lid in bad})
    title = f"Host {host} · internal links"
    layout = {"xaxis": {"visible": False}, "yaxis": {"visible": False}, "dragmode": "pan",
              "margin": {"l": 20, "r": 20, "t": 56, "b": 40},
              "legend": {"orientation": "h", "y": -0.02, "x": 0, "yanchor": "top"}}
    table = {"columns": ["link", "tech", "load_a>b_gbps", "load_b>a_gbps", "capacity_gbps"],
             "rows": [[f"{host}/{l[0]}", l[3], *v] for l, v in zip(shape["links"], h["l"])]}
    return _fig("host", title, _graph_traces(nodes, edges, labels=True), layout, table=table, height=480,
                host=host)


# ================================================================================ path view
def path_index(result: dict, topology_doc: dict | None = None) -> dict:
    """Compact data for the flow picker: listed flows, their node paths and hop resources.

    Strings are stored once and referenced by index (a 1,024-GPU result lists 20,000 flows)::

        {"nodes": [id], "kinds": [kind], "hosts": [host or ""], "patterns": [id], "classes": [name],
         "techs": [name], "tiers": [name],
         "flows": [[id, pattern i, src i, dst i, class i or -1, rate_gbps, ok 1/0, reason, bottleneck res i
                    or -1, [node i...], paths]],
         "hops": {"u>v": res i or -1}, "res": [[id, tech i, tier i, utilization, load_gbps, capacity_gbps]],
         "node_res": {node i: res i}, "listed": n, "total": n}
    """
    doc = _Doc(topology_doc) if topology_doc else None
    loads = _Loads(result)
    tables = {k: ([], {}) for k in ("nodes", "patterns", "classes", "techs", "tiers")}
    res, res_idx, hops, node_res = [], {}, {}, {}

    def put(table, value):
        items, idx = tables[table]
        if value not in idx:
            idx[value] = len(items)
            items.append(value)
        return idx[value]

    def ridx(r):
        if r["id"] not in res_idx:
            res_idx[r["id"]] = len(res)
            res.append([r["id"], put("techs", r.get("tech")), put("tiers", r.get("tier")), _r(r.get("utilization")),
                        _r(r.get("load_gbps"), 2), _r(r.get("capacity_gbps"), 2)])
        return res_idx[r["id"]]

    by_pair = _links_by_pair(doc, loads)
    flows = []
    for f in result.get("flows") or []:
        path = f.get("path") or []
        ids = [put("nodes", n) for n in path]
        for (u, v), (iu, iv) in zip(zip(path, path[1:]), zip(ids, ids[1:])):
            key = f"{iu}>{iv}"
            if key not in hops:
                r = _hop_resource(u, v, by_pair, loads)
                hops[key] = ridx(r) if r else -1
        for n, i in zip(path, ids):  # a capacity-bearing node on the path (a root complex) is a resource too
            if n in loads.nodes:
                node_res[i] = ridx(loads.nodes[n])
        bott = loads.by_id.get(f.get("bottleneck"))
        flows.append([f.get("id"), put("patterns", f.get("pattern")), put("nodes", f.get("src")),
                      put("nodes", f.get("dst")), put("classes", f["class"]) if f.get("class") else -1,
                      _r(f.get("rate_gbps"), 3), 1 if f.get("status", "ok") == "ok" else 0, f.get("reason"),
                      ridx(bott) if bott else -1, ids, len(f.get("paths") or []) or (1 if path else 0)])
    nodes = tables["nodes"][0]
    kinds = [(doc.kind(n) if doc else "") for n in nodes]
    hosts = [((doc.host_of.get(n) if doc else None) or (n.split("/")[0] if "/" in n else "")) for n in nodes]
    summary = result.get("summary") or {}
    return {"nodes": nodes, "kinds": kinds, "hosts": hosts, **{k: tables[k][0] for k in
                                                               ("patterns", "classes", "techs", "tiers")},
            "flows": flows, "hops": hops, "res": res, "node_res": node_res,
            "listed": len(flows), "total": summary.get("flows_total", len(flows))}


def _links_by_pair(doc: _Doc | None, loads: _Loads) -> dict:
    by_pair = defaultdict(list)
    if doc:
        for link in doc.links:
            by_pair[(link["a"], link["b"])].append((link["id"], "a>b"))
            by_pair[(link["b"], link["a"])].append((link["id"], "b>a"))
    return by_pair


def _hop_resource(u: str, v: str, by_pair: dict, loads: _Loads) -> dict | None:
    """The loaded link direction u→v (the hottest of parallel links); id-pattern guess without a document."""
    cands = by_pair.get((u, v))
    if not cands:
        lu, lv = u.split("/")[-1], v.split("/")[-1]
        cands = [(f"{u}-{v}", "a>b"), (f"{u}-{lv}", "a>b"), (f"{v}-{u}", "b>a"), (f"{v}-{lu}", "b>a")]
    found = [loads.dirs[l][d] for l, d in cands if d in loads.dirs.get(l, {})]
    return max(found, key=lambda r: _num(r.get("utilization"), 0.0)) if found else None


def _default_flow(result: dict) -> str | None:
    """The slowest flow of the slowest pattern (what a user looks at first)."""
    pats = (result.get("summary") or {}).get("patterns") or {}
    ranked = sorted(pats.values(), key=lambda p: -(_num(p.get("completion_s"), -1.0)))
    for p in ranked:
        if p.get("slowest_flow"):
            return p["slowest_flow"]
    flows = result.get("flows") or []
    return flows[0]["id"] if flows else None


def path_hops(index: dict, row: list) -> list[dict]:
    """Hops of one ``path_index`` flow row: link direction, tech, tier, utilization (mirrored in JS)."""
    ids = row[9]
    bott = index["res"][row[8]][0] if row[8] >= 0 else None
    out = []
    for u, v in zip(ids, ids[1:]):
        r = index["hops"].get(f"{u}>{v}", -1)
        rec = index["res"][r] if r >= 0 else None
        out.append({"from": index["nodes"][u], "to": index["nodes"][v], "resource": rec and rec[0],
                    "tech": rec and index["techs"][rec[1]], "tier": rec and index["tiers"][rec[2]],
                    "utilization": rec and rec[3], "load_gbps": rec and rec[4], "capacity_gbps": rec and rec[5],
                    "bottleneck": rec is not None and rec[0] == bott})
    return out


def flow_row_record(index: dict, row: list) -> dict:
    """A ``path_index`` row as a readable dict (id, pattern, src, dst, class, rate, status...)."""
    return {"id": row[0], "pattern": index["patterns"][row[1]], "src": index["nodes"][row[2]],
            "dst": index["nodes"][row[3]], "class": index["classes"][row[4]] if row[4] >= 0 else None,
            "rate_gbps": row[5], "status": "ok" if row[6] else "unroutable", "reason": row[7],
            "bottleneck": index["res"][row[8]][0] if row[8] >= 0 else None, "paths": row[10]}


def path_figure(result: dict, flow_id: str | None = None, *, topology_doc: dict | None = None,
                index: dict | None = None) -> dict:
    """Hops of one flow left to right (host, fabric, host) with per-hop utilization bars.

    Parameters
    ----------
    result : dict
    flow_id : str, optional
        A listed flow id; default the slowest flow of the slowest pattern.
    topology_doc : dict, optional
        Resolves each hop to its link (tech, utilization) and node kinds; without it hops are
        matched on the engine's ``<a>-<b>`` link ids.
    index : dict, optional
        A :func:`path_index` already computed (``figures_for_result`` passes it, to build it once).
    """
    index = index if index is not None else path_index(result, topology_doc)
    flow_id = flow_id or _default_flow(result)
    row = next((f for f in index["flows"] if f[0] == flow_id), None)
    if row is None:
        return empty_figure("path", "Path view", "No flow to show (the result lists no flows)." if not index["flows"]
                            else f"Flow {flow_id} is not among the listed flows.", height=300)
    return _path_fig(index, row)


def _path_title(rec: dict) -> str:
    head = f"{rec['id']} · {rec['src']} → {rec['dst']}"
    if rec["status"] != "ok":
        return f"{head} · UNROUTABLE"
    more = f" · striped over {rec['paths']} paths (first shown)" if rec["paths"] > 1 else ""
    return f"{head} · class <b>{rec['class'] or '—'}</b> · {fmt_gbps(rec['rate_gbps'])}{more}"


def _path_fig(index: dict, row: list) -> dict:
    """Chain of nodes on top, per-hop utilization bars below, bottleneck hop outlined in red."""
    rec = flow_row_record(index, row)
    title = _path_title(rec)
    if rec["status"] != "ok":
        fig = empty_figure("path", title, f"Unroutable: {rec['reason'] or 'no path'}", height=300)
        fig["fabricscope"].update(flow=rec["id"], hops=[], path=[])
        return fig
    hops = path_hops(index, row)
    nodes = [index["nodes"][i] for i in row[9]]
    kinds = [index["kinds"][i] for i in row[9]]
    hosts = [index["hosts"][i] for i in row[9]]
    data, shapes, notes = [], [], []
    for k, h in enumerate(hops):
        u = h["utilization"]
        data.append({"type": "scatter", "mode": "lines", "x": [k, k + 1], "y": [1, 1], "xaxis": "x", "yaxis": "y2",
                     "line": {"color": _util_color(u) if u is not None else IDLE_COLOR,
                              "width": 8 if h["bottleneck"] else 5}, "hoverinfo": "skip", "showlegend": False})
    node_hover = [f"<b>{n}</b><br>{KIND_STYLE.get(k, (0, 0, k or 'node'))[2]}" for n, k in zip(nodes, kinds)]
    for i, ni in enumerate(row[9]):
        r = (index.get("node_res") or {}).get(ni)
        if r is not None:
            nr = index["res"][r]
            node_hover[i] += f"<br>internal {fmt_gbps(nr[4])} / {fmt_gbps(nr[5])} ({_pct(nr[3])})"
    data.append({"type": "scatter", "mode": "markers+text", "x": list(range(len(nodes))), "y": [1] * len(nodes),
                 "xaxis": "x", "yaxis": "y2", "text": [_two_line(n) for n in nodes], "textposition": "top center",
                 "textfont": {"size": 11}, "hovertext": node_hover, "hoverinfo": "text", "showlegend": False,
                 "cliponaxis": False, "name": "nodes",
                 "marker": {"size": 14, "symbol": [KIND_STYLE.get(k, ("circle",))[0] for k in kinds],
                            "color": [KIND_STYLE.get(k, (0, "#7f8a9a"))[1] for k in kinds],
                            "line": {"width": [3 if n == rec["bottleneck"] else 0.5 for n in nodes],
                                     "color": [FAILED_COLOR if n == rec["bottleneck"] else "#333" for n in nodes]}}})
    xs = [k + 0.5 for k in range(len(hops))]
    utils = [h["utilization"] if h["utilization"] is not None else 0 for h in hops]
    bar_hover = [f"<b>{h['from']} → {h['to']}</b><br>{h['resource'] or 'link not found'}<br>tech {h['tech'] or '—'} · "
                 f"{TIER_LABELS.get(h['tier'], h['tier'] or '—')}<br>{fmt_gbps(h['load_gbps'])} / "
                 f"{fmt_gbps(h['capacity_gbps'])} ({_pct(h['utilization'])})"
                 + ("<br><b>bottleneck of this flow</b>" if h["bottleneck"] else "") for h in hops]
    data.append({"type": "bar", "x": xs, "y": utils, "width": 0.55, "name": "hop utilization",
                 "marker": {"color": [_util_color(u) for u in utils],
                            "line": {"width": [3 if h["bottleneck"] else 0 for h in hops], "color": FAILED_COLOR}},
                 "text": [_pct(h["utilization"]) for h in hops], "textposition": "outside", "cliponaxis": False,
                 "hovertext": bar_hover, "hoverinfo": "text", "showlegend": False})
    for k, h in enumerate(hops):
        if h["bottleneck"]:
            notes.append({"x": k + 0.5, "y": 1.0, "yref": "y2", "text": "bottleneck", "showarrow": True,
                          "arrowhead": 2, "ay": 34, "ax": 0, "font": {"color": FAILED_COLOR, "size": 12}})
    shapes += _path_regions(hosts, notes)
    tick = [f"{h['tech'] or '?'}" for h in hops]
    layout = {"xaxis": {"range": [-0.6, len(nodes) - 0.4], "tickvals": xs, "ticktext": tick, "showgrid": False,
                        "zeroline": False, "title": {"text": "hop (link technology)", "standoff": 6}},
              "yaxis": {"domain": [0, 0.5], "range": [0, 1.25], "tickformat": ".0%", "title": {"text": "utilization"},
                        "automargin": True},
              "yaxis2": {"domain": [0.62, 1], "range": [0.5, 1.6], "visible": False},
              "shapes": shapes, "annotations": notes, "bargap": 0.4,
              "margin": {"l": 70, "r": 30, "t": 60, "b": 60}}
    table = {"columns": ["hop", "from", "to", "resource", "tech", "tier", "load_gbps", "capacity_gbps",
                         "utilization", "bottleneck"],
             "rows": [[k + 1, h["from"], h["to"], h["resource"], h["tech"], h["tier"], h["load_gbps"],
                       h["capacity_gbps"], h["utilization"], h["bottleneck"]] for k, h in enumerate(hops)]}
    return _fig("path", title, data, layout, table=table, height=440, flow=rec["id"], hops=hops, path=nodes,
                path_class=rec["class"])


def _two_line(node_id: str) -> str:
    return node_id.replace("/", "/<br>", 1) if "/" in node_id else node_id


def _path_regions(hosts: list[str], notes: list) -> list[dict]:
    """Background bands: the source host, the fabric, the destination host."""
    shapes, start = [], 0
    for k in range(1, len(hosts) + 1):
        if k == len(hosts) or hosts[k] != hosts[start]:
            label = f"host {hosts[start]}" if hosts[start] else "fabric"
            fill = "rgba(118,185,0,0.08)" if hosts[start] else "rgba(93,143,216,0.08)"
            shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": start - 0.45, "x1": k - 1 + 0.45,
                           "y0": 0.56, "y1": 1.0, "fillcolor": fill, "line": {"width": 0}, "layer": "below"})
            notes.append({"x": (start + k - 1) / 2, "y": 0.57, "xref": "x", "yref": "paper", "yanchor": "bottom",
                          "text": label, "showarrow": False, "font": {"size": 11}, "opacity": 0.8})
            start = k
    return shapes


# ================================================================================ tiers and bottlenecks
def _quantiles(values: list[float]) -> dict:
    v = sorted(values)
    n = len(v)

    def q(p):
        pos = p * (n - 1)
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)
    return {"min": v[0], "q1": q(0.25), "median": q(0.5), "q3": q(0.75), "max": v[-1], "mean": sum(v) / n, "n": n}


def _tier_of(r: dict) -> str:
    return r.get("tier") or "other"


def tier_figure(result: dict) -> dict:
    """Utilization of loaded resources by tier: box plots from precomputed quartiles."""
    title = "Utilization by tier (resources carrying traffic)"
    groups = defaultdict(list)
    for r in result.get("resources") or []:
        u = _num(r.get("utilization"))
        if u is not None:
            groups[_tier_of(r)].append(u)
    if not groups:
        return empty_figure("tiers", title, "No resource carries traffic in this result.")
    order = [t for t in TIER_ORDER if t in groups] + sorted(set(groups) - set(TIER_ORDER))
    stats = {t: _quantiles(groups[t]) for t in order}
    labels = [f"{TIER_LABELS.get(t, t)}<br><span style='font-size:10px'>n={stats[t]['n']:,}</span>" for t in order]
    box = {"type": "box", "name": "utilization", "x": labels, "q1": [stats[t]["q1"] for t in order],
           "median": [stats[t]["median"] for t in order], "q3": [stats[t]["q3"] for t in order],
           "lowerfence": [stats[t]["min"] for t in order], "upperfence": [stats[t]["max"] for t in order],
           "mean": [stats[t]["mean"] for t in order], "boxpoints": False, "showlegend": False,
           "marker": {"color": "#5d8fd8"}, "line": {"width": 1.5}, "fillcolor": "rgba(93,143,216,0.35)",
           "hoverinfo": "y"}
    table = {"columns": ["tier", "resources", "min", "q1", "median", "q3", "max", "mean"],
             "rows": [[t, stats[t]["n"]] + [_r(stats[t][k]) for k in ("min", "q1", "median", "q3", "max", "mean")]
                      for t in order]}
    layout = {"yaxis": _axis("utilization", tickformat=".0%", range=[0, 1.05]),
              "xaxis": _axis("tier", tickangle=0, tickfont={"size": 10}), "hovermode": "x"}
    return _fig("tiers", title, [box], layout, table=table, groups=order)


def bottleneck_figure(result: dict, *, limit: int = 15) -> dict:
    """Table of the saturated resources that limit the most (listed) flows."""
    title = "Bottleneck resources"
    summary = result.get("summary") or {}
    ids = list(summary.get("bottlenecks") or [])
    res = {r["id"]: r for r in result.get("resources") or []}
    if not ids:
        return empty_figure("bottlenecks", title, "No saturated resource: every flow runs at its demand.", height=200)
    limited = Counter(f.get("bottleneck") for f in result.get("flows") or [] if f.get("bottleneck"))
    rows = []
    for rid in ids[:limit]:
        r = res.get(rid, {})
        rows.append([rid, f"{TIER_LABELS.get(_tier_of(r), _tier_of(r))} · {r.get('tech') or '—'}",
                     f"{fmt_gbps(r.get('load_gbps'))} / {fmt_gbps(r.get('capacity_gbps'))}", _pct(r.get("utilization")),
                     limited.get(rid, 0)])
    cols = ["resource", "tier · tech", "load / capacity", "util.", "flows limited"]
    cells = [list(c) for c in zip(*rows)]
    trace = {"type": "table", "columnwidth": [3.0, 2.0, 2.0, 0.9, 1.1],
             "header": {"values": [f"<b>{c}</b>" for c in cols], "align": "left", "height": 26,
                        "fill": {"color": "rgba(127,138,154,0.25)"}},
             "cells": {"values": cells, "align": "left", "height": 24, "fill": {"color": "rgba(0,0,0,0)"}}}
    more = f" (top {limit} of {len(ids)})" if len(ids) > limit else ""
    return _fig("bottlenecks", title + more, [trace], {"margin": {"l": 10, "r": 10, "t": 50, "b": 10}},
                table={"columns": cols, "rows": rows}, height=min(90 + 25 * len(rows), 520))


# ================================================================================ patterns
def pattern_figure(result: dict) -> dict:
    """Completion time per pattern (bars), labelled with time and unroutable flows."""
    title = "Completion time per pattern"
    pats = (result.get("summary") or {}).get("patterns") or {}
    if not pats:
        return empty_figure("patterns", title, "The workload has no traffic pattern.")
    ids = list(pats)
    times = [_num(pats[p].get("completion_s")) for p in ids]
    text = [fmt_time(t) + (f" · {pats[p].get('unroutable')} unroutable" if pats[p].get("unroutable") else "")
            for p, t in zip(ids, times)]
    hover = [f"<b>{p}</b> ({pats[p].get('kind', '')})<br>completion {fmt_time(t)}<br>"
             f"throughput {fmt_gbps(pats[p].get('throughput_gbps'))}<br>{pats[p].get('flows', 0):,} flows, "
             f"{pats[p].get('unroutable', 0)} unroutable<br>slowest {pats[p].get('slowest_flow') or '—'}"
             for p, t in zip(ids, times)]
    ms = [t * 1e3 if t is not None else 0 for t in times]
    trace = {"type": "bar", "x": ids, "y": ms, "text": text, "textposition": "outside", "cliponaxis": False,
             "marker": {"color": [PALETTE[i % len(PALETTE)] for i in range(len(ids))]}, "hovertext": hover,
             "hoverinfo": "text", "showlegend": False}
    table = {"columns": ["pattern", "kind", "completion_s", "throughput_gbps", "flows", "unroutable", "slowest_flow"],
             "rows": [[p, pats[p].get("kind"), t, _r(pats[p].get("throughput_gbps"), 3), pats[p].get("flows"),
                       pats[p].get("unroutable"), pats[p].get("slowest_flow")] for p, t in zip(ids, times)]}
    top = max(ms, default=0) or 1
    layout = {"yaxis": _axis("completion time (ms)", range=[0, top * 1.2]), "xaxis": _axis("pattern")}
    return _fig("patterns", title, [trace], layout, table=table)


def rate_figure(result: dict, *, bins: int = 30) -> dict:
    """Flow-rate distribution per pattern: histograms binned here, not one point per flow."""
    title = "Flow rates per pattern"
    flows = [f for f in result.get("flows") or [] if f.get("status", "ok") == "ok" and _num(f.get("rate_gbps")) is not None]
    if not flows:
        return empty_figure("rates", title, "No routed flow is listed in this result.")
    by_pat = defaultdict(list)
    for f in flows:
        by_pat[f.get("pattern")].append(float(f["rate_gbps"]))
    lo = min(min(v) for v in by_pat.values())
    hi = max(max(v) for v in by_pat.values())
    width = (hi - lo) / bins if hi > lo else max(hi * 0.05, 1.0)
    edges = [lo + k * width for k in range(bins + 1)] if hi > lo else [lo - width / 2, lo + width / 2]
    order = [p for p in ((result.get("summary") or {}).get("patterns") or {}) if p in by_pat]
    order += [p for p in by_pat if p not in order]
    data, rows = [], []
    for i, p in enumerate(order):
        counts = [0] * (len(edges) - 1)
        for v in by_pat[p]:
            k = min(int((v - edges[0]) / width), len(counts) - 1)
            counts[max(k, 0)] += 1
        mids = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
        keep = [k for k, c in enumerate(counts) if c]
        data.append({"type": "bar", "name": p, "x": [round(mids[k], 3) for k in keep], "y": [counts[k] for k in keep],
                     "width": width * 0.9, "opacity": 0.75, "marker": {"color": PALETTE[i % len(PALETTE)]},
                     "hovertemplate": f"<b>{p}</b><br>%{{x:.4g}} Gb/s ± {width / 2:.3g}<br>%{{y}} flows<extra></extra>"})
        rows += [[p, _r(edges[k], 3), _r(edges[k + 1], 3), counts[k]] for k in keep]
    summary = result.get("summary") or {}
    note = ""
    if summary.get("flows_omitted"):
        note = f" · {summary.get('flows_listed', len(flows)):,} listed of {summary.get('flows_total'):,} flows"
    counts = [c for t in data for c in t["y"]]
    # One pattern's 8,192 flows must not hide another's 8: switch to a log scale when counts differ a lot.
    log = bool(counts) and max(counts) > 50 * min(counts)
    layout = {"barmode": "overlay", "xaxis": _axis("flow rate (Gb/s)"),
              "yaxis": _axis("flows (log scale)" if log else "flows", type="log" if log else "linear"),
              "legend": {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"}}
    return _fig("rates", title + note, data, layout,
                table={"columns": ["pattern", "rate_from_gbps", "rate_to_gbps", "flows"], "rows": rows})


def timeline_figure(result: dict) -> dict | None:
    """Timeline mode: max utilization per tier over time (steps), data delivered, pattern finishes."""
    summary = result.get("summary") or {}
    tl = summary.get("timeline")
    if not tl or not tl.get("t_s"):
        return None
    title = "Timeline · utilization and delivered data"
    t_ms = [t * 1e3 for t in tl["t_s"]]
    data, rows = [], []
    for i, (tier, series) in enumerate((tl.get("tiers") or {}).items()):
        data.append({"type": "scatter", "mode": "lines", "line": {"shape": "hv", "width": 2,
                                                                  "color": PALETTE[i % len(PALETTE)]},
                     "x": t_ms, "y": series.get("max"), "name": f"{TIER_LABELS.get(tier, tier)} max",
                     "xaxis": "x", "yaxis": "y2",
                     "hovertemplate": f"{TIER_LABELS.get(tier, tier)}<br>%{{x:.4g}} ms: max %{{y:.0%}}<extra></extra>"})
        rows += [[tier, _r(t, 9), _r(m), _r(a)] for t, m, a in zip(tl["t_s"], series.get("max") or [], series.get("mean") or [])]
    data += _delivered_traces(result)
    shapes, notes = [], []
    pats = summary.get("patterns") or {}
    for i, (p, s) in enumerate(pats.items()):
        t = _num(s.get("completion_s"))
        if t is None:
            continue
        shapes.append({"type": "line", "x0": t * 1e3, "x1": t * 1e3, "yref": "paper", "y0": 0, "y1": 1,
                       "line": {"dash": "dot", "width": 1.5, "color": PALETTE[i % len(PALETTE)]}})
        notes.append({"x": t * 1e3, "y": 1.0, "yref": "paper", "yanchor": "bottom", "showarrow": False,
                      "text": f"{p} done", "font": {"size": 10}, "textangle": -30 if len(pats) > 3 else 0})
    if tl.get("truncated"):
        notes.append({"xref": "paper", "yref": "paper", "x": 1, "y": 1.08, "showarrow": False,
                      "text": "truncated after max events", "font": {"color": FAILED_COLOR}})
    layout = {"xaxis": _axis("time (ms)"), "yaxis2": {"domain": [0.52, 1], "tickformat": ".0%", "range": [0, 1.1],
                                                     "title": {"text": "max utilization"}, "automargin": True},
              "yaxis": {"domain": [0, 0.42], "title": {"text": "delivered (GB)"}, "automargin": True},
              "shapes": shapes, "annotations": notes, "hovermode": "x unified",
              "margin": {"l": 70, "r": 30, "t": 80, "b": 60}}
    return _fig("timeline", title, data, layout, height=520,
                table={"columns": ["tier", "t_s", "max_utilization", "mean_utilization"], "rows": rows})


def _delivered_traces(result: dict) -> list[dict]:
    """Cumulative bytes of finished (listed) flows per pattern: what the data supports honestly."""
    done = defaultdict(list)
    for f in result.get("flows") or []:
        t = _num(f.get("completion_s"))
        if t is not None:
            done[f.get("pattern")].append((t, float(f.get("bytes") or 0)))
    out = []
    for i, (p, items) in enumerate(done.items()):
        items.sort()
        xs, ys, acc = [0.0], [0.0], 0.0
        for t, b in items:
            acc += b
            if xs[-1] == t * 1e3:
                ys[-1] = acc / 1e9
            else:
                xs.append(t * 1e3)
                ys.append(acc / 1e9)
        out.append({"type": "scatter", "mode": "lines", "line": {"shape": "hv", "width": 2, "dash": "dash",
                                                                 "color": PALETTE[(i + 5) % len(PALETTE)]},
                    "x": xs, "y": ys, "name": f"{p} delivered", "xaxis": "x", "yaxis": "y",
                    "hovertemplate": f"{p}: %{{y:.3g}} GB by %{{x:.4g}} ms<extra></extra>"})
    return out


# ================================================================================ latency
def latency_figure(result: dict) -> dict | None:
    """Latency per flow and initiator, stacked by component (µs)."""
    entries = [e for e in result.get("latency") or [] if e.get("initiators")]
    if not result.get("latency"):
        return None
    title = "Latency breakdown · CPU proxy vs GPU-initiated"
    if not entries:
        return empty_figure("latency", title, "No latency could be computed (flows unknown or unroutable).")
    cats_flow, cats_init, comps, rows = [], [], defaultdict(list), []
    steps = []
    for e in entries:
        for step in (s for init in e["initiators"].values() for s in (init.get("control") or {})):
            if step not in steps:
                steps.append(step)
    for e in entries:
        for name, lat in e["initiators"].items():
            cats_flow.append(f"{e['flow']} ({e.get('class') or '—'})")
            cats_init.append(name.replace("_", " "))
            ctrl = lat.get("control") or {}
            for s in steps:
                comps[s].append(ctrl.get(s, 0.0) / 1e3)
            for key, _ in _DATA_COMPONENTS:
                comps[key].append(_num(lat.get(key), 0.0) / 1e3)
            rows.append([e["flow"], name, *[ctrl.get(s, 0.0) for s in steps],
                         *[lat.get(k) for k, _ in _DATA_COMPONENTS], lat.get("total_ns")])
    data = []
    colors = ["#9aa0a8", "#b07aa1", "#e69f00", "#d7263d", "#8c6d31", "#6b6ecf"]
    for i, s in enumerate(steps):
        data.append({"type": "bar", "name": f"control: {_CONTROL_LABELS.get(s, s)}", "x": [cats_flow, cats_init],
                     "y": comps[s], "marker": {"color": colors[i % len(colors)]},
                     "hovertemplate": f"{_CONTROL_LABELS.get(s, s)}: %{{y:.3g}} µs<extra></extra>"})
    for (key, label), color in zip(_DATA_COMPONENTS, ("#4C78A8", "#72B7B2", "#54A24B")):
        data.append({"type": "bar", "name": label, "x": [cats_flow, cats_init], "y": comps[key],
                     "marker": {"color": color}, "hovertemplate": f"{label}: %{{y:.3g}} µs<extra></extra>"})
    totals = [sum(c[i] for c in comps.values()) for i in range(len(cats_flow))]
    data.append({"type": "scatter", "mode": "text", "x": [cats_flow, cats_init], "y": totals,
                 "text": [f"{t:.2f} µs" for t in totals], "textposition": "top center", "showlegend": False,
                 "hoverinfo": "skip", "cliponaxis": False})
    msg = entries[0]["initiators"][next(iter(entries[0]["initiators"]))].get("message_bytes")
    layout = {"barmode": "stack", "yaxis": _axis("latency (µs)", range=[0, max(totals, default=1) * 1.15]),
              "xaxis": {"automargin": True, "tickfont": {"size": 11}},
              "legend": {"orientation": "h", "y": -0.3, "x": 0, "yanchor": "top"},
              "margin": {"l": 70, "r": 30, "t": 56, "b": 40}}
    cols = ["flow", "initiator", *[f"control_{s}_ns" for s in steps], *[k for k, _ in _DATA_COMPONENTS], "total_ns"]
    sub = f" · {int(msg):,} B message" if msg else ""
    return _fig("latency", title + sub, data, layout, height=520, table={"columns": cols, "rows": rows})


# ================================================================================ what-if
def _diff_summary(diff: dict) -> dict:
    """The diff's summary (a full ``result.diff`` nests it; a sweep entry's ``diff_summary`` is it)."""
    return diff.get("summary") if isinstance(diff.get("summary"), dict) else diff


def _diff_patterns(diff: dict) -> dict:
    """``{pattern: (before_s, after_s, complete)}`` from a diff or a diff summary."""
    out = {}
    for p, v in (_diff_summary(diff).get("patterns") or {}).items():
        c = v.get("completion_s") if isinstance(v, dict) else None
        if isinstance(c, dict):
            out[p] = (_num(c.get("before")), _num(c.get("after")), v.get("complete", True), v.get("disconnected", 0))
    return out


def whatif_figures(diff: dict | None, *, label: str = "") -> dict[str, dict]:
    """Completion before/after per pattern, and the table of what changed.

    Parameters
    ----------
    diff : dict or None
        ``result["diff"]`` of :func:`designer.engine.whatif.simulate_with_diff`, or a sweep entry's
        ``diff_summary`` (counts only: the table then lists the counts and top new bottlenecks).
    label : str
        Appended to titles (the failure's label on a sweep page).
    """
    if not diff:
        return {}
    suffix = f" · {label}" if label else ""
    pats = _diff_patterns(diff)
    title = "Completion time before → after" + suffix
    if pats:
        ids = list(pats)
        before = [pats[p][0] * 1e3 if pats[p][0] is not None else None for p in ids]
        after = [pats[p][1] * 1e3 if pats[p][1] is not None else None for p in ids]
        change = []
        for p, b_, a_ in zip(ids, before, after):
            txt = f"{(a_ / b_ - 1):+.0%}" if a_ is not None and b_ else ("no flow left" if a_ is None else "—")
            if not pats[p][2]:
                # The bar is the surviving flows' time; the pattern itself cannot finish.
                lost = pats[p][3]
                txt = f"does not complete · {lost:,} flow{'s' if lost != 1 else ''} lost"
            change.append(txt)
        data = [{"type": "bar", "name": "baseline", "x": ids, "y": before, "marker": {"color": "#9aa0a8"},
                 "hovertemplate": "%{x} baseline: %{y:.4g} ms<extra></extra>"},
                {"type": "bar", "name": "with failures", "x": ids, "y": after, "marker": {"color": "#d7263d"},
                 "text": change, "textposition": "outside", "cliponaxis": False,
                 "hovertemplate": "%{x} with failures: %{y:.4g} ms<extra></extra>"}]
        top = max([v for v in before + after if v is not None], default=1) or 1
        layout = {"barmode": "group", "yaxis": _axis("completion time (ms)", range=[0, top * 1.25]),
                  # Legend under the axis: above the plot it collided with long titles.
                  "xaxis": _axis("pattern"), "legend": {"orientation": "h", "y": -0.28, "x": 0.5,
                                                         "xanchor": "center", "yanchor": "top"}}
        figs = {"whatif_completion": _fig("whatif_completion", title, data, layout, table={
            "columns": ["pattern", "before_s", "after_s", "complete", "flows_lost"],
            "rows": [[p, *pats[p]] for p in ids]})}
    else:
        figs = {"whatif_completion": empty_figure("whatif_completion", title, "No pattern to compare.")}
    figs["whatif_changes"] = _changes_table(diff, suffix)
    return figs


def _changes_rows(diff: dict) -> list[list]:
    rows = []
    for d in diff.get("disconnected") or []:
        rows.append(["disconnected", d.get("flow"), f"{d.get('src')} → {d.get('dst')}: {d.get('reason') or 'no path left'}"])
    for d in diff.get("rerouted") or []:
        text = d.get("change") or f"{d.get('old_class')} → {d.get('new_class')}"
        rate = d.get("rate_gbps") or {}
        if rate.get("before") is not None and rate.get("after") is not None:
            text += f" · {fmt_gbps(rate['before'])} → {fmt_gbps(rate['after'])}"
        rows.append(["rerouted", d.get("flow"), text])
    for b in diff.get("new_bottlenecks") or []:
        if isinstance(b, dict):
            rows.append(["new bottleneck", b.get("id"), f"{TIER_LABELS.get(b.get('tier'), b.get('tier') or '')}, "
                                                        f"limits {b.get('flows', 0):,} flows, {_pct(b.get('utilization'))}"])
        else:
            rows.append(["new bottleneck", str(b), ""])
    for u in diff.get("utilization_shifts") or []:
        rows.append(["utilization shift", u.get("id"), f"{_pct(u.get('before'))} → {_pct(u.get('after'))}"])
    return rows


def _changes_table(diff: dict, suffix: str = "") -> dict:
    s = _diff_summary(diff)
    title = "What changed" + suffix
    if s is diff:  # a sweep entry's summary: counts and the top new bottlenecks only
        rows = [[k, f"{s.get(key, 0):,} flows", ""] for k, key in (("disconnected", "disconnected"),
                ("rerouted", "rerouted"), ("slower", "slower_flows"), ("faster", "faster_flows")) if s.get(key)]
        rows += [["new bottleneck", r, ""] for r in s.get("new_bottlenecks") or []]
    else:
        rows = _changes_rows(diff)
    if not rows:
        return empty_figure("whatif_changes", title, "No flow was disconnected, rerouted or slowed, and no new "
                                                     "bottleneck.", height=200)
    mx = s.get("max_utilization") or {}
    counts = (f"{s.get('disconnected', 0):,} disconnected, {s.get('rerouted', 0):,} rerouted, "
              f"{s.get('new_bottleneck_count', len(s.get('new_bottlenecks') or [])):,} new bottlenecks")
    if isinstance(mx, dict) and mx.get("before") is not None:
        counts += f", max utilization {_pct(mx.get('before'))} → {_pct(mx.get('after'))}"
    truncated = diff.get("truncated") or {}
    more = "".join(f" (+{n:,} more {k})" for k, n in truncated.items() if n)
    shown = rows[:200]
    fills = {"disconnected": "rgba(215,38,61,0.18)", "rerouted": "rgba(230,159,0,0.16)",
             "new bottleneck": "rgba(93,143,216,0.16)"}
    trace = {"type": "table", "columnwidth": [1.1, 1.5, 4.2],
             "header": {"values": ["<b>change</b>", "<b>flow / resource</b>", "<b>detail</b>"], "align": "left",
                        "fill": {"color": "rgba(127,138,154,0.25)"}, "height": 26},
             "cells": {"values": [list(c) for c in zip(*shown)], "align": "left", "height": 24,
                       "fill": {"color": [[fills.get(r[0], "rgba(0,0,0,0)") for r in shown]]}}}
    return _fig("whatif_changes", f"{title}<br><span style='font-size:12px'>{counts}{more}</span>", [trace],
                {"margin": {"l": 10, "r": 10, "t": 64, "b": 10}},
                table={"columns": ["change", "id", "detail"], "rows": rows}, height=min(110 + 25 * len(shown), 560))


# ================================================================================ sweep / policies
def _failure_label(entry: dict) -> str:
    if entry.get("label"):
        return str(entry["label"])
    f = entry.get("failure") or {}
    label = str(f.get("target", "?"))
    return label + (f" ×{f.get('factor')}" if f.get("mode") == "degrade" else " down")


def ranking_figure(sweep: dict, *, top: int = 40) -> dict:
    """Failures ranked by impact, most harmful on top; a bar click opens ``?failure=<position>``.

    Three panels share the failure axis, in the ranking's own order of keys: disconnected flows,
    job completion increase (ms; "never completes" drawn at the panel's end) and throughput lost.
    """
    ranking = sweep.get("ranking") or []
    title = "Failure sweep · most harmful first"
    if not ranking:
        return empty_figure("ranking", title, "The sweep evaluated no failure.")
    shown = ranking[:top]
    imps = [e.get("impact") or {} for e in shown]
    labels = [f"{i + 1}. {_failure_label(e)}" for i, e in enumerate(shown)]
    lost = [int(m.get("disconnected_flows") or 0) for m in imps]
    inc = [_num(m.get("completion_increase_s")) for m in imps]
    finite = [v * 1e3 for v in inc if v is not None]
    end = max(finite + [0.0]) * 1.15 or 1.0
    inc_ms = [end if m.get("completion_unbounded") else (v or 0.0) * 1e3 for m, v in zip(imps, inc)]
    thr = [_num(m.get("throughput_lost_gbps"), 0.0) for m in imps]
    hover = []
    for e, m in zip(shown, imps):
        job = m.get("job_completion_s") or {}
        slow = _num(m.get("slowdown"), 1.0)
        hover.append(f"<b>{_failure_label(e)}</b><br>disconnected flows {int(m.get('disconnected_flows') or 0):,}<br>"
                     f"job completion {fmt_time(job.get('before'))} → {fmt_time(job.get('after'))}<br>"
                     f"slowdown ×{slow:.3g}{' (' + str(m.get('worst_pattern')) + ')' if m.get('worst_pattern') else ''}"
                     f"<br>throughput lost {fmt_gbps(m.get('throughput_lost_gbps'))}<br><i>click for what changed</i>")
    panels = [("x", lost, [f"{v:,}" if v else "" for v in lost], FAILED_COLOR),
              ("x2", inc_ms, ["never completes" if m.get("completion_unbounded") else (f"{v:+.3g} ms" if v else "")
                              for m, v in zip(imps, inc_ms)], "#f0822e"),
              ("x3", thr, [fmt_gbps(v) if v else "" for v in thr], "#5d8fd8")]
    data = [{"type": "bar", "orientation": "h", "y": labels, "x": xs, "xaxis": ax, "yaxis": "y", "text": text,
             "textposition": "outside", "cliponaxis": False, "customdata": list(range(len(shown))),
             "marker": {"color": color}, "hovertext": hover, "hoverinfo": "text", "showlegend": False,
             "textfont": {"size": 10}} for ax, xs, text, color in panels]
    base = sweep.get("baseline") or {}
    sub = (f"{sweep.get('evaluated', len(ranking)):,} failures of {', '.join(sweep.get('over') or []) or 'the given list'}"
           f" · baseline job {fmt_time(base.get('job_completion_s'))} · click a bar for what changed")
    more = f" (top {top} of {len(ranking)})" if len(ranking) > top else ""
    def axis(domain, text, top_value):
        return {"domain": domain, "title": {"text": text, "font": {"size": 12}}, "rangemode": "tozero",
                "range": [min(0.0, min(top_value, default=0.0)) * 1.1, (max(top_value, default=0.0) or 1.0) * 1.3]}
    layout = {"yaxis": {"autorange": "reversed", "automargin": True, "tickfont": {"size": 11}},
              "xaxis": axis([0, 0.28], "disconnected flows", lost),
              "xaxis2": {**axis([0.36, 0.64], "job completion increase (ms)", inc_ms), "anchor": "y"},
              "xaxis3": {**axis([0.72, 1], "throughput lost (Gb/s)", thr), "anchor": "y"},
              "title": {"text": f"{title}{more}<br><span style='font-size:12px'>{sub}</span>"},
              "margin": {"l": 40, "r": 40, "t": 80, "b": 60}, "bargap": 0.25}
    rows = []
    for i, e in enumerate(ranking):
        m = e.get("impact") or {}
        job = m.get("job_completion_s") or {}
        rows.append([i + 1, _failure_label(e), (e.get("failure") or {}).get("target"), m.get("disconnected_flows"),
                     job.get("before"), job.get("after"), m.get("completion_increase_s"), m.get("completion_unbounded"),
                     m.get("throughput_lost_gbps"), m.get("slowdown"), m.get("worst_pattern")])
    cols = ["rank", "failure", "target", "disconnected_flows", "job_before_s", "job_after_s", "completion_increase_s",
            "completion_unbounded", "throughput_lost_gbps", "slowdown", "worst_pattern"]
    return _fig("ranking", title, data, layout, height=max(320, 130 + 24 * len(shown)),
                table={"columns": cols, "rows": rows}, link="?failure={index}")


def _policy_results(comparison: dict) -> dict[str, dict]:
    """``{policy: {"baseline": patterns, "with_failures": patterns or None}}`` of a ``fabricscope.compare/1``."""
    out = {}
    for policy, v in (comparison.get("policies") or {}).items():
        if isinstance(v, dict) and isinstance(v.get("baseline"), dict):
            out[policy] = {"baseline": v["baseline"].get("patterns") or {},
                           "with_failures": (v.get("with_failures") or {}).get("patterns")}
    return out


def policy_figure(comparison: dict) -> dict:
    """Completion per pattern under each NIC policy, grouped bars (baseline and with failures)."""
    results = _policy_results(comparison)
    title = "NIC policy comparison · completion per pattern"
    if not results:
        return empty_figure("policies", title, "No policy result to compare.")
    cases = ["baseline"] + (["with_failures"] if any(r["with_failures"] for r in results.values()) else [])
    patterns = []
    for r in results.values():
        patterns += [p for p in r["baseline"] if p not in patterns]
    xs = [[c.replace("_", " ") for c in cases for _ in patterns], [p for _ in cases for p in patterns]]
    data, rows, tops = [], [], [0.0]
    for i, (policy, r) in enumerate(results.items()):
        ys, text = [], []
        for c in cases:
            for p in patterns:
                t = _num(((r[c] or {}).get(p) or {}).get("completion_s"))
                lost = ((r[c] or {}).get(p) or {}).get("unroutable") or 0
                ys.append(t * 1e3 if t is not None else None)
                text.append(fmt_time(t) + (f" ({lost:,} lost)" if lost else ""))
                rows.append([policy, c, p, t, lost])
        tops += [y for y in ys if y is not None]
        data.append({"type": "bar", "name": policy, "x": xs, "y": ys, "text": text, "textposition": "outside",
                     "cliponaxis": False, "marker": {"color": PALETTE[i % len(PALETTE)]}, "textfont": {"size": 10},
                     "hovertemplate": f"<b>{policy}</b> · %{{x}}<br>%{{y:.4g}} ms<extra></extra>"})
    best = comparison.get("best") or {}
    sub = " · ".join(f"best {k.replace('_', ' ')}: {v}" for k, v in best.items() if v)
    layout = {"barmode": "group", "yaxis": _axis("completion time (ms)", range=[0, max(tops) * 1.22 or 1]),
              "xaxis": {"automargin": True},
              "title": {"text": f"{title}<br><span style='font-size:12px'>{sub}</span>" if sub else title},
              "legend": {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
              "margin": {"l": 70, "r": 30, "t": 80, "b": 60}}
    return _fig("policies", title, data, layout, height=460, headline=comparison.get("headline"),
                table={"columns": ["policy", "case", "pattern", "completion_s", "unroutable"], "rows": rows})


# ================================================================================ entry points
def figures_for_result(result: dict, *, topology_doc: dict | None = None) -> dict[str, dict]:
    """Every view of one ``fabricscope.result/1`` (see the module docstring for the keys).

    Parameters
    ----------
    result : dict
    topology_doc : dict, optional
        The ``fabricscope.topology/1`` document simulated (the topology view needs it).

    Returns
    -------
    dict of str to dict
        Figure dicts in display order.
    """
    result = result or {}
    figs = {"topology": topology_figure(result, topology_doc)}
    if topology_doc and not figs["topology"]["fabricscope"].get("collapsed") and not figs["topology"]["fabricscope"].get("empty"):
        figs["topology_collapsed"] = topology_figure(result, topology_doc, collapsed=True)
    index = path_index(result, topology_doc)
    figs["path"] = path_figure(result, topology_doc=topology_doc, index=index)
    figs["path"]["fabricscope"]["path_index"] = index
    figs["patterns"] = pattern_figure(result)
    figs["rates"] = rate_figure(result)
    figs["tiers"] = tier_figure(result)
    figs["bottlenecks"] = bottleneck_figure(result)
    for key, fig in (("timeline", timeline_figure(result)), ("latency", latency_figure(result))):
        if fig is not None:
            figs[key] = fig
    labels = ", ".join(f.get("label") or str(f.get("target")) for f in (result.get("diff") or {}).get("failures") or [])
    figs.update(whatif_figures(result.get("diff"), label=labels))
    return figs


def figures_for_policies(comparison: dict) -> dict[str, dict]:
    """Figures of a NIC-policy comparison (affinity vs pxn vs any)."""
    return {"policies": policy_figure(comparison)}


def figures_for_sweep(sweep: dict, *, selected: int | None = None) -> dict[str, dict]:
    """Figures of a ``fabricscope.sweep/1`` or a ``fabricscope.compare/1`` (policy comparison).

    Parameters
    ----------
    sweep : dict
    selected : int, optional
        Position in ``ranking`` to detail (the page's ``?failure=<position>``): its
        ``diff_summary`` becomes ``whatif_completion`` / ``whatif_changes``.
    """
    sweep = sweep or {}
    figs = {}
    if "ranking" in sweep:
        figs["ranking"] = ranking_figure(sweep)
    if _policy_results(sweep):
        figs["policies"] = policy_figure(sweep)
    if not figs:
        figs["ranking"] = ranking_figure(sweep)
    ranking = sweep.get("ranking") or []
    if selected is not None and 0 <= selected < len(ranking):
        entry = ranking[selected]
        diff = entry.get("diff") or entry.get("diff_summary")
        for key, fig in whatif_figures(diff, label=_failure_label(entry)).items():
            fig["fabricscope"]["failure"] = entry.get("failure")
            figs[key] = fig
    return figs


def figures_for_compare(a: dict, b: dict) -> dict[str, dict]:
    """Two results side by side: completion per pattern, max utilization per tier, bottlenecks.

    Differences are B relative to A (``+25%`` = B is slower / hotter).
    """
    return {"compare_completion": _compare_completion(a or {}, b or {}),
            "compare_utilization": _compare_utilization(a or {}, b or {}),
            "compare_bottlenecks": _compare_bottlenecks(a or {}, b or {})}


def _compare_completion(a: dict, b: dict) -> dict:
    pa = (a.get("summary") or {}).get("patterns") or {}
    pb = (b.get("summary") or {}).get("patterns") or {}
    ids = list(pa) + [p for p in pb if p not in pa]
    title = "Completion per pattern · A vs B"
    if not ids:
        return empty_figure("compare_completion", title, "Neither result has a traffic pattern.")
    ta = [_num((pa.get(p) or {}).get("completion_s")) for p in ids]
    tb = [_num((pb.get(p) or {}).get("completion_s")) for p in ids]
    delta = [_delta_text(x, y) for x, y in zip(ta, tb)]
    ms = lambda v: [x * 1e3 if x is not None else None for x in v]  # noqa: E731
    data = [{"type": "bar", "name": "A", "x": ids, "y": ms(ta), "marker": {"color": "#4C78A8"},
             "hovertemplate": "A · %{x}: %{y:.4g} ms<extra></extra>"},
            {"type": "bar", "name": "B", "x": ids, "y": ms(tb), "text": delta, "textposition": "outside",
             "cliponaxis": False, "marker": {"color": ["#d7263d" if (x and y and y > x * 1.001) else
                                                       "#54A24B" if (x and y and y < x * 0.999) else "#F58518"
                                                       for x, y in zip(ta, tb)]},
             "hovertemplate": "B · %{x}: %{y:.4g} ms<extra></extra>"}]
    top = max([v for v in ms(ta) + ms(tb) if v is not None], default=1) or 1
    layout = {"barmode": "group", "yaxis": _axis("completion time (ms)", range=[0, top * 1.22]),
              "xaxis": _axis("pattern"), "legend": {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right",
                                                     "yanchor": "bottom"}}
    return _fig("compare_completion", title, data, layout, table={
        "columns": ["pattern", "a_completion_s", "b_completion_s", "change"],
        "rows": [[p, x, y, d] for p, x, y, d in zip(ids, ta, tb, delta)]})


def _delta_text(x, y) -> str:
    if x is None and y is None:
        return "—"
    if x is None or y is None:
        return "only in " + ("B" if x is None else "A") if (x is None) != (y is None) else "—"
    if x == 0:
        return "±0" if y == 0 else "new"
    return f"{y / x - 1:+.1%}"


def _compare_utilization(a: dict, b: dict) -> dict:
    ua = (a.get("summary") or {}).get("utilization_by_tier") or _tier_max(a)
    ub = (b.get("summary") or {}).get("utilization_by_tier") or _tier_max(b)
    tiers = [t for t in TIER_ORDER if t in ua or t in ub] + sorted((set(ua) | set(ub)) - set(TIER_ORDER))
    title = "Max utilization per tier · A vs B"
    if not tiers:
        return empty_figure("compare_utilization", title, "No resource carries traffic in either result.")
    va = [_num((ua.get(t) or {}).get("max")) for t in tiers]
    vb = [_num((ub.get(t) or {}).get("max")) for t in tiers]
    labels = [TIER_LABELS.get(t, t) for t in tiers]
    delta = [("new" if x is None else "gone" if y is None else f"{y - x:+.0%}") if (x is not None or y is not None)
             else "—" for x, y in zip(va, vb)]
    data = [{"type": "bar", "name": "A", "x": labels, "y": va, "marker": {"color": "#4C78A8"},
             "hovertemplate": "A · %{x}: %{y:.1%}<extra></extra>"},
            {"type": "bar", "name": "B", "x": labels, "y": vb, "marker": {"color": "#F58518"}, "text": delta,
             "textposition": "outside", "cliponaxis": False, "hovertemplate": "B · %{x}: %{y:.1%}<extra></extra>"}]
    layout = {"barmode": "group", "yaxis": _axis("max utilization", tickformat=".0%", range=[0, 1.25]),
              "xaxis": _axis("tier"), "legend": {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right",
                                                  "yanchor": "bottom"}}
    return _fig("compare_utilization", title, data, layout, table={
        "columns": ["tier", "a_max_utilization", "b_max_utilization", "change_points"],
        "rows": [[t, x, y, d] for t, x, y, d in zip(tiers, va, vb, delta)]})


def _tier_max(result: dict) -> dict:
    out = {}
    for r in result.get("resources") or []:
        u = _num(r.get("utilization"))
        if u is not None:
            t = _tier_of(r)
            out[t] = {"max": max(u, (out.get(t) or {}).get("max", 0.0))}
    return out


def _compare_bottlenecks(a: dict, b: dict) -> dict:
    ba = list((a.get("summary") or {}).get("bottlenecks") or [])
    bb = list((b.get("summary") or {}).get("bottlenecks") or [])
    sa, sb = set(ba), set(bb)
    rows = [["only in B (new)", r] for r in bb if r not in sa] + [["only in A (gone)", r] for r in ba if r not in sb]
    rows += [["both", r] for r in ba if r in sb]
    title = "Bottleneck changes · A → B"
    if not rows:
        return empty_figure("compare_bottlenecks", title, "Neither result has a saturated resource.", height=200)
    fills = [{"only in B (new)": "rgba(215,38,61,0.18)", "only in A (gone)": "rgba(84,162,75,0.18)"}.get(r[0],
                                                                                                     "rgba(0,0,0,0)")
             for r in rows]
    trace = {"type": "table", "columnwidth": [1, 3],
             "header": {"values": ["<b>change</b>", "<b>resource</b>"], "align": "left",
                        "fill": {"color": "rgba(127,138,154,0.25)"}},
             "cells": {"values": [list(c) for c in zip(*rows)], "align": "left", "height": 24, "fill": {"color": [fills]}}}
    counts = Counter(r[0] for r in rows)
    summary = ", ".join(f"{n} {k.split(' (')[0]}" for k, n in counts.items())
    return _fig("compare_bottlenecks", f"{title} ({summary})", [trace], {"margin": {"l": 10, "r": 10, "t": 50, "b": 10}},
                table={"columns": ["change", "resource"], "rows": rows}, height=min(100 + 25 * len(rows), 560))


# ================================================================================ page contexts
def _topology_of(job) -> dict | None:
    revision = getattr(job, "revision", None)
    doc = getattr(revision, "document", None)
    return doc if isinstance(doc, dict) else None


def _headline(result: dict) -> dict:
    """Numbers the page prints above the figures (slowest pattern, max utilization, flows)."""
    summary = result.get("summary") or {}
    pats = summary.get("patterns") or {}
    slowest = max(pats.items(), key=lambda kv: _num(kv[1].get("completion_s"), -1.0), default=(None, {}))
    return {"slowest_pattern": slowest[0], "slowest_completion": fmt_time(slowest[1].get("completion_s")),
            "max_utilization": _pct(summary.get("max_utilization")),
            "top_bottleneck": (summary.get("bottlenecks") or [None])[0],
            "flows_total": summary.get("flows_total", len(result.get("flows") or [])),
            "flows_listed": summary.get("flows_listed", len(result.get("flows") or [])),
            "unroutable": sum(int(p.get("unroutable") or 0) for p in pats.values()),
            "classes": summary.get("classes") or {}, "note": summary.get("note"),
            "failures": (result.get("scenario") or {}).get("failures") or [],
            "routing": (result.get("scenario") or {}).get("routing") or {},
            "mode": (result.get("scenario") or {}).get("mode")}


def result_context(*, job=None, result: dict, topology_doc: dict | None = None,
                   selected: int | None = None) -> dict:
    """Template context of ``designer/result.html`` for any job kind.

    Parameters
    ----------
    job : SimulationJob, optional
        Its revision's document is the topology when ``topology_doc`` is not given.
    result : dict
        ``fabricscope.result/1``, ``fabricscope.sweep/1`` or a policy comparison.
    selected : int, optional
        Sweep ranking entry to detail (the page's ``?failure=<index>``).

    Returns
    -------
    dict
        ``figures`` (key → figure dict, for ``json_script``), ``view`` (``"result"``, ``"sweep"``
        or ``"policies"``), ``headline`` (numbers printed as text), ``result_data``,
        ``failure_index``, ``has_topology``.
    """
    result = result or {}
    doc = topology_doc if topology_doc is not None else _topology_of(job)
    fmt = str(result.get("format") or "")
    if fmt.startswith(("fabricscope.sweep", "fabricscope.compare")) or "ranking" in result:
        view = "policies" if fmt.startswith("fabricscope.compare") else "sweep"
        figs = figures_for_sweep(result, selected=selected)
        headline = {"text": result.get("headline"), "baseline": result.get("baseline") or {},
                    "evaluated": result.get("evaluated"), "over": result.get("over") or []}
    else:
        view = "result"
        figs = figures_for_result(result, topology_doc=doc)
        headline = _headline(result)
    return {"figures": figs, "view": view, "headline": headline, "result_data": result,
            "failure_index": selected, "has_topology": bool(doc)}


def compare_context(*, a: dict, b: dict) -> dict:
    """Template context of ``designer/compare.html``: ``figures``, ``headline_a``, ``headline_b``,
    ``rows`` (per pattern A, B and change, printed as a table)."""
    a, b = a or {}, b or {}
    pa = (a.get("summary") or {}).get("patterns") or {}
    pb = (b.get("summary") or {}).get("patterns") or {}
    rows = []
    for p in list(pa) + [p for p in pb if p not in pa]:
        x, y = _num((pa.get(p) or {}).get("completion_s")), _num((pb.get(p) or {}).get("completion_s"))
        rows.append({"pattern": p, "a": fmt_time(x), "b": fmt_time(y), "change": _delta_text(x, y),
                     "worse": x is not None and y is not None and y > x * 1.001,
                     "better": x is not None and y is not None and y < x * 0.999})
    return {"figures": figures_for_compare(a, b), "headline_a": _headline(a), "headline_b": _headline(b),
            "rows": rows}
