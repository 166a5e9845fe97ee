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
the cost function used by NCCL" (aws/aws-ofi-nccl#318), loaded by default from the net plugin with
NCCL 2.21+ (aws/aws-ofi-nccl#922): on p5/p5e and p5en (``src/tuner/nccl_ofi_tuner.cpp``) its
*region* tuner forces the (algorithm, protocol) of the polygon of (size, ranks) a measurement
found fastest (:mod:`.regions`); off every polygon, on two nodes or fewer, and for what its tables
do not cover (all-to-all's sends, other ranks-per-node counts) NCCL's own model chooses as above.
"""
from __future__ import annotations

from designer.engine.model.topology import kind_nodes
from designer.engine.traffic.collectives.ceilings import gpu_arch
from designer.engine.traffic.collectives.protocols import protocols_for
from designer.engine.traffic.collectives.regions import region_choice

__all__ = ["FORCED_COST", "NCCL_DATA_FACTOR", "PLUGIN_PLATFORMS", "chooser_name", "compute_nic_models",
           "plugin_choice", "plugin_platform", "selection_time"]

# NCCL's model time of an algorithm's data over the engine's data time of its flows (above).
NCCL_DATA_FACTOR = {"tree": 2.0}

# (compute NIC model, GPU architecture) → the instance type whose region tables apply
# (nccl_ofi_tuner.cpp maps the EC2 product name; the engine knows the hosts by their NICs and GPUs).
# p6-b200 (EFAv3, Blackwell) has tables in the plugin too, not encoded here: NCCL's model chooses.
PLUGIN_PLATFORMS = {("EFA", "hopper"): "p5/p5e", ("EFAv3", "hopper"): "p5en"}
# The cost the plugin writes for the pair it forces (NCCL then runs the cheapest: that one).
FORCED_COST = 0.0


def plugin_platform(topo, group, nics: set | None = None) -> str | None:
    """The instance type whose net plugin tunes this collective (:data:`PLUGIN_PLATFORMS`): every
    compute NIC of the participants' hosts of one model, on those GPUs, across hosts. ``nics``:
    :func:`compute_nic_models` when the caller has it already."""
    models = compute_nic_models(topo, group) if nics is None else nics
    if len(models) != 1:
        return None
    return PLUGIN_PLATFORMS.get((next(iter(models)), gpu_arch(topo, group)))


def plugin_choice(topo, group, nics: set | None, reasons: dict, requested: str = "auto",
                  protocol: str = "auto") -> tuple[str, str] | None:
    """The (algorithm, protocol) the participants' net plugin forces, or None where NCCL's model
    chooses. A pair runs if its algorithm does here (``reasons``: algorithm → why not, or None)
    and the pattern allows it (``requested`` algorithm, ``protocol``), as NCCL marks the rest of
    its cost table ignored."""
    def runs(algorithm: str, proto: str) -> bool:
        return (reasons.get(algorithm, "unknown") is None and requested in ("auto", algorithm)
                and protocol in ("auto", proto) and proto in protocols_for(algorithm))

    return region_choice(plugin_platform(topo, group, nics), group.kind, group.size, group.n,
                         group.nodes, runs)


def allowed_only(reasons: dict, allowed) -> dict:
    """``reasons`` (algorithm → why it does not run, or None) with the algorithms a pattern's
    ``algorithms`` leaves out marked as not running, as NCCL_ALGO=Ring,Tree leaves the others out
    of NCCL's cost table: its model (or a tuner plugin) then chooses among the rest."""
    if allowed is None:
        return reasons
    return {a: r if r is not None or a in allowed else "left out by the pattern's algorithms (NCCL_ALGO)"
            for a, r in reasons.items()}


def compute_nic_models(topo, group) -> set:
    """The ``model`` of every compute NIC in the participants' hosts (None for a NIC without one);
    none on one host, where no step crosses a network."""
    if group.nodes < 2:
        return set()
    hosts = {topo.node_host[int(g)] for g in group.participants.tolist()} - {None}
    return {topo.node_attrs[i].get("model") for i in kind_nodes(topo, "nic").tolist()
            if topo.node_host[i] in hosts and topo.node_attrs[i].get("role", "compute") == "compute"}


def selection_time(algorithm: str, latency_s: float, data_s: float, efficiency: float) -> float:
    """The time NCCL's model gives a (algorithm, protocol): the engine's data time converted as
    NCCL converts bus bandwidth (:data:`NCCL_DATA_FACTOR`)."""
    return latency_s + data_s * NCCL_DATA_FACTOR.get(algorithm, 1.0) / efficiency


def chooser_name(requested: str, by_plugin: bool) -> str:
    """A plan's ``chosen_by``: ``request`` (the pattern names its algorithm), ``plugin`` or ``nccl``."""
    if requested != "auto":
        return "request"
    return "plugin" if by_plugin else "nccl"
