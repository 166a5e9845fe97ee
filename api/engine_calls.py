"""Read-only computations the API serves directly (no rows written).

The engine conversions live in :mod:`designer.bridge` (the one module turning documents into
engine objects); this module keeps the names the API views import: validation, build previews,
parsing uploads, GraphML export, template hosts, the catalog, and the result figures (built by
``designer.figures``, not the engine). Engine errors come back as
:class:`designer.exceptions.EngineValidationError` (located problems), like the services' own.
"""
from __future__ import annotations

import importlib

from designer import bridge

__all__ = ["validate_document", "build_preview", "import_host", "graphml", "host_document",
           "catalog", "templates", "figures_available", "figures"]

validate_document = bridge.validate_document
build_preview = bridge.build_preview
import_host = bridge.import_host
graphml = bridge.graphml
host_document = bridge.host_document
catalog = bridge.catalog
templates = bridge.template_details


def _figures_module():
    try:
        return importlib.import_module("designer.figures")
    except ModuleNotFoundError as exc:
        if exc.name != "designer.figures":
            raise
        return None


_FIGURE_FUNCTIONS = {"simulate": "figures_for_result", "sweep": "figures_for_sweep",
                     "compare": "figures_for_policies"}


def figures_available(kind: str = "simulate") -> bool:
    module = _figures_module()
    return module is not None and hasattr(module, _FIGURE_FUNCTIONS.get(kind, ""))


def figures(result: dict, kind: str, *, topology_doc: dict | None = None,
            selected: int | None = None) -> dict[str, dict]:
    """Plotly figure dicts of a job's result, built by ``designer.figures``.

    Parameters
    ----------
    result : dict
        ``fabricscope.result/1`` (simulate), ``fabricscope.sweep/1`` (sweep) or a policy
        comparison (compare).
    kind : {"simulate", "sweep", "compare"}
    topology_doc : dict, optional
        The simulated document (the topology view of a simulation needs it).
    selected : int, optional
        Sweep only: the ranking entry whose what-if figures to add.
    """
    module = _figures_module()
    if kind == "sweep":
        return module.figures_for_sweep(result, selected=selected)
    if kind == "compare":
        return module.figures_for_policies(result)
    return module.figures_for_result(result, topology_doc=topology_doc)
