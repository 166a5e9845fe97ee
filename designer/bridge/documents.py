"""Topology documents: validation, normalization, patches, cluster builds, one-host documents,
bills of materials, GraphML and host path-class matrices.

Engine modules are imported inside the functions: the web process does not pay for numpy start-up
until it validates or builds something.
"""
from __future__ import annotations

import io
from typing import Any

from designer.bridge.common import engine_errors, json_safe
from designer.engine.errors import EngineError

__all__ = [
    "normalize_document", "patch_document", "document_figures", "build_cluster_document",
    "validate_document", "fabric_summary", "build_preview", "fabric_bom", "revision_bom",
    "compare_boms", "graphml", "host_document", "topo_matrix", "unprintable",
]


def normalize_document(document: Any) -> dict:
    """Validate and normalize a ``fabricscope.topology/1`` document (catalog defaults filled in).

    Raises
    ------
    EngineValidationError
        ``document`` field, one detail per located problem.
    """
    from designer.engine.document import normalize

    with engine_errors("document"):
        return json_safe(normalize(document))


def patch_document(document: dict, patch: Any) -> dict:
    """``document`` (a stored revision's) with ``patch`` applied, then normalized.

    Raises
    ------
    EngineValidationError
        ``patch`` field when the patch does not fit the base (``patch.links.update[3].id``);
        ``document`` field when the result is not a valid topology (located in the result).
    """
    from designer.engine.document.patch import apply_patch

    with engine_errors("patch"):
        patched = apply_patch(document, patch)
    return normalize_document(patched)


def document_figures(document: dict) -> dict[str, int]:
    """Size figures cached on the topology row: hosts, GPUs, nodes, links."""
    nodes = document.get("nodes") or []
    return {
        "host_count": sum(1 for g in document.get("groups") or [] if g.get("kind") == "host"),
        "gpu_count": sum(1 for n in nodes if n.get("kind") == "gpu"),
        "node_count": len(nodes),
        "link_count": len(document.get("links") or []),
    }


def build_cluster_document(*, name: str, template: str, hosts: int,
                           fabric: str = "rail-optimized", options: dict | None = None) -> dict:
    """Generate a cluster document: ``hosts`` hosts of ``template`` wired by ``fabric``.

    ``options`` go to ``engine.fabrics.build_cluster`` as keyword arguments (``rails``,
    ``spines``, …). Raises EngineValidationError on a bad spec.
    """
    from designer.engine.model.fabrics import build_cluster

    with engine_errors():
        try:
            document = build_cluster(template, hosts, fabric=fabric, **(options or {}))
        except TypeError as exc:  # an unknown option name: a user error, not a crash
            raise EngineError(f"invalid cluster option: {exc}") from exc
    document = dict(document, name=name)
    return normalize_document(document)


def validate_document(document: Any) -> list[dict]:
    """Every located problem of a topology document (empty when valid); never raises.

    Returns
    -------
    list of dict
        ``[{"path": "links[12].b", "message": "unknown node ..."}, ...]``.
    """
    from designer.engine.document import validate

    return [p.as_dict() for p in validate(document)]


def fabric_summary(document: dict) -> dict:
    """Plain-JSON size and capacity summary of a cluster document (``engine.fabrics``)."""
    from designer.engine.model.fabrics import fabric_summary as summarize

    return json_safe(summarize(document))


def build_preview(*, name: str, template: str, hosts: int, fabric: str, options: dict) -> dict:
    """The normalized cluster document, its summary and its BOM, without saving anything.

    Returns
    -------
    dict
        ``{"document": <fabricscope.topology/1>, "summary": <fabric_summary>, "bom": ...}``.
    """
    document = build_cluster_document(name=name, template=template, hosts=hosts, fabric=fabric,
                                      options=options)
    return {"document": document, "summary": fabric_summary(document), "bom": fabric_bom(document)}


def fabric_bom(document: dict) -> dict:
    """Plain-JSON bill of materials of a topology document (``engine.bom.fabric_bom``).

    Raises EngineValidationError when the document does not load.
    """
    from designer.engine.model.bom import fabric_bom as bom

    with engine_errors():
        return json_safe(bom(document))


def revision_bom(revision) -> dict | None:
    """The BOM of a stored revision for the topology page, or None (no revision, no switch, or a
    document the BOM cannot read — the page then simply has no BOM section)."""
    if revision is None:
        return None
    from designer.engine.model.bom import fabric_bom as bom

    try:
        result = bom(revision.document)
    except (EngineError, KeyError, TypeError, ValueError):
        return None
    return json_safe(result) if result["switches"] else None


def compare_boms(bom_a: dict | None, bom_b: dict | None) -> list[dict]:
    """Row-by-row comparison of two BOMs (``engine.bom.compare_boms``: label, a, b, delta, unit,
    differs, better)."""
    from designer.engine.model.bom import compare_boms as compare

    return compare(bom_a, bom_b)


def graphml(document: dict) -> bytes:
    """GraphML (UTF-8 bytes) of a topology (networkx ``write_graphml``: readable by yEd)."""
    import networkx as nx

    from designer.engine.model.topology import Topology

    with engine_errors("document"):
        graph = Topology.from_document(document).to_networkx()
    out = io.BytesIO()
    nx.write_graphml(graph, out, encoding="utf-8", prettyprint=True)
    return out.getvalue()


def host_document(*, template: str, host_id: str, name: str | None = None) -> dict:
    """A normalized document holding one host of ``template`` with group id ``host_id`` (and the
    document ``name``, when given)."""
    from designer.engine.model.templates import host_document as build

    with engine_errors():
        options = {"name": name} if name is not None else {}
        return normalize_document(build(template, host_id=host_id, **options))


def topo_matrix(document: dict, host: str) -> dict:
    """``nvidia-smi topo -m`` of one host of a document (engine ``pathclass.topo_matrix``).

    Raises
    ------
    EngineValidationError
        The document has no such host (or cannot be read).
    """
    from designer.engine.model.pathclass import topo_matrix as matrix
    from designer.engine.model.topology import Topology

    with engine_errors():
        return matrix(Topology.from_document(document), host)


def unprintable(text: str) -> str | None:
    """What makes ``text`` unfit for a name (a control, line-separator or bidi-override
    character, as the document validator says), or None when it is printable."""
    from designer.engine.document import unprintable as problem

    return problem(text)
