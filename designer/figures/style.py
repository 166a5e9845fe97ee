"""Colours, device shapes, labels and number formats of every figure — shared with the browser.

Python builds every figure; the browser still paints a few things itself (the hop list under the
path view, its utilization bars). :func:`style_json` hands it the same palette, utilization scale
and labels through ``{{ style|json_script:"fs-style" }}``, so ``static/js/results.js`` never
hard-codes a colour or a label that lives here.
"""
from __future__ import annotations

import math

__all__ = ["UTIL_SCALE", "IDLE_COLOR", "FAILED_COLOR", "PALETTE", "KIND_STYLE", "CY_SHAPE", "TIER_ORDER", "TIER_LABELS",
           "LABEL_FIT", "text_fits", "kind_label", "num", "rnd", "fmt_time", "fmt_gbps", "pct", "util_color", "style_json",
           "fallback_rails"]

TIER_ORDER = ("nvlink", "pcie", "root-complex", "inter-socket", "memory", "nic-leaf", "leaf-spine",
              "spine-core", "fabric", "storage", "other")
TIER_LABELS = {"nvlink": "NVLink", "pcie": "PCIe", "root-complex": "Root complex", "inter-socket":
               "Inter-socket", "memory": "Memory", "nic-leaf": "NIC–leaf", "leaf-spine": "Leaf–spine",
               "spine-core": "Spine–core", "fabric": "Fabric", "storage": "Storage", "other": "Other"}
# Utilization colour scale: readable on white and on dark grey; red means saturated.
UTIL_SCALE = [[0.0, "#3b7dd8"], [0.35, "#43b0a6"], [0.6, "#e6c229"], [0.85, "#f0822e"], [1.0, "#d7263d"]]
IDLE_COLOR = "rgba(140,150,165,0.45)"
FAILED_COLOR = "#d7263d"
PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#EECA3B", "#B279A2", "#FF9DA6",
           "#9D755D", "#8C9FB5"]
# One shape vocabulary for the editor (Cytoscape) and every result view (Plotly): each kind has a
# Plotly marker symbol and the Cytoscape node shape that looks like it (square ~ round-rectangle,
# triangle-up ~ triangle, circle ~ ellipse, triangle-down ~ vee); the editor reads these through
# style_json() (#fs-style on editor.html), so a GPU is the same green square on every page.
KIND_STYLE = {  # marker symbol, colour, label
    "gpu": ("square", "#76b900", "GPU"), "nvswitch": ("diamond", "#8e6cc6", "NVSwitch"),
    "pcie_switch": ("triangle-up", "#5d8fd8", "PCIe switch"), "nic": ("circle", "#e69f00", "NIC"),
    "cpu": ("hexagon", "#9aa0a8", "CPU / root complex"), "memory": ("pentagon", "#b07aa1", "Memory"),
    "nvme": ("triangle-down", "#a9805e", "NVMe"), "switch": ("octagon", "#7f8a9a", "Switch"),
    "storage": ("star", "#17becf", "Storage"), "host": ("square", "#7f8a9a", "Host"),
}
# Labels show only where they fit: a text takes ``char_px`` per character plus ``pad_px`` of air.
# Host-box labels are 11 px text, node labels 9 px. The figures choose with these numbers
# (topology.py fit_label, label_fits) and so does the browser at every zoom (results.js, which
# reads them from style_json()): one rule, these numbers.
LABEL_FIT = {"box": {"char_px": 6.5, "pad_px": 8}, "node": {"char_px": 5.5, "pad_px": 4}}
CY_SHAPE = {"square": "round-rectangle", "diamond": "diamond", "triangle-up": "triangle", "circle": "ellipse",
            "hexagon": "hexagon", "pentagon": "pentagon", "triangle-down": "vee", "octagon": "round-octagon",
            "star": "star"}


def text_fits(text: str, width_px: float, rule: dict) -> bool:
    """Whether ``text`` fits ``width_px`` pixels by ``rule`` (a :data:`LABEL_FIT` entry)."""
    return len(text) * rule["char_px"] + rule["pad_px"] <= width_px


def kind_label(kind, default=None):
    """Display label of a node kind (``"PCIe switch"``); ``default`` (else the kind) when unknown."""
    return KIND_STYLE[kind][2] if kind in KIND_STYLE else (kind if default is None else default)


def num(x, default=None):
    """``x`` as a finite float, else ``default`` (results come from JSON: anything may be missing)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


def rnd(x, digits=4):
    """``x`` rounded to ``digits`` decimals (keeps figure JSON small), ``None`` when not a number."""
    x = num(x)
    return None if x is None else round(x, digits)


def fallback_rails(fallback: dict) -> str:
    """`` on 7 of 8 rails`` when NCCL's fallback runs on fewer rails than the hosts have (its
    ``rails`` / ``rails_total``), else ``""``."""
    rails, total = fallback.get("rails"), fallback.get("rails_total")
    return f" on {rails} of {total} rails" if rails is not None and total and rails < total else ""


def fmt_time(s) -> str:
    """Human duration of ``s`` seconds: ``'6.60 ms'``, ``'800 ms'``, ``'1.25 s'``, ``'—'`` for missing."""
    s = num(s)
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if abs(v) < 100 else f"{v:.0f} {unit}"
    return f"{s} s"  # pragma: no cover


def fmt_gbps(x) -> str:
    """Rate of ``x`` Gb/s: ``'400 Gb/s'``, ``'3.2 Tb/s'``, ``'—'`` for missing."""
    x = num(x)
    if x is None:
        return "—"
    return f"{x / 1000:.3g} Tb/s" if abs(x) >= 1000 else f"{x:.3g} Gb/s"


def pct(u) -> str:
    """Utilization ``u`` (fraction) as ``'42%'``, ``'—'`` for missing."""
    u = num(u)
    return "—" if u is None else f"{u:.0%}"


def util_color(u) -> str:
    """Hex colour of utilization ``u`` (0–1, clamped) on :data:`UTIL_SCALE`."""
    u = min(max(num(u, 0.0), 0.0), 1.0)
    for (p0, c0), (p1, c1) in zip(UTIL_SCALE, UTIL_SCALE[1:]):
        if u <= p1:
            t = (u - p0) / (p1 - p0)
            a, b = (int(c0[i:i + 2], 16) for i in (1, 3, 5)), (int(c1[i:i + 2], 16) for i in (1, 3, 5))
            return "#%02x%02x%02x" % tuple(round(x + (y - x) * t) for x, y in zip(a, b))
    return UTIL_SCALE[-1][1]


def style_json() -> dict:
    """Everything above as plain JSON for the browser (``json_script`` id ``fs-style``).

    Returns
    -------
    dict
        ``util_scale`` (``[[position 0–1, "#rrggbb"], ...]``), ``idle_color``, ``failed_color``,
        ``palette``, ``kinds`` (``{kind: {"symbol" (Plotly), "shape" (Cytoscape), "color", "label"}}``), ``tier_order``,
        ``tier_labels``, ``label_fit`` (:data:`LABEL_FIT`).
    """
    return {"util_scale": [list(stop) for stop in UTIL_SCALE], "idle_color": IDLE_COLOR,
            "failed_color": FAILED_COLOR, "palette": list(PALETTE),
            "kinds": {k: {"symbol": s, "shape": CY_SHAPE[s], "color": c, "label": label}
                      for k, (s, c, label) in KIND_STYLE.items()},
            "tier_order": list(TIER_ORDER), "tier_labels": dict(TIER_LABELS),
            "label_fit": {k: dict(rule) for k, rule in LABEL_FIT.items()}}
