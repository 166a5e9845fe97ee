"""Every view of one ``fabricscope.result/1``, in display order."""
from __future__ import annotations

from designer.figures.charts import (
    bottleneck_figure, latency_figure, pattern_figure, rate_figure, tier_figure, timeline_figure)
from designer.figures.diagnose import diagnosis_figures
from designer.figures.explore import explore_figures
from designer.figures.job import job_figure
from designer.figures.paths import path_figure, path_index
from designer.figures.shared import shared_figures
from designer.figures.topology import topology_figure
from designer.figures.whatif import figures_for_policies, figures_for_sweep, whatif_figures

__all__ = ["figures_for_result", "page_view", "page_figures", "job_figures"]


def page_view(result: dict) -> str:
    """The result page's view of a stored document: ``"result"``, ``"sweep"``, ``"policies"``,
    ``"diagnosis"`` or ``"explore"``."""
    fmt = str((result or {}).get("format") or "")
    if fmt.startswith("fabricscope.diagnosis"):
        return "diagnosis"
    if fmt.startswith("fabricscope.explore"):
        return "explore"
    if fmt.startswith(("fabricscope.sweep", "fabricscope.compare")) or "ranking" in (result or {}):
        return "policies" if fmt.startswith("fabricscope.compare") else "sweep"
    return "result"


def page_figures(result: dict, *, topology_doc: dict | None = None,
                 selected: int | None = None) -> dict[str, dict]:
    """The figures of the result page's view of ``result`` (see :func:`page_view`).

    ``selected`` is the sweep ranking entry to detail (sweeps and comparisons only).
    """
    view = page_view(result)
    if view == "result":
        return figures_for_result(result, topology_doc=topology_doc)
    if view == "diagnosis":
        return diagnosis_figures(result)
    if view == "explore":
        return explore_figures(result)
    return figures_for_sweep(result, selected=selected)


def job_figures(result: dict, kind: str, *, topology_doc: dict | None = None,
                selected: int | None = None) -> dict[str, dict]:
    """The figures of a job's result by job kind (the API's ``/jobs/<id>/figures/``).

    Parameters
    ----------
    result : dict
        ``fabricscope.result/1`` (simulate), ``fabricscope.sweep/1`` (sweep) or a policy
        comparison (compare).
    kind : {"simulate", "sweep", "compare", "diagnose", "explore"}
    topology_doc : dict, optional
        The simulated document (the topology view of a simulation needs it).
    selected : int, optional
        Sweep only: the ranking entry whose what-if figures to add.
    """
    if kind == "sweep":
        return figures_for_sweep(result, selected=selected)
    if kind == "diagnose":
        return diagnosis_figures(result)
    if kind == "explore":
        return explore_figures(result)
    if kind == "compare":
        return figures_for_policies(result)
    return figures_for_result(result, topology_doc=topology_doc)


def figures_for_result(result: dict, *, topology_doc: dict | None = None) -> dict[str, dict]:
    """Every view of one ``fabricscope.result/1``.

    Parameters
    ----------
    result : dict
    topology_doc : dict, optional
        The ``fabricscope.topology/1`` document simulated (the topology view needs it).

    Returns
    -------
    dict of str to dict
        Figure dicts in display order; keys present when the result has the data: ``topology``
        (+ ``topology_collapsed`` when the default view is expanded), ``path`` (its
        ``fabricscope.path_index`` feeds the flow picker), ``patterns``, ``rates``, ``tiers``,
        ``bottlenecks``, ``timeline``, ``latency``, ``job`` (the step's Gantt), ``shared_steps``,
        ``interference``, ``occupancy`` (a shared cluster's jobs), ``whatif_completion``,
        ``whatif_changes``.
    """
    result = result or {}
    figs = {"topology": topology_figure(result, topology_doc)}
    meta = figs["topology"]["fabricscope"]
    if topology_doc and not meta.get("collapsed") and not meta.get("empty"):
        figs["topology_collapsed"] = topology_figure(result, topology_doc, collapsed=True)
    index = path_index(result, topology_doc)
    figs["path"] = path_figure(result, topology_doc=topology_doc, index=index)
    figs["path"]["fabricscope"]["path_index"] = index
    figs["patterns"] = pattern_figure(result)
    figs["rates"] = rate_figure(result)
    figs["tiers"] = tier_figure(result)
    figs["bottlenecks"] = bottleneck_figure(result)
    for key, fig in (("timeline", timeline_figure(result)), ("latency", latency_figure(result)),
                     ("job", job_figure(result))):
        if fig is not None:
            figs[key] = fig
    figs.update(shared_figures(result, topology_doc))
    failures = (result.get("diff") or {}).get("failures") or []
    figs.update(whatif_figures(result.get("diff"), label=", ".join(f.get("label") or str(f.get("target"))
                                                                   for f in failures)))
    return figs
