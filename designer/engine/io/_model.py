"""The importers' common intermediate form of one server, and its conversion to a document.

Every importer (NCCL XML, ``nvidia-smi topo -m``, hwloc XML) first builds a :class:`HostModel`:
NUMA domains holding host bridges, PCIe switches and devices as a tree, plus NVLinks. One
function, :func:`to_document`, then turns that tree into ``fabricscope.topology/1`` nodes and
links with the same conventions as ``templates.py``, so ``pathclass.topo_matrix`` of an
imported host reads like the source.

Modelling conventions (shared with the templates)
-------------------------------------------------
- One ``cpu`` node with ``attrs.role = "socket"`` per NUMA domain (``<host>/cpu<k>``; attrs
  ``socket``, ``numa``). All socket nodes of a host are joined pairwise by the inter-socket link
  (NCCL connects every pair of its CPU nodes the same way), so crossing domains is ``SYS``.
- A **host bridge** (a CPU root complex / IIO stack) is a ``cpu`` node with
  ``attrs.role = "root_complex"`` (``<host>/rc<k>``) linked to its socket node with the
  templates' on-die fabric capacity. A source without host bridges (NCCL) hangs devices off the
  socket node itself, which is then its own host bridge (as the commodity template does). One
  cpu node on a path is ``PHB``, several of one socket ``NODE``, two sockets ``SYS``.
- ``attrs.socket`` is the NUMA domain (nvidia-smi and NCCL call a path between NUMA domains
  ``SYS`` even inside one package, e.g. EPYC NPS4); hwloc's package number goes to
  ``attrs.package``.
- A PCIe switch is a ``pcie_switch`` node (``<host>/pcie<k>``); nesting is kept, so one switch
  between two devices is ``PIX`` and several are ``PXB``.
- NVLinks: ``gpu``–``gpu`` links, or ``gpu``–``nvswitch`` links (one ``nvswitch`` node per switch
  chip seen), tech ``nvlink<gen>x<count>``.
- Link techs come from the catalog names (``pcie4x16``, ``nvlink3x12``, ``upi-spr``); a link the
  catalog cannot name (PCIe Gen1/2, x32, NVLink 1/2, Broadwell QPI) gets no tech and an explicit
  ``capacity_gbps`` computed the same way (NCCL's effective figures).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from designer.engine.model.host_spec import SOCKET_FABRIC_GBPS, SOCKET_FABRIC_LATENCY_NS

__all__ = ["Device", "Bridge", "Numa", "NvLink", "HostModel", "to_document", "pcie_tech",
           "pcie_capacity_gbps", "nvlink_capacity_gbps", "INTERSOCKET", "cpu_family", "walk_devices"]

# Effective PCIe figures as NCCL models them: 12 GB/s per Gen3 x16, doubling per generation
# (catalog.py uses the same); Gen1/Gen2 follow NCCL's per-lane table (15 and 30 x 100 Mb/s).
_PCIE_X16_EFFECTIVE_GBPS = {1: 30.0, 2: 60.0, 3: 96.0, 4: 192.0, 5: 384.0, 6: 768.0}
# Effective NVLink per link, Gb/s (NCCL SM60 18, SM70 20, SM80 20, SM90 20.6, SM100 40.1 GB/s).
_NVLINK_EFFECTIVE_GBPS = {1: 144.0, 2: 160.0, 3: 160.0, 4: 164.8, 5: 320.8}

# CPU family -> (catalog tech or None, effective Gb/s per direction as NCCL models it: topo.h
# BDW_QPI_BW 6, SKL_QPI_BW 10, SRP_QPI_BW 22, ERP_QPI_BW 40, AMD_ZEN12 16, AMD_ZEN34 24,
# AMD_ZEN5 32, P9_BW 32, ARM_BW 6, ZPI_BW 6 GB/s).
INTERSOCKET = {
    "intel-bdw": (None, 48.0), "intel-skl": ("upi-skylake", 80.0), "intel-spr": ("upi-spr", 176.0),
    "intel-emr": ("upi-emr", 320.0), "amd-zen12": ("xgmi-zen2", 128.0),
    "amd-zen34": ("xgmi-zen3", 192.0), "amd-zen5": ("xgmi-zen5", 256.0),
    "power": (None, 256.0), "arm": (None, 48.0), "zhaoxin": (None, 48.0),
    "unknown": ("upi-skylake", 80.0),
}


def cpu_family(arch: str | None, vendor: str | None, family: int | None, model: int | None) -> str:
    """Key of :data:`INTERSOCKET` for a CPU, with NCCL's vendor/family/model rules."""
    arch = (arch or "").lower()
    if arch.startswith("ppc"):
        return "power"
    if arch in ("arm64", "aarch64"):
        return "arm"
    vendor = (vendor or "").strip()
    if vendor == "GenuineIntel" and family == 6 and model is not None:
        if model >= 0xCF or model in (0xAD, 0xAE, 0xAF):
            return "intel-emr"
        return "intel-spr" if model >= 0x8F else "intel-skl" if model >= 0x55 else "intel-bdw"
    if vendor == "GenuineIntel":
        return "intel-bdw"
    if vendor == "AuthenticAMD":
        return {26: "amd-zen5", 0xBF: "amd-zen5", 25: "amd-zen34", 0xAF: "amd-zen34"}.get(family, "amd-zen12")
    if vendor in ("CentaurHauls", "Shanghai"):
        return "zhaoxin"
    return "unknown"


@dataclass
class Device:
    """An endpoint under a bridge or a NUMA domain: ``gpu``, ``nic`` or ``nvme``."""

    kind: str
    key: str                       # busid or OS name: how the source refers to it
    attrs: dict = field(default_factory=dict)
    gen: int = 4                   # PCIe link to the parent
    width: int = 16
    capacity_gbps: float | None = None   # explicit capacity of that link (hwloc speeds)
    order: tuple = ()              # numbering key within its kind (NCCL dev, cuda index)


@dataclass
class Bridge:
    """A host bridge (``role="root_complex"``) or a PCIe switch (``role="switch"``)."""

    role: str
    key: str
    children: list = field(default_factory=list)   # Bridge | Device
    gen: int = 4
    width: int = 16
    capacity_gbps: float | None = None
    attrs: dict = field(default_factory=dict)


@dataclass
class Numa:
    """One NUMA domain (a ``cpu`` socket node). ``children``: root complexes, or bare switches and
    devices, which :func:`to_document` puts under one implicit root complex."""

    numa: int
    socket: int
    family: str = "unknown"        # key of INTERSOCKET
    attrs: dict = field(default_factory=dict)
    children: list = field(default_factory=list)


@dataclass
class NvLink:
    """``count`` NVLinks from GPU ``a`` to GPU, NVSwitch or CPU ``b`` (keys), generation ``gen``."""

    a: str
    b: str
    count: int
    gen: int = 3


@dataclass
class HostModel:
    numas: list[Numa] = field(default_factory=list)
    nvlinks: list[NvLink] = field(default_factory=list)
    nvswitches: list[str] = field(default_factory=list)   # keys
    warnings: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


def pcie_tech(gen: int, width: int) -> str | None:
    """Catalog name of a PCIe link (``pcie4x16``), None when the catalog has no such entry."""
    return f"pcie{gen}x{width}" if 3 <= gen <= 6 and width in (1, 2, 4, 8, 16) else None


def pcie_capacity_gbps(gen: int, width: int) -> float:
    """Effective PCIe capacity per direction, Gb/s (NCCL's model, catalog.py's figures)."""
    return round(_PCIE_X16_EFFECTIVE_GBPS.get(gen, 96.0) * width / 16, 3)


def nvlink_capacity_gbps(gen: int, count: int) -> float:
    return round(_NVLINK_EFFECTIVE_GBPS.get(gen, 160.0) * count, 3)


# ---------------------------------------------------------------------------------- document
class _Writer:
    """Accumulates nodes and links, numbering ids per stem (``gpu0``, ``pcie3``)."""

    def __init__(self, host: str):
        self.host = host
        self.nodes: list[dict] = []
        self.links: list[dict] = []
        self.count: dict[str, int] = {}
        self.by_key: dict[str, str] = {}
        self.link_ids: set[str] = set()

    def node(self, kind: str, stem: str, attrs: dict, key: str | None = None) -> str:
        i = self.count.get(stem, 0)
        self.count[stem] = i + 1
        nid = f"{self.host}/{stem}{i}"
        self.nodes.append({"id": nid, "kind": kind, "group": self.host, "attrs": attrs})
        if key is not None:
            self.by_key[key] = nid
        return nid

    def link(self, a: str, b: str, tech: str | None, capacity_gbps: float | None,
             latency_ns: float | None = None) -> None:
        base = f"{a}-{b.rsplit('/', 1)[-1]}"
        lid, n = base, 1
        while lid in self.link_ids:
            lid, n = f"{base}-{n}", n + 1
        self.link_ids.add(lid)
        link = {"id": lid, "a": a, "b": b}
        if tech is not None:
            link["tech"] = tech
        if capacity_gbps is not None or tech is None:
            link["capacity_gbps"] = float(capacity_gbps or 0.0)
        if latency_ns is not None:
            link["latency_ns"] = float(latency_ns)
        self.links.append(link)


def to_document(model: HostModel, *, host_id: str = "h0", name: str | None = None,
                ids: dict | None = None) -> dict:
    """Turn a :class:`HostModel` into a ``fabricscope.topology/1`` document with one host group.

    Parameters
    ----------
    model : HostModel
    host_id : str
        Id of the host group; node ids are ``<host_id>/gpu0`` and so on.
    name : str, optional
        Document name (default: ``host_id``).
    ids : dict, optional
        Filled with source key (bus id, ``GPU0``) -> node id.

    Returns
    -------
    dict
        The document (links carry a catalog tech, or an explicit ``capacity_gbps`` in Gb/s).
    """
    w = _Writer(host_id)
    stems = _number_devices(model)
    sockets = []
    for numa in model.numas:
        attrs = {"role": "socket", "socket": numa.socket, "numa": numa.numa, **numa.attrs}
        sockets.append(w.node("cpu", "cpu", attrs, key=f"numa:{numa.numa}"))
    for numa, cpu in zip(model.numas, sockets):
        _write_numa(w, numa, cpu, stems)
    _write_intersocket(w, model, sockets)
    _write_nvlinks(w, model)
    w.nodes.sort(key=_node_order)
    if ids is not None:
        ids.update(w.by_key)
    return {"format": "fabricscope.topology/1", "name": name or host_id,
            "groups": [{"id": host_id, "kind": "host"}], "nodes": w.nodes, "links": w.links}


_STEM_ORDER = {"cpu": 0, "rc": 1, "pcie": 2, "gpu": 3, "nic": 4, "nvme": 5, "nvswitch": 6}


def _node_order(node: dict) -> tuple:
    """Documents list nodes by kind then number, so NIC<i> of ``topo_matrix`` is ``nic<i>``."""
    local = node["id"].rsplit("/", 1)[-1]
    m = re.match(r"^([a-z]+)(\d+)$", local)
    return (_STEM_ORDER.get(m.group(1), 9), int(m.group(2))) if m else (9, 0)


def walk_devices(items) -> list[Device]:
    """All devices below ``items`` (bridges and devices), depth first."""
    found = []
    for item in items:
        if isinstance(item, Bridge):
            found.extend(walk_devices(item.children))
        else:
            found.append(item)
    return found


def _number_devices(model: HostModel) -> dict[int, str]:
    """id(device) -> id stem, numbered per kind by the source's own index, then tree order."""
    found = [d for numa in model.numas for d in walk_devices(numa.children)]
    stems: dict[int, str] = {}
    for kind in ("gpu", "nic", "nvme"):
        of_kind = sorted((d for d in found if d.kind == kind), key=lambda d: d.order)
        for i, d in enumerate(of_kind):
            stems[id(d)] = f"{kind}{i}"
            if kind == "gpu":
                d.attrs["index"] = i
            if kind == "nic" and d.attrs.get("role", "compute") == "compute":
                d.attrs.setdefault("rail", sum(1 for e in of_kind[:i] if e.attrs.get("role", "compute") == "compute"))
    return stems


def _write_numa(w: _Writer, numa: Numa, socket: str, stems: dict[int, str]) -> None:
    """Explicit root complexes become ``rc<k>`` nodes; anything else hangs off the socket node,
    which then is its own host bridge (as in the commodity template). A lone root complex is
    folded into the socket node: one host bridge per NUMA domain says nothing more."""
    children = numa.children
    if len(children) == 1 and isinstance(children[0], Bridge) and children[0].role == "root_complex":
        children = children[0].children
    for child in children:
        if isinstance(child, Bridge) and child.role == "root_complex":
            attrs = {"role": "root_complex", "socket": numa.socket, **child.attrs}
            rc_id = w.node("cpu", "rc", attrs, key=child.key)
            w.link(rc_id, socket, None, SOCKET_FABRIC_GBPS, SOCKET_FABRIC_LATENCY_NS)
            for item in child.children:
                _write_child(w, item, rc_id, numa, stems)
        else:
            _write_child(w, child, socket, numa, stems)


def _capacity(item) -> float:
    if item.capacity_gbps is not None:
        return item.capacity_gbps
    return pcie_capacity_gbps(item.gen, item.width)


def _write_child(w: _Writer, item, parent: str, numa: Numa, stems: dict[int, str]) -> None:
    tech = pcie_tech(item.gen, item.width)
    capacity = round(item.capacity_gbps, 3) if item.capacity_gbps is not None else (
        None if tech else pcie_capacity_gbps(item.gen, item.width))
    if isinstance(item, Bridge):
        nid = w.node("pcie_switch", "pcie", {"socket": numa.socket, **item.attrs}, key=item.key)
        w.link(nid, parent, tech, capacity)
        for child in item.children:
            _write_child(w, child, nid, numa, stems)
        return
    attrs = dict(item.attrs)
    if item.kind in ("gpu", "nic", "nvme"):
        attrs.setdefault("socket", numa.socket)
    nid = f"{w.host}/{stems[id(item)]}"
    w.nodes.append({"id": nid, "kind": item.kind, "group": w.host, "attrs": attrs})
    w.by_key[item.key] = nid
    w.link(nid, parent, tech, capacity)


def _write_intersocket(w: _Writer, model: HostModel, sockets: list[str]) -> None:
    for i in range(len(sockets)):
        for j in range(i + 1, len(sockets)):
            tech, gbps = INTERSOCKET.get(model.numas[i].family, INTERSOCKET["unknown"])
            w.link(sockets[i], sockets[j], tech, None if tech else gbps)


def _write_nvlinks(w: _Writer, model: HostModel) -> None:
    for k, key in enumerate(model.nvswitches):
        w.node("nvswitch", "nvswitch", {"index": k}, key=key)
    for nv in model.nvlinks:
        a, b = w.by_key.get(nv.a), w.by_key.get(nv.b)
        if a is None or b is None:
            model.warn(f"NVLink {nv.a} -> {nv.b} skipped: endpoint not in the topology")
            continue
        tech = f"nvlink{nv.gen}x{nv.count}" if 3 <= nv.gen <= 5 and 1 <= nv.count <= 18 else None
        w.link(a, b, tech, None if tech else nvlink_capacity_gbps(nv.gen, nv.count))
