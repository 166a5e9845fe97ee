"""Topology documents: validation, normalization, patches, cluster builds, one-host documents,
bills of materials, GraphML and host path-class matrices.

Engine modules are imported inside the functions: the web process does not pay for numpy start-up
until it validates or builds something.
"""
from __future__ import annotations

import io
from typing import Any

from designer.bridge.common import collector_paused, engine_errors, json_safe, patch_errors
from designer.engine.errors import EngineError

__all__ = [
    "normalize_document", "patch_document", "document_figures", "build_cluster_document",
    "validate_document", "fabric_summary", "build_preview", "plan_preview", "fabric_bom", "revision_bom",
    "compare_boms", "graphml", "ops_export", "host_document", "topo_matrix", "unprintable", "move_legacy_unknown_fields",
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
    """``document`` (a stored revision's, so normalized) with ``patch`` applied, then normalized.

    Only what the patch touches is validated and normalized
    (:func:`designer.engine.document.patch.apply_patch_normalized`): the untouched items of a
    stored revision already are what normalization makes, and the result equals the whole
    document's normalization (tests/engine/test_patch_incremental.py).

    Raises
    ------
    EngineValidationError
        ``patch`` field when the patch does not fit the base (``patch.links.update[3].id``);
        ``document`` field when the result is not a valid topology (located in the result).
    """
    from designer.engine.document.patch import apply_patch_normalized

    with patch_errors():
        patched, where = apply_patch_normalized(document, patch)
    if where is None:
        return json_safe(patched)
    return _json_safe_touched(patched, where)


def _json_safe_touched(document: dict, where: dict) -> dict:
    """``json_safe`` of what the engine built (top-level fields, groups, the touched nodes and
    links); the untouched items came from the stored revision, plain JSON already."""
    head = json_safe({k: v for k, v in document.items() if k not in ("nodes", "links")})
    for key in ("nodes", "links"):
        items = document[key]
        touched = json_safe([items[i] for i in where[key]])
        for position, item in zip(where[key], touched):
            items[position] = item
        head[key] = items
    return head


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


def plan_preview(*, template: str, hosts: int, fabric: str, options: dict) -> dict:
    """Summary and BOM of a cluster build counted from its spec, no document built
    (``engine.model.bom.plan_bom``: the same numbers as :func:`build_preview`, up to
    ``facts.MAX_PREVIEW_HOSTS`` hosts). Raises EngineValidationError on a bad spec.

    Returns
    -------
    dict
        ``{"summary": <fabric_summary>, "bom": <fabricscope.bom/1>}``.
    """
    from designer.engine.model.bom import plan_bom

    with engine_errors():
        try:
            result = plan_bom(template, hosts, fabric=fabric, **(options or {}))
        except TypeError as exc:  # an unknown option name: a user error, not a crash
            raise EngineError(f"invalid cluster option: {exc}") from exc
    return json_safe(result)


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


def ops_export(document: dict, fmt: str) -> tuple[str, bool]:
    """An export for simulators/operations (``engine.io.ops_exports``: astra-sim, htsim, slurm-tree,
    slurm-block, dot-air, netbox) as ``(text, is_bundle)``: one file's text, or the JSON bundle of
    a format with several files. Engine errors become located validation errors at ``document``."""
    from designer.engine.io.ops_exports import bundle_text, export_files, is_bundle

    if fmt == "simai-topo":          # SimAI's topology text: engine.io.simai_topo
        from designer.engine.io.simai_topo import export_simai_topo

        with engine_errors("document"):
            return export_simai_topo(document), False
    with engine_errors("document"):
        files = export_files(document, fmt)
    if is_bundle(fmt):
        return bundle_text(fmt, files), True
    return next(iter(files.values())), False


def host_document(*, template: str, host_id: str, name: str | None = None) -> dict:
    """A normalized document holding one host of ``template`` with group id ``host_id`` (and the
    document ``name``, when given)."""
    from designer.engine.model.templates import host_document as build

    with engine_errors():
        options = {"name": name} if name is not None else {}
        return normalize_document(build(template, host_id=host_id, **options))


def topo_matrix(document: dict, host: str) -> dict:
    """``nvidia-smi topo -m`` of one host of a document (engine ``pathclass.topo_matrix``),
    computed on :func:`host_part` of it: a 2,048-host design is not loaded whole for one host.

    Raises
    ------
    EngineValidationError
        The document has no such host (or cannot be read).
    """
    from designer.engine.model.pathclass import topo_matrix as matrix
    from designer.engine.model.topology import Topology

    with engine_errors(), collector_paused():
        return matrix(Topology.from_document(host_part(document, host)), host)


def host_part(document: dict, host: str) -> dict:
    """The part of ``document`` a host's path classes depend on: every group, the nodes of the
    ``host`` group (and of its sub-groups), every node they reach through links that are not the
    fabric's (PCIe, NVLink, memory, inter-socket: an NVLink domain's other trays too), and the
    links among them. The fabric (Ethernet, InfiniBand) joins hosts, never two devices of one."""
    groups = document.get("groups") or []
    inside = _group_and_descendants(groups, host)
    nodes, links = document.get("nodes") or [], document.get("links") or []
    reached = _reach({n["id"] for n in nodes if n.get("group") in inside}, _off_fabric_pairs(links))
    part = {k: v for k, v in document.items() if k not in ("nodes", "links")}
    part["nodes"] = [n for n in nodes if n["id"] in reached]
    part["links"] = [lk for lk in links if lk["a"] in reached and lk["b"] in reached]
    return part


def _off_fabric_pairs(links: list) -> list[tuple[str, str]]:
    """``(a, b)`` of every link that is not Ethernet or InfiniBand."""
    from designer.engine.catalog import TECHS

    fabric = {name for name, tech in TECHS.items() if tech.family in ("ethernet", "infiniband")}
    return [(link["a"], link["b"]) for link in links if link.get("tech") not in fabric]


def _reach(seeds: set, pairs: list[tuple[str, str]]) -> set:
    """``seeds`` and every node reachable from them through ``pairs``.

    One pass over the pairs per hop away from the seeds (a host's devices are a few hops from
    its own nodes), not an adjacency map of the whole design: at 2,048 hosts (163k off-fabric
    links) building that map was 0.4 s of a host-matrix page, three passes are 0.06 s."""
    reached, grown = set(seeds), True
    while grown:
        size = len(reached)
        for a, b in pairs:
            if a in reached:
                reached.add(b)
            elif b in reached:
                reached.add(a)
        grown = len(reached) > size
    return reached


def _group_and_descendants(groups: list, root: str) -> set:
    children: dict[str, list[str]] = {}
    for g in groups:
        children.setdefault(g.get("parent"), []).append(g["id"])
    found, frontier = {root}, [root]
    while frontier:
        frontier = [c for g in frontier for c in children.get(g, ()) if c not in found]
        found.update(frontier)
    return found


def unprintable(text: str) -> str | None:
    """What makes ``text`` unfit for a name (a control, line-separator or bidi-override
    character, as the document validator says), or None when it is printable."""
    from designer.engine.document import unprintable as problem

    return problem(text)


def move_legacy_unknown_fields(document: dict) -> tuple[dict, list[str]]:
    """A stored document with each field the format does not know moved under ``attrs``
    (engine ``document.normalizer.migrate_unknown_keys``), and the moved paths; for the data
    migration of revisions stored before unknown fields were refused."""
    from designer.engine.document.normalizer import migrate_unknown_keys

    return migrate_unknown_keys(document)
