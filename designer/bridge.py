"""The one module that knows both the ORM rows and the engine (DESIGN.md §1).

It turns revisions, scenarios and jobs into the engine's plain JSON inputs, calls the engine, and
turns engine errors into :class:`designer.exceptions.EngineValidationError` (a Django
``ValidationError`` with located details), so services never import the engine.

Engine modules are imported inside the functions: the web process does not pay for numpy/numba
start-up until it validates or builds something, and a module still being written does not
break unrelated pages.
"""
from __future__ import annotations

import hashlib
import json
import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from designer.engine.errors import EngineError
from designer.exceptions import EngineValidationError

__all__ = [
    "engine_errors", "canonical_json", "document_checksum", "normalize_document",
    "document_figures", "build_cluster_document", "host_templates", "scenario_document",
    "job_scenario_document", "validate_scenario", "json_safe", "run_simulation",
    "sweep_candidates", "run_sweep_chunk", "merge_sweep_parts", "run_compare",
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
    from designer.engine.templates import TEMPLATES

    return sorted(TEMPLATES)


def build_cluster_document(*, name: str, template: str, hosts: int,
                           fabric: str = "rail-optimized", options: dict | None = None) -> dict:
    """Generate a cluster document: ``hosts`` hosts of ``template`` wired by ``fabric``.

    ``options`` go to ``engine.fabrics.build_cluster`` as keyword arguments (``rails``,
    ``spines``, …). Raises EngineValidationError on a bad spec.
    """
    from designer.engine.fabrics import build_cluster

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
    from designer.engine.scenario import normalize_scenario

    with engine_errors():
        normalize_scenario(scenario)


def json_safe(value: Any) -> Any:
    """Plain-JSON copy of an engine result: numpy scalars/arrays unwrapped, NaN/inf -> None.

    PostgreSQL's jsonb rejects NaN and Infinity, and the JSON encoder rejects numpy types.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return json_safe(value.tolist())
    if hasattr(value, "as_dict"):
        return json_safe(value.as_dict())
    return str(value)


def run_simulation(job, progress: Progress) -> dict:
    """Run a simulate job; returns a ``fabricscope.result/1`` dict."""
    from designer.engine.simulate import simulate

    with engine_errors():
        return json_safe(simulate(job_scenario_document(job), progress=progress))


def sweep_candidates(job) -> list[dict]:
    """The single failures a sweep job will try (``over`` classes from its parameters)."""
    from designer.engine.whatif import sweep_candidates as candidates

    params = job.parameters or {}
    with engine_errors():
        return json_safe(candidates(job_scenario_document(job), list(params.get("over") or []),
                                    degrade=params.get("degrade")))


def run_sweep_chunk(job, chunk: tuple[int, int] | None, progress: Progress) -> dict:
    """Run block ``chunk = (i, n)`` of a sweep's candidates (None: all of them).

    Returns a ``fabricscope.sweep/1`` part; :func:`merge_sweep_parts` of all n parts equals
    the unchunked sweep.
    """
    from designer.engine.whatif import sweep

    params = job.parameters or {}
    with engine_errors():
        return json_safe(sweep(job_scenario_document(job), over=list(params.get("over") or []),
                               degrade=params.get("degrade"), chunk=chunk, progress=progress))


def merge_sweep_parts(parts: list[dict]) -> dict:
    """Merge chunk results into one ranking (most harmful first)."""
    from designer.engine.whatif import merge_sweeps

    with engine_errors():
        return json_safe(merge_sweeps(parts))


def run_compare(job, progress: Progress) -> dict:
    """Run the scenario under each NIC policy of the job's parameters and compare."""
    from designer.engine.whatif import compare_policies

    policies = tuple((job.parameters or {}).get("policies") or ("affinity", "pxn", "any"))
    with engine_errors():
        return json_safe(compare_policies(job_scenario_document(job), policies=policies,
                                          progress=progress))
