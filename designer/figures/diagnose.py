"""A diagnosis (``fabricscope.diagnosis/1``) drawn: measured curves against the healthy band and
the curves of the faults that explain them.

Built from the engine's diagnosis (docs/FORMATS.md, "Diagnosis"): ``expected`` (the healthy
prediction per size with its ``low_gbps``–``high_gbps`` band), ``runs`` (each measured curve,
``healthy`` and the sizes ``outside`` the band) and ``explanations`` (ranked faults, each with the
busbw ``curve`` the design would show with that fault). One figure overlays them on a log size
axis: the band shaded, the healthy prediction dashed, each run as markers, and every
explanation's curve as a line of which only the first is visible; the page shows another by
switching visibility (``fabricscope.explained``: the trace index of each rank), so no figure is
ever built in the browser.
"""
from __future__ import annotations

from designer.figures.base import axis, empty_figure, figure
from designer.figures.nccl_tests import size_label, size_ticks
from designer.figures.style import PALETTE

__all__ = ["diagnosis_figures", "diagnosis_figure", "diagnosis_context"]

# Marker shapes per measured run, so runs stay apart in print and for colour-blind readers.
_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "x", "cross", "star", "hexagon")
_BAND = "rgba(76,120,168,0.18)"   # PALETTE[0] at 18 %: the band under markers and lines
_EXPLAINED = "#E45756"            # PALETTE[3]: the explained curve, apart from the band's blue


def _sig(x, digits: int = 4):
    return None if x is None else float(f"{x:.{digits}g}")


def _band_traces(expected: list[dict], tolerance: float) -> list[dict]:
    """Low edge (invisible line), high edge filled down to it, and the healthy prediction."""
    x = [e["bytes"] for e in expected]
    low = {"type": "scatter", "mode": "lines", "x": x, "y": [_sig(e["low_gbps"]) for e in expected],
           "line": {"width": 0, "color": _BAND}, "hoverinfo": "skip", "showlegend": False,
           "name": "healthy low"}
    high = {"type": "scatter", "mode": "lines", "x": x, "y": [_sig(e["high_gbps"]) for e in expected],
            "fill": "tonexty", "fillcolor": _BAND, "line": {"width": 0, "color": _BAND},
            "hoverinfo": "skip", "name": f"predicted band (±{tolerance:g} %)"}
    line = {"type": "scatter", "mode": "lines", "x": x, "y": [_sig(e["busbw_gbps"]) for e in expected],
            "line": {"color": PALETTE[0], "width": 2, "dash": "dash"}, "name": "predicted (healthy)",
            "customdata": [size_label(b) for b in x],
            "hovertemplate": "%{customdata}<br>%{y:.2f} GB/s<extra>predicted (healthy)</extra>"}
    return [low, high, line]


def _measured_trace(run: dict, k: int) -> dict:
    rows = [r for r in run.get("rows") or [] if r.get("busbw_gbps") is not None]
    outside = set(run.get("outside") or [])
    return {"type": "scatter", "mode": "markers", "name": f"measured: {run.get('label') or k + 1}",
            "x": [r["bytes"] for r in rows], "y": [r["busbw_gbps"] for r in rows],
            "customdata": [[size_label(r["bytes"]), "outside the band" if r["bytes"] in outside else "inside"]
                           for r in rows],
            "marker": {"color": PALETTE[(k + 1) % len(PALETTE)], "size": 10, "symbol": _SYMBOLS[k % len(_SYMBOLS)],
                       "line": {"width": 1.5, "color": "#1f2937"}},
            "hovertemplate": "%{customdata[0]}<br>%{y:.2f} GB/s, %{customdata[1]}<extra>%{fullData.name}</extra>"}


def _explained_trace(explanation: dict, visible: bool) -> dict:
    curve = explanation.get("curve") or []
    label = explanation.get("label") or explanation.get("target") or "?"
    return {"type": "scatter", "mode": "lines", "name": f"explained: {label}", "visible": visible,
            "x": [c["bytes"] for c in curve], "y": [_sig(c["busbw_gbps"]) for c in curve],
            "line": {"color": _EXPLAINED, "width": 2.5},
            "customdata": [size_label(c["bytes"]) for c in curve],
            "hovertemplate": "%{customdata}<br>%{y:.2f} GB/s<extra>" + f"#{explanation.get('rank')} {label}"
                             + "</extra>"}


def diagnosis_figure(result: dict) -> dict:
    """Bus bandwidth (GB/s) against message size (bytes, log axis): the healthy band, the
    measured runs and the explanations' curves (the first visible).

    Parameters
    ----------
    result : dict
        A diagnosis (see the module docstring).

    Returns
    -------
    dict
        A figure dict of kind ``diagnosis``; ``fabricscope.explained`` lists the trace index of
        each explanation in rank order, and its table holds per size the healthy prediction,
        the band and each run's measured busbw.
    """
    expected, runs = result.get("expected") or [], result.get("runs") or []
    title = f"{result.get('op') or 'collective'} bus bandwidth, {result.get('ranks') or '?'} ranks: measured against predicted"
    if not expected:
        return empty_figure("diagnosis", title, "No sizes to draw.")
    data = _band_traces(expected, float(result.get("tolerance_pct") or 0))
    first = len(data)
    explanations = result.get("explanations") or []
    data += [_explained_trace(e, visible=(i == 0)) for i, e in enumerate(explanations)]
    data += [_measured_trace(run, k) for k, run in enumerate(runs)]   # last: markers over the lines
    sizes = [e["bytes"] for e in expected] + [r["bytes"] for run in runs for r in run.get("rows") or []]
    xaxis = axis("message size (nccl-tests size column)", type="log", **size_ticks([s for s in sizes if s > 0] or [1]))
    layout = {"xaxis": xaxis, "yaxis": axis("bus bandwidth (GB/s)", rangemode="tozero"),
              "legend": {"orientation": "h", "y": -0.2, "x": 0, "yanchor": "top"}}
    return figure("diagnosis", title, data, layout, table=_table(expected, runs), height=460,
                  explained=list(range(first, first + len(explanations))))


def _table(expected: list[dict], runs: list[dict]) -> dict:
    columns = ["bytes", "predicted_busbw_gbps", "low_gbps", "high_gbps"]
    columns += [f"{run.get('label')}: measured_busbw_gbps" for run in runs]
    measured = [{r["bytes"]: r.get("busbw_gbps") for r in run.get("rows") or []} for run in runs]
    rows = [[e["bytes"], _sig(e["busbw_gbps"]), _sig(e["low_gbps"]), _sig(e["high_gbps"]),
             *[m.get(e["bytes"]) for m in measured]] for e in expected]
    return {"columns": columns, "rows": rows}


def diagnosis_figures(result: dict) -> dict[str, dict]:
    """The result page's figures of a diagnosis: ``{"diagnosis": ...}``."""
    return {"diagnosis": diagnosis_figure(result or {})}


def diagnosis_context(result: dict) -> dict:
    """What the diagnosis page prints: ``headline`` (healthy, or the most likely fault and its
    fit), ``explanations`` (rank, label, kind, fit error, runs explained) and ``runs`` (label,
    hosts, healthy, sizes outside the band, worst measured/predicted ratio)."""
    result = result or {}
    explanations = [{"rank": e.get("rank"), "label": e.get("label") or e.get("target"),
                     "kind": (e.get("kind") or "").replace("_", " "), "target": e.get("target"),
                     "fit": _pct(e.get("fit_error_pct")), "runs": ", ".join(e.get("runs") or []) or "none"}
                    for e in result.get("explanations") or []]
    runs = [{"label": r.get("label"), "hosts": ", ".join(r.get("hosts") or []) or "all",
             "healthy": bool(r.get("healthy")), "outside": ", ".join(size_label(b) for b in r.get("outside") or []) or "—",
             "worst_ratio": "—" if r.get("worst_ratio") is None else f"{100 * r['worst_ratio']:.0f} %"}
            for r in result.get("runs") or []]
    return {"headline": _headline(result), "explanations": explanations, "runs": runs,
            "tolerance": f"{float(result.get('tolerance_pct') or 0):g}"}


def _pct(x) -> str:
    return "N/A" if x is None else f"{x:.1f} %"


def _headline(result: dict) -> dict:
    """``{"healthy", "text"}``: the verdict in one line."""
    if result.get("healthy"):
        return {"healthy": True, "text": "Healthy: every run is within the predicted band"}
    top = (result.get("explanations") or [None])[0]
    if top is None:
        return {"healthy": False, "text": "Outside the predicted band, and no single fault explains it"}
    return {"healthy": False, "text": f"Most likely: {top.get('label') or top.get('target')} "
                                      f"(fit {_pct(top.get('fit_error_pct'))})"}
