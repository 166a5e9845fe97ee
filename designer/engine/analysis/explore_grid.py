"""The design-space explorer's request: a grid of fabric options over a base build spec, checked.

A grid request (``fabricscope.explore-grid/1``, docs/FORMATS.md "Design-space explorer") names a
``base`` build spec (the options of :func:`designer.engine.model.fabrics.build_cluster`), a
``grid`` of axes each with a list of values, and the traffic every point runs: a ``jobs`` list
(a shared cluster, docs/FORMATS.md "Jobs with placements") or one ``workload``. Every value is
checked here, before any point is built, so an absurd grid (0 hosts, an unknown switch, 10,000
points) is one located error (``grid.hosts[0]: must be an integer ≥ 1``) and no work is done.
A combination the builder refuses (3 planes for 8 rails) is not an error of the request: that
point is reported infeasible with the builder's located reason.
"""
from __future__ import annotations

import itertools
import math

from designer.engine.catalog import SWITCH_MODELS, TECHS
from designer.engine.errors import InvalidScenario, LimitExceeded, Problem
from designer.engine.model.fabrics import FABRICS, MAX_HOSTS
from designer.engine.model.plan_request import plan_options
from designer.engine.model.templates import TEMPLATES

__all__ = ["GRID_FORMAT", "AXES", "BASE_KEYS", "MAX_POINTS", "MAX_VALUES", "check_request", "grid_points"]

GRID_FORMAT = "fabricscope.explore-grid/1"
# The options a grid may vary (build_cluster's names; ``gpus`` sizes the cluster in GPUs instead
# of hosts: hosts = ceil(gpus / GPUs of one host instance), so scale-up domains compare at one size).
AXES = ("template", "gpus", "hosts", "fabric", "tiers", "oversubscription", "switch", "nic_link_tech",
        "planes")
# Options the base may also fix (not varied: they do not change the design's kind).
BASE_KEYS = (*AXES, "rails", "leaves_per_rail", "spines", "uplink_tech", "hosts_per_rack", "params")
# A grid point is one build, one plan and one simulation (1-2 s CPU at 1,024 GPUs): 256 points
# are about 5 min on two workers; more is a sweep nobody reads point by point.
MAX_POINTS = 256
MAX_VALUES = 32
# ``points_total`` is what a checked request carries (recomputed: a stored request re-checks as is).
_KEYS = {"format", "base", "grid", "jobs", "workload", "routing", "plan", "mode", "options", "points_total"}


def _int(v, least: int, most: int | None = None) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int) or v < least or (most is not None and v > most):
        return f"must be an integer ≥ {least}" + (f" and ≤ {most:,}" if most is not None else "") + f", got {v!r}"
    return None


def _choice(v, names, what: str) -> str | None:
    if not isinstance(v, str) or v not in names:
        return f"unknown {what} {v!r} (choose from {', '.join(names)})"
    return None


def _oversub(v) -> str | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 1 <= v <= 64:
        return f"must be a number from 1 to 64, got {v!r}"
    return None


_CHECKS = {
    "template": lambda v: _choice(v, list(TEMPLATES), "host template"),
    "gpus": lambda v: _int(v, 1, 65_536),
    "hosts": lambda v: _int(v, 1, MAX_HOSTS),
    "fabric": lambda v: _choice(v, FABRICS, "fabric"),
    "tiers": lambda v: None if v in (None, 2, 3) and not isinstance(v, bool) else f"must be 2, 3 or null, got {v!r}",
    "oversubscription": _oversub,
    "switch": lambda v: _choice(v, list(SWITCH_MODELS), "switch model"),
    "nic_link_tech": lambda v: _choice(v, sorted(TECHS), "link technology"),
    "planes": lambda v: _int(v, 1, 64),
}


def _check_base(base, problems: list) -> dict:
    if not isinstance(base, dict):
        problems.append(Problem("base", "must be an object of build options (template, hosts, fabric, …)"))
        return {}
    for key, value in base.items():
        if key not in BASE_KEYS:
            problems.append(Problem(f"base.{key}", f"unknown build option (allowed: {', '.join(BASE_KEYS)})"))
        elif key in _CHECKS and (why := _CHECKS[key](value)):
            problems.append(Problem(f"base.{key}", why))
    return dict(base)


def _check_grid(grid, problems: list) -> dict:
    if not isinstance(grid, dict) or not grid:
        problems.append(Problem("grid", f"must be a non-empty object of axes ({', '.join(AXES)}) to lists of values"))
        return {}
    for axis, values in grid.items():
        if axis not in AXES:
            problems.append(Problem(f"grid.{axis}", f"not an axis the explorer varies (choose from {', '.join(AXES)})"))
        elif not isinstance(values, list) or not values or len(values) > MAX_VALUES:
            problems.append(Problem(f"grid.{axis}", f"must be a list of 1 to {MAX_VALUES} values"))
        else:
            for k, value in enumerate(values):
                if why := _CHECKS[axis](value):
                    problems.append(Problem(f"grid.{axis}[{k}]", why))
            if len({repr(v) for v in values}) != len(values):
                problems.append(Problem(f"grid.{axis}", "repeats a value (each point would be run twice)"))
    return dict(grid)


def _check_size(base: dict, grid: dict, problems: list) -> None:
    merged = {**base, **grid}
    if "template" not in merged:
        problems.append(Problem("base.template", "a host template is needed (in base or grid)"))
    if "hosts" not in merged and "gpus" not in merged:
        problems.append(Problem("base.hosts", "the cluster size is needed: hosts or gpus (in base or grid)"))
    if "hosts" in merged and "gpus" in merged:
        problems.append(Problem("base.gpus", "give hosts or gpus, not both"))


def _check_traffic(request: dict, problems: list) -> None:
    has_jobs, has_workload = request.get("jobs") is not None, request.get("workload") is not None
    if has_jobs == has_workload:
        problems.append(Problem("jobs", "give the job mix as jobs (a list of jobs) or one workload, exactly one"))
    elif has_jobs and (not isinstance(request["jobs"], list) or not request["jobs"]):
        problems.append(Problem("jobs", "must be a non-empty list of jobs (docs/FORMATS.md, Jobs with placements)"))
    routing = request.get("routing")
    if routing is not None and not isinstance(routing, dict):
        problems.append(Problem("routing", "must be an object (nic_policy, multipath)"))


def check_request(request) -> dict:
    """A grid request, checked whole: every problem located, or the request with its defaults.

    Parameters
    ----------
    request : dict
        ``base``, ``grid``, ``jobs`` or ``workload``, optional ``routing`` (default NIC policy
        ``pxn``: NCCL's default, and the only way a rail-only fabric carries cross-rail traffic),
        ``mode`` and ``options`` (as a scenario's) and ``plan`` (a physical-plan request: prices,
        rack budget).

    Returns
    -------
    dict
        The request with ``routing`` defaulted, ``format`` set and ``points_total``.

    Raises
    ------
    InvalidScenario
        Unknown keys, bad values, no traffic or size (each ``Problem`` located).
    LimitExceeded
        More than :data:`MAX_POINTS` points (path ``grid``), before any point is built.
    """
    if not isinstance(request, dict):
        raise InvalidScenario("a grid request must be a JSON object", [Problem("request", "must be an object")])
    problems = [Problem(key, f"unknown key (allowed: {', '.join(sorted(_KEYS))})") for key in request if key not in _KEYS]
    if request.get("format", GRID_FORMAT) != GRID_FORMAT:
        problems.append(Problem("format", f"must be {GRID_FORMAT!r}"))
    base = _check_base(request.get("base", {}), problems)
    grid = _check_grid(request.get("grid"), problems)
    _check_size(base, grid, problems)
    _check_traffic(request, problems)
    if problems:
        raise InvalidScenario("invalid explorer grid", problems)
    total = math.prod(len(v) for v in grid.values())
    if total > MAX_POINTS:
        sizes = " × ".join(f"{len(v)} {k}" for k, v in grid.items())
        message = f"{total:,} points ({sizes}) exceed the limit of {MAX_POINTS} (MAX_POINTS)"
        raise LimitExceeded(message, [Problem("grid", message)])
    templates = {t for t in [base.get("template"), *grid.get("template", [])] if isinstance(t, str)}
    try:
        plan_options(request.get("plan"), templates=templates)
    except InvalidScenario as exc:  # the plan request's own paths, under "plan"
        raise InvalidScenario("invalid plan request",
                              [Problem(f"plan.{p.path}" if p.path else "plan", p.message) for p in exc.problems]) from None
    routing = {"nic_policy": "pxn", **(request.get("routing") or {})}
    return {**request, "format": GRID_FORMAT, "base": base, "grid": grid, "routing": routing,
            "points_total": total}


def grid_points(request: dict) -> list[dict]:
    """Every point of a checked request, in a fixed order (the grid's axes in the order given,
    the last varying fastest): ``{"index", "axes": {axis: value}, "build": {option: value}}``."""
    axes = list(request["grid"])
    out = []
    for k, values in enumerate(itertools.product(*(request["grid"][a] for a in axes))):
        chosen = dict(zip(axes, values))
        out.append({"index": k, "axes": chosen, "build": {**request["base"], **chosen}})
    return out
