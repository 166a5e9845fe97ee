"""The host-template spec format, ``fabricscope.host-template/1``, and its instances.

A spec is *host-local*: nodes and links with local ids (``gpu0``, ``pcie3``, ``gpu0-pcie0``).
:class:`SpecBuilder` writes one (the built-in server and rack templates are written with it);
:func:`instantiate` makes a document fragment of one host from it, ids ``<host>/<local>``, nodes
in a ``host`` group (a rack-scale spec: its own top-group kind and sub-groups).
"""
from __future__ import annotations

__all__ = ["TEMPLATE_FORMAT", "SOCKET_FABRIC_GBPS", "SOCKET_FABRIC_LATENCY_NS", "SpecBuilder", "instantiate"]

TEMPLATE_FORMAT = "fabricscope.host-template/1"
# On-die fabric between a root complex and its socket: AMD quotes ~>1 TB/s Infinity Fabric
# bisection per socket; kept well above any PCIe x16 so it never shows as a false bottleneck.
SOCKET_FABRIC_GBPS = 4096.0
SOCKET_FABRIC_LATENCY_NS = 50.0


class SpecBuilder:
    """Accumulates a host-local template spec."""

    def __init__(self, name: str, description: str) -> None:
        self.spec = {"format": TEMPLATE_FORMAT, "name": name, "description": description,
                     "nodes": [], "links": []}

    def node(self, local: str, kind: str, capacity_gbps: float | None = None, **attrs) -> str:
        node = {"local": local, "kind": kind, "attrs": attrs}
        if capacity_gbps is not None:
            node["capacity_gbps"] = float(capacity_gbps)
        self.spec["nodes"].append(node)
        return local

    def link(self, a: str, b: str, tech: str | None, capacity_gbps: float | None = None,
             latency_ns: float | None = None) -> None:
        link = {"local": f"{a}-{b}", "a": a, "b": b}
        if tech is not None:
            link["tech"] = tech
        if capacity_gbps is not None:
            link["capacity_gbps"] = float(capacity_gbps)
        if latency_ns is not None:
            link["latency_ns"] = float(latency_ns)
        self.spec["links"].append(link)

    def sockets(self, n: int, model: str, inter: str, memory: str, capacity_gbps=None) -> None:
        for s in range(n):
            self.node(f"cpu{s}", "cpu", capacity_gbps, socket=s, role="socket", model=model)
            self.node(f"mem{s}", "memory", None, socket=s)
            self.link(f"cpu{s}", f"mem{s}", memory)
        if n == 2:
            self.link("cpu0", "cpu1", inter)

    def root_complex(self, k: int, socket: int) -> str:
        rc = self.node(f"rc{k}", "cpu", None, socket=socket, role="root_complex")
        self.link(rc, f"cpu{socket}", None, SOCKET_FABRIC_GBPS, SOCKET_FABRIC_LATENCY_NS)
        return rc

    def switch_on_root_complex(self, k: int, socket: int, uplink_tech: str) -> str:
        """PCIe switch ``pcie{k}`` on its own root complex ``rc{k}`` of ``socket``."""
        self.root_complex(k, socket)
        sw = self.node(f"pcie{k}", "pcie_switch", None, level=1, socket=socket)
        self.link(sw, f"rc{k}", uplink_tech)
        return sw

    def gpu(self, i: int, model: str, socket: int) -> str:
        return self.node(f"gpu{i}", "gpu", None, model=model, index=i, socket=socket)

    def nic(self, i: int, *, rail: int | None, port_gbps: float, socket: int, model: str,
            role: str = "compute", ports: int = 1) -> str:
        attrs = {"port_gbps": float(port_gbps), "role": role, "socket": socket, "model": model}
        if rail is not None:
            attrs["rail"] = rail
        if ports != 1:
            attrs["ports"] = ports
        return self.node(f"nic{i}", "nic", None, **attrs)

    def nvswitches(self, links_per_switch: list[int], gen: int, gpus: int) -> None:
        for j, count in enumerate(links_per_switch):
            self.node(f"nvswitch{j}", "nvswitch", None, index=j)
            for i in range(gpus):
                self.link(f"gpu{i}", f"nvswitch{j}", f"nvlink{gen}x{count}")


def instantiate(spec: dict, host_id: str, parent: str | None) -> dict:
    """Document fragment (``groups``, ``nodes``, ``links``) of host ``host_id`` built from ``spec``
    (not validated), its top group under ``parent`` when given."""
    prefix = f"{host_id}/"
    # A rack-scale spec (racks.py) names its top group's kind and local sub-groups (trays).
    group = {"id": host_id, "kind": spec.get("kind", "host"), "template": spec.get("name", "")}
    if parent is not None:
        group["parent"] = parent
    groups = [group] + [{**{k: v for k, v in g.items() if k != "local"}, "id": prefix + str(g.get("local")),
                         "parent": host_id} for g in spec.get("groups") or ()]
    nodes = []
    for n in spec["nodes"]:
        node = {"id": prefix + str(n.get("local")), "kind": n.get("kind"),
                "group": prefix + str(n["group"]) if n.get("group") else host_id,
                "attrs": dict(n.get("attrs") or {})}
        if n.get("capacity_gbps") is not None:
            node["capacity_gbps"] = n["capacity_gbps"]
        nodes.append(node)
    links = []
    for l in spec["links"]:
        link = {"id": prefix + str(l.get("local") or f"{l.get('a')}-{l.get('b')}"),
                "a": prefix + str(l.get("a")), "b": prefix + str(l.get("b"))}
        for key in ("tech", "capacity_gbps", "capacity_basis", "latency_ns"):
            if l.get(key) is not None:
                link[key] = l[key]
        links.append(link)
    return {"groups": groups, "nodes": nodes, "links": links}
