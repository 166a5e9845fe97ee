"""htsim fat-tree topology file (``-topo FILE`` of csg-htsim's datacenter simulators).

htsim (https://github.com/Broadcom/csg-htsim, ``sim/datacenter/fat_tree_topology.cpp``,
``FatTreeTopology::load``; examples ``sim/datacenter/topologies/leaf_spine_tiny.topo`` and
``fat_tree_1024.topo``) reads a parametric description of a 2- or 3-tier fat tree, one
``Key value`` per line separated by single spaces, ``#`` lines ignored::

    Nodes 32                 # hosts (single-port endpoints)
    Tiers 2
    Podsize 32               # hosts per pod (all of them with two tiers)

    Tier 0                   # ToR (leaf) switches, then Tier 1 (agg/spine), Tier 2 (core)
    Downlink_speed_Gbps 400  # integer rate of this tier's downlinks
    Radix_Down 8             # downlink ports per switch of the tier
    Radix_Up 2               # uplink ports (not on the top tier)
    Downlink_Latency_ns 100  # non-zero integer
    Switch_Latency_ns 450
    Oversubscribed 1         # integer down/up ratio (lower tiers)
    Bundle 1                 # parallel links per switch pair (tiers 1, 2)

From these htsim derives the switch counts (``set_custom_params``): ToRs = hosts / Radix_Down,
aggregation switches = ToR uplink ports / (pods × Radix_Down of tier 1), cores likewise; host
``k`` hangs on ToR ``k // Radix_Down``.

The export takes the fabric-attached compute NIC ports as htsim's hosts, numbered leaf by leaf
(in a rail-optimized fabric all rail-0 NICs first: each htsim ToR is one rail's leaf), lists that
numbering in ``#`` lines, and refuses (a located error) a fabric htsim's generator cannot rebuild:
leaves with different downlink counts, rates or latencies, uneven uplink bundles, a
non-integer oversubscription, or switch counts that htsim's formulas do not reproduce. Switch
latency is the engine's per-hop forwarding figure (:data:`designer.engine.model.hop_latency.FORWARDING_NS`).
What is lost: the hosts' insides (htsim's hosts are NIC ports, one per node: several NICs of a
server are independent hosts), NVLink, rail-to-GPU affinity, and which spine a bundle reaches
(htsim wires every ToR to every aggregation switch of its pod).
"""
from __future__ import annotations

from designer.engine.errors import InvalidTopology, Problem
from designer.engine.io.fabric_view import MAX_EXPORT_PROBLEMS, FabricView, comment_text, natural_key
from designer.engine.model.hop_latency import FORWARDING_NS

__all__ = ["htsim_topology", "htsim_parameters", "derived_switch_counts"]


def _refuse(path: str, what: str) -> InvalidTopology:
    return InvalidTopology(f"htsim's fat tree cannot describe this design: {what}", [Problem(path, what)])


def _one(values: set, path: str, what: str):
    """The single value of ``values`` (a uniform property), or a located refusal."""
    if len(values) != 1:
        shown = sorted(values, key=str)[:MAX_EXPORT_PROBLEMS]
        raise _refuse(path, f"{what} differ: {shown}")
    return next(iter(values))


def _whole(value: float, path: str, what: str) -> int:
    if value <= 0 or abs(value - round(value)) > 1e-6:
        raise _refuse(path, f"{what} is {value:g}, not a positive whole number")
    return int(round(value))


def _tier_switches(view: FabricView) -> list[list[str]]:
    tiers = max(view.tier.values(), default=-1) + 1
    return [[s for s in view.switches if view.tier[s] == t] for t in range(tiers)]


def _uplinks(view: FabricView, tier: int) -> dict[str, list[tuple[str, int]]]:
    """Switch of ``tier`` -> [(upper switch, link)] of its links one tier up."""
    out: dict[str, list] = {}
    for lo, hi, link in view.switch_links:
        if view.tier[lo] == tier and view.tier[hi] == tier + 1:
            out.setdefault(lo, []).append((hi, link))
    return out


def _pods(view: FabricView, tiers: list[list[str]]) -> list[list[str]]:
    """Leaves grouped by the set of tier-1 switches they reach (one pod with two tiers)."""
    if len(tiers) < 3:
        return [tiers[0]]
    up = _uplinks(view, 0)
    groups: dict[frozenset, list[str]] = {}
    for leaf in tiers[0]:
        groups.setdefault(frozenset(s for s, _ in up.get(leaf, [])), []).append(leaf)
    return sorted(groups.values(), key=lambda leaves: natural_key(leaves[0]))


def htsim_parameters(doc: dict) -> dict:
    """The design as htsim fat-tree parameters plus the host numbering.

    Returns
    -------
    dict
        ``nodes``, ``tiers``, ``podsize``, ``tier_params`` (one dict per tier: ``speed_gbps``,
        ``radix_down``, ``radix_up``, ``latency_ns``, ``switch_latency_ns``, ``oversubscribed``,
        ``bundle``), ``hosts`` (htsim host number -> NIC id), ``switch_counts`` (per tier, the design's).

    Raises
    ------
    InvalidTopology
        A design htsim's fat tree cannot describe (see the module docstring).
    """
    view = FabricView.of(doc)
    tiers = _tier_switches(view)
    if len(tiers) not in (2, 3) or any(not t for t in tiers):
        raise _refuse("nodes", f"{len(tiers)} switch tiers (htsim builds 2 or 3, each populated)")
    down = _leaf_downlinks(view, tiers[0])
    pods = _pods(view, tiers)
    leaves = [leaf for pod in pods for leaf in pod]
    hosts = [nic for leaf in leaves for nic, _ in sorted(down[leaf], key=lambda r: natural_key(r[0]))]
    podsize = _one({sum(len(down[l]) for l in pod) for pod in pods}, "nodes", "hosts per pod")
    result = {"nodes": len(hosts), "tiers": len(tiers), "podsize": podsize,
              "tier_params": _tier_params(view, tiers, down, pods), "hosts": hosts,
              "switch_counts": [len(t) for t in tiers]}
    derived = derived_switch_counts(result)
    if derived != result["switch_counts"]:
        raise _refuse("nodes", f"htsim would build {derived} switches per tier, the design has "
                               f"{result['switch_counts']}")
    return result


def _leaf_downlinks(view: FabricView, leaves: list[str]) -> dict[str, list[tuple[str, int]]]:
    """Leaf -> [(NIC id, link)] below it; every leaf must have some, each one port."""
    down: dict[str, list] = {}
    for _, nic, switch, link in view.server_links:
        if view.tier[switch] == 0 and view.topo.node_kind[view.topo.node_index[nic]] == "nic":
            down.setdefault(switch, []).append((nic, link))
    if set(down) != set(leaves):
        missing = sorted(set(leaves) - set(down), key=natural_key)[:1] or ["?"]
        raise _refuse(f"nodes.{missing[0]}", "a leaf has no NIC below it")
    if {view.ports(l) for rows in down.values() for _, l in rows} != {1}:
        raise _refuse("links", "a NIC has several ports to one leaf (htsim hosts have one port)")
    return down


def _tier_params(view: FabricView, tiers: list[list[str]], down: dict, pods: list[list[str]]) -> list[dict]:
    """Per tier: rate, radixes, latency, oversubscription and bundle (see the module docstring)."""
    params = [_leaf_tier(view, down, [leaf for pod in pods for leaf in pod])]
    for t in range(1, len(tiers)):
        params.append(_upper_tier(view, tiers, t))
        lower = params[t - 1]
        lower["radix_up"] = lower.pop("uplink_ports")
        ratio = lower["radix_down"] * lower["speed_gbps"] / (lower["radix_up"] * params[t]["speed_gbps"])
        lower["oversubscribed"] = _whole(ratio, f"nodes.{tiers[t - 1][0]}", "the oversubscription")
    params[-1].pop("uplink_ports", None)
    return params


def _leaf_tier(view: FabricView, down: dict, leaves: list[str]) -> dict:
    topo = view.topo
    links = [l for leaf in leaves for _, l in down[leaf]]
    up = _uplinks(view, 0)
    return {
        "speed_gbps": _whole(_one({round(view.port_gbps(l), 6) for l in links}, "links", "NIC-to-leaf rates"),
                             "links", "the NIC-to-leaf rate (Gb/s)"),
        "radix_down": _one({len(down[leaf]) for leaf in leaves}, "nodes", "NICs per leaf"),
        "uplink_ports": _one({sum(view.ports(l) for _, l in up.get(leaf, [])) for leaf in leaves},
                             "links", "uplink ports per leaf"),
        "latency_ns": _whole(_one({float(topo.link_latency_ns[l]) for l in links}, "links",
                                  "NIC-to-leaf latencies"), "links", "the NIC-to-leaf latency (ns)"),
        "switch_latency_ns": _switch_latency(view, leaves),
        "bundle": 1,
    }


def _upper_tier(view: FabricView, tiers: list[list[str]], t: int) -> dict:
    topo = view.topo
    below = [(lo, hi, l) for lo, hi, l in view.switch_links if view.tier[lo] == t - 1 and view.tier[hi] == t]
    up = _uplinks(view, t)
    radix_down: dict[str, int] = {}
    for _, hi, l in below:
        radix_down[hi] = radix_down.get(hi, 0) + view.ports(l)
    return {
        "speed_gbps": _whole(_one({round(view.port_gbps(l), 6) for _, _, l in below}, "links",
                                  f"tier-{t} downlink rates"), "links", f"the tier-{t} downlink rate (Gb/s)"),
        "radix_down": _one({radix_down.get(s, 0) for s in tiers[t]}, "nodes", f"downlink ports per tier-{t} switch"),
        "uplink_ports": _one({sum(view.ports(l) for _, l in up.get(s, [])) for s in tiers[t]}, "links",
                             f"uplink ports per tier-{t} switch") if t + 1 < len(tiers) else None,
        "latency_ns": _whole(_one({float(topo.link_latency_ns[l]) for _, _, l in below}, "links",
                                  f"tier-{t} link latencies"), "links", f"the tier-{t} link latency (ns)"),
        "switch_latency_ns": _switch_latency(view, tiers[t]),
        "bundle": _one({view.ports(l) for _, _, l in below}, "links", f"tier-{t} bundle sizes"),
    }


def _switch_latency(view: FabricView, switches: list[str]) -> int:
    """Forwarding latency of the tier's switches (InfiniBand or Ethernet figure), whole ns."""
    from designer.engine.catalog import TECHS

    topo = view.topo
    index = topo.node_index[switches[0]]
    ib = any(getattr(TECHS.get(topo.link_tech[l] or ""), "family", None) == "infiniband"
             for _, l in topo.adjacency[index])
    return int(round(FORWARDING_NS["switch_ib" if ib else "switch"]))


def derived_switch_counts(params: dict) -> list[int]:
    """Switches per tier htsim's ``set_custom_params`` builds from ``params`` (its formulas)."""
    tp, nodes = params["tier_params"], params["nodes"]
    pods = nodes // params["podsize"]
    tors = pods * (params["podsize"] // tp[0]["radix_down"])
    tor_uplinks = nodes * tp[0]["speed_gbps"] // (tp[1]["speed_gbps"] * tp[0]["oversubscribed"])
    aggs = pods * (tor_uplinks // (pods * tp[1]["radix_down"]))
    if params["tiers"] == 2:
        return [tors, aggs]
    agg_uplinks = tor_uplinks * tp[1]["speed_gbps"] // (tp[2]["speed_gbps"] * tp[1]["oversubscribed"])
    return [tors, aggs, agg_uplinks // tp[2]["radix_down"]]


def htsim_topology(doc: dict) -> str:
    """The ``.topo`` text (see the module docstring).

    Raises
    ------
    InvalidTopology
        As :func:`htsim_parameters`.
    """
    params = htsim_parameters(doc)
    name = comment_text(doc.get("name", "")) if isinstance(doc, dict) else ""
    lines = [f"# htsim fat-tree topology written by Fabricscope from design \"{name}\"",
             f"Nodes {params['nodes']}", f"Tiers {params['tiers']}", f"Podsize {params['podsize']}", ""]
    for t, tier in enumerate(params["tier_params"]):
        lines += [f"Tier {t}", f"Downlink_speed_Gbps {tier['speed_gbps']}", f"Radix_Down {tier['radix_down']}"]
        if "radix_up" in tier:
            lines += [f"Radix_Up {tier['radix_up']}", f"Oversubscribed {tier['oversubscribed']}"]
        lines += [f"Downlink_Latency_ns {tier['latency_ns']}", f"Switch_Latency_ns {tier['switch_latency_ns']}"]
        if t > 0:
            lines.append(f"Bundle {tier['bundle']}")
        lines.append("")
    lines.append("# numbering of the hosts: \"# host <htsim number> <Fabricscope NIC id>\"")
    lines += [f"# host {k} {comment_text(nic)}" for k, nic in enumerate(params["hosts"])]
    return "\n".join(lines) + "\n"
