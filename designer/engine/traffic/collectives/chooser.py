"""Who picks a collective's algorithm and protocol: NCCL's own cost model, or a net plugin's tuner.

The engine predicts what every candidate (algorithm, protocol) achieves on the topology
(:mod:`.select`). NCCL does not run the fastest of them: it runs the cheapest by **its own model**
(``ncclTopoTuneModel``, NVIDIA/nccl ``src/graph/tuning.cc``), which converts each algorithm's bus
bandwidth to an algorithm bandwidth by a fixed ratio ("Convert bus BW to algorithm BW"): the ring
``nRanks / nsteps`` — what the ring's flows move, so the engine's ring time is NCCL's — and the
tree **½**. The engine's tree flows carry the reduce up and the broadcast down at once, each edge
``S / channels`` per direction (:mod:`.tree`), so its tree data time is ``S / busBw``; NCCL's
model says ``2S / busBw``. NCCL therefore keeps the ring for large all-reduces across hosts where
the tree, once run, would be faster — and the time that counts is what the chosen algorithm
achieves, not what NCCL's model says of it. (NVLS and NVLS-tree keep the engine's estimate: their
bus-bandwidth definitions in NCCL differ by release — 5/6, 0.75, 0.70·nNodes/(2(nNodes−1)) — and
are not mapped to the engine's flows.)

A net plugin can replace that choice with its own tuner. AWS's aws-ofi-nccl ships one that "bypasses
the cost function used by NCCL" (aws/aws-ofi-nccl#318) with regions of (size, ranks) measured per
instance type — p5/p5e, p5en, p6-b200, p6-b300 (``src/tuner/nccl_ofi_tuner.cpp``,
``is_region_supported``) — loaded by default from the net plugin with NCCL 2.21+ (aws/aws-ofi-nccl#922)
and skipped on two nodes or fewer, where NCCL's tuner decides ("the regions are not well defined",
aws/aws-ofi-nccl#778). Regions fitted to measurements pick what runs fastest there; the engine's
stand-in for that is its own fastest prediction.
"""
from __future__ import annotations

from designer.engine.model.topology import kind_nodes
from designer.engine.traffic.collectives.ceilings import gpu_arch

__all__ = ["NCCL_DATA_FACTOR", "PLUGIN_TUNERS", "chooser_name", "compute_nic_models", "plugin_tuner_chooses",
           "selection_time"]

# NCCL's model time of an algorithm's data over the engine's data time of its flows (above).
NCCL_DATA_FACTOR = {"tree": 2.0}

# NIC model → (GPU architectures of the instance types the plugin tunes, fewest hosts it tunes).
PLUGIN_TUNERS = {
    "EFA": (("hopper", "blackwell"), 3, "aws/aws-ofi-nccl src/tuner/nccl_ofi_tuner.cpp: region tuner for "
                                         "p5.48xlarge, p5e.48xlarge (H100, H200); p4d/p4de (A100) use NCCL's"),
    "EFAv3": (("hopper", "blackwell"), 3, "aws/aws-ofi-nccl src/tuner/nccl_ofi_tuner.cpp: p5en.48xlarge, "
                                           "p6-b200.48xlarge; src/tuner/nccl_ofi_regions.cpp skips nNodes <= 2"),
}


def plugin_tuner_chooses(topo, group, nics: set | None = None) -> bool:
    """Whether the participants' net plugin tunes this collective (:data:`PLUGIN_TUNERS`): every
    compute NIC of their hosts is a model it tunes, on those GPUs, across enough hosts. ``nics``:
    :func:`compute_nic_models` when the caller has it already."""
    if group.nodes < min(hosts for _, hosts, _ in PLUGIN_TUNERS.values()):
        return False
    arch = gpu_arch(topo, group)
    tuners = [PLUGIN_TUNERS.get(m) for m in (compute_nic_models(topo, group) if nics is None else nics)]
    return bool(tuners) and all(t is not None and arch in t[0] and group.nodes >= t[1] for t in tuners)


def compute_nic_models(topo, group) -> set:
    """The ``model`` of every compute NIC in the participants' hosts (None for a NIC without one);
    none on one host, where no step crosses a network."""
    if group.nodes < 2:
        return set()
    hosts = {topo.node_host[int(g)] for g in group.participants.tolist()} - {None}
    return {topo.node_attrs[i].get("model") for i in kind_nodes(topo, "nic").tolist()
            if topo.node_host[i] in hosts and topo.node_attrs[i].get("role", "compute") == "compute"}


def selection_time(algorithm: str, latency_s: float, data_s: float, efficiency: float,
                   by_plugin: bool) -> float:
    """The time a (algorithm, protocol) is chosen by: NCCL's model of it, or — when a net plugin's
    tuner chooses — the engine's prediction of what it achieves."""
    factor = 1.0 if by_plugin else NCCL_DATA_FACTOR.get(algorithm, 1.0)
    return latency_s + data_s * factor / efficiency


def chooser_name(requested: str, by_plugin: bool) -> str:
    """A plan's ``chosen_by``: ``request`` (the pattern names its algorithm), ``plugin`` or ``nccl``."""
    if requested != "auto":
        return "request"
    return "plugin" if by_plugin else "nccl"
