"""NCCL environment knobs (``NCCL_ALGO=Ring`` …) mapped onto what the engine models.

An nccl-tests run is often launched with NCCL variables set; a prediction takes them as
``NAME=VALUE`` strings and turns each into the engine's own setting (NCCL's meanings:
https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html):

========================== ==========================================================
knob                       what the engine does with it
========================== ==========================================================
NCCL_ALGO                  the algorithm(s) allowed: one (``Ring``) forces it, a list
                           (``Ring,Tree``) or an exclusion (``^NVLS``) leaves NCCL's model
                           (or the tuner plugin) to choose among the allowed ones, as NCCL
                           does — not the fastest; NCCL's names ``Ring Tree NVLS NVLSTree
                           CollnetDirect CollnetChain PAT`` → ``ring tree nvls nvlstree
                           collnet collnet pat`` (the engine has one CollNet model, the
                           in-switch reduction, for both)
NCCL_PROTO                 the protocol: ``LL``, ``LL128`` or ``Simple`` (one)
NCCL_MIN_NCHANNELS,        the channel count: both equal, or either alone, sets it (the
NCCL_MAX_NCHANNELS         engine runs one count, not a range)
NCCL_NVLS_ENABLE           ``0``: NVLS and NVLSTree left out of the algorithms; ``1``: as found
NCCL_PXN_DISABLE           ``0``: NIC policy ``pxn``; ``1``: ``own_nic`` (no PXN, also for the
                           send/receive that ``affinity`` relays as NCCL's default does)
NCCL_CROSS_NIC             ``1``: NIC policy ``any`` (a ring may leave by another rail's NIC);
                           ``0``, ``2``: ``affinity`` (the engine's rings are rail-aligned)
NCCL_NET_GDR_LEVEL         only ``SYS``/``5``: the engine routes GPU↔NIC data over PCIe
                           (GPUDirect RDMA) on every path; other levels are not modelled
NCCL_P2P_LEVEL             only ``SYS``/``5`` (or ``NVL``/``4`` on NVLink hosts): the engine
                           sends GPU↔GPU directly; staging through the CPU is not modelled
NCCL_IB_QPS_PER_CONNECTION only ``1``: the engine routes one path per connection
========================== ==========================================================

Any other variable, or a value outside these, is a located error naming the knobs modelled —
never silently ignored, since a knob left out would make the prediction answer another question.
"""
from __future__ import annotations

from designer.engine.analysis.nccl_tests_ops import OPS
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["ALGO_NAMES", "MODELLED", "NcclEnv", "check_env_for_op", "parse_env"]

#: NCCL_ALGO names (case-insensitive, as NCCL compares them) → engine algorithm.
ALGO_NAMES = {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvlstree", "collnetdirect": "collnet",
              "collnetchain": "collnet", "collnet": "collnet", "pat": "pat"}
_PROTOS = {"ll": "LL", "ll128": "LL128", "simple": "Simple"}
#: The knobs this module maps.
MODELLED = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_NVLS_ENABLE",
            "NCCL_PXN_DISABLE", "NCCL_CROSS_NIC", "NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL",
            "NCCL_IB_QPS_PER_CONNECTION")
_ALL_ALGORITHMS = ("ring", "tree", "nvls", "nvlstree", "collnet", "pat")
_ONLY = {"NCCL_NET_GDR_LEVEL": ({"sys", "5"}, "SYS (GPUDirect RDMA on every GPU–NIC path, as the engine routes)"),
         "NCCL_P2P_LEVEL": ({"sys", "5", "nvl", "4"}, "SYS or NVL (direct GPU–GPU sends, as the engine routes)"),
         "NCCL_IB_QPS_PER_CONNECTION": ({"1"}, "1 (the engine routes one path per connection)")}


class NcclEnv(dict):
    """The engine settings of a set of knobs: ``algorithm`` (``auto`` or one), ``algorithms``
    (the allowed set, or None), ``protocol``, ``channels``, ``nic_policy`` (None: not set),
    ``env`` (the ``NAME=VALUE`` strings, in order)."""


def parse_env(items, where: str = "env") -> NcclEnv:
    """Map ``NAME=VALUE`` strings to the engine's settings (see the module table).

    Parameters
    ----------
    items : iterable of str
        ``NCCL_ALGO=Ring`` …; blank lines and ``#`` comments are skipped (a pasted block).
    where : str
        Location prefix of the errors (``env[2]``).

    Returns
    -------
    NcclEnv

    Raises
    ------
    InvalidScenario
        Every located problem: not ``NAME=VALUE``, a knob not modelled (the message lists the
        modelled ones), a bad value, a knob given twice, or knobs that contradict each other.
    """
    out = NcclEnv(algorithm="auto", algorithms=None, protocol="auto", channels=None, nic_policy=None, env=[])
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for k, item in enumerate(items or ()):
        text = str(item).strip()
        if not text or text.startswith("#"):
            continue
        here = f"{where}[{k}]"
        name, eq, value = text.partition("=")
        name, value = name.strip().removeprefix("export ").strip(), value.strip().strip("'\"")
        if not eq or not name:
            problems.append(Problem(here, f"{text[:60]!r} is not NAME=VALUE"))
        elif name not in MODELLED:
            problems.append(Problem(here, f"{name} is not modelled (modelled: {', '.join(MODELLED)})"))
        elif name in seen:
            problems.append(Problem(here, f"{name} is given twice"))
        else:
            seen[name] = value
            out["env"].append(f"{name}={value}")
            _apply(out, name, value, here, problems)
    _channels(out, seen, where, problems)
    if out["algorithms"] == () and not problems:
        problems.append(Problem(where, "NCCL_ALGO and NCCL_NVLS_ENABLE=0 leave no algorithm"))
    if problems:
        raise InvalidScenario("bad NCCL environment", problems)
    return out


def _apply(out: NcclEnv, name: str, value: str, here: str, problems: list) -> None:
    low = value.lower()
    if name == "NCCL_ALGO":
        _algo(out, value, here, problems)
    elif name == "NCCL_PROTO":
        if low not in _PROTOS:
            problems.append(Problem(here, f"NCCL_PROTO={value}: give one of LL, LL128, Simple (the engine "
                                          "forces one protocol)"))
        else:
            out["protocol"] = _PROTOS[low]
    elif name == "NCCL_NVLS_ENABLE":
        if low not in ("0", "1"):
            problems.append(Problem(here, "NCCL_NVLS_ENABLE must be 0 or 1"))
        elif low == "0":
            allowed = out["algorithms"] or _ALL_ALGORITHMS
            out["algorithms"] = tuple(a for a in allowed if a not in ("nvls", "nvlstree"))
    elif name in ("NCCL_PXN_DISABLE", "NCCL_CROSS_NIC"):
        _policy(out, name, low, here, problems)
    elif name in _ONLY:
        values, meaning = _ONLY[name]
        if low not in values:
            problems.append(Problem(here, f"{name}={value} is not modelled; the engine models {meaning}"))


def _algo(out: NcclEnv, value: str, here: str, problems: list) -> None:
    exclude = value.startswith("^")
    names = [v.strip().lower() for v in value.lstrip("^").split(",") if v.strip()]
    bad = [n for n in names if n not in ALGO_NAMES]
    if bad or not names or ":" in value or ";" in value:
        problems.append(Problem(here, f"NCCL_ALGO={value}: give NCCL algorithm names (Ring, Tree, NVLS, NVLSTree, "
                                      "CollnetDirect, CollnetChain, PAT), a list, or ^exclusions; per-collective "
                                      "lists are not modelled"))
        return
    chosen = {ALGO_NAMES[n] for n in names}
    allowed = [a for a in _ALL_ALGORITHMS if (a not in chosen) == exclude]
    if out["algorithms"] is not None:
        allowed = [a for a in allowed if a in out["algorithms"]]
    if len(allowed) == 1 and not exclude:
        out["algorithm"] = allowed[0]
    out["algorithms"] = tuple(allowed)


def _policy(out: NcclEnv, name: str, low: str, here: str, problems: list) -> None:
    table = {"NCCL_PXN_DISABLE": {"0": "pxn", "1": "own_nic"},
             "NCCL_CROSS_NIC": {"0": "affinity", "1": "any", "2": "affinity"}}[name]
    if low not in table:
        problems.append(Problem(here, f"{name} must be one of {', '.join(table)}"))
        return
    policy = table[low]
    if {out["nic_policy"], policy} == {"affinity", "own_nic"}:
        policy = "own_nic"   # NCCL_CROSS_NIC=0/2 with PXN off: own NICs, rail-aligned rings
    elif out["nic_policy"] not in (None, policy):
        problems.append(Problem(here, f"{name}={low} asks for NIC policy {policy}, another knob for "
                                      f"{out['nic_policy']}"))
        return
    out["nic_policy"] = policy


def _channels(out: NcclEnv, seen: dict, where: str, problems: list) -> None:
    counts = {}
    for name in ("NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS"):
        if name in seen:
            value = seen[name]
            if not value.isdigit() or int(value) < 1:
                problems.append(Problem(f"{where}.{name}", "must be an integer >= 1"))
                return
            counts[name] = int(value)
    if len(set(counts.values())) > 1:
        problems.append(Problem(f"{where}.NCCL_MIN_NCHANNELS", f"differs from NCCL_MAX_NCHANNELS: the engine runs "
                                                               f"one channel count; set both to one value"))
    elif counts:
        out["channels"] = next(iter(counts.values()))


# Ops NCCL runs as grouped point-to-point sends: NCCL_ALGO / channel knobs do not govern them.
_P2P_OPS = ("sendrecv", "alltoall", "gather", "scatter", "hypercube")


def check_env_for_op(env: NcclEnv, op: str, where: str = "env") -> None:
    """Refuse NCCL_ALGO on an op NCCL runs as point-to-point sends (NCCL applies no algorithm
    to them, so the knob would change nothing: better said than silently dropped).

    Raises
    ------
    InvalidScenario
        Located at ``env.NCCL_ALGO``.
    """
    given = any(item.startswith("NCCL_ALGO=") for item in env["env"])
    if op in _P2P_OPS and op in OPS and given:
        raise InvalidScenario("NCCL_ALGO does not apply", [Problem(
            f"{where}.NCCL_ALGO", f"{op} runs as point-to-point sends; NCCL applies no algorithm to it "
                                  "(leave NCCL_ALGO out)")])
