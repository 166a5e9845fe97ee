"""Path view: the hops of one flow, host → fabric → host, with per-hop utilization.

:func:`path_index` is the compact data of every listed flow (the browser's flow picker searches
it); :func:`path_figure_from_index` draws one of them, which is also how the server answers the
browser when the user picks another flow.
"""
from __future__ import annotations

from collections import defaultdict

from designer.figures.base import empty_figure, figure
from designer.figures.model import Doc, Loads
from designer.figures.style import (
    FAILED_COLOR, IDLE_COLOR, KIND_STYLE, TIER_LABELS, fmt_gbps, kind_label, num, pct, rnd, util_color)

__all__ = ["path_index", "path_hops", "flow_row_record", "path_figure", "path_figure_from_index",
           "default_flow"]


# ================================================================================ flow index
class _Tables:
    """String tables of a path index: every value stored once, referenced by position."""

    NAMES = ("nodes", "patterns", "classes", "techs", "tiers")

    def __init__(self):
        self.items = {k: [] for k in self.NAMES}
        self._idx = {k: {} for k in self.NAMES}
        self.res: list[list] = []
        self._res_idx: dict[str, int] = {}

    def put(self, table: str, value) -> int:
        idx = self._idx[table]
        if value not in idx:
            idx[value] = len(self.items[table])
            self.items[table].append(value)
        return idx[value]

    def resource(self, r: dict) -> int:
        if r["id"] not in self._res_idx:
            self._res_idx[r["id"]] = len(self.res)
            self.res.append([r["id"], self.put("techs", r.get("tech")), self.put("tiers", r.get("tier")),
                             rnd(r.get("utilization")), rnd(r.get("load_gbps"), 2), rnd(r.get("capacity_gbps"), 2)])
        return self._res_idx[r["id"]]


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
    doc = Doc(topology_doc) if topology_doc else None
    loads = Loads(result)
    tables, hops, node_res = _Tables(), {}, {}
    by_pair = _links_by_pair(doc)
    flows = [_index_flow(f, tables, hops, node_res, by_pair, loads) for f in result.get("flows") or []]
    nodes = tables.items["nodes"]
    kinds = [(doc.kind(n) if doc else "") for n in nodes]
    hosts = [((doc.host_of.get(n) if doc else None) or (n.split("/")[0] if "/" in n else "")) for n in nodes]
    summary = result.get("summary") or {}
    return {"nodes": nodes, "kinds": kinds, "hosts": hosts,
            **{k: tables.items[k] for k in ("patterns", "classes", "techs", "tiers")},
            "flows": flows, "hops": hops, "res": tables.res, "node_res": node_res,
            "listed": len(flows), "total": summary.get("flows_total", len(flows))}


def _index_flow(f: dict, tables: _Tables, hops: dict, node_res: dict, by_pair: dict, loads: Loads) -> list:
    """One flow row of :func:`path_index`; fills ``hops`` and ``node_res`` on the way."""
    path = f.get("path") or []
    ids = [tables.put("nodes", n) for n in path]
    for (u, v), (iu, iv) in zip(zip(path, path[1:]), zip(ids, ids[1:])):
        key = f"{iu}>{iv}"
        if key not in hops:
            r = _hop_resource(u, v, by_pair, loads)
            hops[key] = tables.resource(r) if r else -1
    for n, i in zip(path, ids):  # a capacity-bearing node on the path (a root complex) is a resource too
        if n in loads.nodes:
            node_res[i] = tables.resource(loads.nodes[n])
    bott = loads.by_id.get(f.get("bottleneck"))
    return [f.get("id"), tables.put("patterns", f.get("pattern")), tables.put("nodes", f.get("src")),
            tables.put("nodes", f.get("dst")), tables.put("classes", f["class"]) if f.get("class") else -1,
            rnd(f.get("rate_gbps"), 3), 1 if f.get("status", "ok") == "ok" else 0, f.get("reason"),
            tables.resource(bott) if bott else -1, ids, len(f.get("paths") or []) or (1 if path else 0)]


def _links_by_pair(doc: Doc | None) -> dict:
    by_pair = defaultdict(list)
    if doc:
        for link in doc.links:
            by_pair[(link["a"], link["b"])].append((link["id"], "a>b"))
            by_pair[(link["b"], link["a"])].append((link["id"], "b>a"))
    return by_pair


def _hop_resource(u: str, v: str, by_pair: dict, loads: Loads) -> dict | None:
    """The loaded link direction u→v (the hottest of parallel links); id-pattern guess without a document."""
    cands = by_pair.get((u, v))
    if not cands:
        lu, lv = u.split("/")[-1], v.split("/")[-1]
        cands = [(f"{u}-{v}", "a>b"), (f"{u}-{lv}", "a>b"), (f"{v}-{u}", "b>a"), (f"{v}-{lu}", "b>a")]
    found = [loads.dirs[link][d] for link, d in cands if d in loads.dirs.get(link, {})]
    return max(found, key=lambda r: num(r.get("utilization"), 0.0)) if found else None


def default_flow(result: dict) -> str | None:
    """The slowest flow of the slowest pattern (what a user looks at first)."""
    pats = (result.get("summary") or {}).get("patterns") or {}
    ranked = sorted(pats.values(), key=lambda p: -(num(p.get("completion_s"), -1.0)))
    for p in ranked:
        if p.get("slowest_flow"):
            return p["slowest_flow"]
    flows = result.get("flows") or []
    return flows[0]["id"] if flows else None


def path_hops(index: dict, row: list) -> list[dict]:
    """Hops of one :func:`path_index` flow row: link direction, tech, tier, utilization, Gb/s."""
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
    """A :func:`path_index` row as a readable dict (id, pattern, src, dst, class, rate, status...)."""
    return {"id": row[0], "pattern": index["patterns"][row[1]], "src": index["nodes"][row[2]],
            "dst": index["nodes"][row[3]], "class": index["classes"][row[4]] if row[4] >= 0 else None,
            "rate_gbps": row[5], "status": "ok" if row[6] else "unroutable", "reason": row[7],
            "bottleneck": index["res"][row[8]][0] if row[8] >= 0 else None, "paths": row[10]}


# ================================================================================ the figure
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
    return path_figure_from_index(index, flow_id or default_flow(result))


def path_figure_from_index(index: dict, flow_id: str | None) -> dict:
    """Path figure of flow ``flow_id`` of a :func:`path_index` (or a slice of one holding that flow)."""
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
    hosts = [index["hosts"][i] for i in row[9]]
    data = [_hop_line(k, h) for k, h in enumerate(hops)]
    data.append(_node_trace(index, row[9], rec["bottleneck"]))
    data.append(_hop_bars(hops))
    notes = [{"x": k + 0.5, "y": 1.0, "yref": "y2", "text": "bottleneck", "showarrow": True,
              "arrowhead": 2, "ay": 34, "ax": 0, "font": {"color": FAILED_COLOR, "size": 12}}
             for k, h in enumerate(hops) if h["bottleneck"]]
    shapes = _path_regions(hosts, notes)
    table = {"columns": ["hop", "from", "to", "resource", "tech", "tier", "load_gbps", "capacity_gbps",
                         "utilization", "bottleneck"],
             "rows": [[k + 1, h["from"], h["to"], h["resource"], h["tech"], h["tier"], h["load_gbps"],
                       h["capacity_gbps"], h["utilization"], h["bottleneck"]] for k, h in enumerate(hops)]}
    return figure("path", title, data, _path_layout(hops, len(nodes), shapes, notes), table=table, height=440,
                  flow=rec["id"], hops=hops, path=nodes, path_class=rec["class"])


def _hop_line(k: int, h: dict) -> dict:
    u = h["utilization"]
    return {"type": "scatter", "mode": "lines", "x": [k, k + 1], "y": [1, 1], "xaxis": "x", "yaxis": "y2",
            "line": {"color": util_color(u) if u is not None else IDLE_COLOR, "width": 8 if h["bottleneck"] else 5},
            "hoverinfo": "skip", "showlegend": False}


def _node_trace(index: dict, ids: list[int], bottleneck: str | None) -> dict:
    """The chain of nodes: kind symbols, two-line labels, internal load of capacity nodes on hover."""
    nodes = [index["nodes"][i] for i in ids]
    kinds = [index["kinds"][i] for i in ids]
    hover = [f"<b>{n}</b><br>{kind_label(k, k or 'node')}" for n, k in zip(nodes, kinds)]
    for i, ni in enumerate(ids):
        r = (index.get("node_res") or {}).get(ni)
        if r is not None:
            nr = index["res"][r]
            hover[i] += f"<br>internal {fmt_gbps(nr[4])} / {fmt_gbps(nr[5])} ({pct(nr[3])})"
    hot = [n == bottleneck for n in nodes]
    return {"type": "scatter", "mode": "markers+text", "x": list(range(len(nodes))), "y": [1] * len(nodes),
            "xaxis": "x", "yaxis": "y2", "text": [_two_line(n) for n in nodes], "textposition": "top center",
            "textfont": {"size": 11}, "hovertext": hover, "hoverinfo": "text", "showlegend": False,
            "cliponaxis": False, "name": "nodes",
            "marker": {"size": 14, "symbol": [KIND_STYLE.get(k, ("circle",))[0] for k in kinds],
                       "color": [KIND_STYLE.get(k, (0, "#7f8a9a"))[1] for k in kinds],
                       "line": {"width": [3 if b else 0.5 for b in hot],
                                "color": [FAILED_COLOR if b else "#333" for b in hot]}}}


def _hop_hover(h: dict) -> str:
    return (f"<b>{h['from']} → {h['to']}</b><br>{h['resource'] or 'link not found'}<br>tech {h['tech'] or '—'} · "
            f"{TIER_LABELS.get(h['tier'], h['tier'] or '—')}<br>{fmt_gbps(h['load_gbps'])} / "
            f"{fmt_gbps(h['capacity_gbps'])} ({pct(h['utilization'])})"
            + ("<br><b>bottleneck of this flow</b>" if h["bottleneck"] else ""))


def _hop_bars(hops: list[dict]) -> dict:
    utils = [h["utilization"] if h["utilization"] is not None else 0 for h in hops]
    return {"type": "bar", "x": [k + 0.5 for k in range(len(hops))], "y": utils, "width": 0.55,
            "name": "hop utilization",
            "marker": {"color": [util_color(u) for u in utils],
                       "line": {"width": [3 if h["bottleneck"] else 0 for h in hops], "color": FAILED_COLOR}},
            "text": [pct(h["utilization"]) for h in hops], "textposition": "outside", "cliponaxis": False,
            "hovertext": [_hop_hover(h) for h in hops], "hoverinfo": "text", "showlegend": False}


def _path_layout(hops: list[dict], n_nodes: int, shapes: list, notes: list) -> dict:
    return {"xaxis": {"range": [-0.6, n_nodes - 0.4], "tickvals": [k + 0.5 for k in range(len(hops))],
                      "ticktext": [f"{h['tech'] or '?'}" for h in hops], "showgrid": False,
                      "zeroline": False, "title": {"text": "hop (link technology)", "standoff": 6}},
            "yaxis": {"domain": [0, 0.5], "range": [0, 1.25], "tickformat": ".0%", "title": {"text": "utilization"},
                      "automargin": True},
            "yaxis2": {"domain": [0.62, 1], "range": [0.5, 1.6], "visible": False},
            "shapes": shapes, "annotations": notes, "bargap": 0.4,
            "margin": {"l": 70, "r": 30, "t": 60, "b": 60}}


def _two_line(node_id: str) -> str:
    return node_id.replace("/", "/<br>", 1) if "/" in node_id else node_id


def _path_regions(hosts: list[str], notes: list) -> list[dict]:
    """Background bands: the source host, the fabric, the destination host (labels go to ``notes``)."""
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
