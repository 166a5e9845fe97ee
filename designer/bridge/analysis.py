"""Engine analyses: what a worker computes for a job (simulate, sweep, compare) and the
nccl-tests prediction pages and the API run inline.

Each returns plain JSON (:func:`designer.bridge.common.json_safe`) and raises
:class:`designer.exceptions.EngineValidationError` for the engine's located errors. Callers look
the run functions up on ``designer.bridge`` at call time (tests wrap them there).
"""
from __future__ import annotations

from designer.bridge.common import Progress, engine_errors, json_safe
from designer.bridge.scenarios import job_scenario_document
from designer.engine.errors import EngineError
from designer.exceptions import EngineValidationError

__all__ = ["run_simulation", "sweep_candidates", "run_sweep_chunk", "merge_sweep_parts",
           "run_compare", "nccl_tests_sweep", "warm_up"]


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

    Returns the part as it is stored (``fabricscope.sweep-columns/1``, docs/FORMATS.md, "Stored
    sweeps"; :func:`designer.bridge.results.rows_of` reads it); :func:`merge_sweep_parts` of all n
    parts equals the unchunked sweep.
    """
    from designer.engine.analysis.sweep_columns import pack
    from designer.engine.analysis.whatif import sweep

    params = job.parameters or {}
    with engine_errors():
        return pack(json_safe(sweep(job_scenario_document(job), over=list(params.get("over") or []),
                                    degrade=params.get("degrade"), chunk=chunk, progress=progress)))


def merge_sweep_parts(parts: list[dict]) -> dict:
    """Merge chunk results (stored columnar, or in row form by an older version) into one
    ranking, most harmful first, packed as it is stored (``fabricscope.sweep-columns/1``)."""
    from designer.engine.analysis.sweep_columns import pack
    from designer.engine.analysis.whatif import merge_sweeps

    with engine_errors():
        return pack(json_safe(merge_sweeps(parts)))


def run_compare(job, progress: Progress) -> dict:
    """Run the scenario under each NIC policy of the job's parameters and compare."""
    from designer.engine.analysis.whatif import compare_policies

    policies = tuple((job.parameters or {}).get("policies") or ("affinity", "pxn", "any"))
    with engine_errors():
        return json_safe(compare_policies(job_scenario_document(job), policies=policies,
                                          progress=progress))


def nccl_tests_sweep(*, document: dict, op: str, min_bytes, max_bytes, factor: int, algorithm: str,
                     log: str | None = None, logs: list[tuple[str, str]] | None = None,
                     protocol: str = "auto", channels: int | None = None, root: int = 0, redop: str = "sum",
                     env: list[str] | None = None, hosts_subset: str | None = None,
                     nic_policy: str | None = None) -> dict:
    """Predicted nccl-tests rows for a topology document and, with ``log`` or ``logs`` (real
    runs' stdout, ``(file name, text)`` pairs), the runs side by side (engine
    ``analysis.nccl_tests.side_by_side``).

    ``root``, ``redop`` (nccl-tests ``-r``/``-o``), ``env`` (NCCL knobs, ``NAME=VALUE``),
    ``hosts_subset`` (``h0,h3``) and ``nic_policy`` as the engine's
    ``analysis.nccl_tests_config.sweep_settings``; logs may be stdout or nccl-tests' JSON file.

    Raises
    ------
    EngineValidationError
        Bad arguments (located: ``min_bytes``, ``algorithm``, ``channels``, ``env[2]`` …) or, under
        field ``log``, a log that is not nccl-tests output (``run2.txt: line 37: expected 13
        columns, got 4`` — the file named when there are several).
    """
    from designer.engine.analysis.nccl_tests import compile_topology, side_by_side
    from designer.engine.analysis.nccl_tests_config import sweep_settings

    runs = ([("run", log)] if log else []) + list(logs or [])
    parsed = [(name, _parsed_log(name, text, op, named=len(runs) > 1)) for name, text in runs]
    with engine_errors():
        topo = compile_topology(document)
        settings = sweep_settings(topo, op=op, algorithm=algorithm, protocol=protocol, channels=channels, env=env,
                                  hosts=hosts_subset, nic_policy=nic_policy)
        applied = settings.pop("env")
        out = side_by_side(topo, op, min_bytes=min_bytes, max_bytes=max_bytes, factor=factor, logs=parsed,
                           root=root, redop=redop, **settings)
        return json_safe({**out, "env": applied})


def _parsed_log(name: str, text: str, op: str, *, named: bool):
    """One run's stdout or JSON file parsed; its errors as one message on the ``log`` field
    (``line 37: ...`` reads best there), prefixed by the file's name when several were sent."""
    from designer.engine.io.nccl_tests_json import parse_run

    try:
        return parse_run(text, op=op)
    except EngineError as exc:
        prefix = f"{name}: " if named else ""
        raise EngineValidationError(code=exc.code, message=exc.message, field="log", details=[
            {"path": "", "message": prefix + line} for line in exc.lines()]) from exc


def warm_up() -> None:
    """Compile (or load) the solver's kernels now: a cold numba cache costs a worker's first job
    seconds of compilation otherwise."""
    from designer.engine.solve.solver import warm_up as warm

    warm()
