"""The goodput plan's input (``fabricscope.goodput-plan/1``): checked, every problem located.

docs/FORMATS.md, "Goodput plan", lists the fields. A rate is a finite number ≥ 0, a repair
time a finite number > 0 (a zero repair would make a failure free), a slowdown a fraction in
[0, 1]; ``rates.nic.afr: must be a finite number >= 0`` says where a bad value is.
"""
from __future__ import annotations

import math

from designer.engine.analysis.goodput.facts import CLASSES, DEFAULT_RESTART_OVERHEAD_S
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["PLAN_FORMAT", "check_request", "MAX_SIMULATED_DAYS"]

PLAN_FORMAT = "fabricscope.goodput-plan/1"
#: Upper bound of ``runs × days_per_run`` (memory: one float per simulated failure).
MAX_SIMULATED_DAYS = 1_000_000.0
_KEYS = {"": {"format", "topology", "job", "rates", "models", "checkpoint", "spares", "monte_carlo"},
         "job": {"gpus", "hosts", "exposed_communication_fraction"},
         "class": {"afr", "repair_hours", "slowdown", "effect"},
         "checkpoint": {"bytes", "parameters", "bytes_per_parameter", "write_s", "read_s",
                        "restart_overhead_s", "interval_s"},
         "spares": {"availability"},
         "monte_carlo": {"runs", "days_per_run", "seed", "timeline_days"}}
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
        (None when ``false``).

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
    if problems:
        raise InvalidScenario("invalid goodput plan", problems)
    return out
