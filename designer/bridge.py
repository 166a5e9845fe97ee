"""The one module that knows both the ORM rows and the engine (DESIGN.md §1).

It turns revisions, scenarios and jobs into the engine's plain JSON inputs, calls the engine, and
turns engine errors into :class:`designer.exceptions.EngineValidationError` (a Django
``ValidationError`` with located details), so services never import the engine. The read-only
computations pages and the API show (validation, build previews, host imports, GraphML, host
matrices, the catalog and templates) are here too: ``api/engine_calls.py`` and
``designer/page_selectors.py`` call them instead of building engine objects themselves.

Engine modules are imported inside the functions: the web process does not pay for numpy/numba
start-up until it validates or builds something, and a module still being written does not
break unrelated pages.
"""
from __future__ import annotations

import gc
import hashlib
import io
import json
import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import orjson

from designer.engine.errors import EngineError
from designer.exceptions import EngineValidationError

__all__ = [
    "engine_errors", "canonical_json", "document_checksum", "normalize_document",
    "patch_document",
    "document_figures", "build_cluster_document", "host_templates", "scenario_document",
    "job_scenario_document", "validate_scenario", "json_safe", "run_simulation",
    "sweep_candidates", "run_sweep_chunk", "merge_sweep_parts", "run_compare",
    "validate_document", "fabric_summary", "build_preview", "import_host", "graphml",
    "host_document", "topo_matrix", "catalog", "template_details", "template_choices",
    "nccl_tests_sweep", "fabric_bom", "revision_bom", "compare_boms",
]

Progress = Callable[[float, str], None]


@contextmanager
def engine_errors(field: str | None = None) -> Iterator[None]:
    """Re-raise any :class:`EngineError` as :class:`EngineValidationError` (under ``field``)."""
    try:
        yield
    except EngineError as exc:
        details = [p.as_dict() for p in exc.problems]
        raise EngineValidationError(code=exc.code, message=exc.message, details=details,
                                    field=field) from exc


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 as is: the form checksums are computed on."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def document_checksum(document: dict) -> str:
    """sha256 hex digest of the document's canonical JSON."""
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


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
    """``document`` (a stored revision's) with ``patch`` applied, then normalized (issue 18).

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


def host_templates() -> list[str]:
    """Names of the host templates the engine offers (``dgx-h100``, …)."""
    from designer.engine.model.templates import TEMPLATES

    return sorted(TEMPLATES)


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


def scenario_document(*, revision, workload: list, routing: dict, failures: list,
                      mode: str) -> dict:
    """A ``fabricscope.scenario/1`` dict for the engine from a revision row and scenario fields."""
    return {
        "format": "fabricscope.scenario/1",
        "topology": revision.document,
        "workload": workload,
        "routing": routing,
        "failures": failures,
        "mode": mode,
    }


def job_scenario_document(job) -> dict:
    """The scenario a job computes: its revision's document plus the inputs snapshot."""
    inputs = job.inputs or {}
    return scenario_document(revision=job.revision, workload=inputs.get("workload", []),
                             routing=inputs.get("routing", {}),
                             failures=inputs.get("failures", []),
                             mode=inputs.get("mode", "steady"))


def validate_scenario(scenario: dict) -> None:
    """Check a scenario with the engine (topology, workload selectors, failure targets, routing).

    Raises
    ------
    EngineValidationError
        With the engine's located problems (``workload[0].bytes: ...``).
    """
    from designer.engine.traffic.scenario import normalize_scenario

    with engine_errors():
        normalize_scenario(scenario)


def json_safe(value: Any) -> Any:
    """Plain-JSON copy of an engine result: numpy scalars/arrays unwrapped, NaN/inf -> None.

    PostgreSQL's jsonb rejects NaN and Infinity, and the JSON encoder rejects numpy types.
    Tried first as one orjson encode + decode (C, 3-4x faster than the Python walk on a
    multi-megabyte result, docs/PERFORMANCE.md; orjson already writes NaN/inf as null, floats round-trip exactly and
    key order is kept). What orjson would render differently from the walk — a non-string key,
    an integer beyond 64 bits, a datetime, a dataclass, a set or any other object the walk turns
    into ``str(value)`` — makes it raise, and the walk below does the whole value instead. (Two
    exceptions, absent from engine results: orjson writes an ``enum.Enum`` as its value and a
    ``uuid.UUID`` as its string, where the walk gives ``str(value)``.)
    """
    # The collector is paused: building a result's ~10^5-10^6 containers otherwise starts a
    # collection every 700 of them, which rescans the survivors (~2/3 of the time); JSON has no
    # reference cycles to collect.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return orjson.loads(orjson.dumps(value, default=_orjson_default, option=_ORJSON_STRICT))
    except TypeError:  # orjson.JSONEncodeError
        return _json_safe_walk(value)
    finally:
        if was_enabled:
            gc.enable()


# Subclasses (str, int, dict, list), datetimes and dataclasses go through _orjson_default, which
# hands them to the walk unless they are plain containers, so the two paths give equal values.
_ORJSON_STRICT = (orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME
                  | orjson.OPT_PASSTHROUGH_DATACLASS)


def _orjson_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and scalars (np.float64 is a float subclass)
        return value.tolist()
    if hasattr(value, "as_dict"):
        return value.as_dict()
    for plain in (dict, list, str, int):
        if isinstance(value, plain) and not isinstance(value, bool):
            return plain(value)
    raise TypeError(f"left to the walk: {type(value).__name__}")


def _json_safe_walk(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe_walk(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe_walk(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _json_safe_walk(value.tolist())
    if hasattr(value, "as_dict"):
        return _json_safe_walk(value.as_dict())
    return str(value)


def run_simulation(job, progress: Progress) -> dict:
    """Run a simulate job; returns a ``fabricscope.result/1`` dict."""
    from designer.engine.analysis.simulate import simulate

    with engine_errors():
        return json_safe(simulate(job_scenario_document(job), progress=progress))


def sweep_candidates(job) -> list[dict]:
    """The single failures a sweep job will try (``over`` classes from its parameters), in the
    engine's order: candidates already failed in the scenario or unwired are not tried."""
    from designer.engine.analysis.whatif import sweep_plan

    params = job.parameters or {}
    with engine_errors():
        return json_safe(sweep_plan(job_scenario_document(job), list(params.get("over") or []),
                                    degrade=params.get("degrade"))["candidates"])


def run_sweep_chunk(job, chunk: tuple[int, int] | None, progress: Progress) -> dict:
    """Run block ``chunk = (i, n)`` of a sweep's candidates (None: all of them).

    Returns a ``fabricscope.sweep/1`` part; :func:`merge_sweep_parts` of all n parts equals
    the unchunked sweep.
    """
    from designer.engine.analysis.whatif import sweep

    params = job.parameters or {}
    with engine_errors():
        return json_safe(sweep(job_scenario_document(job), over=list(params.get("over") or []),
                               degrade=params.get("degrade"), chunk=chunk, progress=progress))


def merge_sweep_parts(parts: list[dict]) -> dict:
    """Merge chunk results into one ranking (most harmful first)."""
    from designer.engine.analysis.whatif import merge_sweeps

    with engine_errors():
        return json_safe(merge_sweeps(parts))


def run_compare(job, progress: Progress) -> dict:
    """Run the scenario under each NIC policy of the job's parameters and compare."""
    from designer.engine.analysis.whatif import compare_policies

    policies = tuple((job.parameters or {}).get("policies") or ("affinity", "pxn", "any"))
    with engine_errors():
        return json_safe(compare_policies(job_scenario_document(job), policies=policies,
                                          progress=progress))


# --- Read-only computations for pages and the API (no rows written) -------------------------------

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
    """The normalized cluster document and its summary, without saving anything.

    Returns
    -------
    dict
        ``{"document": <fabricscope.topology/1>, "summary": <fabric_summary>}``.
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
    from designer.engine.errors import EngineError

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


def import_host(*, content: str | bytes, format: str | None, host_id: str, name: str,
                field: str):
    """Parse an uploaded NCCL XML / nvidia-smi / hwloc file into a one-host document.

    Raises EngineValidationError under ``field`` when the file cannot be read.
    """
    from designer.engine.io import import_text

    with engine_errors(field):
        return import_text(content, format=format, host_id=host_id, name=name)


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


def catalog() -> dict:
    """The link/device catalog (techs, capacities in Gbit/s, latencies in ns) as plain JSON."""
    from designer.engine.catalog import catalog_as_dict

    return json_safe(catalog_as_dict())


def template_details() -> dict[str, dict]:
    """Built-in host templates: name -> {name, description, details, params}."""
    from designer.engine.model.templates import TEMPLATES

    return json_safe(TEMPLATES)


def template_choices() -> list[tuple[str, str]]:
    """(name, one-line description) of every host template, sorted by name."""
    from designer.engine.model.templates import TEMPLATES

    return [(name, TEMPLATES[name]["description"]) for name in sorted(TEMPLATES)]


def nccl_tests_sweep(*, document: dict, op: str, min_bytes, max_bytes, factor: int, algorithm: str,
                     log: str | None = None) -> dict:
    """Predicted nccl-tests rows for a topology document and, with ``log`` (a real run's stdout),
    the run side by side (engine :func:`designer.engine.analysis.nccl_tests.side_by_side`).

    Raises
    ------
    EngineValidationError
        Bad arguments (located: ``min_bytes``, ``algorithm`` …) or, under field ``log``, a log
        that is not nccl-tests output (``line 37: expected 13 columns, got 4``).
    """
    from designer.engine.analysis.nccl_tests import side_by_side
    from designer.engine.io.nccl_tests_log import parse_log

    parsed = None
    if log:
        try:
            parsed = parse_log(log, op=op)
        except EngineError as exc:   # "line 37: ..." reads best as one message on the log field
            raise EngineValidationError(code=exc.code, message=exc.message, field="log", details=[
                {"path": "", "message": line} for line in exc.lines()]) from exc
    with engine_errors():
        return json_safe(side_by_side(document, op, min_bytes=min_bytes, max_bytes=max_bytes, factor=factor,
                                      algorithm=algorithm, log=parsed))
