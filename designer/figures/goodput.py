"""Goodput page figures: goodput against the checkpoint interval (optimum marked), interruptions
per day by class, blast radius by class, and one simulated run's timeline.

Built from ``fabricscope.goodput/1`` (docs/FORMATS.md, "Goodput plan"; through
``designer.bridge.goodput_plan``), one answer per design: with a second design (``other``) every
bar and curve has a trace per design, side by side.
"""
from __future__ import annotations

from designer.figures.base import axis, empty_figure, figure
from designer.figures.style import PALETTE

__all__ = ["page_context", "curve_figure", "classes_figure", "blast_figure", "timeline_figure"]

_HOUR_S = 3600.0


def _goodput_curve(out: dict) -> tuple[list[float], list[float]]:
    """Interval (minutes) and goodput = ETTR × (1 − degraded loss) along the plan's curve."""
    keep = 1.0 - out["job"]["degraded_loss"]
    curve = out["checkpoint"]["curve"]
    return [t / 60.0 for t in curve["interval_s"]], [e * keep for e in curve["ettr"]]


def curve_figure(designs: list[tuple[str, dict]]) -> dict:
    """Goodput against the checkpoint interval (log x, minutes), Daly's and Young's optima marked."""
    data = []
    for i, (name, out) in enumerate(designs):
        x, y = _goodput_curve(out)
        color = PALETTE[i % len(PALETTE)]
        data.append({"type": "scatter", "mode": "lines", "name": f"{name}: goodput", "x": x, "y": y,
                     "line": {"color": color, "width": 2},
                     "hovertemplate": "every %{x:.3g} min<br>goodput %{y:.4f}<extra></extra>"})
        data += _optima(name, out, color)
    layout = {"xaxis": axis("checkpoint interval (minutes of training between checkpoints)", type="log"),
              "yaxis": axis("goodput (useful share of GPU-hours)", tickformat=".2%")}
    return figure("goodput_curve", "Goodput against the checkpoint interval", data, layout, height=440)


def _optima(name: str, out: dict, color: str) -> list[dict]:
    ck, keep = out["checkpoint"], 1.0 - out["job"]["degraded_loss"]
    marks = []
    # Only Daly's optimum is labelled (Young's is a marker with a hover): the two are often a
    # minute apart and their labels would overlap
    for key, label, symbol, where in (("daly_interval_s", "optimum (Daly)", "star", "top center"),
                                      ("young_interval_s", "Young", "diamond", "bottom center")):
        tau, value = ck.get(key), ck.get("ettr_daly" if key == "daly_interval_s" else "ettr_young")
        if tau is None or value is None:
            continue
        marks.append({"type": "scatter", "mode": "markers+text" if symbol == "star" else "markers",
                      "name": f"{name}: {label}",
                      "x": [tau / 60.0], "y": [value * keep], "text": [f"{label} {tau / 60.0:.3g} min"],
                      "textposition": where, "marker": {"symbol": symbol, "size": 13, "color": color,
                                                               "line": {"color": "#000", "width": 1}},
                      "hovertemplate": f"{label}: every %{{x:.3g}} min<br>goodput %{{y:.4f}}<extra></extra>"})
    return marks


def _bars(designs: list[tuple[str, dict]], value, effect: str | None, title: str, kind: str, ytitle: str) -> dict:
    classes = [r["class"] for r in designs[0][1]["classes"]
               if (effect is None or r["effect"] == effect) and any(value(_row(o, r["class"])) for _, o in designs)]
    if not classes:
        return empty_figure(kind, title, "No failure of these classes at the rates given.")
    data = [{"type": "bar", "name": name, "x": classes, "y": [value(_row(out, c)) for c in classes],
             "marker": {"color": PALETTE[i % len(PALETTE)]}, "hovertemplate": "%{x}: %{y:.4g}<extra>" + name + "</extra>"}
            for i, (name, out) in enumerate(designs)]
    return figure(kind, title, data, {"barmode": "group", "xaxis": axis("failure class"), "yaxis": axis(ytitle)})


def _row(out: dict, cls: str) -> dict:
    return next(r for r in out["classes"] if r["class"] == cls)


def classes_figure(designs: list[tuple[str, dict]]) -> dict:
    """Interruptions per day of the job, by class (the interrupting classes)."""
    return _bars(designs, lambda r: r["job_per_day"], "interrupt", "Interruptions per day by class (job)",
                 "goodput_classes", "interruptions per day")


def blast_figure(designs: list[tuple[str, dict]]) -> dict:
    """GPU-hours lost per day by class: failures a day × GPU-hours one failure costs."""
    return _bars(designs, lambda r: r["job_per_day"] * r["blast"]["gpu_hours_lost_per_failure"], None,
                 "Blast radius: GPU-hours lost per day by class", "goodput_blast", "GPU-hours lost per day")


def timeline_figure(name: str, out: dict) -> dict:
    """The first simulated run: failures (by class), restarts done and checkpoints, over its first days."""
    mc = out.get("monte_carlo")
    if not mc:
        return empty_figure("goodput_timeline", "One simulated run", "No Monte Carlo in this plan.")
    line = mc["timeline"]
    failures = line["failures"]
    data = [{"type": "scatter", "mode": "markers", "name": "checkpoint", "x": line["checkpoints_hours"],
             "y": ["checkpoint"] * len(line["checkpoints_hours"]), "marker": {"symbol": "line-ns-open", "size": 9,
                                                                              "color": PALETTE[2 % len(PALETTE)]},
             "hovertemplate": "checkpoint at %{x:.2f} h<extra></extra>"},
            {"type": "scatter", "mode": "markers", "name": "restart done", "x": line["restarts_done_hours"],
             "y": ["restart"] * len(line["restarts_done_hours"]), "marker": {"symbol": "triangle-right", "size": 9,
                                                                             "color": PALETTE[1 % len(PALETTE)]},
             "hovertemplate": "training again at %{x:.2f} h<extra></extra>"},
            {"type": "scatter", "mode": "markers", "name": "failure", "x": [f["t_hours"] for f in failures],
             "y": [f["class"] for f in failures], "marker": {"symbol": "x", "size": 10, "color": "#c0392b"},
             "hovertemplate": "%{y} at %{x:.2f} h<extra></extra>"}]
    title = f"One simulated run of {name}: first {line['days']:g} days"
    return figure("goodput_timeline", title, data, {"xaxis": axis("hours since the start"),
                                                     "yaxis": axis("", type="category")}, height=380)


def _hours(hours: float | None) -> str:
    if hours is None:
        return "—"
    return f"{hours:,.0f} h" if hours >= 100 else f"{hours:.3g} h"


def _summary(out: dict) -> dict:
    ck, job, mc = out["checkpoint"], out["job"], out.get("monte_carlo")
    return {"gpus": out["design"]["job_gpus"], "per_day": f"{job['interruptions_per_day']:.3g}",
            "mttf": _hours(job["mttf_hours"]),
            "write": f"{ck['write_s']:.3g} s", "write_source": ck["write_source"],
            "restart": f"{ck['restart_s']:.4g} s",
            "daly": "—" if ck["daly_interval_s"] is None else f"{ck['daly_interval_s'] / 60.0:.3g} min",
            "young": "—" if ck["young_interval_s"] is None else f"{ck['young_interval_s'] / 60.0:.3g} min",
            "goodput": f"{out['goodput']:.2%}", "ettr": f"{ck['ettr']:.2%}",
            "mc": None if not mc else {"days": f"{mc['simulated_days']:,.0f}", "mean": f"{mc['goodput']['mean']:.2%}",
                                       "p5": f"{mc['goodput']['p5']:.2%}", "p95": f"{mc['goodput']['p95']:.2%}"}}


def _measured(row: dict) -> str:
    """What the N-1 sweep measured for a class: the failures tried and what they did."""
    b = row["blast"]
    if b.get("source") != "simulated":
        return "—"
    if not b["sampled"]:
        return "the job's traffic crosses none of them: no effect"
    tried = ", ".join(b["failures"])
    if row["effect"] == "interrupt":
        return f"{tried}: {b['broken']} of {b['sampled']} break the collective"
    return f"{tried}: completion × {b['completion_ratio']:.4g}, throughput −{row['slowdown']:.3%}"


def page_context(out: dict | None, other: dict | None = None, *, names: tuple[str, str] = ("A", "B")) -> dict:
    """``figures`` (the page's Plotly figures by slot), ``summaries`` (per design: display strings)
    and ``rows`` (per class: the figures of the table), from one or two plans."""
    if out is None:
        return {"figures": {}, "summaries": [], "rows": []}
    designs = [(names[0], out)] + ([(names[1], other)] if other is not None else [])
    figures = {"goodput_curve": curve_figure(designs), "goodput_classes": classes_figure(designs),
               "goodput_blast": blast_figure(designs), "goodput_timeline": timeline_figure(names[0], out)}
    rows = [{"class": r["class"], "effect": r["effect"], "units": r["job_units"], "afr": f"{r['afr']:.3g}",
             "per_day": f"{r['job_per_day']:.3g}", "share": f"{r.get('share', 0.0):.1%}",
             "blast": f"{r['blast']['gpu_hours_lost_per_failure']:.3g}", "spares": r["spares"]["spares"],
             "source": r["source"], "blast_source": r["blast"].get("source", "rule"), "measured": _measured(r)}
            for r in out["classes"]]
    return {"figures": figures, "summaries": [(name, _summary(o)) for name, o in designs], "rows": rows}
