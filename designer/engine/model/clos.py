"""Port-true Clos wiring: leaves → spines (→ super-spines) in whole switch ports.

The fabric generators (``fabrics.py``) decide *which* leaves exist and how many host ports each
holds; this module wires everything above them with switches of a fixed radix, so every
switch–switch link is a bundle of ``k ≥ 1`` ports at the port rate (capacity ``k × rate``, never
a fraction) and no switch uses more ports than it has.

Rules (why they look like this)
-------------------------------
- A leaf with ``d`` host ports gets ``u = ceil(d / o)`` uplink ports (``o`` its
  oversubscription; storage leaves use 1), so the real ratio ``d / u`` is at most the one asked.
- Two tiers: by default the fewest spines (at least two) whose ports hold every leaf's uplinks in
  equal bundles (:func:`default_spines`): 16 leaves of 64 uplinks on 128-port spines → 8 spines,
  bundles of 8. A given ``spines`` count turns each leaf's uplinks into bundles of ``ceil(u / S)``.
  With one port per spine a spine has a port per leaf, so two tiers hold at most ``radix``
  leaves; beyond that the generator builds a third tier.
- Three tiers (pods + super-spines): a pod is at most ``radix / 2`` leaves and its own spines
  (same rule as two tiers); a pod spine is non-blocking (as many up ports as down), the requested
  oversubscription is applied at the leaf tier only. Pod spine ``j`` of every pod connects to
  super-spine group ``j`` of ``C`` switches in bundles, ``C`` the smallest that fits the ports.
  At most ``radix`` pods (a super-spine needs a port per pod); more would need a fourth tier.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from designer.engine.errors import InvalidTopology, Problem

__all__ = ["SwitchSpec", "LeafPorts", "default_spines", "uplink_ports", "max_down_ports", "wire_two_tier", "wire_three_tier"]


@dataclass(frozen=True)
class SwitchSpec:
    """The switch every fabric tier is built from, in the port mode the fabric uses.

    ``model`` is the catalog id, ``radix`` the ports at ``port_gbps`` Gb/s, ``tech`` the catalog
    link tech of one port (``eth400``).
    """

    model: str
    radix: int
    port_gbps: float
    tech: str

    def attrs(self, tier: str) -> dict:
        return {"tier": tier, "model": self.model, "radix": self.radix, "port_gbps": self.port_gbps}


@dataclass
class LeafPorts:
    """One leaf to wire upward: its id, host (down) ports and the oversubscription it takes."""

    id: str
    down: int
    oversubscription: float = 1.0
    storage: bool = False

    @property
    def up(self) -> int:
        return uplink_ports(self.down, self.oversubscription)


def _fail(path: str, message: str):
    raise InvalidTopology(message, [Problem(path, message)])


def uplink_ports(down: int, oversubscription: float) -> int:
    """Uplink ports of a leaf with ``down`` host ports at ``oversubscription`` (≥ 1)."""
    return max(1, math.ceil(down / oversubscription - 1e-9))


def max_down_ports(radix: int, oversubscription: float) -> int:
    """Most host ports a leaf of ``radix`` ports can take and still have its uplinks."""
    down = int(radix * oversubscription / (1 + oversubscription))
    while down > 0 and down + uplink_ports(down, oversubscription) > radix:
        down -= 1
    return down


def _bundle_links(out, lower: str, uppers: list[str], ports: int, sw: SwitchSpec) -> None:
    for upper in uppers:
        out.fabric_link(lower, upper, sw.tech, ports, sw.port_gbps)


def default_spines(leaves: list[LeafPorts], budget: int) -> int:
    """Fewest spines (at least two, for a second path) whose ports hold every leaf's uplinks in
    equal whole-port bundles: ``S`` divides the fullest leaf's uplinks and
    ``sum(ceil(u / S)) <= budget``. ``S = max u`` (one port per spine) always fits two tiers."""
    compute = [leaf for leaf in leaves if not leaf.storage] or leaves
    widest = max(leaf.up for leaf in compute)
    for count in range(min(2, widest), widest + 1):
        if widest % count == 0 and sum(math.ceil(leaf.up / count) for leaf in leaves) <= budget:
            return count
    return widest


def wire_two_tier(out, leaves: list[LeafPorts], sw: SwitchSpec, *, spines: int | None,
                  prefix: str = "spine", extra: dict | None = None, budget: int | None = None) -> list[str]:
    """Spines above ``leaves`` (every leaf to every spine, whole-port bundles); their ids.

    Raises
    ------
    InvalidTopology
        (path ``spines``) when a leaf or a spine would need more ports than the radix.
    """
    # Spines follow the compute leaves; storage leaves spread their uplinks over them. A pod spine
    # (three tiers) keeps half its ports for the super-spines: ``budget`` = radix / 2.
    budget = budget or sw.radix
    count = spines if spines is not None else default_spines(leaves, budget)
    bundles = [math.ceil(leaf.up / count) for leaf in leaves]
    for leaf, b in zip(leaves, bundles):
        if leaf.down + b * count > sw.radix:
            _fail("spines", f"{leaf.id}: {leaf.down} host ports + {count} spines × {b} uplink ports "
                            f"= {leaf.down + b * count} ports, but a {sw.model} has {sw.radix}")
    if sum(bundles) > budget:
        _fail("spines", f"each spine needs {sum(bundles)} leaf ports for {len(leaves)} leaves, but a "
                        f"{sw.model} has {budget} for them; use more spines or three tiers (tiers=3)")
    wider = [leaf.id for leaf, b in zip(leaves, bundles) if not leaf.storage and b * count > leaf.up]
    if spines is not None and wider:
        out.notes.append(f"{count} spines: {len(wider)} leaves get {count} × whole-port uplinks, more than "
                         f"their oversubscription needs (first: {wider[0]})")
    ids = [out.switch(out.next_id(prefix), "spine", **sw.attrs("spine"), **(extra or {}))
           for _ in range(count)]
    for leaf, b in zip(leaves, bundles):
        _bundle_links(out, leaf.id, ids, b, sw)
    return ids


def wire_three_tier(out, pods: list[list[LeafPorts]], sw: SwitchSpec, *, spines: int | None,
                    names: tuple[str, str] = ("spine", "core"), extra: dict | None = None) -> dict:
    """Pod spines above each pod's leaves and super-spines above the pod spines.

    Returns
    -------
    dict
        ``{"spines": [ids], "cores": [ids], "pods": n}``.

    Raises
    ------
    InvalidTopology
        (path ``hosts``) when there are more pods than a super-spine has ports.
    """
    if len(pods) > sw.radix:
        _fail("hosts", f"{len(pods)} pods but a {sw.model} super-spine has {sw.radix} ports "
                       f"(one per pod): a fourth tier would be needed")
    pod_spines = []
    for p, pod in enumerate(pods):
        tag = {**(extra or {}), "pod": p}
        if any(leaf.storage for leaf in pod):
            tag["storage"] = True
        pod_spines.append(wire_two_tier(out, pod, sw, spines=spines, prefix=names[0], extra=tag,
                                        budget=sw.radix // 2))
    width = max(len(s) for s in pod_spines)
    down = [_pod_spine_down(out, ids[0]) for ids in pod_spines]
    if 2 * max(down) > sw.radix:
        _fail("spines", f"a pod spine has {max(down)} leaf ports and as many uplinks, "
                        f"{2 * max(down)} ports, but a {sw.model} has {sw.radix}")
    group = _group_size(down, sw.radix)
    cores = [[out.switch(out.next_id(names[1]), "core", **sw.attrs("core"), **(extra or {}), core_group=j)
              for _ in range(group)] for j in range(width)]
    for ids, d in zip(pod_spines, down):
        for j, spine in enumerate(ids):
            _bundle_links(out, spine, cores[j], math.ceil(d / group), sw)
    return {"spines": [s for ids in pod_spines for s in ids], "cores": [c for g in cores for c in g],
            "pods": len(pods)}


def _pod_spine_down(out, spine: str) -> int:
    return out.ports_used.get(spine, 0)


def _group_size(down: list[int], radix: int) -> int:
    """Smallest super-spine group that carries every pod spine's uplinks within ``radix`` ports."""
    group = max(1, math.ceil(sum(down) / radix))
    while sum(math.ceil(d / group) for d in down) > radix:
        group += 1
    return group
