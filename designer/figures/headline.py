"""The numbers the result and compare pages print as text: whether the job completes, its time,
the critical bottleneck, the collectives' algorithms (:func:`headline`), and the compare page's
rows per pattern (:func:`compare_row`) and bill-of-materials values (:func:`bom_value`).

Plain Python over result documents, like the figures beside it.
"""
from __future__ import annotations

from designer.figures.compare import delta_text
from designer.figures.style import fmt_time, num, pct

__all__ = ["headline", "compare_row", "bom_value"]


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
                    "alternatives": ", ".join(others)})
    return out


def _bottleneck_facts(summary: dict) -> dict:
    critical = summary.get("critical_bottleneck") or {}
    return {"critical_bottleneck": critical.get("id"), "critical_pattern": critical.get("pattern"),
            "top_bottleneck": critical.get("id") or (summary.get("bottlenecks") or [None])[0],
            "saturated_not_critical": (summary.get("saturated_not_critical") or {}).get("count", 0)}


def headline(result: dict) -> dict:
    """What the result page prints above the figures: whether the job completes (the engine's
    ``summary.headline``; docs/ENGINE.md, "Completion, impact and bottlenecks"), its time, the
    critical bottleneck, utilization, flows.

    A job with a lost flow does not complete: the page leads with that, never with the time of
    the flows that survived.
    """
    summary = result.get("summary") or {}
    pats = summary.get("patterns") or {}
    scenario = result.get("scenario") or {}
    flows = len(result.get("flows") or [])
    return {**_verdict(summary, pats), **_bottleneck_facts(summary), "collectives": _collectives(pats),
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
