"""A job's step as a Gantt chart: one bar per phase (compute and communication), the critical
path highlighted, the step time and the exposed communication in the title (``summary.job``,
docs/FORMATS.md, Result)."""
from __future__ import annotations

from designer.figures.base import axis, figure
from designer.figures.style import FAILED_COLOR, PALETTE, fmt_time, num, rnd

__all__ = ["MAX_PHASES_DRAWN", "ROW_PX", "job_figure"]

# A Gantt of more rows than this is unreadable and heavy; the critical path is always kept.
# Every row is ROW_PX tall so every label fits beside its own bar (11 px font).
MAX_PHASES_DRAWN = 300
ROW_PX = 18
_GANTT_CHROME_PX = 150
_SERIES = (("compute", "compute", PALETTE[0]), ("communication", "communication", PALETTE[1]),
           ("critical", "critical path", FAILED_COLOR), ("hung", "never finishes", FAILED_COLOR))


def job_figure(result: dict) -> dict | None:
    """The Gantt of ``summary.job`` (None when the result has no job).

    Bars start at each phase's ``start_s`` and last until its ``end_s`` (ms); a phase that never
    finished is drawn a little past the step's last event, hatched ("never finishes"), and named
    in the title. Rows are in phase order, each ``ROW_PX`` tall and labelled.
    """
    job = (result.get("summary") or {}).get("job")
    if not job or not job.get("phases"):
        return None
    phases = _drawn(job)
    horizon = max((num(p.get("end_s")) or num(p.get("start_s")) or 0.0 for p in job["phases"]), default=0.0)
    series, rows = _bars(phases, horizon)
    data = [{"type": "bar", "orientation": "h", "name": label, "y": series[key]["y"], "x": series[key]["x"],
             "base": series[key]["base"], "hovertext": series[key]["text"], "hoverinfo": "text",
             "marker": {"color": color, **({"pattern": {"shape": "/"}} if key == "hung" else {})}}
            for key, label, color in _SERIES if series[key]["y"]]
    height = _GANTT_CHROME_PX + ROW_PX * len(rows)
    return figure("job", _title(job, len(phases)), data, _layout([r[0] for r in rows], height), height=height,
                  table={"columns": ["phase", "start_s", "end_s", "critical"], "rows": rows})


def _bars(phases: list[dict], horizon: float) -> tuple[dict, list]:
    """Per series the bars (ms) and hover texts, and the table rows, of the drawn phases."""
    series = {key: {"y": [], "x": [], "base": [], "text": []} for key, _, _ in _SERIES}
    rows = []
    for p in phases:
        start = num(p.get("start_s"))
        if start is None or _idle(p):
            continue
        end = num(p.get("end_s"))
        done = end is not None
        # A hung phase runs past the last event: a visible stub (5 % of the horizon), hatched.
        end = end if done else max(horizon, start) + 0.05 * horizon
        key = ("hung" if not done else "critical" if p.get("critical")
               else "communication" if p.get("patterns") else "compute")
        s = series[key]
        s["y"].append(p["id"])
        s["base"].append(start * 1e3)
        s["x"].append(max(end - start, 0.0) * 1e3)
        s["text"].append(f"{p['id']}: {fmt_time(start)} → {fmt_time(end) if done else 'never finishes'}"
                         + (f"<br>patterns {', '.join(p['patterns'])}" if p.get("patterns") else ""))
        rows.append([p["id"], rnd(start, 9), rnd(end, 9) if done else None, bool(p.get("critical"))])
    return series, rows


def _layout(order: list[str], height: int) -> dict:
    """One labelled row per phase, in phase order: Plotly orders categories by trace (all compute
    rows, then all communication rows) and, with rows under ~15 px, labels only every other one,
    so past ~40 rows labels sat beside other phases' bars. The legend sits a fixed 44 px under
    the axis (a fraction of a tall plot left a wide gap)."""
    return {"barmode": "overlay", "xaxis": axis("time (ms)"),
            "yaxis": {"autorange": "reversed", "automargin": True, "type": "category",
                      "categoryorder": "array", "categoryarray": order,
                      "tickmode": "array", "tickvals": order, "ticktext": order, "tickfont": {"size": 11}},
            "margin": {"l": 120, "r": 30, "t": 70, "b": 60},
            "legend": {"orientation": "h", "x": 0, "yanchor": "top", "y": -44 / max(height - 70 - 60, 1)}}


def _idle(phase: dict) -> bool:
    """A phase with no compute and no pattern (an inference request's arrival wait, an empty
    join), off the critical path: no bar."""
    return not phase.get("compute_s") and not phase.get("patterns") and not phase.get("critical")


def _drawn(job: dict) -> list[dict]:
    """Phases to draw: all, or the critical path plus the earliest others up to the cap."""
    phases = job["phases"]
    if len(phases) <= MAX_PHASES_DRAWN:
        return phases
    critical = [p for p in phases if p.get("critical")]
    room = max(0, MAX_PHASES_DRAWN - len(critical))
    others = [p for p in phases if not p.get("critical")][:room]
    keep = {id(p) for p in critical + others}
    return [p for p in phases if id(p) in keep]


def _title(job: dict, drawn: int) -> str:
    inf = job.get("inference")
    if inf and job.get("complete"):
        text = (f"{inf.get('requests')} requests: the last cache reaches decode at {fmt_time(job.get('step_time_s'))}"
                f" · {'keeps up' if inf.get('keeps_up') else 'cannot keep up'}")
    elif job.get("complete"):
        text = (f"Step {fmt_time(job.get('step_time_s'))} · compute {fmt_time(job.get('compute_s'))} · "
                f"exposed communication {fmt_time(job.get('exposed_communication_s'))}")
    else:
        text = f"The step does not complete — {job.get('reason') or 'a phase never finishes'}"
    if inf and (inf.get("kv_transfer_s") or {}).get("mean") is not None:
        kv = inf["kv_transfer_s"]
        text += (f"<br>KV transfer per request {fmt_time(kv['mean'])} (max {fmt_time(kv['max'])}), "
                 f"limited by {inf.get('limiting_link') or '—'}")
    if drawn < len(job["phases"]):
        text += f" · {drawn:,} of {len(job['phases']):,} phases drawn"
    return text
