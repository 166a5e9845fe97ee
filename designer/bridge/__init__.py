"""The one door between the Django side and the engine (docs/ARCHITECTURE.md).

Only modules of this package import ``designer.engine`` (``tests/designer/test_one_door.py``
fails otherwise). They turn revisions, scenarios and jobs into the engine's plain JSON inputs,
call the engine, turn engine errors into :class:`designer.exceptions.EngineValidationError` (a
Django ``ValidationError`` with located details) and engine results into what is stored.

Modules
-------
``common``     engine errors as located ValidationErrors, plain JSON, canonical checksums
``documents``  topology documents: validate, normalize, patch, build, BOM, GraphML, host matrices
``deltas``     revisions stored as a patch on a base: read back, patch between two documents, an
               edit applied to an indexed base (imported by name)
``builds``     a cluster built lean on a worker (the built document handed over, stages reported)
``scenarios``  scenario documents from rows, validation with the per-job flow limit, job overviews
``shared``     shared clusters (jobs with placements): rank the candidate placements of a new job
``analysis``   what workers compute (simulate, sweep, compare) and nccl-tests predictions
``results``    stored results: head + compressed columnar body, sweeps' ranking as columns, and back
``digest``     a revision's digest, made when it is saved: host list, groups, BOM, failure
               targets, so no page parses a big document (imported by name, as ``facts``)
``imports``    uploaded files: server descriptions, SimAI workloads
``goodput``    goodput plans: failure rates × a revision's design → interruptions, interval, ETTR
``plan``       physical plans: racks, cable schedule (and its CSV), costed BOM of a revision's design
``nccl_log``   NCCL_DEBUG=INFO logs (and a graph dump) checked against a revision's design
``diagnose``   measured nccl-tests runs → the ranked faults that explain them (a job's input, its run)
``explore``    the design-space explorer: a grid request checked against a design, its points, chunks, merge
``facts``      templates, fabrics, switch models, sweep classes, the catalog, engine limits (imported
               on its own: it loads engine modules when imported, the others only when called)

Callers use ``from designer import bridge`` and ``bridge.<function>``; ``facts`` and ``results``
are imported by name. Engine modules are imported inside the functions (except in ``facts`` and
``results``): the web process does not pay for numpy start-up until it validates or builds
something.
"""
from designer.bridge.analysis import (
    merge_sweep_parts, nccl_tests_sweep, run_compare, run_simulation, run_sweep_chunk,
    sweep_candidates, warm_up)
from designer.bridge.builds import build_cluster_lean
from designer.bridge.common import (
    canonical_json, canonical_json_bytes, document_checksum, engine_errors, json_safe)
from designer.bridge.documents import (
    build_cluster_document, build_preview, compare_boms, plan_preview, document_figures, fabric_bom,
    fabric_summary, graphml, ops_export, host_document, normalize_document, patch_document, revision_bom,
    topo_matrix, unprintable, validate_document)
from designer.bridge.diagnose import diagnosis_check, diagnosis_runs, run_diagnose
from designer.bridge.explore import (explore_check, explore_chunk_points, explore_points, merge_explore_parts,
                                     run_explore_chunk)
from designer.bridge.goodput import goodput_defaults, goodput_plan
from designer.bridge.plan import physical_plan, plan_cables_csv
from designer.bridge.nccl_log import nccl_log_check
from designer.bridge.imports import import_chakra_job, import_host, import_simai_job
from designer.bridge.scenarios import (
    job_overview, job_scenario_document, scenario_document, scenario_flow_count,
    shared_jobs, validate_scenario)
from designer.bridge.shared import MAX_PLACE_HOSTS, place_ranking

__all__ = [
    "engine_errors", "canonical_json", "canonical_json_bytes", "document_checksum", "json_safe",
    "normalize_document", "patch_document", "document_figures", "build_cluster_document",
    "build_cluster_lean",
    "validate_document", "fabric_summary", "build_preview", "plan_preview", "fabric_bom", "revision_bom",
    "compare_boms", "graphml", "ops_export", "host_document", "topo_matrix", "unprintable",
    "scenario_document", "job_scenario_document", "scenario_flow_count", "validate_scenario",
    "job_overview", "shared_jobs", "MAX_PLACE_HOSTS", "place_ranking",
    "run_simulation", "sweep_candidates", "run_sweep_chunk", "merge_sweep_parts", "run_compare",
    "nccl_tests_sweep", "warm_up",
    "import_host", "import_simai_job", "import_chakra_job",
    "goodput_plan", "goodput_defaults", "nccl_log_check", "physical_plan", "plan_cables_csv",
    "explore_check", "explore_points", "explore_chunk_points", "run_explore_chunk", "merge_explore_parts",
    "diagnosis_runs", "diagnosis_check", "run_diagnose",
]
