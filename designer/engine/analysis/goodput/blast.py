"""Blast radius per failure class measured with the N-1 sweep machinery on the job's traffic.

For every class with elements in the design (a GPU, an NVSwitch, a NIC, a host⇄leaf cable, a
leaf⇄spine cable, a leaf, a spine, a core switch, a host, an NVLink, a NIC at half rate), one
representative failure — the first few units of the class that the job's traffic crosses
(a symmetric fabric gives every unit the same impact) — is added to a scenario holding the
job's representative collective (by default its data-parallel gradient all-reduce) and ranked
by :func:`designer.engine.analysis.whatif.sweep`:

- a failure that breaks the collective (a flow disconnected, the pattern does not complete:
  NCCL's communicator must be re-initialized) **interrupts** the job;
- one that only slows it **degrades** the job, with the measured completion ratio ``g`` (after
  / before) turned into a throughput loss through the job's exposed-communication share ``f``:
  ``f (g − 1) / (1 + f (g − 1))``.

Reduction (why 16,384 GPUs plan in seconds): the collective runs over at most ``max_hosts``
hosts of the job (default 16): half from the job's first *leaf group* (the hosts wired to the
same set of leaves, in document order) and half from its second, so the ring or tree crosses
the spines as the full job does at each leaf group's boundary; and the topology is cut to those
hosts plus every switch and storage server (no path between the chosen hosts changes: other
hosts are ends of paths, never on them). A ring's load on a leaf's uplinks is one crossing in
and one out per channel in the full job and in the reduction alike.

Classes with nothing in the fabric to fail (``software``, a ``gpu_straggler``'s compute jitter)
keep the rule of :mod:`.plan`; so does every class when the plan has no traffic to simulate.
"""
from __future__ import annotations

from designer.engine.analysis.goodput.counts import _Walk
from designer.engine.errors import EngineError, InvalidScenario, Problem

__all__ = ["SIMULATED", "representative_hosts", "reduced_document", "measure_blast"]

#: Class → (sweep class, degrade factor or None for down). A PSU or host failure takes the host
#: down; an HBM failure takes its GPU out; a partial NVLink failure is one GPU⇄NVSwitch link down.
SIMULATED = {"gpu": ("gpu", None), "hbm": ("gpu", None), "nvswitch": ("nvswitch", None),
             "nic": ("nic", None), "host_link": ("nic-leaf", None), "fabric_link": ("leaf-spine", None),
             "leaf": ("leaf", None), "spine": ("spine", None), "core": ("core", None),
             "psu": ("host", None), "host": ("host", None), "nic_half_rate": ("nic", 0.5),
             "nvlink_partial": ("nvlink", None)}
_CORE_ROLES = ("core", "superspine")
_SCAN = 4096  # candidates of one class looked at before deciding the traffic crosses none of them


def representative_hosts(doc: dict, gpu_ids: list[str], max_hosts: int, walk: _Walk | None = None) -> list[str]:
    """The job's hosts the reduced collective runs on: up to ``max_hosts // 2`` from each of
    the job's first two leaf groups (hosts wired to the same leaves), all from the first when
    there is one group. Hosts in document order; GPUs outside any host count as their own.
    ``walk``: the document's :class:`.counts._Walk`, when the caller has it."""
    walk = walk or _Walk(doc)
    leaves: dict[str, set] = {}
    for nic, switch, _, _ in walk.host_links:
        leaves.setdefault(walk.host.get(nic), set()).add(switch)
    groups: dict[frozenset, list[str]] = {}
    for g in gpu_ids:
        host = walk.host.get(g) or g
        members = groups.setdefault(frozenset(leaves.get(host, ())), [])
        if host not in members:
            members.append(host)
    firsts = list(groups.values())[:2]
    if len(firsts) == 1:
        return firsts[0][:max_hosts]
    half = max(1, max_hosts // 2)
    return firsts[0][:half] + firsts[1][:half]


def reduced_document(doc: dict, hosts: list[str], walk: _Walk | None = None) -> dict:
    """``doc`` with only ``hosts`` (and their groups, nodes, links) kept among the hosts;
    switches, storage and every other node stay."""
    walk = walk or _Walk(doc)
    keep_hosts = set(hosts)
    drop = {gid for gid in walk.groups if _host_group(walk, gid) not in (None, *keep_hosts)}
    nodes = [n for n in doc["nodes"] if walk.host.get(n["id"]) is None or walk.host[n["id"]] in keep_hosts]
    kept = {n["id"] for n in nodes}
    links = [link for link in doc["links"] if link["a"] in kept and link["b"] in kept]
    groups = [g for g in doc.get("groups") or () if g["id"] not in drop]
    return {**doc, "groups": groups, "nodes": nodes, "links": links}


def _host_group(walk: _Walk, gid: str):
    """The host group enclosing group ``gid`` (itself included), or None."""
    g, seen = gid, set()
    while g is not None and g in walk.groups and g not in seen:
        if walk.groups[g].get("kind") == "host":
            return g
        seen.add(g)
        g = walk.groups[g].get("parent")
    return None


def _scenario(doc: dict, gpus: list[str], traffic: dict) -> dict:
    pattern = {"id": "job", "kind": traffic["pattern"], "participants": {"ids": gpus}, "bytes": traffic["bytes"]}
    if traffic.get("algorithm"):
        pattern["algorithm"] = traffic["algorithm"]
    return {"format": "fabricscope.scenario/1", "topology": doc, "workload": [pattern],
            "routing": dict(traffic.get("routing") or {}), "mode": "steady"}


def _candidates(sc, w, sweep_class: str, degrade, samples: int) -> list[dict]:
    """The first ``samples`` failures of the class whose elements the baseline traffic crosses."""
    from designer.engine.analysis.whatif import sweep_candidates
    from designer.engine.traffic.failures import normalize_failures

    topo = sc.topology
    over = "switch" if sweep_class == "core" else sweep_class
    cands = sweep_candidates(topo, over, degrade=degrade)
    if sweep_class == "core":
        cands = [c for c in cands if topo.node_role[topo.node_index[c["target"]]] in _CORE_ROLES]
    out = []
    for cand in cands[:_SCAN]:
        entry = normalize_failures(topo, [cand])[0]
        if not w.unchanged(entry, w.nominal):
            out.append(cand)
            if len(out) == samples:
                break
    return out


def _key(failure: dict) -> tuple:
    return (str(failure["target"]), failure["mode"], failure.get("factor"))


def _loss(fraction: float, stretch: float) -> float:
    extra = fraction * (stretch - 1.0)
    return extra / (1.0 + extra)


def _verdict(entries: list[dict], fraction: float) -> dict:
    """Effect and slowdown of a class from its sampled sweep entries: interrupt when most break."""
    broken = [e for e in entries if e["impact"]["broken_patterns"] or e["impact"]["disconnected_flows"]]
    ratios = [e["impact"]["slowdown"] or 1.0 for e in entries if e not in broken]
    out = {"source": "simulated", "failures": [e["label"] for e in entries], "sampled": len(entries),
           "broken": len(broken)}
    if 2 * len(broken) > len(entries):
        return {**out, "effect": "interrupt", "slowdown": None, "completion_ratio": None}
    ratio = sum(ratios) / len(ratios)
    return {**out, "effect": "degrade", "completion_ratio": ratio,
            "slowdown": sum(_loss(fraction, g) for g in ratios) / len(ratios)}


def measure_blast(doc: dict, gpu_ids: list[str], traffic: dict, fraction: float) -> dict:
    """Measured effect of one failure of each simulable class on the job's traffic.

    Parameters
    ----------
    doc : dict
        The (checked) topology document.
    gpu_ids : list of str
        The job's GPUs.
    traffic : dict
        ``pattern``, ``bytes`` (per GPU), ``algorithm``, ``routing``, ``max_hosts``, ``samples``
        (checked by :mod:`.request`).
    fraction : float
        The job's exposed-communication share of a step.

    Returns
    -------
    dict
        ``classes``: class → ``{source: "simulated", effect, slowdown (throughput lost, or
        None), completion_ratio (after / before, or None), failures (labels), sampled,
        broken}``, only for classes with a unit the traffic crosses; ``hosts``, ``gpus`` (the
        reduced collective's size), ``baseline_completion_s``.

    Raises
    ------
    InvalidScenario
        The collective does not complete without failures (located at ``traffic``).
    """
    from designer.engine.analysis.whatif import sweep
    from designer.engine.analysis.whatif_states import WhatIf, split_scenario

    walk = _Walk(doc)  # one pass over a 16,384-GPU document: ~0.15 s
    hosts = representative_hosts(doc, gpu_ids, traffic["max_hosts"], walk)
    chosen = set(hosts)
    gpus = [g for g in gpu_ids if (walk.host.get(g) or g) in chosen]
    try:
        sc, _ = split_scenario(_scenario(reduced_document(doc, hosts, walk), gpus, traffic), None)
    except EngineError as exc:  # a bad routing or algorithm: located in the plan, not the scenario
        problems = [Problem("traffic." + p.path.removeprefix("workload[0]."), p.message) for p in exc.problems]
        raise InvalidScenario("bad traffic", problems or [Problem("traffic", exc.message)]) from None
    w = WhatIf(sc)
    by_class = {cls: _candidates(sc, w, sweep_cls, degrade, traffic["samples"])
                for cls, (sweep_cls, degrade) in SIMULATED.items()}
    failures = list({_key(c): c for cands in by_class.values() for c in cands}.values())  # hbm = gpu
    if not failures:
        return {"classes": {}, "hosts": len(hosts), "gpus": len(gpus), "baseline_completion_s": None}
    result = sweep(sc, failures=failures)
    if not result["baseline"]["complete"]:
        raise InvalidScenario("the job's traffic does not complete", [Problem(
            "traffic", "the representative collective does not complete without failures: "
                       "check the job's wiring, or set traffic: false for the rule")])
    entries = {_key(e["failure"]): e for e in result["ranking"]}
    out = {cls: _verdict([entries[_key(c)] for c in cands], fraction) for cls, cands in by_class.items() if cands}
    return {"classes": out, "hosts": len(hosts), "gpus": len(gpus),
            "baseline_completion_s": result["baseline"]["job_completion_s"]}
