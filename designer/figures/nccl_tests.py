"""nccl-tests side by side: predicted bus bandwidth and time against message size (log x), real
runs over them.

Built from :func:`designer.engine.analysis.nccl_tests.side_by_side`'s output (through
``designer.bridge.nccl_tests_sweep``): ``rows`` (predicted sweep), ``runs`` (each a parsed run's
``name``, ``measured`` rows, ``comparison`` and ``curve``).

Axes. The size axis is logarithmic, labelled at powers of two (``log2``: 8 B, 32 B, … 8 GiB, the
sizes nccl-tests doubles through) or of ten (``log10``: 10 B, 1 kB, … 10 GB); a log scale is
the same drawing in any base, so only the ticks differ. Bus bandwidth is on a linear or a log
axis, time always on a log axis (it spans µs to seconds). Each figure's ``fabricscope.axes``
holds the tick sets of both size bases so the page can switch without asking the server
(``static/js/nccl_axes.js``).
"""
from __future__ import annotations

import math

from designer.figures.base import axis, empty_figure, figure
from designer.figures.style import PALETTE

__all__ = ["BUSBW_AXES", "SIZE_AXES", "busbw_figure", "page_context", "size_label", "size_ticks", "time_figure"]

_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
_DECIMAL = ((10 ** 12, "TB"), (10 ** 9, "GB"), (10 ** 6, "MB"), (10 ** 3, "kB"))
#: Size-axis labellings: powers of two (binary units) or of ten (decimal units).
SIZE_AXES = ("log2", "log10")
#: Bus-bandwidth axis scales.
BUSBW_AXES = ("linear", "log")
# Labels a size axis holds unrotated at half the page's width (~440 px).
_MAX_TICKS = 9
# One marker shape per overlaid run, so runs stay apart in print and for colour-blind readers.
_SYMBOLS = ("diamond", "square", "triangle-up", "x", "cross", "star")


def size_label(size_bytes) -> str:
    """``8`` → ``'8 B'``, ``8589934592`` → ``'8 GiB'``, ``50331648`` → ``'48 MiB'``."""
    for scale, unit in _UNITS:
        if size_bytes >= scale:
            return f"{size_bytes / scale:.3g} {unit}"
    return f"{size_bytes:g} B"


def _decimal_label(size_bytes: int) -> str:
    for scale, unit in _DECIMAL:
        if size_bytes >= scale:
            return f"{size_bytes / scale:g} {unit}"
    return f"{size_bytes:g} B"


def size_ticks(sizes: list[int], base: str = "log2") -> dict:
    """Tick values and labels (bytes) covering ``sizes`` on a log size axis.

    Parameters
    ----------
    sizes : list of int
        Positive sizes in bytes.
    base : {"log2", "log10"}
        ``log2``: every 4th, 16th … power of two from the smallest size, the first step that
        keeps to :data:`_MAX_TICKS` labels (8 B, 128 B, … 2 GiB for nccl-tests' default
        ``-b 8 -e 8G``: unrotated labels on a half-width figure);
        ``log10``: every power of ten from below the smallest to above the largest, decimal units.

    Returns
    -------
    dict
        ``tickvals`` (bytes) and ``ticktext``.
    """
    lo, hi = min(sizes), max(sizes)
    if base == "log10":
        vals = [10 ** k for k in range(int(math.floor(math.log10(lo))), int(math.ceil(math.log10(hi))) + 1)]
        return {"tickvals": vals, "ticktext": [_decimal_label(v) for v in vals]}
    first, step = 1 << (int(lo).bit_length() - 1), 4
    while len(_powers(first, hi, step)) > _MAX_TICKS:
        step *= 4
    vals = _powers(first, hi, step)
    return {"tickvals": vals, "ticktext": [size_label(v) for v in vals]}


def _powers(first: int, hi: int, step: int) -> list[int]:
    vals, v = [], first
    while v <= hi:
        vals.append(v)
        v *= step
    return vals


def _sig(x, digits: int = 4):
    """``x`` to ``digits`` significant digits: a log axis needs 0.0004 GB/s kept, not rounded to 0."""
    return None if x is None else float(f"{x:.{digits}g}")


def _runs(out: dict) -> list[dict]:
    """The overlaid runs (``runs``, or a single legacy ``measured`` as one run)."""
    if out.get("runs"):
        return out["runs"]
    return [{"name": "measured", "measured": out["measured"], "comparison": out.get("comparison") or []}] \
        if out.get("measured") else []


def _predicted_trace(rows: list[dict], y: str) -> dict:
    algos = [r.get("algorithm") or "—" for r in rows]
    return {"type": "scatter", "mode": "lines+markers", "name": "predicted",
            "x": [r["size_bytes"] for r in rows], "y": [_sig(r[y]) for r in rows],
            "customdata": [[_sig(r["time_us"]), _sig(r["algbw_gbs"]), _sig(r["busbw_gbs"]), a,
                            r.get("protocol") or "—", size_label(r["size_bytes"])] for r, a in zip(rows, algos)],
            "line": {"color": PALETTE[0], "width": 2}, "marker": {"size": 6},
            "hovertemplate": "%{customdata[5]}<br>busbw %{customdata[2]:.2f} GB/s<br>algbw %{customdata[1]:.2f} GB/s"
                             "<br>time %{customdata[0]:.2f} µs<br>%{customdata[3]} / %{customdata[4]}"
                             "<extra>predicted</extra>"}


def _measured_trace(run: dict, k: int, y: str) -> dict:
    good = [r for r in run["measured"] if (r.get("out_of_place") or {}).get(y) is not None]
    return {"type": "scatter", "mode": "markers", "name": run["name"],
            "x": [r["size_bytes"] for r in good], "y": [r["out_of_place"][y] for r in good],
            "customdata": [[r["out_of_place"]["time_us"], r["out_of_place"]["algbw_gbs"],
                            r["out_of_place"]["busbw_gbs"], size_label(r["size_bytes"])] for r in good],
            "marker": {"color": PALETTE[(k + 1) % len(PALETTE)], "size": 9, "symbol": _SYMBOLS[k % len(_SYMBOLS)]},
            "hovertemplate": "%{customdata[3]}<br>busbw %{customdata[2]} GB/s<br>algbw %{customdata[1]} GB/s"
                             "<br>time %{customdata[0]} µs<extra>%{fullData.name}</extra>"}


def _with_run_sizes(rows: list[dict], runs: list[dict]) -> list[dict]:
    """The sweep plus the predictions made at the runs' own sizes, so the predicted line spans
    every measured point (a run to 16 GiB over an 8 GiB sweep)."""
    points = {r["size_bytes"]: r for r in rows}
    for run in runs:
        for c in run.get("comparison") or []:
            points.setdefault(c["size_bytes"], {"size_bytes": c["size_bytes"], "algorithm": c.get("algorithm"),
                                                **c["predicted"]})
    return [points[k] for k in sorted(points)]


def _size_axis(rows: list[dict], runs: list[dict], size_axis: str) -> tuple[dict, dict]:
    """The x axis (log, ticks of ``size_axis``) and both tick sets for the page's switch."""
    sizes = [r["size_bytes"] for r in rows] + [m["size_bytes"] for run in runs for m in run["measured"]]
    sizes = [s for s in sizes if s > 0] or [1]
    ticks = {base: size_ticks(sizes, base) for base in SIZE_AXES}
    return axis("message size (nccl-tests size column)", type="log", **ticks[size_axis]), {"size": ticks}


def _legend() -> dict:
    return {"orientation": "h", "y": -0.22, "x": 0, "yanchor": "top"}


def busbw_figure(out: dict, *, title: str | None = None, size_axis: str = "log2", busbw_axis: str = "linear") -> dict:
    """Bus bandwidth (GB/s) against message size (bytes, log axis): predicted line, one marker
    trace per run (named by its file).

    Parameters
    ----------
    out : dict
        ``rows`` and optionally ``runs`` (see the module docstring), ``op``, ``ranks``.
    title : str, optional
    size_axis : {"log2", "log10"}
        Labels of the size axis.
    busbw_axis : {"linear", "log"}
        Scale of the bandwidth axis.

    Returns
    -------
    dict
        A figure dict (``kind`` ``nccl_busbw``); its table holds size, predicted busbw and, per
        run, measured busbw and the error in %.
    """
    rows, runs = out.get("rows") or [], _runs(out)
    title = title or f"{out.get('op', 'collective')} bus bandwidth, {out.get('ranks', '?')} ranks"
    if not rows:
        return empty_figure("nccl_busbw", title, "No sizes to draw.")
    data = [_predicted_trace(_with_run_sizes(rows, runs), "busbw_gbs")]
    data += [_measured_trace(run, k, "busbw_gbs") for k, run in enumerate(runs)]
    xaxis, axes = _size_axis(rows, runs, size_axis)
    # dtick 1 on a log axis: one label a decade (Plotly's default adds 2 and 5 between, unreadable
    # over the 7+ decades a sweep spans).
    yaxis = axis("bus bandwidth (GB/s)", type="log", dtick=1) if busbw_axis == "log" else \
        axis("bus bandwidth (GB/s)", type="linear", rangemode="tozero")
    return figure("nccl_busbw", title, data, {"xaxis": xaxis, "yaxis": yaxis, "legend": _legend()},
                  table=_table(rows, runs, "busbw_gbs", with_error=True), height=440, axes=axes)


def time_figure(out: dict, *, title: str | None = None, size_axis: str = "log2") -> dict:
    """Time (µs, log axis) against message size (bytes, log axis): where the collective is
    latency-bound (flat) and where bandwidth-bound (slope 1), predicted line and one marker trace
    per run.

    Parameters
    ----------
    out : dict
        As :func:`busbw_figure`.
    title : str, optional
    size_axis : {"log2", "log10"}

    Returns
    -------
    dict
        A figure dict (``kind`` ``nccl_time``); its table holds size, predicted time and each
        run's measured time (µs).
    """
    rows, runs = out.get("rows") or [], _runs(out)
    title = title or f"{out.get('op', 'collective')} time, {out.get('ranks', '?')} ranks"
    if not rows:
        return empty_figure("nccl_time", title, "No sizes to draw.")
    data = [_predicted_trace(_with_run_sizes(rows, runs), "time_us")]
    data += [_measured_trace(run, k, "time_us") for k, run in enumerate(runs)]
    xaxis, axes = _size_axis(rows, runs, size_axis)
    layout = {"xaxis": xaxis, "yaxis": axis("time (µs, nccl-tests time column)", type="log", dtick=1),
              "legend": _legend()}
    return figure("nccl_time", title, data, layout, table=_table(rows, runs, "time_us"), height=440, axes=axes)


def _table(rows: list[dict], runs: list[dict], key: str, *, with_error: bool = False) -> dict:
    """Per predicted size: the prediction, and per run its measured value (and busbw error)."""
    columns = ["size_bytes", f"predicted_{key}"]
    by_run = []
    for run in runs:
        columns.append(f"{run['name']}: measured_{key}")
        if with_error:
            columns.append(f"{run['name']}: error_pct")
        by_run.append({c["size_bytes"]: c for c in run.get("comparison") or []})
    table = []
    for r in rows:
        line = [r["size_bytes"], _sig(r[key])]
        for errors in by_run:
            c = errors.get(r["size_bytes"]) or {}
            line.append((c.get("measured") or {}).get(key))
            if with_error:
                line.append(_sig(c.get("error_pct")))
        table.append(line)
    return {"columns": columns, "rows": table}


def _fmt(x, spec: str) -> str:
    return "N/A" if x is None else format(x, spec)


def page_context(out: dict | None, *, size_axis: str = "log2", busbw_axis: str = "linear") -> dict:
    """What the nccl-tests page shows: ``figures`` (``nccl_busbw``, ``nccl_time``, drawn with the
    given axes), the predicted ``rows``, the ``comparison`` rows of every run as display strings
    (``run``, size, measured/predicted time and busbw, error), ``fits`` (per run: name, ranks and
    :func:`designer.engine.analysis.nccl_tests.curve_summary` printed) and a ``summary`` of
    headline figures (the first run's fit)."""
    if not out:
        return {"figures": {}, "rows": [], "comparison": [], "fits": [], "summary": None}
    rows = [{"size": size_label(r["size_bytes"]), "size_bytes": r["size_bytes"], "count": r["count"],
             "time": _fmt(r["time_us"], ".2f"), "algbw": _fmt(r["algbw_gbs"], ".2f"),
             "busbw": _fmt(r["busbw_gbs"], ".2f"), "algorithm": r.get("algorithm") or "—",
             "protocol": r.get("protocol") or "—"} for r in out["rows"]]
    runs = _runs(out)
    comparison = [_comparison_row(run["name"], c) for run in runs for c in run.get("comparison") or []]
    figures = {"nccl_busbw": busbw_figure(out, size_axis=size_axis, busbw_axis=busbw_axis),
               "nccl_time": time_figure(out, size_axis=size_axis)}
    return {"figures": figures, "rows": rows, "comparison": comparison, "summary": _summary(out),
            "fits": [_fit(run) for run in runs if run.get("curve")]}


def _comparison_row(name: str, c: dict) -> dict:
    return {"run": name, "size": size_label(c["size_bytes"]), "size_bytes": c["size_bytes"],
            "m_time": _fmt(c["measured"]["time_us"], ".2f"), "m_busbw": _fmt(c["measured"]["busbw_gbs"], ".2f"),
            "p_time": _fmt(c["predicted"]["time_us"], ".2f"), "p_busbw": _fmt(c["predicted"]["busbw_gbs"], ".2f"),
            "error": _fmt(c["error_pct"], "+.1f"), "algorithm": c.get("algorithm") or "—",
            "bad": c["error_pct"] is not None and abs(c["error_pct"]) > 10}


def _fit(run: dict) -> dict:
    """One run's fit, printed: sizes within tolerance, median and worst |busbw error|."""
    curve = run["curve"]
    fitted = bool(curve.get("sizes"))
    return {"name": run["name"], "ranks": run.get("measured_ranks") or "—",
            "within": f"{curve['within']} of {curve['sizes']}" if fitted else "—",
            "median_error": _fmt(curve["median_abs_error_pct"], ".1f") if fitted else "N/A",
            "worst_error": _fmt(curve["worst_abs_error_pct"], ".1f") if fitted else "N/A",
            "worst_size": size_label(curve["worst_size_bytes"]) if fitted else "—"}


def _summary(out: dict) -> dict:
    """Headline figures: the smallest size's time (latency-bound), the largest size's busbw and
    algorithm, and with a run the curve's fit (:func:`designer.engine.analysis.nccl_tests.curve_summary`:
    sizes within tolerance, median and worst |error| of busbw, and where the worst is)."""
    first, last = out["rows"][0], out["rows"][-1]
    curve = out.get("curve") or {}
    fitted = bool(curve.get("sizes"))
    return {"small_size": size_label(first["size_bytes"]), "small_time": _fmt(first["time_us"], ".1f"),
            "large_size": size_label(last["size_bytes"]), "large_busbw": _fmt(last["busbw_gbs"], ".0f"),
            "large_algorithm": last.get("algorithm") or "—",
            "median_error": _fmt(curve["median_abs_error_pct"], ".1f") if fitted else None,
            "worst_error": _fmt(curve["worst_abs_error_pct"], ".1f") if fitted else None,
            "worst_size": size_label(curve["worst_size_bytes"]) if fitted else None,
            "within": f"{curve['within']} of {curve['sizes']}" if fitted else None,
            "tolerance": f"{curve['tolerance_pct']:g}" if fitted else None}
