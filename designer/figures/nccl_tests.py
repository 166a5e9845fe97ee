"""nccl-tests side by side: predicted bus bandwidth against message size (log x), a real run over it.

Built from :func:`designer.engine.analysis.nccl_tests.side_by_side`'s output (through
``designer.bridge.nccl_tests_sweep``): ``rows`` (predicted sweep), ``measured`` (a parsed run's
rows, out-of-place and in-place), ``comparison``.
"""
from __future__ import annotations

from designer.figures.base import axis, empty_figure, figure
from designer.figures.style import PALETTE, rnd

__all__ = ["busbw_figure", "page_context", "size_label"]

_UNITS = ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))


def size_label(size_bytes) -> str:
    """``8`` → ``'8 B'``, ``8589934592`` → ``'8 GiB'``, ``50331648`` → ``'48 MiB'``."""
    for scale, unit in _UNITS:
        if size_bytes >= scale:
            return f"{size_bytes / scale:.3g} {unit}"
    return f"{size_bytes:g} B"


def _ticks(sizes: list[int]) -> dict:
    # Every other power of two from the smallest size (8 B, 32 B, … 8 GiB for nccl-tests' default
    # -b 8 -e 8G): readable at 31 sizes, and both ends of the sweep are labelled.
    lo, hi = min(sizes), max(sizes)
    v = 1 << (int(lo).bit_length() - 1)
    vals = []
    while v <= hi:
        vals.append(v)
        v *= 4
    return {"tickvals": vals, "ticktext": [size_label(v) for v in vals]}


def _predicted_trace(rows: list[dict]) -> dict:
    algos = [r.get("algorithm") or "—" for r in rows]
    return {"type": "scatter", "mode": "lines+markers", "name": "predicted",
            "x": [r["size_bytes"] for r in rows], "y": [rnd(r["busbw_gbs"], 3) for r in rows],
            "customdata": [[rnd(r["time_us"], 3), rnd(r["algbw_gbs"], 3), a, size_label(r["size_bytes"])]
                           for r, a in zip(rows, algos)],
            "line": {"color": PALETTE[0], "width": 2}, "marker": {"size": 6},
            "hovertemplate": "%{customdata[3]}<br>busbw %{y:.2f} GB/s<br>algbw %{customdata[1]:.2f} GB/s"
                             "<br>time %{customdata[0]:.2f} µs<br>algorithm %{customdata[2]}<extra>predicted</extra>"}


def _measured_trace(rows: list[dict]) -> dict:
    good = [r for r in rows if (r.get("out_of_place") or {}).get("busbw_gbs") is not None]
    return {"type": "scatter", "mode": "markers", "name": "measured (out-of-place)",
            "x": [r["size_bytes"] for r in good], "y": [r["out_of_place"]["busbw_gbs"] for r in good],
            "customdata": [[r["out_of_place"]["time_us"], r["out_of_place"]["algbw_gbs"], size_label(r["size_bytes"])]
                           for r in good],
            "marker": {"color": PALETTE[1], "size": 9, "symbol": "diamond"},
            "hovertemplate": "%{customdata[2]}<br>busbw %{y:.2f} GB/s<br>algbw %{customdata[1]:.2f} GB/s"
                             "<br>time %{customdata[0]} µs<extra>measured</extra>"}


def _with_run_sizes(rows: list[dict], comparison: list[dict]) -> list[dict]:
    """The sweep plus the predictions made at the run's own sizes, so the predicted line spans
    every measured point (a run to 16 GiB over an 8 GiB sweep)."""
    points = {r["size_bytes"]: r for r in rows}
    for c in comparison:
        points.setdefault(c["size_bytes"], {"size_bytes": c["size_bytes"], "algorithm": c.get("algorithm"),
                                            **c["predicted"]})
    return [points[k] for k in sorted(points)]


def busbw_figure(out: dict, *, title: str | None = None) -> dict:
    """Bus bandwidth (GB/s) against message size (bytes, log axis): predicted line, measured markers.

    Parameters
    ----------
    out : dict
        ``rows`` and optionally ``measured`` (see the module docstring), ``op``, ``ranks``.
    title : str, optional

    Returns
    -------
    dict
        A figure dict (``kind`` ``nccl_busbw``); its table holds size, predicted busbw and, per
        size of the run, measured busbw and the error in %.
    """
    rows, measured = out.get("rows") or [], out.get("measured") or []
    title = title or f"{out.get('op', 'collective')} bus bandwidth, {out.get('ranks', '?')} ranks"
    if not rows:
        return empty_figure("nccl_busbw", title, "No sizes to draw.")
    data = [_predicted_trace(_with_run_sizes(rows, out.get("comparison") or []))]
    if measured:
        data.append(_measured_trace(measured))
    sizes = [r["size_bytes"] for r in rows] + [r["size_bytes"] for r in measured]
    layout = {"xaxis": axis("message size (nccl-tests size column)", type="log", **_ticks([s for s in sizes if s > 0]
                                                                                          or [1])),
              "yaxis": axis("bus bandwidth (GB/s)", rangemode="tozero"),
              "legend": {"orientation": "h", "y": -0.22, "x": 0, "yanchor": "top"}}
    errors = {c["size_bytes"]: c for c in out.get("comparison") or []}
    table = {"columns": ["size_bytes", "predicted_busbw_gbs", "measured_busbw_gbs", "error_pct"],
             "rows": [[r["size_bytes"], rnd(r["busbw_gbs"], 3),
                       (errors.get(r["size_bytes"]) or {}).get("measured", {}).get("busbw_gbs"),
                       rnd((errors.get(r["size_bytes"]) or {}).get("error_pct"), 2)] for r in rows]}
    return figure("nccl_busbw", title, data, layout, table=table, height=440)


def _fmt(x, spec: str) -> str:
    return "N/A" if x is None else format(x, spec)


def page_context(out: dict | None) -> dict:
    """What the nccl-tests page shows: ``figures`` (``nccl_busbw``), the predicted ``rows``, the
    ``comparison`` rows as display strings (size, measured/predicted time and busbw, error) and a
    ``summary`` of headline figures."""
    if not out:
        return {"figures": {}, "rows": [], "comparison": [], "summary": None}
    rows = [{"size": size_label(r["size_bytes"]), "size_bytes": r["size_bytes"], "count": r["count"],
             "time": _fmt(r["time_us"], ".2f"), "algbw": _fmt(r["algbw_gbs"], ".2f"),
             "busbw": _fmt(r["busbw_gbs"], ".2f"), "algorithm": r.get("algorithm") or "—",
             "protocol": r.get("protocol") or "—"} for r in out["rows"]]
    comparison = [{"size": size_label(c["size_bytes"]), "size_bytes": c["size_bytes"],
                   "m_time": _fmt(c["measured"]["time_us"], ".2f"), "m_busbw": _fmt(c["measured"]["busbw_gbs"], ".2f"),
                   "p_time": _fmt(c["predicted"]["time_us"], ".2f"), "p_busbw": _fmt(c["predicted"]["busbw_gbs"], ".2f"),
                   "error": _fmt(c["error_pct"], "+.1f"), "algorithm": c.get("algorithm") or "—",
                   "bad": c["error_pct"] is not None and abs(c["error_pct"]) > 10} for c in out["comparison"]]
    return {"figures": {"nccl_busbw": busbw_figure(out)}, "rows": rows, "comparison": comparison,
            "summary": _summary(out)}


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
