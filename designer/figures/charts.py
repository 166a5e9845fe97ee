"""Charts of one result: utilization by tier, bottlenecks, completion, flow rates, timeline, latency.

Everything heavy is aggregated here so a million-flow result ships a few kB per chart: box plots
carry precomputed quartiles, histograms carry precomputed bins.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict

from designer.figures.base import axis, empty_figure, figure, table_figure
from designer.figures.style import FAILED_COLOR, PALETTE, TIER_LABELS, TIER_ORDER, fmt_gbps, fmt_time, num, pct, rnd

__all__ = ["tier_of", "tier_figure", "bottleneck_figure", "pattern_figure", "rate_figure", "timeline_figure",
           "latency_figure"]

_CONTROL_LABELS = {"proxy_notice": "CPU proxy notices", "wqe_post": "WQE post", "doorbell": "Doorbell",
                   "wqe_fetch": "WQE fetch (NIC DMA)", "copy_launch": "Copy launch", "store_issue": "Store issue"}
_DATA_COMPONENTS = (("payload_read_ns", "Payload read (NIC DMA)"), ("propagation_ns", "Propagation"),
                    ("forwarding_ns", "Forwarding"), ("serialization_ns", "Serialization"))
# The receive side of a step (hop_latency._completion): how the far GPU learns the data landed.
_COMPLETION_LABELS = {"cqe_write": "CQE write", "cq_poll": "CPU proxy polls CQ", "flag_write": "Flag write",
                      "gpu_poll": "GPU polls", "signal_atomic": "Signal atomic", "host_write": "Write to host memory",
                      "host_poll": "GPU polls host memory"}
_COMPLETION_COLORS = ["#c4a35a", "#a0cbe8", "#ff9d9a", "#79706e", "#f1ce63", "#86bcb6", "#d37295"]
_CONTROL_COLORS = ["#9aa0a8", "#b07aa1", "#e69f00", "#d7263d", "#8c6d31", "#6b6ecf"]
_DATA_COLORS = ("#9c755f", "#4C78A8", "#72B7B2", "#54A24B")


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# ================================================================================ tiers and bottlenecks
def _quantiles(values: list[float]) -> dict:
    v = sorted(values)
    n = len(v)

    def q(p):
        pos = p * (n - 1)
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        return v[lo] + (v[hi] - v[lo]) * (pos - lo)
    return {"min": v[0], "q1": q(0.25), "median": q(0.5), "q3": q(0.75), "max": v[-1], "mean": sum(v) / n, "n": n}


def tier_of(r: dict) -> str:
    """Tier of a result resource (``"other"`` when the engine gave none)."""
    return r.get("tier") or "other"


def tier_figure(result: dict) -> dict:
    """Utilization of loaded resources by tier: box plots from precomputed quartiles."""
    title = "Utilization by tier (resources carrying traffic)"
    groups = defaultdict(list)
    for r in result.get("resources") or []:
        u = num(r.get("utilization"))
        if u is not None:
            groups[tier_of(r)].append(u)
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
             "rows": [[t, stats[t]["n"]] + [rnd(stats[t][k]) for k in ("min", "q1", "median", "q3", "max", "mean")]
                      for t in order]}
    layout = {"yaxis": axis("utilization", tickformat=".0%", range=[0, 1.05]),
              "xaxis": axis("tier", tickangle=0, tickfont={"size": 10}), "hovermode": "x"}
    return figure("tiers", title, [box], layout, table=table, groups=order)


def bottleneck_figure(result: dict, *, limit: int = 15) -> dict:
    """Table of the saturated resources that limit the most (listed) flows; ``limit`` rows at most."""
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
        rows.append([rid, f"{TIER_LABELS.get(tier_of(r), tier_of(r))} · {r.get('tech') or '—'}",
                     f"{fmt_gbps(r.get('load_gbps'))} / {fmt_gbps(r.get('capacity_gbps'))}", pct(r.get("utilization")),
                     limited.get(rid, 0)])
    cols = ["resource", "tier · tech", "load / capacity", "util.", "flows limited"]
    more = f" (top {limit} of {len(ids)})" if len(ids) > limit else ""
    return table_figure("bottlenecks", title + more, cols, rows)


# ================================================================================ patterns and rates
def _pattern_text(p: dict, t) -> str:
    if p.get("complete") is False:
        lost = int(p.get("unroutable") or 0) or int(p.get("stalled") or 0)
        return f"does not complete · {lost:,} flow{'s' if lost != 1 else ''} lost"
    return fmt_time(t)


def _pattern_hover(pid: str, p: dict, t) -> str:
    verdict = (f"<b>does not complete</b>: {p.get('reason') or ''}<br>survivors finish at "
               f"{fmt_time(p.get('surviving_completion_s'))}" if p.get("complete") is False
               else f"completion {fmt_time(t)}")
    algo = (f"<br>{p['algorithm']} / {p.get('protocol') or '—'} · busbw {num(p.get('busbw_gbs'), 0.0):.1f} GB/s"
            f" · latency {fmt_time(p.get('latency_s'))}" if p.get("algorithm") else "")
    return (f"<b>{pid}</b> ({p.get('kind', '')})<br>{verdict}{algo}<br>throughput {fmt_gbps(p.get('throughput_gbps'))}"
            f"<br>{p.get('flows', 0):,} flows, {p.get('unroutable', 0)} unroutable<br>"
            f"slowest {p.get('slowest_flow') or '—'}, limited by {p.get('bottleneck') or 'its demand'}")


def pattern_figure(result: dict) -> dict:
    """Completion time per pattern (bars, ms). A pattern with a lost flow does not complete: its
    bar (red, hatched) shows when its surviving flows finish, labelled "does not complete"."""
    title = "Completion time per pattern"
    pats = (result.get("summary") or {}).get("patterns") or {}
    if not pats:
        return empty_figure("patterns", title, "The workload has no traffic pattern.")
    ids = list(pats)
    times = [num(pats[p].get("completion_s")) for p in ids]
    broken = [pats[p].get("complete") is False for p in ids]
    shown = [num(pats[p].get("surviving_completion_s")) if bad else t for p, t, bad in zip(ids, times, broken)]
    text = [_pattern_text(pats[p], t) + (f" · {pats[p]['algorithm']}" if pats[p].get("algorithm") else "")
            for p, t in zip(ids, times)]
    hover = [_pattern_hover(p, pats[p], t) for p, t in zip(ids, times)]
    ms = [t * 1e3 if t is not None else 0 for t in shown]
    trace = {"type": "bar", "x": ids, "y": ms, "text": text, "textposition": "outside", "cliponaxis": False,
             "marker": {"color": [FAILED_COLOR if bad else _color(i) for i, bad in enumerate(broken)],
                        "pattern": {"shape": ["/" if bad else "" for bad in broken]}},
             "hovertext": hover, "hoverinfo": "text", "showlegend": False}
    table = {"columns": ["pattern", "kind", "algorithm", "protocol", "complete", "completion_s", "latency_s",
                         "busbw_gbs", "throughput_gbps", "flows", "unroutable", "slowest_flow", "bottleneck", "reason"],
             "rows": [[p, pats[p].get("kind"), pats[p].get("algorithm"), pats[p].get("protocol"),
                       pats[p].get("complete", True), t, pats[p].get("latency_s"), rnd(pats[p].get("busbw_gbs"), 3),
                       rnd(pats[p].get("throughput_gbps"), 3), pats[p].get("flows"), pats[p].get("unroutable"),
                       pats[p].get("slowest_flow"), pats[p].get("bottleneck"), pats[p].get("reason")]
                      for p, t in zip(ids, times)]}
    top = max(ms, default=0) or 1
    layout = {"yaxis": axis("completion time (ms)", range=[0, top * 1.2]), "xaxis": axis("pattern")}
    return figure("patterns", title, [trace], layout, table=table)


def rate_figure(result: dict, *, bins: int = 30) -> dict:
    """Flow-rate distribution per pattern (Gb/s): histograms of ``bins`` bins, not one point per flow."""
    title = "Flow rates per pattern"
    flows = [f for f in result.get("flows") or [] if f.get("status", "ok") == "ok" and num(f.get("rate_gbps")) is not None]
    if not flows:
        return empty_figure("rates", title, "No routed flow is listed in this result.")
    by_pat = defaultdict(list)
    for f in flows:
        by_pat[f.get("pattern")].append(float(f["rate_gbps"]))
    edges, width = _rate_edges(by_pat, bins)
    order = [p for p in ((result.get("summary") or {}).get("patterns") or {}) if p in by_pat]
    order += [p for p in by_pat if p not in order]
    data, rows = [], []
    for i, p in enumerate(order):
        trace, trace_rows = _rate_trace(i, p, by_pat[p], edges, width)
        data.append(trace)
        rows += trace_rows
    summary = result.get("summary") or {}
    note = ""
    if summary.get("flows_omitted"):
        note = f" · {summary.get('flows_listed', len(flows)):,} listed of {summary.get('flows_total'):,} flows"
    return figure("rates", title + note, data, _rate_layout(data),
                  table={"columns": ["pattern", "rate_from_gbps", "rate_to_gbps", "flows"], "rows": rows})


def _rate_layout(data: list[dict]) -> dict:
    counts = [c for t in data for c in t["y"]]
    # One pattern's 8,192 flows must not hide another's 8: switch to a log scale when counts differ a lot.
    log = bool(counts) and max(counts) > 50 * min(counts)
    return {"barmode": "overlay", "xaxis": axis("flow rate (Gb/s)"),
            "yaxis": axis("flows (log scale)" if log else "flows", type="log" if log else "linear"),
            "legend": {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"}}


def _rate_edges(by_pat: dict, bins: int) -> tuple[list[float], float]:
    """Common bin edges of every pattern's rates, and the bin width (one bin when all rates are equal)."""
    lo = min(min(v) for v in by_pat.values())
    hi = max(max(v) for v in by_pat.values())
    width = (hi - lo) / bins if hi > lo else max(hi * 0.05, 1.0)
    edges = [lo + k * width for k in range(bins + 1)] if hi > lo else [lo - width / 2, lo + width / 2]
    return edges, width


def _rate_trace(i: int, p: str, rates: list[float], edges: list[float], width: float) -> tuple[dict, list]:
    """Histogram bars of one pattern (empty bins left out) and its table rows."""
    counts = [0] * (len(edges) - 1)
    for v in rates:
        k = min(int((v - edges[0]) / width), len(counts) - 1)
        counts[max(k, 0)] += 1
    mids = [(a + b) / 2 for a, b in zip(edges, edges[1:])]
    keep = [k for k, c in enumerate(counts) if c]
    trace = {"type": "bar", "name": p, "x": [round(mids[k], 3) for k in keep], "y": [counts[k] for k in keep],
             "width": width * 0.9, "opacity": 0.75, "marker": {"color": _color(i)},
             "hovertemplate": f"<b>{p}</b><br>%{{x:.4g}} Gb/s ± {width / 2:.3g}<br>%{{y}} flows<extra></extra>"}
    return trace, [[p, rnd(edges[k], 3), rnd(edges[k + 1], 3), counts[k]] for k in keep]


# ================================================================================ timeline
def timeline_figure(result: dict) -> dict | None:
    """Timeline mode: max utilization per tier over time (steps), data delivered, pattern finishes.

    ``None`` when the result has no timeline (steady-state mode).
    """
    summary = result.get("summary") or {}
    tl = summary.get("timeline")
    if not tl or not tl.get("t_s"):
        return None
    title = "Timeline · utilization and delivered data"
    t_ms = [t * 1e3 for t in tl["t_s"]]
    data, rows = [], []
    for i, (tier, series) in enumerate((tl.get("tiers") or {}).items()):
        label = TIER_LABELS.get(tier, tier)
        data.append({"type": "scatter", "mode": "lines", "line": {"shape": "hv", "width": 2, "color": _color(i)},
                     "x": t_ms, "y": series.get("max"), "name": f"{label} max", "xaxis": "x", "yaxis": "y2",
                     "hovertemplate": f"{label}<br>%{{x:.4g}} ms: max %{{y:.0%}}<extra></extra>"})
        rows += [[tier, rnd(t, 9), rnd(m), rnd(a)] for t, m, a in zip(tl["t_s"], series.get("max") or [],
                                                                      series.get("mean") or [])]
    data += _delivered_traces(result)
    shapes, notes = _finish_marks(summary.get("patterns") or {})
    if tl.get("truncated"):
        notes.append({"xref": "paper", "yref": "paper", "x": 1, "y": 1.08, "showarrow": False,
                      "text": "truncated after max events", "font": {"color": FAILED_COLOR}})
    layout = {"xaxis": axis("time (ms)"), "yaxis2": {"domain": [0.52, 1], "tickformat": ".0%", "range": [0, 1.1],
                                                    "title": {"text": "max utilization"}, "automargin": True},
              "yaxis": {"domain": [0, 0.42], "title": {"text": "delivered (GB)"}, "automargin": True},
              "shapes": shapes, "annotations": notes, "hovermode": "x unified",
              "margin": {"l": 70, "r": 30, "t": 80, "b": 60}}
    return figure("timeline", title, data, layout, height=520,
                  table={"columns": ["tier", "t_s", "max_utilization", "mean_utilization"], "rows": rows})


def _finish_marks(pats: dict) -> tuple[list, list]:
    """A dotted vertical line and a "done" label where each pattern completes."""
    shapes, notes = [], []
    for i, (p, s) in enumerate(pats.items()):
        t = num(s.get("completion_s"))
        if t is None:
            continue
        shapes.append({"type": "line", "x0": t * 1e3, "x1": t * 1e3, "yref": "paper", "y0": 0, "y1": 1,
                       "line": {"dash": "dot", "width": 1.5, "color": _color(i)}})
        notes.append({"x": t * 1e3, "y": 1.0, "yref": "paper", "yanchor": "bottom", "showarrow": False,
                      "text": f"{p} done", "font": {"size": 10}, "textangle": -30 if len(pats) > 3 else 0})
    return shapes, notes


def _delivered_traces(result: dict) -> list[dict]:
    """Delivered bytes per pattern over time: the engine's integral of each pattern's rate
    (``summary.timeline.patterns``), a continuous curve; results stored before it existed fall
    back to the bytes of finished listed flows (a step curve)."""
    tl = (result.get("summary") or {}).get("timeline") or {}
    series = tl.get("patterns")
    if series:
        xs = [t * 1e3 for t in tl.get("t_s") or []]
        return [_delivered_trace(i, p, xs, [b / 1e9 for b in s.get("delivered_bytes") or []], "linear")
                for i, (p, s) in enumerate(series.items())]
    done = defaultdict(list)
    for f in result.get("flows") or []:
        t = num(f.get("completion_s"))
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
        out.append(_delivered_trace(i, p, xs, ys, "hv"))
    return out


def _delivered_trace(i: int, p: str, xs: list, ys: list, shape: str) -> dict:
    return {"type": "scatter", "mode": "lines", "line": {"shape": shape, "width": 2, "dash": "dash",
                                                         "color": _color(i + 5)},
            "x": xs, "y": ys, "name": f"{p} delivered", "xaxis": "x", "yaxis": "y",
            "hovertemplate": f"{p}: %{{y:.3g}} GB by %{{x:.4g}} ms<extra></extra>"}


# ================================================================================ latency
def latency_figure(result: dict) -> dict | None:
    """Latency per flow and initiator (µs), one way and round trip side by side, labelled as such.

    The bars stack the **one-way** step as the receiving GPU sees it (control path, data,
    completion); a diamond marks the **round trip** (ping there and pong back,
    :func:`designer.engine.analysis.latency.flow_latency`: the figure GPU-initiated networking is
    published as and the one the fidelity benchmark checks, docs/FIDELITY.md). ``None`` without
    latency data."""
    entries = [e for e in result.get("latency") or [] if e.get("initiators")]
    if not result.get("latency"):
        return None
    title = "Latency · CPU-proxied vs GPU-initiated · one way (bars) and round trip (◆)"
    if not entries:
        return empty_figure("latency", title, "No latency could be computed (flows unknown or unroutable).")
    steps, done = _latency_steps(entries, "control"), _latency_steps(entries, "completion")
    cats, comps, rows = _latency_components(entries, steps, done)
    totals = [sum(c[i] for c in comps.values()) for i in range(len(cats[0]))]
    trips = [num(lat.get("round_trip_ns"), 0.0) / 1e3 for e in entries for lat in e["initiators"].values()]
    # Both figures in the category label: text beside a marker collides when the two are close.
    cats = [cats[0], [f"{c}<br>one way {t:.2f} µs<br>round trip {r:.2f} µs" for c, t, r in zip(cats[1], totals, trips)]]
    data = _latency_bars(cats, comps, steps, done) + [_latency_round_trip(cats, trips)]
    msg = entries[0]["initiators"][next(iter(entries[0]["initiators"]))].get("message_bytes")
    top = max(totals + trips, default=1.0) or 1.0
    layout = {"barmode": "stack", "yaxis": axis("latency (µs)", range=[0, top * 1.18]),
              "xaxis": {"automargin": True, "tickfont": {"size": 11}},
              "legend": {"orientation": "h", "y": -0.3, "x": 0, "yanchor": "top"},
              "margin": {"l": 70, "r": 30, "t": 56, "b": 40}}
    cols = ["flow", "initiator", *[f"control_{s}_ns" for s in steps], *[k for k, _ in _DATA_COMPONENTS],
            *[f"completion_{s}_ns" for s in done], "one_way_ns", "round_trip_ns"]
    sub = f" · {int(msg):,} B message" if msg else ""
    return figure("latency", title + sub, data, layout, height=520, table={"columns": cols, "rows": rows})


def _latency_round_trip(cats: list, trips: list[float]) -> dict:
    """The round trip (µs) as its own named marker above each one-way bar."""
    return {"type": "scatter", "mode": "markers", "x": cats, "y": trips, "name": "round trip (ping + pong)",
            "marker": {"symbol": "diamond", "size": 12, "color": "#222"}, "cliponaxis": False,
            "hovertemplate": "round trip (ping + pong): %{y:.3g} µs<extra></extra>"}


def _latency_steps(entries: list[dict], part: str) -> list[str]:
    """Steps of ``part`` (``control`` or ``completion``) of every initiator, in first-seen order."""
    steps = []
    for e in entries:
        for step in (s for init in e["initiators"].values() for s in (init.get(part) or {})):
            if step not in steps:
                steps.append(step)
    return steps


def _latency_components(entries: list[dict], steps: list[str], done: list[str]) -> tuple[list, dict, list]:
    """Two-level categories ``[flows, initiators]``, µs per component per category, table rows (ns)."""
    cats_flow, cats_init, comps, rows = [], [], defaultdict(list), []
    for e in entries:
        for name, lat in e["initiators"].items():
            cats_flow.append(f"{e['flow']} ({e.get('class') or '—'})")
            cats_init.append(name.replace("_", " "))
            ctrl, comp = lat.get("control") or {}, lat.get("completion") or {}
            for s in steps:
                comps[s].append(ctrl.get(s, 0.0) / 1e3)
            for key, _ in _DATA_COMPONENTS:
                comps[key].append(num(lat.get(key), 0.0) / 1e3)
            for s in done:
                comps["done:" + s].append(comp.get(s, 0.0) / 1e3)
            rows.append([e["flow"], name, *[ctrl.get(s, 0.0) for s in steps],
                         *[lat.get(k) for k, _ in _DATA_COMPONENTS], *[comp.get(s, 0.0) for s in done],
                         lat.get("total_ns"), lat.get("round_trip_ns")])
    return [cats_flow, cats_init], comps, rows


def _latency_bars(cats: list, comps: dict, steps: list[str], done: list[str]) -> list[dict]:
    data = []
    for i, s in enumerate(steps):
        label = _CONTROL_LABELS.get(s, s)
        data.append({"type": "bar", "name": f"control: {label}", "x": cats, "y": comps[s],
                     "marker": {"color": _CONTROL_COLORS[i % len(_CONTROL_COLORS)]},
                     "hovertemplate": f"{label}: %{{y:.3g}} µs<extra></extra>"})
    for (key, label), color in zip(_DATA_COMPONENTS, _DATA_COLORS):
        data.append({"type": "bar", "name": label, "x": cats, "y": comps[key],
                     "marker": {"color": color}, "hovertemplate": f"{label}: %{{y:.3g}} µs<extra></extra>"})
    for i, s in enumerate(done):
        label = _COMPLETION_LABELS.get(s, s)
        data.append({"type": "bar", "name": f"completion: {label}", "x": cats, "y": comps["done:" + s],
                     "marker": {"color": _COMPLETION_COLORS[i % len(_COMPLETION_COLORS)]},
                     "hovertemplate": f"{label}: %{{y:.3g}} µs<extra></extra>"})
    return data
