"""Routing across the unified graph: host-internal segments + NIC choice + fabric ECMP.

:func:`route` turns flows (source and destination node indices) into paths, given as CSR arrays of
resources in the topology's numbering (see ``topology.py``), ready for the solver.

Modules
-------
- :mod:`.router`: :func:`route` and the per-call :class:`~.router.Router` (segment lookups,
  path classes via :func:`designer.engine.model.pathclass.classify_grouped`, blocks of 1M flows above
  5M); :mod:`.assemble`: the paths of the pieces a Router found, in one row gather;
- :mod:`.routes`: :class:`Routes`, unroutable reasons, re-routing a subset, folding virtual flows,
  joining blocks; :mod:`.splice`: re-routed flows spliced in by slices (a sweep's per-failure
  routes); :mod:`.memo`: the recent routes kept per context (:func:`forget_routes`);
- :mod:`.context`: the failure context — :class:`FailureSet`, :class:`RoutingContext` (host shapes,
  host maps, uplinks, fabric tables, cached per failure set) and its derivation under more failures;
- :mod:`.intra`: intra-host search (:class:`~.intra.HostShape`: equal-cost paths, NVLink striping);
- :mod:`.fabric`: uplinks, equal-cost switch paths (ECMP), uplink choice;
- :mod:`.nic_policies`: :data:`NIC_POLICIES`, the table of NIC strategy functions; their per-shape
  tables in :mod:`.nic_tables`;
- :mod:`.hashing` (seeded per-flow hash), :mod:`.csr` (CSR helpers), :mod:`.limits`.

Transit rules (docs/ENGINE.md, Routing)
---------------------------------------
- fabric nodes (no enclosing host) forward, except endpoints (``storage``);
- a host's internal components forward only traffic that starts or ends in that host, so a path
  never crosses a third host;
- endpoints (GPU, memory, NVMe, storage) never forward, except a GPU used as the explicit PXN relay.

How a path is built
-------------------
A path is a concatenation of *segments*:

``src ─intra(src host)→ gateway ─uplink→ switch ─fabric ECMP→ switch ─downlink→ gateway ─intra→ dst``

- *intra-host segments* are equal-cost shortest paths inside one host (NVLink hops cost 1, other
  hops 2, so NVLink is preferred). Hosts with the same structure (every host of a template) share a
  :class:`~.intra.HostShape`: segments are computed once per shape in local numbering and mapped to
  each host's resources with one array gather. Inside a host, equal-cost alternatives (a GPU pair
  through each of the NVSwitches) are always *split*, in proportion to their bottleneck capacity
  (see :meth:`~.intra.HostShape.striped`): NVLink stripes traffic over all its links in hardware,
  so hashing onto one NVSwitch would understate NVLink bandwidth, and an even split would make
  the 4-link switches of a DGX H100 (5/4/4/5 links) look like bottlenecks. Each distinct path is
  one sub-flow with a *striping multiplicity* (5, 4, 4, 5) and a solver *weight* equal to its
  share (5/18, 4/18, 4/18, 5/18), solved by weighted max-min (see "Fairness" below).
- the *gateway* (the NIC) is chosen by the NIC policy, per host shape, with lookup tables; a GPU
  with several equally near NICs (AWS p5: 4 EFAs behind its PCIe switch) stripes over them under
  ``affinity``, as NCCL's channels do: one virtual flow per NIC, folded back into sub-flows of
  equal share (``nic_policies.nic_stripes``, docs/ENGINE.md, Routing);
- *fabric segments* are equal-cost shortest paths between switches (hop count), enumerated once per
  (first switch, last switch) pair; ``multipath="hash"`` picks one per flow with a seeded hash of the
  flow's identity, ``"split"`` divides the flow over all of them (at most
  :data:`MAX_EQUAL_COST_PATHS`).

A flow with several alternatives becomes several *paths* (sub-flows), one per distinct path, each
with ``stripes`` (its striping multiplicity: the product of the striping weights of the segment
alternatives it combines; 1 for every alternative of an even ``split``), a ``share`` (its
stripes over its flow's total: the fraction of the flow's bytes and demand it carries, summing
to 1 per flow) and a solver ``weight`` equal to its share. All per-path arrays are built with
numpy (CSR concatenation), so a 1M-flow all-to-all routes in a few seconds. Path classes
(NVL/PIX/…/NET) come from :mod:`designer.engine.model.pathclass`, called once per structural key
(shape, local endpoints, NIC choice), not once per flow.

Fairness: weights are shares, so a flow is one flow however it is striped
--------------------------------------------------------------------------------
The solver runs weighted max-min: at water level λ an unfrozen sub-flow of weight w runs at
w·λ. Weights are normalized per flow (they sum to 1), so on a resource that *all* sub-flows
of a flow cross — its NIC, its PCIe link, a shared first or last fabric hop — the flow weighs
exactly 1 and competes as one flow, whatever its striping: a PXN flow whose NVLink leg is
striped 5/4/4/5 over the NVSwitches, a ``split`` flow over k spines, an ``any`` + ``split``
flow over k NICs each get the same share of a shared bottleneck as an unstriped flow. (Weighting
paths by raw multiplicity, as the former "repeat each alternative k times" formulation did,
made a PXN flow weigh 18 against an affinity flow's 1 on their common NIC, and a ``split``
flow weigh k on its own uplink: wrong.) When its sub-flows freeze together the flow runs at the
common level λ = Σ w·λ; on a resource crossed by only some of them (one NVSwitch, one spine)
a sub-flow of share w takes w of what a whole flow would — weighted fair share per path.

Sub-flows of one flow may freeze at *different* levels when their paths have different
bottlenecks (one spine congested, the other not). Each then runs at w·λ_p, independently. This
is the standard "weighted fair share per path" approximation of a striped flow: the split is
proportional (NVLink sprays over its links, ECMP ``split`` and NCCL channels divide the bytes
in fixed proportions) and never adaptive — a sub-flow does not move bytes to a faster sibling
— so each stripe carries exactly its share of the bytes, at its own fair rate, and the flow
completes when its slowest stripe does (see :mod:`designer.engine.analysis.simulate`). The
approximation lets a fast stripe keep its fair rate (and its load on its path) where a lockstep
sender would hold every stripe to the slowest one's pace; either way a flow never weighs more
than 1 on any resource (less where only some of its stripes cross it).
:meth:`Routes.repeated` expands a path of k stripes into k sub-flows of weight share/k, an
equivalent formulation (weighted max-min is additive on a path) kept to check exactly that.

Limits of the model: two hosts cabled back to back (NIC to NIC without a switch) and traffic that
leaves a host and re-enters the same host through the fabric are not routed (reported unroutable).
"""
from __future__ import annotations

from designer.engine.routing.context import FailureSet, RoutingContext, routing_context
from designer.engine.routing.limits import MAX_EQUAL_COST_PATHS, MAX_PATH_ENTRIES
from designer.engine.routing.nic_policies import NIC_POLICIES
from designer.engine.routing.memo import forget_routes
from designer.engine.routing.router import MULTIPATH_MODES, route, route_grouped
from designer.engine.routing.routes import Routes, path_nodes_from_resources

__all__ = [
    "NIC_POLICIES", "MULTIPATH_MODES", "MAX_EQUAL_COST_PATHS", "MAX_PATH_ENTRIES",
    "FailureSet", "Routes", "RoutingContext", "forget_routes", "route", "route_grouped", "routing_context",
    "path_nodes_from_resources",
]
