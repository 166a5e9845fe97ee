"""What a job's result says first: the step's own collective times and the one-line headline.

``summary.patterns`` is the steady-state view of every pattern as if all ran at once; a job's
patterns do not all run at once, so their times, algbw and busbw *inside the step* come from the
step's event loop (``summary.job.phases[].patterns``: each pattern's start and end). This module
turns those into ``summary.job.collectives`` and ``summary.headline`` (docs/FORMATS.md, Result;
docs/ENGINE.md, Jobs).
"""
from __future__ import annotations

import re

__all__ = ["MAX_HEADLINE_PATTERNS", "step_collectives", "step_headline", "fmt_seconds", "rails_text"]

# A broken step names this many lost patterns and counts the rest: 17 names is not a headline.
MAX_HEADLINE_PATTERNS = 2
# A pattern's reason lists its lost flows ("(g#0, g#1 and 2 more)"); the headline drops the list.
_FLOW_LIST = re.compile(r" \([^()]*#[^()]*\)")


def fmt_seconds(x: float | None) -> str:
    """Seconds with a unit and 4 significant digits (``48.65 ms``, ``7.045 s``, ``25 µs``)."""
    if x is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(x) >= scale:
            return f"{x / scale:.4g} {unit}"
    return f"{x * 1e9:.4g} ns" if x else "0 s"


def step_collectives(job: dict, patterns: dict) -> list[dict]:
    """``summary.job.collectives``: every collective pattern of the step as it ran in the step.

    Parameters
    ----------
    job : dict
        ``summary.job`` (its ``phases`` carry each pattern's ``start_s`` / ``end_s`` in the step).
    patterns : dict
        ``summary.patterns`` (algorithm, protocol, ``size_bytes``, and ``algbw_gbs`` /
        ``busbw_gbs`` of the all-at-once view, whose ratio is nccl-tests' bus factor).

    Returns
    -------
    list of dict
        In phase order: ``pattern``, ``phase``, ``kind``, ``algorithm``, ``protocol``,
        ``start_s``, ``end_s``, ``time_s`` (s, None when it never ends), ``size_bytes``,
        ``algbw_gbs`` = size / time and ``busbw_gbs`` = algbw × the bus factor (GB/s, inside the
        step), ``fallback`` (what NCCL re-initialized without the failed parts would run, under
        failures; else None).
    """
    out = []
    for ph in job.get("phases") or []:
        for pid, times in (ph.get("patterns") or {}).items():
            p = patterns.get(pid) or {}
            if not p.get("algorithm"):
                continue
            start, end = times.get("start_s"), times.get("end_s")
            took = end - start if start is not None and end is not None else None
            size = p.get("size_bytes")
            algbw = size / took / 1e9 if size and took else None
            out.append({"pattern": pid, "phase": ph["id"], "kind": p.get("kind"), "algorithm": p["algorithm"],
                        "protocol": p.get("protocol"), "start_s": start, "end_s": end, "time_s": took,
                        "size_bytes": size, "algbw_gbs": algbw,
                        "busbw_gbs": algbw * _bus_factor(p) if algbw is not None else None,
                        "fallback": p.get("fallback")})
    return out


def _bus_factor(p: dict) -> float:
    """nccl-tests' bus factor of a pattern: its busbw / algbw (the factor depends only on the kind
    and the group size, so the all-at-once view's ratio is the step's too); 1 when unknown."""
    algbw, busbw = p.get("algbw_gbs"), p.get("busbw_gbs")
    return busbw / algbw if algbw and busbw is not None else 1.0


def step_headline(job: dict, patterns_headline: str | None = None, patterns: dict | None = None) -> str:
    """``summary.headline`` of a job: one sentence about the step (never the all-at-once view).

    ``"step 22.9 ms: compute 2 ms, exposed communication 20.9 ms; longest collective in the step:
    dp (ring/Simple) 20.9 ms, busbw 170 GB/s"``; an inference job's verdict; or ``"the step does
    not complete: phase dp hangs: pattern g lost 2 of 16 flows (…); NCCL re-initialized without
    them would run ring/Simple at 48 GB/s busbw"``.

    Parameters
    ----------
    job : dict
        ``summary.job`` (with ``collectives`` when known).
    patterns_headline : str, optional
        The all-at-once headline; used only when the step has no collective and nothing hangs.
    patterns : dict, optional
        ``summary.patterns``: why a hung pattern lost flows, and its fallback.
    """
    patterns = patterns or {}
    inf = job.get("inference")
    if inf and inf.get("verdict"):
        return f"inference {inf['verdict']}"
    if not job["complete"]:
        return _hang_sentence(job, patterns)
    lead = (f"step {fmt_seconds(job['step_time_s'])}: compute {fmt_seconds(job['compute_s'])}, "
            f"exposed communication {fmt_seconds(job['exposed_communication_s'])}")
    timed = [c for c in job.get("collectives") or [] if c.get("time_s") is not None]
    if not timed:
        return lead
    c = max(timed, key=lambda c: c["time_s"])
    busbw = f", busbw {c['busbw_gbs']:.3g} GB/s" if c.get("busbw_gbs") is not None else ""
    return (f"{lead}; longest collective in the step: {c['pattern']} ({c['algorithm']}"
            f"{'/' + c['protocol'] if c.get('protocol') else ''}) {fmt_seconds(c['time_s'])}{busbw}")


def _hang_sentence(job: dict, patterns: dict) -> str:
    """What hangs and why, in one sentence: the first phase that never finishes, up to
    :data:`MAX_HEADLINE_PATTERNS` of its patterns with their reason, and NCCL's fallback for the
    first collective of the step that lost flows."""
    hung = job.get("hung") or {}
    stuck = hung.get("patterns") or []
    if not stuck:
        return f"the step does not complete: {job.get('reason') or 'a phase never finishes'}"
    verb = "gets no bandwidth" if hung.get("why") == "stalled" else "lost flows"
    named = []
    for pid in stuck[:MAX_HEADLINE_PATTERNS]:
        why = _FLOW_LIST.sub("", (patterns.get(pid) or {}).get("reason") or "")
        named.append(f"{pid} {verb}" + (f" ({why})" if why else ""))
    more = f", and {len(stuck) - MAX_HEADLINE_PATTERNS} more" if len(stuck) > MAX_HEADLINE_PATTERNS else ""
    text = f"the step does not complete: phase {hung.get('phase')} hangs because {'; '.join(named)}{more}"
    lost = [c["pattern"] for c in job.get("collectives") or [] if (patterns.get(c["pattern"]) or {}).get(
        "complete") is False and c.get("fallback")]
    fallback = _fallback_text(lost[0], patterns) if lost else ""
    return f"{text}; {fallback}" if fallback else text


def _fallback_text(pid: str, patterns: dict) -> str:
    """NCCL's fallback for a collective that lost flows: what a re-initialized communicator
    would run without the failed parts (``summary.patterns[pid].fallback``)."""
    fb = (patterns.get(pid) or {}).get("fallback")
    if not fb:
        return ""
    if not fb.get("algorithm"):
        return f"NCCL re-initialized without the failed parts cannot run {pid} either"
    busbw = f" at {fb['busbw_gbs']:.4g} GB/s busbw" if fb.get("busbw_gbs") is not None else ""
    return (f"NCCL re-initialized without the failed parts would run {pid} as {fb['algorithm']}"
            f"{'/' + fb['protocol'] if fb.get('protocol') else ''}{rails_text(fb)}{busbw} "
            f"({fmt_seconds(fb.get('time_s'))} alone)")


def rails_text(fallback: dict) -> str:
    """`` on 7 of 8 rails`` when a fallback runs on fewer rails than the hosts have, else ``""``."""
    rails, total = fallback.get("rails"), fallback.get("rails_total")
    return f" on {rails} of {total} rails" if rails is not None and total and rails < total else ""
