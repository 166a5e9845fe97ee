"""A design-space exploration (``fabricscope.explore/1``) drawn: cost against step, power as colour.

Built from the explorer's result (docs/FORMATS.md, "Design-space explorer"): one marker per
feasible design at (US$ per GPU, step score), coloured by W per GPU, the Pareto frontier drawn
as a step line through its points and its markers ringed; infeasible designs and designs where a
job does not complete have no score and are listed in the table, not drawn. The figure's
``fabricscope.points`` maps each marker to its point index, so the page links a clicked marker
to its table row and to the side-by-side comparison.
"""
from __future__ import annotations

from designer.figures.base import axis, empty_figure, figure, table_figure

__all__ = ["explore_figures", "pareto_figure", "explore_context"]

_FRONTIER = "#E45756"
_COLOURS = "Viridis"


def _hover(p: dict) -> str:
    jobs = ", ".join(f"{j['id']} {j['step_time_s']:.4g} s" for j in p["jobs"] if j.get("step_time_s") is not None)
    return (f"#{p['index']} {p['label']}<br>${p['usd_per_gpu']:,.0f}/GPU (network ${p['network_usd_per_gpu']:,.0f})"
            f"<br>{p['w_per_gpu']:,.0f} W/GPU · score {p['step_score']:.3f}<br>{jobs}")


def pareto_figure(result: dict) -> dict:
    """US$ per GPU (x) against step score (y, 1 = as fast as any design for every job), W per GPU
    as the marker colour; the frontier as a line and ringed markers.

    Returns
    -------
    dict
        A figure dict of kind ``explore-pareto``; ``fabricscope.points``: the point index of each
        marker of trace 0; its table holds every scored point.
    """
    pts = [p for p in result.get("points") or [] if p.get("step_score") is not None]
    title = f"{len(result.get('points') or [])} designs: cost per GPU against step score (power as colour)"
    if not pts:
        return empty_figure("explore-pareto", title, "No design runs every job of the mix: nothing to draw.")
    front = sorted((p for p in pts if p.get("frontier")), key=lambda p: (p["usd_per_gpu"], p["step_score"]))
    designs = {"type": "scatter", "mode": "markers", "name": "design",
               "x": [p["usd_per_gpu"] for p in pts], "y": [p["step_score"] for p in pts],
               "text": [_hover(p) for p in pts], "hovertemplate": "%{text}<extra></extra>",
               "marker": {"size": 12, "color": [p["w_per_gpu"] for p in pts], "colorscale": _COLOURS,
                          "showscale": True, "colorbar": {"title": {"text": "W/GPU"}},
                          "line": {"width": [2.5 if p.get("frontier") else 0.5 for p in pts],
                                   "color": [_FRONTIER if p.get("frontier") else "#1f2937" for p in pts]}}}
    line = {"type": "scatter", "mode": "lines", "name": "Pareto frontier", "line": {"shape": "hv", "color": _FRONTIER,
                                                                                   "width": 2},
            "x": [p["usd_per_gpu"] for p in front], "y": [p["step_score"] for p in front], "hoverinfo": "skip"}
    layout = {"xaxis": axis("US$ per GPU (servers, switches, cables and optics)", tickprefix="$", separatethousands=True),
              "yaxis": axis("step score (1 = every job as fast as on any design)"),
              "legend": {"orientation": "h", "y": -0.2, "x": 0, "yanchor": "top"}}
    table = {"columns": ["index", "design", "usd_per_gpu", "w_per_gpu", "step_score", "frontier"],
             "rows": [[p["index"], p["label"], p["usd_per_gpu"], p["w_per_gpu"], p["step_score"], p["frontier"]]
                      for p in pts]}
    return figure("explore-pareto", title, [designs, line], layout, table=table, height=480,
                  points=[p["index"] for p in pts])


def _points_table(result: dict) -> dict:
    columns = ["index", "design", "frontier", "usd_per_gpu", "network_usd_per_gpu", "w_per_gpu", "step_s",
               "step_score", "bisection_gbps_per_gpu", "blast_radius", "error"]
    rows, tones = [], []
    for p in result.get("points") or []:
        ok = p.get("feasible")
        rows.append([p["index"], p["label"], bool(p.get("frontier")), p.get("usd_per_gpu"), p.get("network_usd_per_gpu"),
                     p.get("w_per_gpu"), p.get("step_s"), p.get("step_score"), p.get("bisection_gbps_per_gpu"),
                     (p.get("blast_radius") or {}).get("fraction"), p.get("error") or ""])
        tones.append("good" if p.get("frontier") else (None if ok and p.get("step_s") is not None else "bad"))
    return table_figure("explore-points", "Every design point", columns, rows, tones=tones,
                        subtitle="green: on the frontier · red: infeasible, or a job does not complete")


def explore_figures(result: dict) -> dict[str, dict]:
    """The result page's figures of an exploration: ``{"pareto": ..., "points": ...}``."""
    result = result or {}
    return {"pareto": pareto_figure(result), "points": _points_table(result)}


def _money(x) -> str:
    return "—" if x is None else f"${x:,.0f}"


def explore_context(result: dict) -> dict:
    """What the page prints: ``headline``, ``axes`` (the grid as asked), ``rows`` (one per point,
    formatted) and ``points`` (the raw records, for the side-by-side comparison)."""
    result = result or {}
    rows = []
    for p in result.get("points") or []:
        br = p.get("blast_radius") or {}
        rows.append({"index": p["index"], "label": p["label"], "feasible": p.get("feasible"),
                     "frontier": p.get("frontier"), "error": p.get("error"),
                     "usd": _money(p.get("usd_per_gpu")), "net_usd": _money(p.get("network_usd_per_gpu")),
                     "w": "—" if p.get("w_per_gpu") is None else f"{p['w_per_gpu']:,.0f}",
                     "step": "—" if p.get("step_s") is None else f"{p['step_s']:.4g} s",
                     "score": "—" if p.get("step_score") is None else f"{p['step_score']:.3f}",
                     "bisection": "—" if p.get("bisection_gbps_per_gpu") is None else f"{p['bisection_gbps_per_gpu']:g}",
                     "blast": "—" if not br else f"{100 * br['fraction']:.1f} % ({br['switch']})",
                     "switches": p.get("switches", "—"), "tiers": p.get("tiers", "—")})
    request = result.get("request") or {}
    return {"headline": (result.get("summary") or {}).get("headline", ""), "rows": rows,
            "axes": [{"name": k, "values": ", ".join(map(str, v))} for k, v in (request.get("grid") or {}).items()],
            "base": ", ".join(f"{k} {v}" for k, v in (request.get("base") or {}).items()),
            "points": result.get("points") or []}
