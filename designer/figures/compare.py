"""Two results side by side: completion per pattern, max utilization per tier, bottleneck changes.

Differences are B relative to A (``+25%`` = B is slower / hotter).
"""
from __future__ import annotations

from collections import Counter

from designer.figures.base import axis, empty_figure, figure, table_figure
from designer.figures.charts import tier_of
from designer.figures.style import TIER_LABELS, TIER_ORDER, num

__all__ = ["figures_for_compare", "delta_text"]

_SIDE_LEGEND = {"orientation": "h", "y": 1.02, "x": 1, "xanchor": "right", "yanchor": "bottom"}
# Row tone per change (base.TABLE_TONES): a bottleneck B adds is bad news, one B removes good news.
_BOTTLENECK_TONES = {"only in B (new)": "bad", "only in A (gone)": "good"}


def figures_for_compare(a: dict, b: dict) -> dict[str, dict]:
    """Two results side by side: ``compare_completion``, ``compare_utilization``, ``compare_bottlenecks``.

    Differences are B relative to A (``+25%`` = B is slower / hotter).
    """
    return {"compare_completion": _compare_completion(a or {}, b or {}),
            "compare_utilization": _compare_utilization(a or {}, b or {}),
            "compare_bottlenecks": _compare_bottlenecks(a or {}, b or {})}


def _worse(x, y) -> bool:
    return bool(x and y and y > x * 1.001)


def _better(x, y) -> bool:
    return bool(x and y and y < x * 0.999)


def _ms(values: list) -> list:
    return [x * 1e3 if x is not None else None for x in values]


def _completion(pats: dict, p: str) -> tuple:
    """``(completion_s, drawn_s, broken)``: a pattern that does not complete has no completion; it
    is drawn at its surviving flows' time, hatched."""
    v = pats.get(p) or {}
    broken = v.get("complete") is False
    t = num(v.get("completion_s"))
    return t, (num(v.get("surviving_completion_s")) if broken else t), broken


def _completion_bar(name: str, ids: list, cells: list, colors, extra: dict | None = None) -> dict:
    """One side's bars: drawn at each pattern's (surviving) time, hatched where it does not complete."""
    return {"type": "bar", "name": name, "x": ids, "y": _ms([c[1] for c in cells]),
            "marker": {"color": colors, "pattern": {"shape": ["/" if c[2] else "" for c in cells]}},
            "hovertemplate": f"{name} · %{{x}}: %{{y:.4g}} ms<extra></extra>", **(extra or {})}


def _bar_color(x, y, broken_b: bool) -> str:
    if broken_b or _worse(x, y):
        return "#d7263d"
    return "#54A24B" if _better(x, y) else "#F58518"


def _compare_completion(a: dict, b: dict) -> dict:
    pa = (a.get("summary") or {}).get("patterns") or {}
    pb = (b.get("summary") or {}).get("patterns") or {}
    ids = list(pa) + [p for p in pb if p not in pa]
    title = "Completion per pattern · A vs B"
    if not ids:
        return empty_figure("compare_completion", title, "Neither result has a traffic pattern.")
    ca, cb = [_completion(pa, p) for p in ids], [_completion(pb, p) for p in ids]
    ta, tb = [c[0] for c in ca], [c[0] for c in cb]
    delta = [delta_text(x[0], y[0], broken_a=x[2], broken_b=y[2], present_a=p in pa, present_b=p in pb)
             for p, x, y in zip(ids, ca, cb)]
    colors = [_bar_color(x[0], y[0], y[2]) for x, y in zip(ca, cb)]
    data = [_completion_bar("A", ids, ca, "#4C78A8"),
            _completion_bar("B", ids, cb, colors, {"text": delta, "textposition": "outside", "cliponaxis": False})]
    drawn = [v for v in _ms([c[1] for c in ca + cb]) if v is not None]
    layout = {"barmode": "group", "yaxis": axis("completion time (ms)", range=[0, (max(drawn, default=1) or 1) * 1.22]),
              "xaxis": axis("pattern"), "legend": dict(_SIDE_LEGEND)}
    return figure("compare_completion", title, data, layout, table={
        "columns": ["pattern", "a_completion_s", "b_completion_s", "change"],
        "rows": [[p, x, y, d] for p, x, y, d in zip(ids, ta, tb, delta)]})


def delta_text(x, y, *, broken_a: bool = False, broken_b: bool = False, present_a: bool = True,
               present_b: bool = True) -> str:
    """Change from A's ``x`` to B's ``y`` (``'+12.5%'``, ``'does not complete in B'``, ``'only in B'``,
    ``'new'``, ``'—'``)."""
    if broken_a or broken_b:
        return ("does not complete in " + ("A and B" if broken_a and broken_b else "A" if broken_a else "B"))
    if not (present_a and present_b):
        return "only in " + ("B" if not present_a else "A")
    if x is None and y is None:
        return "—"
    if x is None or y is None:
        return "only in " + ("B" if x is None else "A")
    if x == 0:
        return "±0" if y == 0 else "new"
    return f"{y / x - 1:+.1%}"


def _points_text(x, y) -> str:
    if x is None and y is None:
        return "—"
    return "new" if x is None else "gone" if y is None else f"{y - x:+.0%}"


def _compare_utilization(a: dict, b: dict) -> dict:
    ua = (a.get("summary") or {}).get("utilization_by_tier") or _tier_max(a)
    ub = (b.get("summary") or {}).get("utilization_by_tier") or _tier_max(b)
    tiers = [t for t in TIER_ORDER if t in ua or t in ub] + sorted((set(ua) | set(ub)) - set(TIER_ORDER))
    title = "Max utilization per tier · A vs B"
    if not tiers:
        return empty_figure("compare_utilization", title, "No resource carries traffic in either result.")
    va = [num((ua.get(t) or {}).get("max")) for t in tiers]
    vb = [num((ub.get(t) or {}).get("max")) for t in tiers]
    labels = [TIER_LABELS.get(t, t) for t in tiers]
    delta = [_points_text(x, y) for x, y in zip(va, vb)]
    data = [{"type": "bar", "name": "A", "x": labels, "y": va, "marker": {"color": "#4C78A8"},
             "hovertemplate": "A · %{x}: %{y:.1%}<extra></extra>"},
            {"type": "bar", "name": "B", "x": labels, "y": vb, "marker": {"color": "#F58518"}, "text": delta,
             "textposition": "outside", "cliponaxis": False, "hovertemplate": "B · %{x}: %{y:.1%}<extra></extra>"}]
    layout = {"barmode": "group", "yaxis": axis("max utilization", tickformat=".0%", range=[0, 1.25]),
              "xaxis": axis("tier"), "legend": dict(_SIDE_LEGEND)}
    return figure("compare_utilization", title, data, layout, table={
        "columns": ["tier", "a_max_utilization", "b_max_utilization", "change_points"],
        "rows": [[t, x, y, d] for t, x, y, d in zip(tiers, va, vb, delta)]})


def _tier_max(result: dict) -> dict:
    out = {}
    for r in result.get("resources") or []:
        u = num(r.get("utilization"))
        if u is not None:
            t = tier_of(r)
            out[t] = {"max": max(u, (out.get(t) or {}).get("max", 0.0))}
    return out


def _compare_bottlenecks(a: dict, b: dict) -> dict:
    ba = list((a.get("summary") or {}).get("bottlenecks") or [])
    bb = list((b.get("summary") or {}).get("bottlenecks") or [])
    sa, sb = set(ba), set(bb)
    rows = [["only in B (new)", r] for r in bb if r not in sa] + [["only in A (gone)", r] for r in ba if r not in sb]
    rows += [["both", r] for r in ba if r in sb]
    title = "Bottleneck changes · A → B"
    if not rows:
        return empty_figure("compare_bottlenecks", title, "Neither result has a saturated resource.", height=200)
    counts = Counter(r[0] for r in rows)
    summary = ", ".join(f"{n} {k.split(' (')[0]}" for k, n in counts.items())
    return table_figure("compare_bottlenecks", f"{title} ({summary})", ["change", "resource"], rows,
                        tones=[_BOTTLENECK_TONES.get(r[0]) for r in rows])
