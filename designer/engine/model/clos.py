"""Port-true Clos wiring: leaves → spines (→ super-spines) in whole switch ports.

The fabric generators (``fabrics.py``) decide *which* leaves exist and how many host ports each
holds; this module wires everything above them with switches of a fixed radix, so every
switch–switch link is a bundle of ``k ≥ 1`` ports at the port rate (capacity ``k × rate``, never
a fraction) and no switch uses more ports than it has.

Rules (why they look like this)
-------------------------------
- A leaf with ``d`` host ports gets ``u = ceil(d / o)`` uplink ports (``o`` its
  oversubscription; storage leaves use 1), so the real ratio ``d / u`` is at most the one asked.
- Two tiers: by default the fewest spines (at least two) that hold every leaf's uplinks in equal
  whole-port bundles (:func:`default_spines`): a leaf with ``u`` uplinks takes ``b = ceil(u / S)``
  ports to each of ``S`` spines, so it may get ``b × S ≥ u`` uplinks (a lower ratio than asked)
  when its ports allow; that is what fills the spines' ports instead of buying more spines.
  16 leaves of 64 uplinks on 128-port spines → 8 spines, bundles of 8; at 3:1 on 64-port
  switches, 16 leaves of 43 host ports and 8 of 42 → 7 spines, bundles of 3 and 2 (43:21 and
  42:14), every spine port used, not 15 spines with 360 of their 960 ports used. Equal bundles per leaf keep every spine path of a leaf the
  same capacity (the routing splits ECMP traffic evenly over paths, not over ports).
  A given ``spines`` count turns each leaf's uplinks into bundles of ``ceil(u / S)``.
  With one port per spine a spine has a port per leaf, so two tiers hold at most ``radix``
  leaves; beyond that the generator builds a third tier.
- Storage leaves on the compute spines (hosts without storage NICs; with them, storage has a
  fabric of its own, ``storage_fabric.py``) are sized by their own bandwidth: ``d`` storage ports get ``d`` uplink ports
  (1:1), one port each on spines taken in turn (:func:`storage_bundles`), never a bundle to every
  spine. They use the spines' free ports; only when those are too few do the spines grow.
- Three tiers (pods + super-spines): a pod is at most ``radix / 2`` leaves and its own spines
  (same rule as two tiers); a pod spine is non-blocking (as many up ports as down), the requested
  oversubscription is applied at the leaf tier only. Pod spines ``j`` of every pod connect to
  super-spine group ``⌊j / m⌋`` of ``C`` switches in bundles: ``m`` spine indices share a group
  when one group's ports hold them (:func:`core_plan`), so the super-spines' ports fill (one pod
  of 16 spines with 64 uplinks each on 128-port switches → 8 super-spines, not 16 half-used).
  At most ``radix`` pods (a super-spine needs a port per pod); more would need a fourth tier.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from designer.engine.errors import InvalidTopology, Problem

__all__ = ["SwitchSpec", "LeafPorts", "default_spines", "storage_bundles", "core_plan", "uplink_ports",
           "max_down_ports", "wire_two_tier", "wire_three_tier"]


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
    # Uplink ports set by the caller instead of the ratio (a storage fabric's leaf: the storage
    # bandwidth it can carry, ``storage_fabric.py``).
    uplinks: int | None = None

    @property
    def up(self) -> int:
        return self.uplinks if self.uplinks is not None else uplink_ports(self.down, self.oversubscription)


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
    out.bundle(lower, uppers, sw.tech, ports, sw.port_gbps)


def storage_bundles(leaves: list[LeafPorts], count: int) -> list[dict[int, int]]:
    """Uplink ports of each storage leaf per spine index: ``{spine: ports}``.

    A storage leaf with ``d`` storage ports takes ``d`` uplinks (1:1, its own bandwidth), one port
    on each of ``d`` spines taken in turn after the previous storage leaf's (``d > count``: a
    second round adds a port to the first spines). Spreading them keeps every spine's load within
    one port of the others.
    """
    out, at = [], 0
    for leaf in leaves:
        ports: dict[int, int] = {}
        for _ in range(leaf.up):
            ports[at % count] = ports.get(at % count, 0) + 1
            at += 1
        out.append(ports)
    return out


def _spine_load(compute_bundles: list[int], storage: list[dict[int, int]], count: int) -> int:
    """Ports used on the busiest spine: every compute bundle plus its share of storage uplinks."""
    load = [sum(compute_bundles)] * count
    for ports in storage:
        for j, k in ports.items():
            load[j] += k
    return max(load)


def _fits(compute: list[LeafPorts], storage: list[LeafPorts], count: int, budget: int,
          radix: int | None) -> bool:
    bundles = [math.ceil(leaf.up / count) for leaf in compute]
    if radix is not None and any(leaf.down + b * count > radix for leaf, b in zip(compute, bundles)):
        return False
    return _spine_load(bundles, storage_bundles(storage, count), count) <= budget


def _split(leaves: list[LeafPorts]) -> tuple[list[LeafPorts], list[LeafPorts]]:
    """Compute and storage leaves; a pod of storage leaves only is wired as compute."""
    compute = [leaf for leaf in leaves if not leaf.storage]
    return (compute, [leaf for leaf in leaves if leaf.storage]) if compute else (list(leaves), [])


def default_spines(leaves: list[LeafPorts], budget: int, radix: int | None = None) -> int:
    """Fewest spines (at least two, for a second path) whose ports hold every leaf's uplinks.

    Parameters
    ----------
    leaves : list of LeafPorts
        The leaves to wire (storage leaves take the spines' free ports, see
        :func:`storage_bundles`).
    budget : int
        Ports of a spine for leaves (the radix; half of it for a pod spine).
    radix : int, optional
        Ports of a leaf. Given, a leaf may take ``ceil(u / S) × S ≥ u`` uplinks when its host
        ports plus those fit, which is what lets fewer spines fill their ports. Without it, the
        old rule: ``S`` divides the fullest compute leaf's uplinks (equal bundles, ``b × S = u``).

    Returns
    -------
    int
        The spine count; ``max u`` (one port per spine) when nothing smaller fits.
    """
    compute, storage = _split(leaves)
    widest = max(leaf.up for leaf in compute)
    need = sum(leaf.up for leaf in compute) + sum(leaf.up for leaf in storage)
    for count in range(max(min(2, widest), math.ceil(need / budget)), widest + 1):
        if radix is None and widest % count:
            continue
        if _fits(compute, storage, count, budget, radix):
            return count
    return widest


def wire_two_tier(out, leaves: list[LeafPorts], sw: SwitchSpec, *, spines: int | None,
                  prefix: str = "spine", extra: dict | None = None, budget: int | None = None) -> list[str]:
    """Spines above ``leaves`` (every compute leaf to every spine in equal whole-port bundles,
    storage leaves one port per spine in turn); their ids.

    Raises
    ------
    InvalidTopology
        (path ``spines``) when a leaf or a spine would need more ports than the radix.
    """
    # A pod spine (three tiers) keeps half its ports for the super-spines: ``budget`` = radix / 2.
    budget = budget or sw.radix
    compute, storage = _split(leaves)
    count = spines if spines is not None else default_spines(leaves, budget, sw.radix)
    bundles = [math.ceil(leaf.up / count) for leaf in compute]
    for leaf, b in zip(compute, bundles):
        if leaf.down + b * count > sw.radix:
            _fail("spines", f"{leaf.id}: {leaf.down} host ports + {count} spines × {b} uplink ports "
                            f"= {leaf.down + b * count} ports, but a {sw.model} has {sw.radix}")
    per_storage = storage_bundles(storage, count)
    load = _spine_load(bundles, per_storage, count)
    if load > budget:
        _fail("spines", f"a spine needs {load} leaf ports for {len(leaves)} leaves, but a "
                        f"{sw.model} has {budget} for them; use more spines or three tiers (tiers=3)")
    _note_wider(out, compute, bundles, count, spines is not None)
    if storage and spines is None:
        _note_storage_spines(out, compute, storage, count, budget, sw.radix)
    ids = [out.switch(out.next_id(prefix), "spine", **sw.attrs("spine"), **(extra or {}))
           for _ in range(count)]
    for leaf, b in zip(compute, bundles):
        _bundle_links(out, leaf.id, ids, b, sw)
    for leaf, ports in zip(storage, per_storage):
        for j, k in sorted(ports.items()):
            out.fabric_link(leaf.id, ids[j], sw.tech, k, sw.port_gbps)
    return ids


def _note_storage_spines(out, compute: list[LeafPorts], storage: list[LeafPorts], count: int,
                         budget: int, radix: int) -> None:
    """Say when the storage uplinks, not the compute leaves, set the spine count (and why)."""
    alone = default_spines(compute, budget, radix)
    if alone == count:
        return
    used = sum(math.ceil(leaf.up / alone) for leaf in compute)
    ports = sum(leaf.up for leaf in storage)
    out.notes.append(f"storage takes {ports} spine port{'s' if ports != 1 else ''} (1:1), but the {alone} "
                     f"spines the compute leaves need use {used} of their {budget} ports each; equal "
                     f"bundles from every leaf leave {count} spines as the fewest with room")


def _note_wider(out, compute: list[LeafPorts], bundles: list[int], count: int, asked: bool) -> None:
    """Say when whole-port bundles give the fullest leaf more uplinks than its ratio needs."""
    wider = [(leaf, b) for leaf, b in zip(compute, bundles) if b * count > leaf.up]
    if not wider or not asked:  # a default count's extra uplinks: fabrics.py notes the real ratio
        return
    leaf, b = max(wider, key=lambda lb: lb[0].down)
    out.notes.append(f"{count} spines: {len(wider)} leaves take {count} × {b} = {b * count} uplink ports, "
                     f"more than their oversubscription needs (first: {wider[0][0].id}; a leaf "
                     f"of {leaf.down} host ports is {leaf.down}:{b * count} = {leaf.down / (b * count):.3g}:1)")


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
    widths = [len(ids) for ids in pod_spines]
    group, share = core_plan(down, widths, sw.radix)
    cores = [[out.switch(out.next_id(names[1]), "core", **sw.attrs("core"), **(extra or {}), core_group=g)
              for _ in range(group)] for g in range(math.ceil(width / share))]
    for ids, d in zip(pod_spines, down):
        for j, spine in enumerate(ids):
            _bundle_links(out, spine, cores[j // share], math.ceil(d / group), sw)
    if share > 1:
        out.notes.append(f"super-spines: pod spines {share} at a time share a group of {group}, "
                         f"so their ports fill")
    return {"spines": [s for ids in pod_spines for s in ids], "cores": [c for g in cores for c in g],
            "pods": len(pods)}


def _pod_spine_down(out, spine: str) -> int:
    return out.ports_used.get(spine, 0)


def core_plan(down: list[int], widths: list[int], radix: int) -> tuple[int, int]:
    """Super-spine groups: ``(C, m)`` with the fewest super-spines ``ceil(max width / m) × C``.

    Pod spine ``j`` of pod ``p`` (``d_p`` uplinks) sends ``ceil(d_p / C)`` ports to each of the
    ``C`` super-spines of group ``⌊j / m⌋``; group 0 is the fullest (every pod has spine 0), so
    it fits when ``sum_p ceil(d_p / C) × min(m, w_p) <= radix``, and a pod spine's ports hold
    ``d_p + ceil(d_p / C) × C <= radix``.

    Parameters
    ----------
    down : list of int
        Uplink ports of one pod spine, per pod.
    widths : list of int
        Spines per pod.
    radix : int
        Ports of a super-spine.

    Returns
    -------
    (int, int)
        ``C`` super-spines per group and ``m`` pod-spine indices per group.

    Raises
    ------
    InvalidTopology
        (path ``spines``) when no group size fits the ports.
    """
    width = max(widths)
    best = None
    for group in range(max(1, math.ceil(max(down) / radix)), radix + 1):
        per = [math.ceil(d / group) for d in down]
        if any(d + c * group > radix for d, c in zip(down, per)):
            continue  # a pod spine's uplinks (ceil(d / C) to each of C) must fit beside its d
        share = width
        while share > 1 and sum(c * min(share, w) for c, w in zip(per, widths)) > radix:
            share -= 1
        if sum(c * min(share, w) for c, w in zip(per, widths)) > radix:
            continue
        total = math.ceil(width / share) * group
        if best is None or total < best[0]:
            best = (total, group, share)
        if group >= best[0]:
            break
    if best is None:
        _fail("spines", f"pod spines' uplinks do not fit {radix}-port super-spines")
    return best[1], best[2]
