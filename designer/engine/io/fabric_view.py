"""The fabric-level view of a design that the operations and packet-simulator exports share.

The exports for Slurm, NVIDIA Air, NetBox, ASTRA-sim and htsim see a design as the tools they
feed see a cluster: *servers* (the ``host`` groups: one OS image each; a GB200 NVL72 tray is
one), *switches* (the ``switch`` nodes, in tiers leaf < spine < core), the cables between a
server's NICs and the switches and between switches, and the multi-host NVLink domains
(``nvlink_domain`` groups, such as a GB200 NVL72 rack). What is inside a server (PCIe tree,
NVSwitches, CPUs) is not part of this view; each export says what it keeps of it.

Names: the design's ids may hold ``/`` (``h0/tray3``), which no hostname, Slurm node name or
Air node may; :func:`device_name` maps each to ``[A-Za-z0-9_.-]`` (``h0-tray3``) and a clash
between two mapped names is a located error. Ports: every cable end gets a port name, assigned
deterministically (:meth:`FabricView.cables`): on a switch ``swp1``, ``swp2``, … (Cumulus Linux's
naming, which Air's images use) with the downward cables first; on a server ``eth1``, ``eth2``, …
in the order of its NIC ids (``eth0`` is Air's management port). A bundle of ``n`` ports
(``bundle`` or ``attrs.ports`` on a link) is ``n`` cables.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from designer.engine.errors import InvalidTopology, Problem

__all__ = ["FabricView", "Cable", "device_name", "comment_text", "natural_key", "TIER_ORDER", "MAX_EXPORT_PROBLEMS"]

#: Switch tiers from the bottom; a switch names its tier in ``attrs.tier`` or ``attrs.role``.
TIER_ORDER = {"tor": 0, "leaf": 0, "spine": 1, "core": 2, "superspine": 2, "super-spine": 2}
#: Problems listed per refused export: enough to fix a design, bounded for a hostile one.
MAX_EXPORT_PROBLEMS = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def device_name(node_or_group_id: str) -> str:
    """``h0/tray3`` → ``h0-tray3``: a name every target accepts (letters, digits, ``_ . -``)."""
    return _UNSAFE.sub("-", node_or_group_id)


def comment_text(text: str, limit: int = 200) -> str:
    """``text`` fit for a one-line comment of any target: printable ASCII without quotes or
    backslashes (a design name with a newline would otherwise start a line of its own)."""
    return re.sub(r"[^ -~]|[\"'\\]", "?", str(text))[:limit]


def natural_key(name: str) -> tuple:
    """Sort key that puts ``h2`` before ``h10`` (digit runs compared as numbers)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", name) if part)


@dataclass(frozen=True)
class Cable:
    """One physical cable: device names, port names, per-port rate (Gb/s) and latency (ns)."""

    a_device: str
    a_port: str
    b_device: str
    b_port: str
    gbps: float
    latency_ns: float
    link_id: str


@dataclass
class FabricView:
    """Servers, switches and the cables between them (see the module docstring).

    Attributes
    ----------
    topo : Topology
        The compiled design.
    servers : list of str
        Host group ids (natural order).
    switches : list of str
        Switch node ids (by tier, then natural order).
    tier : dict
        Switch id -> tier number (0 leaf, 1 spine, 2 core).
    server_links : list of (str, str, str, int)
        ``(host id, NIC id, switch id, link index)`` of every NIC-to-switch link.
    switch_links : list of (str, str, int)
        ``(lower switch, upper switch, link index)`` of every switch-to-switch link.
    domains : dict
        ``nvlink_domain`` group id -> its host group ids (natural order).
    """

    topo: object
    servers: list = field(default_factory=list)
    switches: list = field(default_factory=list)
    tier: dict = field(default_factory=dict)
    server_links: list = field(default_factory=list)
    switch_links: list = field(default_factory=list)
    domains: dict = field(default_factory=dict)

    @classmethod
    def of(cls, doc: dict) -> "FabricView":
        """Validate ``doc`` and build its view.

        Raises
        ------
        InvalidTopology
            The document is invalid; a switch has no tier; two ids map to one device name.
        """
        from designer.engine.model.topology import Topology

        topo = Topology.from_document(doc)
        view = cls(topo)
        view._read_groups()
        view._read_switches()
        view._read_links()
        view._check_names()
        return view

    def _read_groups(self) -> None:
        groups = self.topo.groups
        self.servers = sorted((g for g, item in groups.items() if item.get("kind") == "host"), key=natural_key)
        for host in self.servers:
            parent = groups[host].get("parent")
            if parent is not None and groups.get(parent, {}).get("kind") == "nvlink_domain":
                self.domains.setdefault(parent, []).append(host)

    def _read_switches(self) -> None:
        topo, problems = self.topo, []
        for i, kind in enumerate(topo.node_kind):
            if kind != "switch":
                continue
            attrs = topo.node_attrs[i]
            name = attrs.get("tier") or attrs.get("role")
            if name not in TIER_ORDER:
                problems.append(Problem(f"nodes[{i}].attrs.role",
                                        f'switch "{topo.node_ids[i]}" has no tier (role leaf, spine or core)'))
                continue
            self.tier[topo.node_ids[i]] = TIER_ORDER[name]
        _raise_if(problems, "a switch has no tier")
        self.switches = sorted(self.tier, key=lambda s: (self.tier[s], natural_key(s)))

    def _read_links(self) -> None:
        topo = self.topo
        kinds, ids, hosts = topo.node_kind, topo.node_ids, topo.node_host
        for link, (a, b) in enumerate(zip(topo.link_a.tolist(), topo.link_b.tolist())):
            if kinds[a] == "switch" and kinds[b] == "switch":
                lo, hi = sorted((ids[a], ids[b]), key=lambda s: (self.tier[s], natural_key(s)))
                self.switch_links.append((lo, hi, link))
            elif kinds[a] == "switch" or kinds[b] == "switch":
                sw, end = (a, b) if kinds[a] == "switch" else (b, a)
                if hosts[end] is not None:
                    self.server_links.append((hosts[end], ids[end], ids[sw], link))
        self.server_links.sort(key=lambda r: (natural_key(r[0]), natural_key(r[1]), natural_key(r[2])))
        self.switch_links.sort(key=lambda r: (natural_key(r[0]), natural_key(r[1])))

    def _check_names(self) -> None:
        seen: dict[str, str] = {}
        problems = []
        for item in list(self.servers) + list(self.switches):
            name = device_name(item)
            if name in seen and seen[name] != item:
                problems.append(Problem(item, f'device name "{name}" is also the name of "{seen[name]}" '
                                              "(ids are mapped to letters, digits, _ . -)"))
            seen.setdefault(name, item)
        _raise_if(problems, "two ids map to the same device name")

    # ------------------------------------------------------------------ derived facts
    def ports(self, link: int) -> int:
        """Physical ports (cables) of link ``link``: its ``bundle`` or ``attrs.ports``, else 1."""
        item = self.topo.doc["links"][link]
        return int(item.get("bundle") or (item.get("attrs") or {}).get("ports") or 1)

    def port_gbps(self, link: int) -> float:
        """Rate of one port of ``link`` (its capacity per direction over its ports), Gb/s."""
        return float(self.topo.link_capacity_gbps[link]) / self.ports(link)

    def cables(self) -> list[Cable]:
        """Every cable with its two port names (see the module docstring), in a stable order."""
        ends: dict[str, list] = {}   # device -> [(sort key, cable number, side)]
        rows = []
        for host, nic, switch, link in self.server_links:
            for k in range(self.ports(link)):
                rows.append([device_name(switch), None, device_name(host), None, link])
                ends.setdefault(switch, []).append(((0, natural_key(host), natural_key(nic), k), len(rows) - 1, 0))
                ends.setdefault(host, []).append(((natural_key(nic), natural_key(switch), k), len(rows) - 1, 1))
        for lo, hi, link in self.switch_links:
            for k in range(self.ports(link)):
                rows.append([device_name(lo), None, device_name(hi), None, link])
                ends.setdefault(lo, []).append(((1, natural_key(hi), (), k), len(rows) - 1, 0))
                ends.setdefault(hi, []).append(((0, natural_key(lo), (), k), len(rows) - 1, 1))
        for device, items in ends.items():
            prefix = "swp" if device in self.tier else "eth"
            for number, (_, row, side) in enumerate(sorted(items), start=1):
                rows[row][1 if side == 0 else 3] = f"{prefix}{number}"
        return [Cable(a, pa, b, pb, self.port_gbps(link), float(self.topo.link_latency_ns[link]),
                      self.topo.link_ids[link]) for a, pa, b, pb, link in rows]

    def first_leaves(self) -> dict[str, str]:
        """Host -> the leaf its first compute NIC (lowest rail, then id) is cabled to (one pass)."""
        best: dict[str, tuple] = {}
        for host, nic, switch, _ in self.server_links:
            if self.tier[switch] != 0:
                continue
            attrs = self.topo.node_attrs[self.topo.node_index[nic]]
            key = (attrs.get("role", "compute") != "compute", attrs.get("rail", 0), natural_key(nic))
            if host not in best or key < best[host][0]:
                best[host] = (key, switch)
        return {host: switch for host, (_, switch) in best.items()}

    def gpus_by_group(self) -> dict[str, list[int]]:
        """Host group id, and NVLink domain id, -> node indices of the GPUs inside (one pass)."""
        topo, out = self.topo, {}
        domain_of = {h: d for d, hosts in self.domains.items() for h in hosts}
        for i, kind in enumerate(topo.node_kind):
            host = topo.node_host[i]
            if kind != "gpu" or host is None:
                continue
            out.setdefault(host, []).append(i)
            if host in domain_of:
                out.setdefault(domain_of[host], []).append(i)
        return out


def _raise_if(problems: list, message: str) -> None:
    if problems:
        raise InvalidTopology(message, problems[:MAX_EXPORT_PROBLEMS])
