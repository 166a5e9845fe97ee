"""Rail-only fabrics: every rail its own network, no switch joins two rails.

A rail-only fabric (Wang et al., "How to Build Low-cost Networks for Large Language Models
(without Sacrificing Performance)", arXiv 2307.12169, section 4) keeps the rail switches of a
rail-optimized fabric and drops the spine layer that joins rails. NIC ``i`` of every host still
goes to rail ``i``; traffic between two GPUs on different rails first crosses the scale-up domain
(NVLink) to the GPU whose NIC is on the destination's rail, then takes that rail (NCCL's PXN relay:
``routing.nic_policy: "pxn"``, ``designer/engine/routing/nic_policies.py``). Under the
``affinity`` policy such a flow has no path and is reported unroutable.

Sizing: a rail whose hosts' NIC ports fit one switch gets one switch using **all** its ports
(no uplink is reserved: there is nothing above it). A larger rail becomes its own two- or
three-tier Clos (the rail-optimized builder with one spine plane per rail), as the paper's
rail-only network does for a rail beyond one switch.
"""
from __future__ import annotations

from designer.engine.errors import InvalidTopology, Problem

__all__ = ["rail_only_layout"]


def _fail(path: str, message: str):
    raise InvalidTopology(message, [Problem(path, message)])


def rail_only_layout(hosts: int, rails: int, nics: int, radix: int, *, planes: int,
                     leaves_per_rail, spines, tiers, storage: int) -> tuple[int, int | None, bool]:
    """Planes, leaves per rail and whether one full-radix switch holds each rail.

    Parameters
    ----------
    hosts : int
        Hosts of the cluster.
    rails : int
        Rails (compute NICs per host, or as asked).
    nics : int
        Compute NICs per host (NIC ``i`` on rail ``i % rails``).
    radix : int
        Switch ports at the NIC port rate.
    planes : int
        As asked: 1 (the default) or ``rails``; a rail-only fabric has one plane per rail.
    leaves_per_rail, spines, tiers
        As asked (None: from the radix).
    storage : int
        Storage servers: none (a storage leaf would need a spine to reach the rails).

    Returns
    -------
    (int, int or None, bool)
        ``planes`` (= ``rails``), ``leaves_per_rail`` to build with (1 when one switch holds the
        rail) and ``full_radix`` (True: that switch uses all ``radix`` ports for hosts).

    Raises
    ------
    InvalidTopology
        ``planes`` other than 1 or ``rails``; storage servers.
    """
    if planes not in (1, rails):
        _fail("planes", f"a rail-only fabric has one plane per rail ({rails}); got planes={planes}")
    if storage:
        _fail("storage", "a rail-only fabric has no spine to join storage leaves to the rails; "
                         "use storage=0 (or a rail-optimized fabric)")
    per_rail_max = -(-nics // rails)  # most NIC ports one host has on a rail
    one_switch = hosts * per_rail_max <= radix
    if one_switch and leaves_per_rail in (None, 1) and spines is None and tiers is None:
        return rails, 1, True
    return rails, leaves_per_rail, False
