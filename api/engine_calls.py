"""Read-only engine computations the API serves directly (no rows written): validation,
build previews, parsing uploads, GraphML export, template hosts, the catalog, figures.

Engine errors come back as :class:`designer.exceptions.EngineValidationError` (located problems)
through :func:`designer.bridge.engine_errors`, like the services' own.
"""
from __future__ import annotations

import importlib
import io

from designer import bridge

__all__ = ["validate_document", "build_preview", "import_host", "graphml", "host_document",
           "catalog", "templates", "figures_available", "figures"]


def validate_document(document) -> list[dict]:
    """Every located problem of a topology document (empty when valid); never raises."""
    from designer.engine.document import validate

    return [p.as_dict() for p in validate(document)]


def build_preview(*, name: str, template: str, hosts: int, fabric: str, options: dict) -> dict:
    """The normalized cluster document and its summary, without saving anything."""
    from designer.engine.fabrics import fabric_summary

    document = bridge.build_cluster_document(name=name, template=template, hosts=hosts,
                                             fabric=fabric, options=options)
    return {"document": document, "summary": bridge.json_safe(fabric_summary(document))}


def import_host(*, content: str | bytes, format: str | None, host_id: str, name: str,
                field: str):
    """Parse an uploaded NCCL XML / nvidia-smi / hwloc file into a one-host document."""
    from designer.engine.io import import_text

    with bridge.engine_errors(field):
        return import_text(content, format=format, host_id=host_id, name=name)


def graphml(document: dict) -> bytes:
    """GraphML of a topology (networkx ``write_graphml``: readable by networkx and yEd)."""
    import networkx as nx

    from designer.engine.topology import Topology

    with bridge.engine_errors("document"):
        graph = Topology.from_document(document).to_networkx()
    out = io.BytesIO()
    nx.write_graphml(graph, out, encoding="utf-8", prettyprint=True)
    return out.getvalue()


def host_document(*, template: str, host_id: str) -> dict:
    """A normalized document holding one host of ``template`` with group id ``host_id``."""
    from designer.engine.templates import host_document as build

    with bridge.engine_errors():
        return bridge.normalize_document(build(template, host_id=host_id))


def catalog() -> dict:
    from designer.engine.catalog import catalog_as_dict

    return bridge.json_safe(catalog_as_dict())


def templates() -> dict[str, dict]:
    """Built-in host templates: name -> {name, description, details, params}."""
    from designer.engine.templates import TEMPLATES

    return bridge.json_safe(TEMPLATES)


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
