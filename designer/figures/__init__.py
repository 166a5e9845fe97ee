"""Engine results → Plotly figure dicts for the result views (docs/ARCHITECTURE.md, "One walk", step 7).

The engine returns numbers; this package turns a ``fabricscope.result/1`` (or
``fabricscope.sweep/1``, or a policy comparison) into small, JSON-ready Plotly figures. It is
the only place that builds a figure: ``static/js/results.js`` draws them, themes them and handles
clicks. Everything heavy is aggregated so a 1,024-GPU result with a million flows ships a few
hundred kB, never one point per flow: box plots carry precomputed quartiles, histograms carry
precomputed bins, big clusters draw hosts as super-nodes with their internals sent as compact
numbers (their drill-down figure is built here on a click: :mod:`designer.figures.interactive`).

Modules
-------
``style``        palette, device colours/shapes, tier labels, number formats; ``style_json()`` for the browser
``base``         the figure dict shell (``figure``, ``empty_figure``, ``axis``); the page's JSON scripts
``model``        what figures read from a topology document and a result (hosts, loads, failures)
``hostlayout``   where a host's devices go: the PCIe tree, NICs on the fabric side (as the editor)
``topology``     layout geometry, node-link traces (labels that fit), unified topology, host drill-down
``paths``        the flow index of the picker and the path view
``charts``       utilization by tier, bottlenecks, completion, flow rates, timeline, latency
``whatif``       completion before → after, what changed, failure ranking, NIC policies
``compare``      two results side by side
``shared``       a shared cluster (jobs with placements): steps alone vs shared, interference grid, occupancy
``diagnose``     a diagnosis: measured runs, the healthy band, the explaining faults' curves; its page's text
``explore``      a design-space exploration: cost against step score, power as colour, the frontier; its table
``result``       every view of one result; a job's figures by kind
``headline``     what the result and compare pages print as text (verdict, rows, BOM values)
``interactive``  figures built on a click, from the slice of page data the browser posts
``slice_limits`` caps on such a slice (hops, rows, devices, links, traces, strings, answer bytes)

Figure dict shape
-----------------
``{"data": [...], "layout": {...}, "config": {...}, "fabricscope": {...}}``. Pass ``data``,
``layout`` and ``config`` to ``Plotly.react``; ``fabricscope`` is ours: ``kind``, ``title``,
``table`` (``{"columns": [...], "rows": [[...]]}``, the figure's data for the CSV/JSON buttons)
and, per kind, what the browser needs for interaction (``path_index`` for the flow picker,
``hosts`` for host drill-down).

The template contexts of the result and compare pages (``result_context``, ``compare_context``)
live in :mod:`designer.pages.selectors`.
"""
from __future__ import annotations

from designer.figures.base import empty_figure
from designer.figures.charts import (
    bottleneck_figure, latency_figure, pattern_figure, rate_figure, tier_figure, timeline_figure)
from designer.figures.compare import figures_for_compare
from designer.figures.interactive import INTERACTIVE_KINDS, SliceError, figure_from_slice
from designer.figures.slice_limits import SliceLimits, SliceTooLarge, check_response
from designer.figures.paths import flow_row_record, path_figure, path_figure_from_index, path_hops, path_index
from designer.figures.result import figures_for_result
from designer.figures.style import (
    FAILED_COLOR, IDLE_COLOR, KIND_STYLE, PALETTE, TIER_LABELS, TIER_ORDER, UTIL_SCALE, fmt_gbps, fmt_time,
    style_json)
from designer.figures.topology import COLLAPSE_HOSTS_ABOVE, expand_host, host_figure, topology_figure
from designer.figures.whatif import (
    figures_for_policies, figures_for_sweep, policy_figure, ranking_figure, whatif_figures)

__all__ = ["figures_for_result", "figures_for_sweep", "figures_for_compare", "figures_for_policies",
           "empty_figure", "expand_host", "path_hops", "flow_row_record", "topology_figure", "host_figure",
           "path_figure", "path_figure_from_index", "path_index", "tier_figure", "bottleneck_figure",
           "pattern_figure", "rate_figure", "timeline_figure", "latency_figure", "whatif_figures",
           "ranking_figure", "policy_figure", "figure_from_slice", "SliceError", "SliceTooLarge",
           "SliceLimits", "check_response", "INTERACTIVE_KINDS",
           "fmt_time", "fmt_gbps", "style_json", "COLLAPSE_HOSTS_ABOVE", "TIER_ORDER", "TIER_LABELS",
           "UTIL_SCALE", "IDLE_COLOR", "FAILED_COLOR", "PALETTE", "KIND_STYLE"]
