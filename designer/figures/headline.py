"""The numbers the result and compare pages print as text: whether the job completes, its time,
the critical bottleneck, the collectives' algorithms (:func:`headline`), and the compare page's
rows per pattern (:func:`compare_row`) and bill-of-materials values (:func:`bom_value`).

Plain Python over result documents, like the figures beside it.
"""
from __future__ import annotations

from designer.figures.compare import delta_text
from designer.figures.style import fallback_rails, fmt_time, num, pct

__all__ = ["MAX_STEP_COLLECTIVES_SHOWN", "headline", "compare_row", "bom_value"]


def _verdict(summary: dict, pats: dict) -> dict:
    """Does the job complete, which patterns broke, the slowest one, and the job time as text."""
    complete = summary.get("complete", all(p.get("complete", True) for p in pats.values()))
    slowest = summary.get("slowest_pattern") or max(
        pats, key=lambda k: num(pats[k].get("completion_s"), -1.0), default=None)
    return {"complete": complete, "text": summary.get("headline"),
            "broken": summary.get("broken") or [p for p, v in pats.items() if v.get("complete") is False],
            "slowest_pattern": slowest,
            "job_completion": fmt_time(summary.get("job_completion_s")) if complete else "does not complete",
            "slowest_completion": fmt_time((pats.get(slowest) or {}).get("completion_s")) if slowest else "—"}


# Who picked the algorithm (the result's ``chosen_by``; engine collectives/chooser.py).
_CHOSEN_BY = {"nccl": "NCCL's cost model", "plugin": "the net plugin's tuner", "request": "the scenario"}


def _collectives(pats: dict) -> list[dict]:
    """The algorithm each collective pattern runs (chosen by ``auto`` as NCCL's tuner would), with
    nccl-tests' bus bandwidth and the predicted time of the alternatives."""
    out = []
    for pid, p in pats.items():
        if not p.get("algorithm"):
            continue
        others = [f"{a} {fmt_time(v.get('time_s') if isinstance(v, dict) else v)}"
                  for a, v in (p.get("alternatives") or {}).items()
                  if a != p["algorithm"] and (v.get("time_s") if isinstance(v, dict) else v) is not None]
        out.append({"pattern": pid, "algorithm": p["algorithm"], "protocol": p.get("protocol"),
                    "busbw": f"{num(p.get('busbw_gbs'), 0.0):.1f} GB/s", "latency": fmt_time(p.get("latency_s")),
                    "alternatives": ", ".join(others), "chosen_by": _CHOSEN_BY.get(p.get("chosen_by"), "")})
    return out


# The page's table of a step's collectives shows the longest ones; the API result has them all.
MAX_STEP_COLLECTIVES_SHOWN = 12


def _step_collectives(job: dict) -> dict:
    """The step's collectives as the page's table: those that never end first, then the longest
    (time inside the step); collectives with the same algorithm, time, busbw and fallback are one
    row (``F0s0.tp and 23 like it``: a template repeats one collective per micro-batch)."""
    groups: dict = {}
    for c in job.get("collectives") or []:
        row = {"pattern": c.get("pattern"), "phase": c.get("phase"), "kind": c.get("kind"),
               "algorithm": c.get("algorithm"), "protocol": c.get("protocol"),
               "time": fmt_time(c.get("time_s")) if c.get("time_s") is not None else "never ends",
               "busbw": _gbs(c.get("busbw_gbs")), "fallback": _fallback(c.get("fallback")),
               "time_s": c.get("time_s")}
        key = (row["kind"], row["algorithm"], row["protocol"], row["time"], row["busbw"], row["fallback"])
        groups.setdefault(key, []).append(row)
    rows = [{**g[0], "like": len(g) - 1} for g in groups.values()]
    rows.sort(key=lambda r: (r["time_s"] is None, num(r["time_s"], 0.0)), reverse=True)
    shown = rows[:MAX_STEP_COLLECTIVES_SHOWN]
    return {"rows": shown, "total": len(job.get("collectives") or []), "hidden": len(rows) - len(shown)}


def _gbs(x) -> str:
    x = num(x)
    return "—" if x is None else f"{x:.3g} GB/s" if x < 1000 else f"{x:,.0f} GB/s"


def _fallback(fb: dict | None) -> str:
    """``ring/Simple on 7 of 8 rails, 48 GB/s busbw`` (what NCCL re-initialized without the failed parts runs)."""
    if not fb:
        return ""
    if not fb.get("algorithm"):
        return "none runs"
    proto = f"/{fb['protocol']}" if fb.get("protocol") else ""
    return f"{fb['algorithm']}{proto}{fallback_rails(fb)}, {_gbs(fb.get('busbw_gbs'))} busbw"


def _step(summary: dict, diff: dict | None) -> dict | None:
    """The step's tiles as text (``48.65 ms``, never ``7.045341 s``), what hangs, inference."""
    job = summary.get("job")
    if not job:
        return None
    before = ((diff or {}).get("job") or {})
    hung = job.get("hung") or _hung_of_stored(job)
    inf = job.get("inference")
    return {"complete": bool(job.get("complete")), "time": fmt_time(job.get("step_time_s")),
            "compute": fmt_time(job.get("compute_s")), "communication": fmt_time(job.get("communication_s")),
            "exposed": fmt_time(job.get("exposed_communication_s")),
            "before": fmt_time((before.get("step_time_s") or {}).get("before")) if before else None,
            "slowdown": f"×{before['slowdown']:.3g}" if before.get("slowdown") else None,
            "hung_phase": hung.get("phase"), "hung_patterns": ", ".join(hung.get("patterns") or []),
            "hung_why": "get no bandwidth" if hung.get("why") == "stalled" else "lost flows",
            "reason": job.get("reason"), "inference": _inference(inf) if inf else None,
            "collectives": _step_collectives(job)}


def _hung_of_stored(job: dict) -> dict:
    """``hung`` of a result stored before the engine wrote it: the first phase that started and
    never ended, and its patterns that never ended (``{}`` when the step completes)."""
    if job.get("complete"):
        return {}
    for ph in job.get("phases") or []:
        if ph.get("start_s") is not None and ph.get("end_s") is None:
            stuck = [pid for pid, t in (ph.get("patterns") or {}).items() if t.get("end_s") is None]
            return {"phase": ph.get("id"), "patterns": stuck, "why": "lost"}
    return {}


def _inference(inf: dict) -> dict:
    """Inference tiles: TTFT, TPOT, queueing, KV transfer, verdict."""
    q = inf.get("prefill_queue") or {}
    ttft, wait, kv = inf.get("ttft_s") or {}, inf.get("queue_wait_s") or {}, inf.get("kv_transfer_s") or {}
    return {"keeps_up": bool(inf.get("keeps_up")), "verdict": inf.get("verdict"),
            "ttft": fmt_time(ttft.get("mean")), "ttft_max": fmt_time(ttft.get("max")),
            "tpot": fmt_time(inf.get("tpot_s")), "tpot_basis": inf.get("tpot_basis") or "",
            "wait": fmt_time(wait.get("mean")), "wait_max": fmt_time(wait.get("max")),
            "utilization": f"{q['utilization']:.3g}" if q.get("utilization") is not None else "—",
            "max_rate": f"{q['max_rate_per_s']:.3g} req/s" if q.get("max_rate_per_s") else "—",
            "rate": f"{num(inf.get('request_rate'), 0.0):.3g} req/s", "prefill": fmt_time(inf.get("prefill_s")),
            "kv": fmt_time(kv.get("mean")), "kv_max": fmt_time(kv.get("max")),
            "limiting_link": inf.get("limiting_link") or "—", "e2e": fmt_time(inf.get("e2e_s")),
            "output_tokens": inf.get("output_tokens"), "limiting_stage": _limiting_stage(inf, q)}


def _limiting_stage(inf: dict, queue: dict) -> str:
    """What bounds the request rate: the prefill queue, the KV transfers, or nothing."""
    if queue.get("stable") is False:
        return "prefill"
    kv_max = (inf.get("kv_transfer_s") or {}).get("max")
    if kv_max is None or kv_max > num(inf.get("decode_interval_s"), float("inf")):
        return "KV transfer"
    return "nothing (keeps up)"


def _bottleneck_facts(summary: dict) -> dict:
    critical = summary.get("critical_bottleneck") or {}
    if summary.get("job") and not summary["job"].get("complete"):
        # A step that hangs has no critical path: the tile says what hangs, not a bottleneck.
        critical = {}
    return {"critical_bottleneck": critical.get("id"), "critical_pattern": critical.get("pattern"),
            "top_bottleneck": critical.get("id") or (summary.get("bottlenecks") or [None])[0],
            "saturated_not_critical": (summary.get("saturated_not_critical") or {}).get("count", 0)}


def headline(result: dict) -> dict:
    """What the result page prints above the figures: whether the job completes (the engine's
    ``summary.headline``; docs/ENGINE.md, "Completion, impact and bottlenecks"), its time, the
    critical bottleneck, utilization, flows.

    A job with a lost flow does not complete: the page leads with that, never with the time of
    the flows that survived. A job's step (``summary.job``) replaces the all-at-once collective
    lines with ``step``: its tiles, what hangs, inference numbers and the table of its collectives
    as they ran inside the step.
    """
    summary = result.get("summary") or {}
    pats = summary.get("patterns") or {}
    scenario = result.get("scenario") or {}
    flows = len(result.get("flows") or [])
    step = _step(summary, result.get("diff"))
    verdict = _verdict(summary, pats)
    # Green only when the job (the step, for a job) completes and inference keeps up with its rate.
    done = step["complete"] if step else verdict["complete"]
    verdict["ok"] = bool(done and not (step and step["inference"] and not step["inference"]["keeps_up"]))
    return {**verdict, **_bottleneck_facts(summary),
            "collectives": [] if step else _collectives(pats), "step": step,
            "max_utilization": pct(summary.get("max_utilization")),
            "flows_total": summary.get("flows_total", flows),
            "flows_listed": summary.get("flows_listed", flows),
            "unroutable": sum(int(p.get("unroutable") or 0) for p in pats.values()),
            "classes": summary.get("classes") or {}, "note": summary.get("note"),
            "failures": scenario.get("failures") or [],
            "routing": scenario.get("routing") or {},
            "mode": scenario.get("mode")}


def compare_row(p: str, pa: dict, pb: dict) -> dict:
    """Pattern ``p`` of results A and B (their ``summary.patterns``): times as text, the change,
    and whether B is worse or better (0.1 % either way)."""
    x, y = num((pa.get(p) or {}).get("completion_s")), num((pb.get(p) or {}).get("completion_s"))
    broken_a, broken_b = (pa.get(p) or {}).get("complete") is False, (pb.get(p) or {}).get("complete") is False
    both = x is not None and y is not None
    return {"pattern": p, "a": "does not complete" if broken_a else fmt_time(x),
            "b": "does not complete" if broken_b else fmt_time(y),
            "change": delta_text(x, y, broken_a=broken_a, broken_b=broken_b, present_a=p in pa, present_b=p in pb),
            "worse": broken_b and not broken_a or both and y > x * 1.001,
            "better": broken_a and not broken_b or both and y < x * 0.999}


def bom_value(value, unit: str, signed: bool = False) -> str:
    """A BOM figure as the compare page prints it (``1,024 ports``, ``+2.5 kW``, ``4:1``)."""
    if value is None:
        return "–"
    digits = 0 if float(value).is_integer() else 2 if abs(value) < 100 else 1
    text = f"{value:{'+' if signed else ''},.{digits}f}".replace("-", "−")
    return f"{text}{unit}" if unit == ":1" else f"{text} {unit}".strip()
