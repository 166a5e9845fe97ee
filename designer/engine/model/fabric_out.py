"""Where a fabric generator writes (``fabrics.py``): the cluster document, or only its plan.

- :class:`ClusterDoc` accumulates the document's groups, nodes and links (every host
  instantiated from its template) and the ports used per switch.
- :class:`ClusterTally` keeps the fabric part (switches, storage servers, switch links as one row
  per bundle to a group of switches) and only counts the hosts and their NIC ports per leaf: what
  ``bom.plan_bom`` needs for a bill of materials of a design too large to build.
"""
from __future__ import annotations

from designer.engine.catalog import TECHS
from designer.engine.document import FORMAT
from designer.engine.model.host_spec import instantiate

__all__ = ["ClusterDoc", "ClusterTally", "add_hosts"]


class ClusterDoc:
    """Accumulates groups, nodes and links of a cluster document, and ports used per switch."""

    def __init__(self, name: str) -> None:
        self.doc = {"format": FORMAT, "name": name, "groups": [], "nodes": [], "links": []}
        self.links = self.doc["links"]
        self.ports_used: dict[str, int] = {}
        self._counters: dict[str, int] = {}
        self.notes: list[str] = []

    def next_id(self, prefix: str) -> str:
        n = self._counters.get(prefix, 0)
        self._counters[prefix] = n + 1
        return f"{prefix}{n}"

    def switch(self, sid: str, role: str, group: str | None = None, **attrs) -> str:
        node = {"id": sid, "kind": "switch", "attrs": {"role": role, **attrs}}
        if group is not None:
            node["group"] = group
        self.doc["nodes"].append(node)
        return sid

    def link(self, a: str, b: str, tech: str) -> None:
        """One port at ``tech``'s catalog rate (host⇄leaf, storage⇄leaf)."""
        self.links.append({"id": f"{a}-{b}", "a": a, "b": b, "tech": tech})
        self.ports_used[b] = self.ports_used.get(b, 0) + 1

    def add_hosts(self, spec: dict, hosts: int, hpr: int) -> None:
        """Every host of ``spec`` instantiated, ``hpr`` per rack group."""
        doc = self.doc
        for r in range((hosts + hpr - 1) // hpr):
            doc["groups"].append({"id": f"rack{r}", "kind": "rack"})
        for h in range(hosts):
            frag = instantiate(spec, f"h{h}", f"rack{h // hpr}")
            doc["groups"] += frag["groups"]
            doc["nodes"] += frag["nodes"]
            doc["links"] += frag["links"]

    def bundle(self, lower: str, uppers: list[str], tech: str, ports: int, port_gbps: float) -> None:
        """:meth:`fabric_link` from ``lower`` to each of ``uppers``."""
        for upper in uppers:
            self.fabric_link(lower, upper, tech, ports, port_gbps)

    def result(self) -> dict:
        return self.doc

    def fabric_link(self, a: str, b: str, tech: str, ports: int, port_gbps: float) -> None:
        """A bundle of ``ports`` whole switch ports: capacity ``ports × port_gbps``."""
        link = {"id": f"{a}-{b}", "a": a, "b": b, "tech": tech, "bundle": ports}
        if ports != 1 or abs(TECHS[tech].effective_gbps - port_gbps) > 1e-9:
            link["capacity_gbps"] = ports * TECHS[tech].effective_gbps
            link["capacity_basis"] = "explicit"
        self.links.append(link)
        self.ports_used[a] = self.ports_used.get(a, 0) + ports
        self.ports_used[b] = self.ports_used.get(b, 0) + ports


class ClusterTally(ClusterDoc):
    """A :class:`ClusterDoc` that keeps the fabric and only counts the hosts and their NIC links."""

    def add_hosts(self, spec: dict, hosts: int, hpr: int) -> None:
        kinds = [spec.get("kind", "host")] + [g.get("kind") for g in spec.get("groups") or ()]
        self.per_host = {"nodes": len(spec["nodes"]), "links": len(spec["links"]),
                         "hosts": kinds.count("host"), "gpus": sum(n.get("kind") == "gpu" for n in spec["nodes"])}
        self.host_ports: dict[tuple[str, str], int] = {}
        self.fabric_links: list[tuple[str, list[str], str, int, float]] = []

    def bundle(self, lower: str, uppers: list[str], tech: str, ports: int, port_gbps: float) -> None:
        """The links of :meth:`ClusterDoc.bundle` kept as one row ``(lower, uppers, tech, ports,
        capacity_gbps of one link)``: 200,000 switch links at 100k GPUs are 3,000 rows."""
        self.fabric_links.append((lower, uppers, tech, ports, ports * TECHS[tech].effective_gbps))
        used = self.ports_used
        used[lower] = used.get(lower, 0) + ports * len(uppers)
        for upper in uppers:
            used[upper] = used.get(upper, 0) + ports

    def fabric_link(self, a: str, b: str, tech: str, ports: int, port_gbps: float) -> None:
        self.bundle(a, [b], tech, ports, port_gbps)

    def link(self, a: str, b: str, tech: str) -> None:
        if "/" not in a:  # a storage server: kept, as in the document
            super().link(a, b, tech)
            return
        self.host_ports_add(b, tech, 1)

    def host_ports_add(self, switch: str, tech: str, ports: int) -> None:
        """``ports`` host NIC ports of ``tech`` on ``switch``, one port each."""
        key = (switch, tech)
        self.host_ports[key] = self.host_ports.get(key, 0) + ports
        self.ports_used[switch] = self.ports_used.get(switch, 0) + ports

    def result(self) -> dict:
        return {"document": self.doc, "host_ports": self.host_ports, "per_host": self.per_host,
                "fabric_links": self.fabric_links}


def add_hosts(out: ClusterDoc, spec: dict, hosts: int, hpr: int) -> None:
    """``out.add_hosts``: instantiate the hosts (a document) or count them (a plan)."""
    out.add_hosts(spec, hosts, hpr)
