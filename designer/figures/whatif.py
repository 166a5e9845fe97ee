"""What-if views: completion before → after, what changed, the failure-sweep ranking and the
NIC-policy comparison, and the figure sets of a sweep or policy-comparison job.
"""
from __future__ import annotations

import math

from designer.figures.base import axis, empty_figure, figure, table_figure
from designer.figures.style import (FAILED_COLOR, PALETTE, TIER_LABELS, fallback_rails, fmt_gbps, fmt_time,
                                     num, pct)

__all__ = ["whatif_figures", "failure_label", "ranking_figure", "policy_results", "policy_figure",
           "figures_for_sweep", "figures_for_policies"]

# Row tone per kind of change (base.TABLE_TONES): lost flows red, moved flows amber, new hot spots blue.
_CHANGE_TONES = {"disconnected": "bad", "rerouted": "warn", "new bottleneck": "info"}


# ================================================================================ one diff
def _diff_summary(diff: dict) -> dict:
    """The diff's summary (a full ``result.diff`` nests it; a sweep entry's ``diff_summary`` is it)."""
    return diff.get("summary") if isinstance(diff.get("summary"), dict) else diff


def _diff_patterns(diff: dict) -> dict:
    """``{pattern: (before_s, after_s, complete, flows lost)}`` from a diff or a diff summary."""
    out = {}
    for p, v in (_diff_summary(diff).get("patterns") or {}).items():
        c = v.get("completion_s") if isinstance(v, dict) else None
        if isinstance(c, dict):
            # A broken pattern has no completion; its bar shows when the surviving flows finish.
            after = num(c.get("after")) if c.get("after") is not None else num(v.get("surviving_completion_s"))
            out[p] = (num(c.get("before")), after, v.get("complete", True), v.get("disconnected", 0))
    return out


def whatif_figures(diff: dict | None, *, label: str = "") -> dict[str, dict]:
    """Completion before/after per pattern, and the table of what changed.

    Parameters
    ----------
    diff : dict or None
        ``result["diff"]`` of :func:`designer.engine.analysis.whatif.simulate_with_diff`, or a sweep entry's
        ``diff_summary`` (counts only: the table then lists the counts and top new bottlenecks).
    label : str
        Appended to titles (the failure's label on a sweep page).

    Returns
    -------
    dict of str to dict
        ``whatif_completion`` and ``whatif_changes``; empty without a diff.
    """
    if not diff:
        return {}
    suffix = f" · {label}" if label else ""
    pats = _diff_patterns(diff)
    title = "Completion time before → after" + suffix
    if pats:
        figs = {"whatif_completion": _completion_figure(title, pats)}
    else:
        figs = {"whatif_completion": empty_figure("whatif_completion", title, "No pattern to compare.")}
    figs["whatif_changes"] = _changes_table(diff, suffix)
    return figs


def _change_text(before_ms, after_ms, pat: tuple) -> str:
    if not pat[2]:
        # The bar is the surviving flows' time; the pattern itself cannot finish.
        lost = pat[3]
        return f"does not complete · {lost:,} flow{'s' if lost != 1 else ''} lost"
    if after_ms is not None and before_ms:
        return f"{(after_ms / before_ms - 1):+.0%}"
    return "no flow left" if after_ms is None else "—"


def _completion_figure(title: str, pats: dict) -> dict:
    ids = list(pats)
    before = [pats[p][0] * 1e3 if pats[p][0] is not None else None for p in ids]
    after = [pats[p][1] * 1e3 if pats[p][1] is not None else None for p in ids]
    change = [_change_text(b, a, pats[p]) for p, b, a in zip(ids, before, after)]
    data = [{"type": "bar", "name": "baseline", "x": ids, "y": before, "marker": {"color": "#9aa0a8"},
             "hovertemplate": "%{x} baseline: %{y:.4g} ms<extra></extra>"},
            {"type": "bar", "name": "with failures", "x": ids, "y": after, "marker": {"color": "#d7263d"},
             "text": change, "textposition": "outside", "cliponaxis": False,
             "hovertemplate": "%{x} with failures: %{y:.4g} ms<extra></extra>"}]
    top = max([v for v in before + after if v is not None], default=1) or 1
    layout = {"barmode": "group", "yaxis": axis("completion time (ms)", range=[0, top * 1.25]),
              # Legend under the axis: above the plot it collided with long titles.
              "xaxis": axis("pattern"), "legend": {"orientation": "h", "y": -0.28, "x": 0.5,
                                                    "xanchor": "center", "yanchor": "top"}}
    return figure("whatif_completion", title, data, layout, table={
        "columns": ["pattern", "before_s", "after_s", "complete", "flows_lost"],
        "rows": [[p, *pats[p]] for p in ids]})


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
    rows += [_new_bottleneck_row(b) for b in diff.get("new_bottlenecks") or []]
    for u in diff.get("utilization_shifts") or []:
        rows.append(["utilization shift", u.get("id"), f"{pct(u.get('before'))} → {pct(u.get('after'))}"])
    return rows


def _new_bottleneck_row(b) -> list:
    if not isinstance(b, dict):
        return ["new bottleneck", str(b), ""]
    return ["new bottleneck", b.get("id"), f"{TIER_LABELS.get(b.get('tier'), b.get('tier') or '')}, "
                                           f"limits {b.get('flows', 0):,} flows, {pct(b.get('utilization'))}"]


def _summary_rows(s: dict) -> list[list]:
    """Rows of a sweep entry's summary: counts and the top new bottlenecks only."""
    rows = [[k, f"{s.get(key, 0):,} flows", ""] for k, key in (("disconnected", "disconnected"),
            ("rerouted", "rerouted"), ("slower", "slower_flows"), ("faster", "faster_flows")) if s.get(key)]
    return rows + [["new bottleneck", r, ""] for r in s.get("new_bottlenecks") or []]


def _changes_counts(s: dict, diff: dict) -> str:
    mx = s.get("max_utilization") or {}
    counts = (f"{s.get('disconnected', 0):,} disconnected, {s.get('rerouted', 0):,} rerouted, "
              f"{s.get('new_bottleneck_count', len(s.get('new_bottlenecks') or [])):,} new bottlenecks")
    if isinstance(mx, dict) and mx.get("before") is not None:
        counts += f", max utilization {pct(mx.get('before'))} → {pct(mx.get('after'))}"
    truncated = diff.get("truncated") or {}
    return counts + "".join(f" (+{n:,} more {k})" for k, n in truncated.items() if n)


def _changes_table(diff: dict, suffix: str = "") -> dict:
    s = _diff_summary(diff)
    title = "What changed" + suffix
    rows = _summary_rows(s) if s is diff else _changes_rows(diff)
    if not rows:
        return empty_figure("whatif_changes", title, "No flow was disconnected, rerouted or slowed, and no new "
                                                     "bottleneck.", height=200)
    counts = _changes_counts(s, diff)
    return table_figure("whatif_changes", title, ["change", "id", "detail"], rows,
                        headers=["change", "flow / resource", "detail"], subtitle=counts, shown=200,
                        tones=[_CHANGE_TONES.get(r[0]) for r in rows])


# ================================================================================ failure sweep
def failure_label(entry: dict) -> str:
    """Label of a sweep ranking entry: its own, else ``"<target> down"`` / ``"<target> ×factor"``."""
    if entry.get("label"):
        return str(entry["label"])
    f = entry.get("failure") or {}
    label = str(f.get("target", "?"))
    return label + (f" ×{f.get('factor')}" if f.get("mode") == "degrade" else " down")


def _ranking_hover(entry: dict, m: dict) -> str:
    job = m.get("job_completion_s") or {}
    head = f"<b>{failure_label(entry)}</b><br>"
    step = m.get("job")
    if step:                       # a job: the step's verdict leads (docs/FORMATS.md, Jobs)
        times = step.get("step_time_s") or {}
        head += (f"<b>step does not complete</b>: {step.get('reason') or ''}<br>" if step.get("complete", {}).get("after") is False
                 else f"step ×{num(step.get('slowdown'), 1.0):.4g}: {fmt_time(times.get('before'))} → "
                      f"{fmt_time(times.get('after'))}<br>")
    if m.get("broken"):
        verdict = f"<b>does not complete</b>: {', '.join(m['broken'])} broken<br>" + _fallback_hover(m.get("fallback"))
    else:
        slow = num(m.get("slowdown"), 1.0)
        verdict = (f"slowdown ×{slow:.3g}{' (' + str(m.get('worst_pattern')) + ')' if m.get('worst_pattern') else ''}<br>")
    return (head + verdict + f"disconnected flows {int(m.get('disconnected_flows') or 0):,}<br>"
            f"job completion {fmt_time(job.get('before'))} → {fmt_time(job.get('after'))}<br>"
            f"throughput lost {fmt_gbps(m.get('throughput_lost_gbps'))}<br><i>click for what changed</i>")


# Marks a bar read after NCCL's fallback (the axis titles say so); short, so labels fit.
_REINIT = "↻ "


def _fallback_hover(fb: dict | None) -> str:
    """What NCCL re-initialized without the failed element runs, per broken collective."""
    if not fb:
        return ""
    parts = []
    for pid, p in (fb.get("patterns") or {}).items():
        if p.get("completion_s") is None:
            parts.append(f"{pid}: no fallback ({p.get('reason') or 'nothing runs'})")
        else:
            parts.append(f"{pid}: {p.get('algorithm')}/{p.get('protocol')}{fallback_rails(p)}, busbw "
                         f"{num(p.get('busbw_before_gbs'), 0.0):.0f} → {num(p.get('busbw_gbs'), 0.0):.0f} GB/s")
    job = "" if fb.get("job_completion_s") is None else f" · job ×{num(fb.get('slowdown'), 1.0):.3g}"
    return f"after NCCL re-initializes without it{job}:<br>&nbsp;&nbsp;" + "<br>&nbsp;&nbsp;".join(parts) + "<br>"


def _after_fallback(m: dict) -> dict:
    """A broken (not a job) failure read after NCCL's fallback, when one runs: its completion
    increase and throughput lost then (what the job really loses), not "everything"."""
    fb = m.get("fallback")
    if not fb or fb.get("unbounded") or m.get("job"):
        return m
    return {**m, "completion_increase_s": fb.get("completion_increase_s"), "completion_unbounded": False,
            "throughput_lost_gbps": fb.get("throughput_lost_gbps"), "after_fallback": True}


def _ranking_panels(imps: list[dict]) -> list[tuple]:
    """``(x axis, values, bar texts, colour)`` of the three panels: disconnected flows, completion
    increase (ms; "does not complete" drawn at the panel's end) and throughput lost (Gb/s) — of a
    broken collective, after NCCL's fallback (``impact.fallback``), marked ``↻``."""
    lost = [int(m.get("disconnected_flows") or 0) for m in imps]
    if any(m.get("job") for m in imps):
        imps = [_step_as_completion(m) for m in imps]
    imps = [_after_fallback(m) for m in imps]
    inc_ms, inc_text = _increase_panel(imps)
    thr = [num(m.get("throughput_lost_gbps"), 0.0) for m in imps]
    thr_text = [(_REINIT if m.get("after_fallback") else "") + fmt_gbps(v) if v else "" for m, v in zip(imps, thr)]
    return [("x", lost, [f"{v:,}" if v else "" for v in lost], FAILED_COLOR),
            ("x2", inc_ms, inc_text, "#f0822e"),
            ("x3", thr, thr_text, "#5d8fd8")]


def _increase_panel(imps: list[dict]) -> tuple[list[float], list[str]]:
    """Completion increases (ms) and their bar texts; "does not complete" at the panel's end."""
    inc = [num(m.get("completion_increase_s")) for m in imps]
    finite = [v * 1e3 for v in inc if v is not None]
    end = max(finite + [0.0]) * 1.15 or 1.0
    inc_ms = [end if m.get("completion_unbounded") else (v or 0.0) * 1e3 for m, v in zip(imps, inc)]
    inc_text = ["does not complete" if m.get("completion_unbounded") else
                ((_REINIT if m.get("after_fallback") else "") + f"{v:+.3g} ms" if v else "")
                for m, v in zip(imps, inc_ms)]
    return inc_ms, inc_text


def _step_as_completion(m: dict) -> dict:
    """A job's impact read by step time: the increase and the "does not complete" of the step."""
    step = m.get("job") or {}
    return {**m, "completion_increase_s": step.get("step_time_increase_s"),
            "completion_unbounded": (step.get("complete") or {}).get("after") is False}


def _ranking_axis(domain, text, values) -> dict:
    return {"domain": domain, "title": {"text": text, "font": {"size": 12}}, "rangemode": "tozero",
            "range": [min(0.0, min(values, default=0.0)) * 1.5, (max(values, default=0.0) or 1.0) * 1.3]}


def _ranking_rows(ranking: list[dict]) -> list[list]:
    rows = []
    for i, e in enumerate(ranking):
        m = e.get("impact") or {}
        job = m.get("job_completion_s") or {}
        rows.append([i + 1, failure_label(e), (e.get("failure") or {}).get("target"),
                     ", ".join(m.get("broken") or []), m.get("disconnected_flows"),
                     job.get("before"), job.get("after"), m.get("completion_increase_s"), m.get("completion_unbounded"),
                     m.get("throughput_lost_gbps"), m.get("slowdown"), m.get("worst_pattern"),
                     *_step_cells(m.get("job")), *_fallback_cells(m.get("fallback"))])
    return rows


def _fallback_cells(fb: dict | None) -> list:
    """Table cells after NCCL's fallback: job (s), slowdown, throughput lost (Gb/s), the worst
    broken collective's busbw (GB/s) and algorithm."""
    if not fb:
        return [None] * 5
    pats = [p for p in (fb.get("patterns") or {}).values()]
    worst = min(pats, key=lambda p: num(p.get("busbw_gbs"), -1.0), default={})
    return [fb.get("job_completion_s"), fb.get("slowdown"), fb.get("throughput_lost_gbps"),
            worst.get("busbw_gbs"), worst.get("algorithm")]


def _step_cells(step: dict | None) -> list:
    """Table cells of a job's step: before and after (s), step slowdown."""
    if not step:
        return [None, None, None]
    times = step.get("step_time_s") or {}
    return [times.get("before"), times.get("after"), step.get("slowdown")]


def _baseline_text(base: dict) -> str:
    step = base.get("job")
    if step:
        return ("step does not complete" if not step.get("complete")
                else f"step {fmt_time(step.get('step_time_s'))}")
    if base.get("complete") is False:
        return "does not complete (" + ", ".join(base.get("broken") or []) + ")"
    return fmt_time(base.get("job_completion_s"))


def _skipped_text(sweep: dict) -> str:
    skipped = sweep.get("skipped") or {}
    parts = []
    if skipped.get("already_failed"):
        parts.append(f"{len(skipped['already_failed']):,} already failed")
    if skipped.get("unwired"):
        parts.append(f"{len(skipped['unwired']):,} unwired")
    return f" · not ranked: {', '.join(parts)}" if parts else ""


def _fallback_note(ranking: list[dict]) -> str:
    """Say when broken collectives are read after NCCL's fallback, and when every failure costs
    the same (a symmetric design: the order is then only the candidates' order)."""
    imps = [e.get("impact") or {} for e in ranking]
    note = " · broken collectives: after NCCL re-initializes without the failure" if any(
        m.get("fallback") for m in imps) else ""
    keys = {repr(_same_impact(m)) for m in imps}
    harmful = [m for m in imps if not _harmless(m)]
    if len(ranking) > 1 and len(keys) == 1:
        note += f" · all {len(ranking):,} cost the same (a symmetric design)"
    elif len(harmful) > 1 and len({repr(_same_impact(m)) for m in harmful}) == 1:
        # e.g. the compute NICs of a symmetric pod, beside storage NICs the job never uses
        note += (f" · all {len(harmful):,} that matter cost the same (a symmetric design); "
                 f"{len(imps) - len(harmful):,} change nothing")
    return note


def _harmless(m: dict) -> bool:
    """Nothing breaks, disconnects, slows or loses throughput (a NIC the workload never uses)."""
    broken, disconnected, slowdown, lost, _, job_slowdown = _same_impact(m)
    return (not broken and not disconnected and (slowdown or 1.0) <= 1.0 and not lost
            and (job_slowdown or 1.0) <= 1.0)


def _same_impact(m: dict) -> tuple:
    fb = m.get("fallback") or {}
    return (tuple(m.get("broken") or []), m.get("disconnected_flows"), num(m.get("slowdown_of_completing")),
            num(m.get("throughput_lost_gbps")), num(fb.get("job_completion_s")), (m.get("job") or {}).get("slowdown"))


def ranking_figure(sweep: dict, *, top: int = 40) -> dict:
    """Failures ranked by impact, most harmful on top; a bar click opens ``?failure=<position>``.

    Three panels share the failure axis, in the ranking's own order of keys: disconnected flows,
    job completion increase (ms; "does not complete" drawn at the panel's end) and throughput lost
    (Gb/s). A job's sweep (``baseline.job``) reads the middle panel by **step time** (its
    increase; "does not complete" when the step hangs). ``top`` failures are drawn; the table
    lists them all.
    """
    ranking = sweep.get("ranking") or []
    title = "Failure sweep · most harmful first"
    if not ranking:
        return empty_figure("ranking", title, "The sweep evaluated no failure.")
    shown = ranking[:top]
    imps = [e.get("impact") or {} for e in shown]
    labels = [f"{i + 1}. {failure_label(e)}" for i, e in enumerate(shown)]
    hover = [_ranking_hover(e, m) for e, m in zip(shown, imps)]
    panels = _ranking_panels(imps)
    data = [{"type": "bar", "orientation": "h", "y": labels, "x": xs, "xaxis": ax, "yaxis": "y", "text": text,
             "textposition": "outside", "cliponaxis": False, "customdata": list(range(len(shown))),
             "marker": {"color": color}, "hovertext": hover, "hoverinfo": "text", "showlegend": False,
             "textfont": {"size": 10}} for ax, xs, text, color in panels]
    base = sweep.get("baseline") or {}
    sub = (f"{sweep.get('evaluated', len(ranking)):,} failures of {', '.join(sweep.get('over') or []) or 'the given list'}"
           f" · baseline job {_baseline_text(base)}{_skipped_text(sweep)}{_fallback_note(ranking)}"
           " · click a bar for what changed")
    more = f" (top {top} of {len(ranking)})" if len(ranking) > top else ""
    (_, lost, _, _), (_, inc_ms, _, _), (_, thr, _, _) = panels
    is_job = bool(base.get("job"))
    reinit = f"<br>{_REINIT}after NCCL re-initializes without it" if any(_REINIT in t for t in panels[1][2]) else ""
    if is_job:
        title = "Failure sweep · ranked by step-time impact"
    layout = {"yaxis": {"autorange": "reversed", "automargin": True, "tickfont": {"size": 11}},
              "xaxis": _ranking_axis([0, 0.28], "disconnected flows", lost),
              "xaxis2": {**_ranking_axis([0.36, 0.64], ("step time increase (ms)" if is_job else
                                          "job completion increase (ms)") + reinit, inc_ms), "anchor": "y"},
              "xaxis3": {**_ranking_axis([0.72, 1], "throughput lost (Gb/s)" + reinit, thr), "anchor": "y"},
              "title": {"text": f"{title}{more}<br><span style='font-size:12px'>{sub}</span>"},
              "margin": {"l": 40, "r": 40, "t": 80, "b": 60}, "bargap": 0.25}
    cols = ["rank", "failure", "target", "broken", "disconnected_flows", "job_before_s", "job_after_s", "completion_increase_s",
            "completion_unbounded", "throughput_lost_gbps", "slowdown", "worst_pattern",
            "step_before_s", "step_after_s", "step_slowdown", "fallback_job_s", "fallback_slowdown",
            "fallback_throughput_lost_gbps", "fallback_busbw_gbs", "fallback_algorithm"]
    return figure("ranking", title, data, layout, height=max(320, 130 + 24 * len(shown)),
                  table={"columns": cols, "rows": _ranking_rows(ranking)}, link="?failure={index}")


# ================================================================================ NIC policies
def policy_results(comparison: dict) -> dict[str, dict]:
    """``{policy: {"baseline": patterns, "with_failures": patterns or None}}`` of a ``fabricscope.compare/1``."""
    out = {}
    policies = comparison.get("policies") or {}
    # The comparison's own order (``policy_order``): a stored object's key order is the
    # database's (jsonb sorts keys), not the order the user asked for.
    order = [p for p in comparison.get("policy_order") or [] if p in policies]
    order += [p for p in policies if p not in order]
    for policy in order:
        v = policies[policy]
        if isinstance(v, dict) and isinstance(v.get("baseline"), dict):
            out[policy] = {"baseline": _policy_patterns(v["baseline"]),
                           "with_failures": _policy_patterns(v.get("with_failures"))}
    return out


def _policy_patterns(summary: dict | None) -> dict | None:
    """Patterns of one policy summary; a job's is its step alone (thousands of phase patterns
    would make the bars unreadable, and the step time is what the comparison is about)."""
    if not summary:
        return None
    step = summary.get("job")
    if step:
        return {"step": {"completion_s": step.get("step_time_s"), "unroutable": summary.get("unroutable") or 0,
                         "complete": step.get("complete"), "reason": step.get("reason")}}
    return summary.get("patterns") or {}


def _does_not_complete(entry: dict) -> bool:
    """A pattern (or step) with no completion time: it does not complete (docs/ENGINE.md)."""
    return bool(entry) and num(entry.get("completion_s")) is None


def _policy_trace(i: int, policy: str, r: dict, cases: list[str], patterns: list[str], xs: list,
                  ceiling: float) -> tuple[list[dict], list]:
    """Bars of one policy over (case, pattern) and its table rows. A pattern that does not
    complete is a hatched bar up to ``ceiling`` (ms) labelled "does not complete" (its own trace
    in the policy's offset group, so the label can run up the bar while times stay level), its
    reason in the hover and in the figure's notes — never a gap a reader takes for "instant"."""
    ys, text, hover, rows, broken_ys = [], [], [], [], []
    color = PALETTE[i % len(PALETTE)]
    for c in cases:
        for p in patterns:
            entry = (r[c] or {}).get(p) or {}
            t, lost, broken = num(entry.get("completion_s")), entry.get("unroutable") or 0, _does_not_complete(entry)
            ys.append(None if broken or t is None else t * 1e3)
            broken_ys.append(ceiling if broken else None)
            # The bar label is the time alone (a "(1,024 lost)" suffix ran into the next bar's label).
            text.append("does not complete" if broken else fmt_time(t))
            hover.append((f"<b>does not complete</b>: {entry.get('reason') or 'no completion time'}" if broken
                          else fmt_time(t)) + (f"<br>{lost:,} flows lost" if lost else ""))
            rows.append([policy, c, p, t, lost, (entry.get("reason") or "no completion time") if broken else None])
    common = {"type": "bar", "x": xs, "text": text, "customdata": hover, "offsetgroup": policy,
              "legendgroup": policy, "cliponaxis": False, "textfont": {"size": 10}, "constraintext": "both",
              "hovertemplate": f"<b>{policy}</b> · %{{x}}<br>%{{customdata}}<extra></extra>"}
    traces = [{**common, "name": policy, "y": ys, "textposition": "outside", "textangle": 0,
               "marker": {"color": color}}]
    if any(y is not None for y in broken_ys):
        traces.append({**common, "name": f"{policy}: does not complete", "y": broken_ys, "showlegend": False,
                       "textposition": "inside", "insidetextanchor": "middle", "textangle": -90,
                       "marker": {"color": "rgba(214,39,40,0.10)", "line": {"color": color, "width": 1.5},
                                  "pattern": {"shape": "/", "fgcolor": FAILED_COLOR, "fgopacity": 0.45, "size": 7}}})
    return traces, rows


def _policy_axis(finite_ms: list[float], ceiling: float) -> tuple[dict, list]:
    """The time axis and its switch: logarithmic when the finite times span more than a decade
    (7 and 69 ms beside 640 ms are unreadable on a linear axis), linear otherwise; a
    linear/log button toggles it either way."""
    lo, hi = min(finite_ms, default=1.0), max(finite_ms + [ceiling], default=1.0)
    use_log = lo > 0 and hi / lo > 10
    y = axis("completion time (ms" + (", log scale)" if use_log else ")"))
    y.update({"type": "log", "range": [math.log10(lo / 2), math.log10(hi * 1.6)]} if use_log
             else {"range": [0, hi * 1.22 or 1]})
    buttons = [{"label": "log", "method": "relayout",
                "args": [{"yaxis.type": "log", "yaxis.autorange": True, "yaxis.title.text": "completion time (ms, log scale)"}]},
               {"label": "linear", "method": "relayout",
                "args": [{"yaxis.type": "linear", "yaxis.autorange": True, "yaxis.title.text": "completion time (ms)"}]}]
    menu = {"type": "buttons", "direction": "right", "x": 0, "xanchor": "left", "y": 1.09, "yanchor": "bottom",
            "showactive": True, "active": 0 if use_log else 1, "buttons": buttons, "font": {"size": 11},
            "pad": {"r": 4, "t": 0}}
    return y, [menu]


def _broken_notes(rows: list[list]) -> list[dict]:
    """One note line per (case, pattern, policy) that does not complete, under the plot."""
    lines = [f"does not complete · {r[0]} · {r[1].replace('_', ' ')} · {r[2]}: {_short(r[5])}"
             for r in rows if r[5] is not None]
    shown = lines[:4] + ([f"… and {len(lines) - 4} more (see the table)"] if len(lines) > 4 else [])
    return [{"text": line, "xref": "paper", "yref": "paper", "x": 0, "xanchor": "left", "y": -0.16 - 0.07 * k,
             "yanchor": "top", "showarrow": False, "font": {"size": 11, "color": FAILED_COLOR}}
            for k, line in enumerate(shown)]


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _policy_pattern_ids(results: dict) -> list[str]:
    """Pattern ids of every policy's baseline, in first-seen order."""
    patterns: list[str] = []
    for r in results.values():
        patterns += [p for p in r["baseline"] if p not in patterns]
    return patterns


def _finite_ms(results: dict, cases: list[str]) -> list[float]:
    """Every completion time (ms) that exists, all policies and cases."""
    times = (num(e.get("completion_s")) for r in results.values() for c in cases for e in (r[c] or {}).values())
    return [t * 1e3 for t in times if t is not None]


def policy_figure(comparison: dict) -> dict:
    """Completion per pattern (ms) under each NIC policy, grouped bars (baseline and with failures).

    A pattern that does not complete is a hatched bar labelled "does not complete" with its reason
    (hover, and a note under the plot); the time axis is logarithmic when the times span more
    than a decade, with a linear/log switch."""
    results = policy_results(comparison)
    title = "NIC policy comparison · completion per pattern"
    if not results:
        return empty_figure("policies", title, "No policy result to compare.")
    cases = ["baseline"] + (["with_failures"] if any(r["with_failures"] for r in results.values()) else [])
    patterns = _policy_pattern_ids(results)
    xs = [[c.replace("_", " ") for c in cases for _ in patterns], [p for _ in cases for p in patterns]]
    finite = _finite_ms(results, cases)
    ceiling = max(finite, default=1.0) or 1.0
    data, rows = [], []
    for i, (policy, r) in enumerate(results.items()):
        traces, trace_rows = _policy_trace(i, policy, r, cases, patterns, xs, ceiling)
        data += traces
        rows += trace_rows
    yaxis, menus = _policy_axis(finite, ceiling)
    notes = _broken_notes(rows)
    best = comparison.get("best") or {}
    sub = " · ".join(f"best {k.replace('_', ' ')}: {v}" for k, v in best.items() if v)
    # Labels shrink to their bar's width (constraintext) and hide below 8 px rather than overlap.
    layout = {"barmode": "group", "yaxis": yaxis, "updatemenus": menus, "annotations": notes,
              "uniformtext": {"minsize": 8, "mode": "hide"},
              "xaxis": {"automargin": True},
              "title": {"text": f"{title}<br><span style='font-size:12px'>{sub}</span>" if sub else title},
              "legend": {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"},
              "margin": {"l": 70, "r": 30, "t": 80, "b": 60 + 22 * len(notes)}}
    return figure("policies", title, data, layout, height=460 + 22 * len(notes), headline=comparison.get("headline"),
                  table={"columns": ["policy", "case", "pattern", "completion_s", "unroutable", "reason"], "rows": rows})


# ================================================================================ figure sets
def figures_for_policies(comparison: dict) -> dict[str, dict]:
    """Figures of a NIC-policy comparison (affinity vs pxn vs any): ``{"policies": figure}``."""
    return {"policies": policy_figure(comparison)}


def figures_for_sweep(sweep: dict, *, selected: int | None = None) -> dict[str, dict]:
    """Figures of a ``fabricscope.sweep/1`` or a ``fabricscope.compare/1`` (policy comparison).

    Parameters
    ----------
    sweep : dict
    selected : int, optional
        Position in ``ranking`` to detail (the page's ``?failure=<position>``): its
        ``diff_summary`` becomes ``whatif_completion`` / ``whatif_changes``.

    Returns
    -------
    dict of str to dict
        ``ranking`` (most harmful first; bars link to ``?failure=<index>``), ``policies`` for a
        policy comparison, and ``whatif_*`` of the selected failure.
    """
    sweep = sweep or {}
    figs = {}
    if "ranking" in sweep:
        figs["ranking"] = ranking_figure(sweep)
    if policy_results(sweep):
        figs["policies"] = policy_figure(sweep)
    if not figs:
        figs["ranking"] = ranking_figure(sweep)
    ranking = sweep.get("ranking") or []
    if selected is not None and 0 <= selected < len(ranking):
        entry = ranking[selected]
        diff = entry.get("diff") or entry.get("diff_summary")
        for key, fig in whatif_figures(diff, label=failure_label(entry)).items():
            fig["fabricscope"]["failure"] = entry.get("failure")
            figs[key] = fig
    return figs
