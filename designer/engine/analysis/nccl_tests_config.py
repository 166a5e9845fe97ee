"""One nccl-tests prediction's settings from everything a user can say — the options nccl-tests
names (``-r``, ``-o`` …), a GPU or host subset, a NIC policy and NCCL environment knobs — and
the prediction written as nccl-tests' JSON result file.

The explicit options and the knobs must agree: ``--protocol LL`` with ``NCCL_PROTO=Simple`` is a
located error, not a silent winner.
"""
from __future__ import annotations

from designer.engine.analysis.nccl_env import check_env_for_op, parse_env
from designer.engine.analysis.nccl_tests import participant_ids
from designer.engine.analysis.nccl_tests_ranks import participants_for, rank_devices
from designer.engine.errors import InvalidScenario, Problem
from designer.engine.io.nccl_tests_json import prediction_json

__all__ = ["NIC_POLICY_CHOICES", "prediction_file", "sweep_settings"]

#: ``nic_policy`` values (the engine's routing NIC policies, docs/ENGINE.md).
NIC_POLICY_CHOICES = ("affinity", "own_nic", "pxn", "any", "static")


def sweep_settings(topo, *, op: str, algorithm: str = "auto", protocol: str = "auto", channels=None, env=None,
                   gpus=None, hosts=None, nic_policy: str | None = None) -> dict:
    """The keyword arguments of :func:`~designer.engine.analysis.nccl_tests.side_by_side` for these
    options (``algorithm``, ``algorithms``, ``protocol``, ``channels``, ``participants``,
    ``routing``), and ``env`` (the knobs applied, ``NAME=VALUE``).

    Raises
    ------
    InvalidScenario
        A bad knob (``env[1]: ...``), an unknown host or NIC policy, or an option and a knob that
        disagree (located at the option).
    """
    knobs = parse_env(env or ())
    check_env_for_op(knobs, op)
    problems = []
    merged = {"algorithm": _agree("algorithm", algorithm, "auto", knobs["algorithm"], problems),
              "protocol": _agree("protocol", protocol, "auto", knobs["protocol"], problems),
              "channels": _agree("channels", channels, None, knobs["channels"], problems)}
    policy = _agree("nic_policy", nic_policy, None, knobs["nic_policy"], problems)
    if policy is not None and policy not in NIC_POLICY_CHOICES:
        problems.append(Problem("nic_policy", f"unknown policy {policy!r} (choose from {', '.join(NIC_POLICY_CHOICES)})"))
    if problems:
        raise InvalidScenario("options and NCCL knobs disagree", problems)
    return {**merged, "algorithms": knobs["algorithms"] if merged["algorithm"] == "auto" else None,
            "participants": participants_for(topo, gpus, hosts),
            "routing": {"nic_policy": policy} if policy else None, "env": list(knobs["env"])}


def _agree(name: str, given, default, from_env, problems: list):
    """The option's value, or the knob's when the option is left at its default."""
    if given == default or given is None:
        return from_env
    if from_env not in (default, None) and from_env != given:
        problems.append(Problem(name, f"{given!r} here, but the NCCL knobs say {from_env!r}"))
    return given


def prediction_file(topo, out: dict, *, args: list[str] | None = None, participants=None,
                    min_bytes: int, max_bytes: int, factor=None, step_bytes=None) -> dict:
    """The prediction ``out`` of ``side_by_side`` as nccl-tests' JSON result object
    (:func:`designer.engine.io.nccl_tests_json.prediction_json`): one device per rank of the
    topology, the knobs applied as ``env``."""
    ranks = participant_ids(topo, participants)
    config = {"minimum_bytes": min_bytes, "maximum_bytes": max_bytes}
    config.update({"step_bytes": step_bytes} if factor in (None, 1) and step_bytes else {"step_factor": factor or 2})
    return prediction_json(out["rows"], op=out["op"], args=args or [f"{out['op']}_perf"], env=out.get("env") or [],
                           devices=rank_devices(topo, ranks), config=config)
