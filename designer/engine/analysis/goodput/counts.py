"""What can fail in a design, counted per failure class: in the whole cluster and under one job.

Counted from the topology document (docs/FORMATS.md, Topology document), as the bill of
materials counts it (:mod:`designer.engine.model.bom`): a network link is one of an Ethernet or
InfiniBand catalog tech, and carries ``bundle`` ports (1 when absent), each one cable.

Units (the ``unit`` of :data:`.facts.CLASSES`):

- ``gpu``: nodes of kind ``gpu``; ``nvswitch``: nodes of kind ``nvswitch``;
- ``nic``: NICs with a network link (a NIC wired to nothing carries no job traffic);
- ``host_link``: cables of host⇄switch links (a NIC to a switch); ``fabric_link``: cables of
  switch⇄switch links; storage servers' links are neither (they carry checkpoints, not steps);
- ``leaf`` / ``spine`` / ``core``: switches by tier (``attrs.tier``, else ``attrs.role``);
- ``host``: groups of kind ``host`` holding a GPU.

A job holds its GPUs, their hosts, the NICs of those hosts, their cables and the switches at the
cables' far end (its leaves), the switches one tier up from its leaves and the fabric cables
that touch its leaves or spines, and the NVSwitches linked to its GPUs. Counts are kept per
catalog model (``attrs.model``; the tech for a cable; the template for a host) so a rate can
be set per model.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from designer.engine.catalog import TECHS
from designer.engine.errors import InvalidScenario, InvalidTopology, Problem

__all__ = ["DesignUnits", "design_units"]

_NETWORK = ("ethernet", "infiniband")
_TIER_OF_ROLE = {"leaf": "leaf", "tor": "leaf", "edge": "leaf", "spine": "spine", "agg": "spine",
                 "core": "core", "superspine": "core"}
_GPU_UNITS = ("gpu", "hbm", "software", "gpu_straggler")


@dataclass
class DesignUnits:
    """Units per failure class and model, for the cluster and for the job.

    ``cluster[cls]`` / ``job[cls]``: ``Counter(model → units)``; ``job_gpu_ids``: the job's GPUs
    (document order); ``storage_ids``: storage servers; ``leaf_uplinks``: mean switch⇄switch
    ports of the job's leaves; ``job_spines``: switches one tier above the job's leaves.
    """

    cluster: dict = field(default_factory=dict)
    job: dict = field(default_factory=dict)
    job_gpu_ids: list = field(default_factory=list)
    storage_ids: list = field(default_factory=list)
    leaf_uplinks: float = 0.0
    job_spines: int = 0


def _tier(node: dict) -> str | None:
    attrs = node.get("attrs") or {}
    return attrs.get("tier") or _TIER_OF_ROLE.get(attrs.get("role"))


def _model(node: dict, fallback: str = "unspecified") -> str:
    return str((node.get("attrs") or {}).get("model") or fallback)


def _host_of(groups: dict) -> dict:
    """Group id → the id of its nearest ``host`` group (itself or an ancestor), or None."""
    out = {}
    for gid in groups:
        g, seen = gid, set()
        while g is not None and g in groups and g not in seen and groups[g].get("kind") != "host":
            seen.add(g)
            g = groups[g].get("parent")
        out[gid] = g if g in groups and groups[g].get("kind") == "host" else None
    return out


class _Walk:
    """One pass over the document's nodes and links, keeping what the counts need."""

    def __init__(self, doc: dict):
        self.nodes = {n["id"]: n for n in doc["nodes"]}
        self.groups = {g["id"]: g for g in doc.get("groups") or ()}
        hosts = _host_of(self.groups)
        self.host = {nid: hosts.get(n.get("group")) for nid, n in self.nodes.items()}
        self.gpus = [nid for nid, n in self.nodes.items() if n["kind"] == "gpu"]
        self.host_links, self.fabric_links, self.nvlinks = [], [], []
        for link in doc["links"]:
            self._link(link)

    def _link(self, link: dict) -> None:
        a, b = self.nodes[link["a"]], self.nodes[link["b"]]
        tech = TECHS.get(link.get("tech"))
        kinds = {a["kind"], b["kind"]}
        if tech is not None and tech.family == "nvlink" and kinds == {"gpu", "nvswitch"}:
            self.nvlinks.append((a, b) if a["kind"] == "gpu" else (b, a))
        if tech is None or tech.family not in _NETWORK:
            return
        ports = int(link.get("bundle") or (link.get("attrs") or {}).get("ports") or 1)
        if kinds == {"switch"}:
            self.fabric_links.append((a["id"], b["id"], ports, link["tech"]))
        elif kinds == {"switch", "nic"}:
            nic, sw = (a, b) if a["kind"] == "nic" else (b, a)
            self.host_links.append((nic["id"], sw["id"], ports, link["tech"]))


def _count(items, key=lambda x: x) -> Counter:
    out = Counter()
    for item in items:
        model, units = key(item)
        out[model] += units
    return out


def _switches(walk: _Walk, ids, tier: str) -> Counter:
    return _count((walk.nodes[s] for s in ids if _tier(walk.nodes[s]) == tier), lambda n: (_model(n), 1))


def _units(walk: _Walk, gpus, hosts, nics, nvswitches, host_links, fabric_links, switches: dict) -> dict:
    """Counter per class of the given elements (the cluster's or the job's)."""
    g = _count(gpus, lambda n: (_model(walk.nodes[n]), 1))
    out = {c: Counter(g) for c in _GPU_UNITS}
    out["nvswitch"] = out["nvlink_partial"] = _count(nvswitches, lambda n: (_model(walk.nodes[n]), 1))
    out["nic"] = out["nic_half_rate"] = _count(nics, lambda n: (_model(walk.nodes[n]), 1))
    out["host_link"] = _count(host_links, lambda l: (l[3], l[2]))
    out["fabric_link"] = _count(fabric_links, lambda l: (l[3], l[2]))
    templates = _count(hosts, lambda h: (str(walk.groups[h].get("template") or "unspecified"), 1))
    out["host"], out["psu"] = templates, Counter(templates)
    for tier in ("leaf", "spine", "core"):  # ``switches``: tier → ids (the job's by position)
        out[tier] = _switches(walk, switches[tier], tier)
    return out


def _job_gpus(walk: _Walk, job: dict) -> list[str]:
    """The job's GPUs: ``job.hosts`` (their GPUs), else the first ``job.gpus``, else all."""
    if job.get("hosts") is not None:
        chosen = set(job["hosts"])
        unknown = sorted(chosen - set(walk.groups))
        if unknown:
            raise InvalidScenario("unknown host", [Problem("job.hosts", f'unknown host group "{unknown[0]}"')])
        gpus = [g for g in walk.gpus if walk.host[g] in chosen]
    else:
        wanted = int(job.get("gpus") or len(walk.gpus))
        if wanted > len(walk.gpus):
            raise InvalidScenario("job larger than the design", [Problem(
                "job.gpus", f"{wanted:,} GPUs asked; the design has {len(walk.gpus):,}")])
        gpus = walk.gpus[:wanted]
    if not gpus:
        raise InvalidScenario("the job has no GPU", [Problem("job", "selects no GPU of the design")])
    return gpus


def design_units(doc: dict, job: dict) -> DesignUnits:
    """Count the units of every failure class in ``doc``, and under the job ``job``.

    Parameters
    ----------
    doc : dict
        A valid ``fabricscope.topology/1`` document.
    job : dict
        ``{"gpus": N}`` (the first N GPUs in document order), ``{"hosts": [group ids]}`` or
        ``{}`` (every GPU).

    Returns
    -------
    DesignUnits

    Raises
    ------
    InvalidTopology
        The design has no GPU (``nodes``).
    InvalidScenario
        The job selects no GPU, or names an unknown host (``job.hosts``).
    """
    walk = _Walk(doc)
    if not walk.gpus:
        raise InvalidTopology("empty design", [Problem("topology.nodes", "the design has no GPU")])
    gpus = _job_gpus(walk, job)
    out = DesignUnits(storage_ids=[nid for nid, n in walk.nodes.items() if n["kind"] == "storage"],
                      job_gpu_ids=gpus)
    all_hosts = sorted({walk.host[g] for g in walk.gpus} - {None})
    all_switches = [n for n, v in walk.nodes.items() if v["kind"] == "switch"]
    out.cluster = _units(walk, walk.gpus, all_hosts, sorted({l[0] for l in walk.host_links}),
                         [n for n, v in walk.nodes.items() if v["kind"] == "nvswitch"],
                         walk.host_links, walk.fabric_links, {t: all_switches for t in ("leaf", "spine", "core")})
    out.job = _job_units(walk, gpus, out)
    return out


def _touching(links: list, ends: set) -> list:
    """The fabric links with an end in ``ends``."""
    return [l for l in links if l[0] in ends or l[1] in ends]


def _job_fabric(walk: _Walk, leaves: set) -> tuple[list, set, set]:
    """Fabric links of the job (touching its leaves or its spines), its spines and its cores."""
    up = _touching(walk.fabric_links, leaves)
    spines = {s for l in up for s in l[:2]} - leaves
    seen = set(up)  # a set: 20,000 fabric cables at 16,384 GPUs
    core = [l for l in _touching(walk.fabric_links, spines) if l not in seen]
    tops = {s for l in core for s in l[:2]} - spines
    return up + core, spines, {s for s in tops if _tier(walk.nodes[s]) == "core"}


def _job_units(walk: _Walk, gpus: list[str], out: DesignUnits) -> dict:
    """Units under the job; also sets ``out.leaf_uplinks`` and ``out.job_spines``."""
    in_job = set(gpus)
    hosts = sorted({walk.host[g] for g in gpus} - {None})
    host_set = set(hosts)
    cables = [l for l in walk.host_links if walk.host.get(l[0]) in host_set]
    leaves = {l[1] for l in cables}
    fabric, spines, tops = _job_fabric(walk, leaves)
    uplinks = sum(l[2] for l in fabric if (l[0] in leaves) != (l[1] in leaves))
    out.leaf_uplinks = uplinks / len(leaves) if leaves else 0.0
    out.job_spines = len(spines)
    nvs = sorted({s["id"] for g, s in walk.nvlinks if g["id"] in in_job})
    return _units(walk, gpus, hosts, sorted({l[0] for l in cables}), nvs, cables, fabric,
                  {"leaf": sorted(leaves), "spine": sorted(spines), "core": sorted(tops)})
