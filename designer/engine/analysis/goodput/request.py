"""The goodput plan's input (``fabricscope.goodput-plan/1``): checked, every problem located.

docs/FORMATS.md, "Goodput plan", lists the fields. A rate is a finite number ≥ 0, a repair
time a finite number > 0 (a zero repair would make a failure free), a slowdown a fraction in
[0, 1]; ``rates.nic.afr: must be a finite number >= 0`` says where a bad value is.
"""
from __future__ import annotations

import math

from designer.engine.analysis.goodput.facts import CLASSES, DEFAULT_RESTART_OVERHEAD_S
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["PLAN_FORMAT", "check_request", "MAX_SIMULATED_DAYS", "TRAFFIC_PATTERNS",
           "GRADIENT_BYTES_PER_PARAMETER"]

PLAN_FORMAT = "fabricscope.goodput-plan/1"
#: Upper bound of ``runs × days_per_run`` (memory: one float per simulated failure).
MAX_SIMULATED_DAYS = 1_000_000.0
_KEYS = {"": {"format", "topology", "job", "rates", "models", "checkpoint", "spares", "monte_carlo", "traffic"},
         "job": {"gpus", "hosts", "exposed_communication_fraction"},
         "class": {"afr", "repair_hours", "slowdown", "effect"},
         "checkpoint": {"bytes", "parameters", "bytes_per_parameter", "write_s", "read_s",
                        "restart_overhead_s", "interval_s"},
         "spares": {"availability"},
         "monte_carlo": {"runs", "days_per_run", "seed", "timeline_days"},
         "traffic": {"pattern", "bytes", "algorithm", "routing", "max_hosts", "samples"}}
#: Collectives the blast radius may be measured with (docs/FORMATS.md, Scenario).
TRAFFIC_PATTERNS = ("allreduce", "allgather", "reducescatter", "alltoall")
#: Gradient bytes per parameter of the data-parallel all-reduce (bf16 gradients).
GRADIENT_BYTES_PER_PARAMETER = 2.0
_TRAFFIC_DEFAULT = {"pattern": "allreduce", "algorithm": None, "routing": {}, "max_hosts": 16, "samples": 2}
_MC_DEFAULT = {"runs": 200, "days_per_run": 54.0, "seed": 0, "timeline_days": 7.0}


def _finite(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _number(block: dict, key: str, path: str, problems: list, *, low=0.0, strict=False, high=None):
    """Check ``block[key]`` (when present) is finite and in range; note a problem otherwise."""
    v = block.get(key)
    if v is None:
        return
    bad = not _finite(v) or (v <= low if strict else v < low) or (high is not None and v > high)
    if bad:
        rel = ">" if strict else ">="
        rng = f" and <= {high:g}" if high is not None else ""
        problems.append(Problem(f"{path}.{key}", f"must be a finite number {rel} {low:g}{rng}, got {v!r}"))


def _object(raw, path: str, keys: set, problems: list, what: str = "field") -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(Problem(path or "plan", "must be an object"))
        return {}
    for key in sorted(set(raw) - keys, key=str):
        known = f" (known: {', '.join(sorted(keys))})" if what != "field" else ""
        problems.append(Problem(f"{path}.{key}" if path else str(key), f"unknown {what}{known}"))
    return raw


def _class_block(raw, path: str, problems: list) -> dict:
    block = _object(raw, path, _KEYS["class"], problems)
    _number(block, "afr", path, problems, high=1e9)  # failures per unit-year: 30 a second
    _number(block, "repair_hours", path, problems, strict=True, high=1e6)
    _number(block, "slowdown", path, problems, high=1.0)
    if block.get("effect") not in (None, "interrupt", "degrade"):
        problems.append(Problem(f"{path}.effect", 'must be "interrupt" or "degrade"'))
    return block


def _rates(raw, path: str, problems: list) -> dict:
    out = {}
    for cls, block in _object(raw, path, set(CLASSES), problems, "failure class").items():
        if cls in CLASSES:
            out[cls] = _class_block(block, f"{path}.{cls}", problems)
    return out


def _job(raw, problems: list) -> dict:
    job = dict(_object(raw, "job", _KEYS["job"], problems))
    gpus = job.get("gpus")
    if gpus is not None and (isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1):
        problems.append(Problem("job.gpus", f"must be an integer >= 1, got {gpus!r}"))
    hosts = job.get("hosts")
    if hosts is not None and (not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts)):
        problems.append(Problem("job.hosts", "must be a list of host group ids"))
    _number(job, "exposed_communication_fraction", "job", problems, high=1.0)
    job.setdefault("exposed_communication_fraction", 0.1)
    return job


#: Upper bounds of the checkpoint's numbers: a year of seconds, an exabyte, a quadrillion parameters
#: (beyond them a product of two overflows a float).
_CK_HIGH = {"read_s": 3.2e7, "restart_overhead_s": 3.2e7, "write_s": 3.2e7, "interval_s": 3.2e7,
            "bytes": 1e18, "parameters": 1e15, "bytes_per_parameter": 1e3}


def _checkpoint(raw, problems: list) -> dict:
    ck = dict(_object(raw, "checkpoint", _KEYS["checkpoint"], problems))
    for key in ("read_s", "restart_overhead_s"):
        _number(ck, key, "checkpoint", problems, high=_CK_HIGH[key])
    for key in ("bytes", "parameters", "bytes_per_parameter", "write_s", "interval_s"):
        _number(ck, key, "checkpoint", problems, strict=True, high=_CK_HIGH[key])
    ck.setdefault("restart_overhead_s", DEFAULT_RESTART_OVERHEAD_S)
    return ck


def _monte_carlo(raw, problems: list) -> dict | None:
    if raw is False:
        return None
    mc = {**_MC_DEFAULT, **_object(raw, "monte_carlo", _KEYS["monte_carlo"], problems)}
    runs, seed = mc["runs"], mc["seed"]
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        problems.append(Problem("monte_carlo.runs", f"must be an integer >= 1, got {runs!r}"))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.append(Problem("monte_carlo.seed", f"must be an integer >= 0, got {seed!r}"))
    _number(mc, "days_per_run", "monte_carlo", problems, strict=True)
    _number(mc, "timeline_days", "monte_carlo", problems)
    if not problems and runs * mc["days_per_run"] > MAX_SIMULATED_DAYS:
        problems.append(Problem("monte_carlo.runs", f"runs × days_per_run must be <= {MAX_SIMULATED_DAYS:,.0f}"))
    return mc


def _int_in(block: dict, key: str, path: str, low: int, high: int, problems: list) -> None:
    v = block.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        problems.append(Problem(f"{path}.{key}", f"must be an integer in [{low}, {high}], got {v!r}"))


def _traffic(raw, ck: dict, problems: list) -> dict | None:
    """The collective the blast radius is measured with, or None (the rule-based blast radius):
    ``false``, or no ``bytes`` and no ``checkpoint.parameters`` to derive them from."""
    if raw is False:
        return None
    tr = {**_TRAFFIC_DEFAULT, **_object(raw, "traffic", _KEYS["traffic"], problems)}
    if tr["pattern"] not in TRAFFIC_PATTERNS:
        problems.append(Problem("traffic.pattern", f"must be one of {', '.join(TRAFFIC_PATTERNS)}"))
    _number(tr, "bytes", "traffic", problems, strict=True, high=1e15)
    if tr["algorithm"] is not None and not isinstance(tr["algorithm"], str):
        problems.append(Problem("traffic.algorithm", "must be a collective algorithm name"))
    if not isinstance(tr["routing"], dict):
        problems.append(Problem("traffic.routing", "must be an object (a scenario's routing)"))
    _int_in(tr, "max_hosts", "traffic", 2, 256, problems)
    _int_in(tr, "samples", "traffic", 1, 16, problems)
    if tr.get("bytes") is None:
        params = ck.get("parameters")
        if not _finite(params):
            if raw is not None and params is None:
                problems.append(Problem("traffic.bytes", "give it, or checkpoint.parameters to derive it"))
            return None
        tr["bytes"] = float(params) * GRADIENT_BYTES_PER_PARAMETER
    return tr


def check_request(raw) -> dict:
    """The plan with its defaults, or every problem at once.

    Parameters
    ----------
    raw : dict
        A ``fabricscope.goodput-plan/1`` object.

    Returns
    -------
    dict
        ``topology``, ``job``, ``rates`` ``{class: block}``, ``models`` ``{model: {class:
        block}}``, ``checkpoint``, ``spares`` (``availability``, default 0.99), ``monte_carlo``
        (None when ``false``), ``traffic`` (the collective the blast radius is measured with:
        ``pattern``, ``bytes`` — default ``checkpoint.parameters`` × 2, the bf16 gradients —,
        ``algorithm``, ``routing``, ``max_hosts``, ``samples``; None when ``false`` or with no
        size to derive, and the blast radius is then rule-based).

    Raises
    ------
    InvalidScenario
        One located problem per bad field.
    """
    problems: list[Problem] = []
    plan = _object(raw, "", _KEYS[""], problems)
    if not isinstance(raw, dict):
        raise InvalidScenario("invalid goodput plan", problems)
    if plan.get("format", PLAN_FORMAT) != PLAN_FORMAT:
        problems.append(Problem("format", f'must be "{PLAN_FORMAT}"'))
    if plan.get("topology") is None:
        problems.append(Problem("topology", "required: a topology document"))
    raw_models = plan.get("models")
    known_models = set(raw_models) if isinstance(raw_models, dict) else set()
    models = {str(m): _rates(block, f"models.{m}", problems)
              for m, block in _object(raw_models, "models", known_models, problems).items()}
    spares = {"availability": 0.99, **_object(plan.get("spares"), "spares", _KEYS["spares"], problems)}
    a = spares["availability"]
    if not _finite(a) or not 0.0 < a < 1.0:
        problems.append(Problem("spares.availability", f"must be a number in (0, 1), got {a!r}"))
    out = {"topology": plan.get("topology"), "job": _job(plan.get("job"), problems),
           "rates": _rates(plan.get("rates"), "rates", problems), "models": models,
           "checkpoint": _checkpoint(plan.get("checkpoint"), problems), "spares": spares}
    out["monte_carlo"] = _monte_carlo(plan.get("monte_carlo"), problems)
    out["traffic"] = _traffic(plan.get("traffic"), out["checkpoint"], problems)
    if problems:
        raise InvalidScenario("invalid goodput plan", problems)
    return out
