"""Export one host of a document as NCCL topology XML (``NCCL_TOPO_FILE`` format).

The output follows what NCCL's own reader accepts (``src/graph/xml.cc``): a ``<system
version="1">`` root, no XML declaration, one element per line, double-quoted attribute values
without entities, at most 16 attributes an element. Structure as in a ``NCCL_TOPO_DUMP_FILE``:

- one ``<cpu numaid affinity arch vendor familyid modelid>`` per socket node; vendor/family/model
  are chosen so NCCL picks the same inter-socket figure (Skylake/SPR/EMR UPI, Zen 2-5 xGMI);
- ``<pci class="0x060400">`` per PCIe switch (nested), ``<pci class="0x030200"><gpu dev sm rank
  gdr><nvlink target count tclass/></gpu></pci>`` per GPU, ``<pci class="0x020000"><nic><net
  name dev speed(Mb/s) port guid maxconn gdr/></nic></pci>`` per NIC, ``class="0x010802"`` per NVMe;
- ``link_speed``/``link_width`` strings NCCL parses (``"16.0 GT/s PCIe"``, ``"16"``);
- bus ids are made up, unique (``0000:BB:00.0``); NVSwitches get bus ids only as nvlink targets
  (``tclass="0x068000"``), as in real dumps.
- AMD GPUs (PCI vendor ``0x1002``: MI300X, MI325X) are written the way RCCL writes them (its
  8 x MI300X model ROCm/rccl ``tools/topo_expl/models/topo_8p_940.xml``): ``<pci
  class="0x120000">`` (processing accelerator), ``<gpu dev sm gcn arch rank gdr>`` and one ``<xgmi
  target count tclass="0x120000"/>`` per Infinity Fabric peer, listed on both GPUs; a host with
  AMD GPUs gets ``<system version="2">``, the version RCCL's reader expects
  (ROCm/rccl ``src/graph/xml.h``: ``NCCL_TOPO_XML_VERSION 2``; NCCL's is 1).

Fabricscope extension: when a socket has several root complexes, the top-level ``<pci>``
elements carry ``host_bridge="k"`` (NCCL ignores unknown attributes; our importer rebuilds the
root complexes from it, so ``NODE`` relations survive a round trip). Memory nodes are not
exported (NCCL has no element for them).
"""
from __future__ import annotations

from designer.engine.catalog import TECHS
from designer.engine.errors import InvalidTopology, Problem
from designer.engine.io.pci_ids import device_for_model, family_of, parse_id

__all__ = ["export_nccl_xml", "AMD_GPU_ATTRS", "AMD_GPU_CLASS", "CPU_IDS_BY_TECH", "SM_BY_MODEL"]

#: Inter-socket tech -> (vendor, familyid, modelid) NCCL maps back to the same figure.
CPU_IDS_BY_TECH = {
    "upi-skylake": ("GenuineIntel", 6, 85), "upi-spr": ("GenuineIntel", 6, 143),
    "upi": ("GenuineIntel", 6, 143), "upi-emr": ("GenuineIntel", 6, 207),
    "xgmi-zen2": ("AuthenticAMD", 23, 49), "xgmi-zen3": ("AuthenticAMD", 25, 1),
    "xgmi-zen4": ("AuthenticAMD", 25, 17), "xgmi": ("AuthenticAMD", 25, 17),
    "xgmi-zen5": ("AuthenticAMD", 26, 2),
}
#: AMD GPU family -> (gcn, sm, arch) as RCCL writes them for gfx942 (ROCm/rccl
#: tools/topo_expl/models/topo_8p_940.xml: ``sm="304" gcn="gfx942" arch="38911"``); the MI325X is
#: the same gfx942 part with the same 304 compute units.
AMD_GPU_ATTRS = {"MI300X": ("gfx942", 304, 38911), "MI325X": ("gfx942", 304, 38911)}
#: PCI class of an AMD Instinct GPU (processing accelerator), also the ``tclass`` of its xGMI peers.
AMD_GPU_CLASS = "0x120000"
#: GPU model prefix -> compute capability written as ``sm``.
SM_BY_MODEL = (("B300", 103), ("B200", 100), ("GB200", 100), ("H100", 90), ("H200", 90),
               ("H800", 90), ("GH200", 90), ("A100", 80), ("A800", 80), ("A10", 86), ("A40", 86),
               ("L40", 89), ("L4", 89), ("V100", 70), ("T4", 75), ("P100", 60))
_GTS = {1: "2.5 GT/s PCIe", 2: "5.0 GT/s PCIe", 3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe",
        5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}
_PCIE_KINDS = frozenset({"pcie_switch", "gpu", "nic", "nvme"})


def _pci_id(attrs: dict, kind: str) -> str:
    """` vendor="0x10de" device="0x2335"` for a node whose model the PCI id table knows (so an
    H200 stays an H200: its ``sm`` is the H100's), else the vendor alone for GPUs, as before."""
    vendor, _, device = str(attrs.get("pci_id") or "").partition(":")
    if not (parse_id(vendor) and parse_id(device)):
        known = device_for_model(attrs.get("model"), kind)
        vendor, device = (known.vendor, known.device) if known else ("10de" if kind == "gpu" else "", "")
    out = f' vendor="0x{parse_id(vendor)}"' if parse_id(vendor) else ""
    return out + (f' device="0x{parse_id(device)}"' if parse_id(device) else "")


def _is_amd_gpu(attrs: dict) -> bool:
    """Whether a GPU is AMD's: its PCI vendor (``attrs.pci_id`` or the model's id), or a ``gcn``."""
    vendor = str(attrs.get("pci_id") or "").partition(":")[0]
    if not parse_id(vendor):
        known = device_for_model(attrs.get("model"), "gpu")
        vendor = known.vendor if known else ""
    return parse_id(vendor) == "1002" or bool(attrs.get("gcn"))


class _Host:
    """The host's nodes and links as adjacency over node ids."""

    def __init__(self, topo, host: str):
        self.topo = topo
        self.members = set(topo.nodes_of_host(host))
        self.adj: dict[int, list[tuple[int, int]]] = {n: [] for n in self.members}
        for n in self.members:
            self.adj[n] = [(p, l) for p, l in topo.adjacency[n] if p in self.members]

    def kind(self, n: int) -> str:
        return self.topo.node_kind[n]

    def attrs(self, n: int) -> dict:
        return self.topo.node_attrs[n]

    def tech(self, link: int):
        return TECHS.get(self.topo.link_tech[link] or "")


def _sockets(h: _Host) -> list[int]:
    cpus = sorted((n for n in h.members if h.kind(n) == "cpu"), key=lambda n: n)
    sockets = [n for n in cpus if h.attrs(n).get("role", "socket") != "root_complex"]
    return sockets or cpus


def _children(h: _Host, sockets: list[int]) -> dict[int, list[tuple[int, int]]]:
    """PCIe tree: node -> [(child, link)], by breadth-first search down from the sockets."""
    seen = set(sockets)
    tree: dict[int, list[tuple[int, int]]] = {}
    frontier = list(sockets)
    while frontier:
        nxt = []
        for u in frontier:
            for v, link in sorted(h.adj[u]):
                if v in seen:
                    continue
                tech = h.tech(link)
                if tech is not None and tech.family in ("nvlink", "inter_socket", "memory"):
                    continue
                is_rc = h.kind(v) == "cpu" and h.attrs(v).get("role") == "root_complex"
                if h.kind(v) in _PCIE_KINDS or is_rc:
                    seen.add(v)
                    tree.setdefault(u, []).append((v, link))
                    if h.kind(v) in ("pcie_switch", "cpu"):
                        nxt.append(v)
        frontier = nxt
    return tree


def _pcie_attrs(h: _Host, link: int | None) -> str:
    tech = h.tech(link) if link is not None else None
    if tech is not None and tech.family == "pcie":
        gen, width = int(tech.generation), tech.width
    else:   # no PCIe tech (root complex fabric, explicit capacity): NCCL's Gen4 x16 reading
        gen, width = 4, 16
    return f'link_speed="{_GTS.get(gen, _GTS[4])}" link_width="{width}"'


def _safe(value) -> str:
    return "".join(c for c in str(value) if c not in '"<>&\n\r')[:200]


class _Emitter:
    def __init__(self, h: _Host, tree: dict):
        self.h, self.tree = h, tree
        self.lines: list[str] = []
        self.bus = 0
        self.busid: dict[int, str] = {}
        gpus = sorted((n for n in h.members if h.kind(n) == "gpu"),
                      key=lambda n: (h.attrs(n).get("index", n), n))
        self.gpu_dev = {n: i for i, n in enumerate(gpus)}
        nics = sorted(n for n in h.members if h.kind(n) == "nic")
        self.nic_dev = {n: i for i, n in enumerate(nics)}
        for n in sorted(h.members):     # bus ids first: nvlink targets may come later in the file
            if h.kind(n) in _PCIE_KINDS or h.kind(n) == "nvswitch":
                self.busid[n] = self.next_busid()

    def next_busid(self) -> str:
        self.bus += 1
        return f"{self.bus >> 8:04x}:{self.bus & 0xff:02x}:00.0"

    def emit(self, node: int, link: int, indent: int, extra: str = "") -> None:
        h, pad = self.h, " " * indent
        kind, busid = h.kind(node), self.busid.get(node)
        if kind == "cpu":   # a root complex: NCCL has no element for it, its children go up
            for child, clink in self.tree.get(node, []):
                self.emit(child, clink, indent, extra)
            return
        speed = _pcie_attrs(h, link)
        if kind == "pcie_switch":
            self.lines.append(f'{pad}<pci busid="{busid}" class="0x060400"{extra} {speed}>')
            for child, clink in self.tree.get(node, []):
                self.emit(child, clink, indent + 2)
            self.lines.append(f"{pad}</pci>")
        elif kind == "gpu":
            cls = AMD_GPU_CLASS if _is_amd_gpu(h.attrs(node)) else "0x030200"
            self.lines.append(f'{pad}<pci busid="{busid}" class="{cls}"{_pci_id(h.attrs(node), "gpu")}{extra} {speed}>')
            self.gpu(node, indent + 2)
            self.lines.append(f"{pad}</pci>")
        elif kind == "nic":
            self.lines.append(f'{pad}<pci busid="{busid}" class="0x020000"{_pci_id(h.attrs(node), "nic")}{extra} {speed}>')
            self.nic(node, indent + 2)
            self.lines.append(f"{pad}</pci>")
        elif kind == "nvme":
            self.lines.append(f'{pad}<pci busid="{busid}" class="0x010802"{extra} {speed}/>')

    def gpu(self, node: int, indent: int) -> None:
        h, pad = self.h, " " * indent
        attrs, dev = h.attrs(node), self.gpu_dev[node]
        if _is_amd_gpu(attrs):
            self.amd_gpu(node, indent)
            return
        model = str(attrs.get("model", ""))
        sm = attrs.get("sm") or next((v for p, v in SM_BY_MODEL if model.upper().startswith(p)), 80)
        self.lines.append(f'{pad}<gpu dev="{dev}" sm="{int(sm)}" rank="{dev}" gdr="1">')
        counts: dict[int, int] = {}
        for peer, link in h.adj[node]:
            if h.kind(peer) in ("gpu", "nvswitch", "cpu"):
                tech = h.tech(link)
                if tech is not None and tech.family == "nvlink":
                    counts[peer] = counts.get(peer, 0) + tech.width
        for peer, count in sorted(counts.items()):
            tclass = {"gpu": "0x030200", "nvswitch": "0x068000", "cpu": "0x068001"}[h.kind(peer)]
            target = self.busid.get(peer, self.busid.get(node))
            self.lines.append(f'{pad}  <nvlink target="{target}" count="{count}" tclass="{tclass}"/>')
        self.lines.append(f"{pad}</gpu>")

    def amd_gpu(self, node: int, indent: int) -> None:
        """RCCL's ``<gpu>`` of an AMD GPU with one ``<xgmi>`` per directly linked GPU peer."""
        h, pad = self.h, " " * indent
        attrs, dev = h.attrs(node), self.gpu_dev[node]
        gcn, sm, arch = AMD_GPU_ATTRS.get(family_of(attrs.get("model")), AMD_GPU_ATTRS["MI300X"])
        gcn, sm = _safe(attrs.get("gcn") or gcn), int(attrs.get("sm") or sm)
        self.lines.append(f'{pad}<gpu dev="{dev}" sm="{sm}" gcn="{gcn}" arch="{arch}" rank="{dev}" gdr="1">')
        for peer, count in sorted(self.xgmi_peers(node).items()):
            self.lines.append(f'{pad}  <xgmi target="{self.busid[peer]}" count="{count}" tclass="{AMD_GPU_CLASS}"/>')
        self.lines.append(f"{pad}</gpu>")

    def xgmi_peers(self, node: int) -> dict[int, int]:
        """GPU peer -> number of direct Infinity Fabric links (catalog family ``xgmi``, or a
        tech-less direct link between two AMD GPUs, as an imported non-gfx942 xGMI link is)."""
        h, counts = self.h, {}
        for peer, link in h.adj[node]:
            if h.kind(peer) != "gpu" or peer not in self.busid:
                continue
            tech = h.tech(link)
            if (tech is not None and tech.family == "xgmi") or (tech is None and _is_amd_gpu(h.attrs(peer))):
                counts[peer] = counts.get(peer, 0) + (tech.width if tech is not None else 1)
        return counts

    def nic(self, node: int, indent: int) -> None:
        attrs, dev, pad = self.h.attrs(node), self.nic_dev[node], " " * indent
        name = _safe(attrs.get("name") or f"mlx5_{dev}")
        mbps = int(round(float(attrs.get("port_gbps") or 100.0) * 1000))
        guid = f"0x{0xfab0000000000000 + dev:x}"
        self.lines.append(f"{pad}<nic>")
        self.lines.append(f'{pad}  <net name="{name}" dev="{dev}" speed="{mbps}" port="1" '
                          f'latency="0.000000" guid="{guid}" maxconn="131072" gdr="1"/>')
        self.lines.append(f"{pad}</nic>")


def _cpu_ids(h: _Host, socket: int) -> tuple[str, int, int]:
    attrs = h.attrs(socket)
    if attrs.get("vendor") and attrs.get("familyid") is not None and attrs.get("modelid") is not None:
        return str(attrs["vendor"]), int(attrs["familyid"]), int(attrs["modelid"])
    for peer, link in h.adj[socket]:
        tech = h.topo.link_tech[link]
        if tech in CPU_IDS_BY_TECH:
            return CPU_IDS_BY_TECH[tech]
    model = str(attrs.get("model", "")).upper()
    if "EPYC" in model or "AMD" in model:
        return ("AuthenticAMD", 25, 1)
    return ("GenuineIntel", 6, 143)


def export_nccl_xml(doc: dict, host_id: str) -> str:
    """NCCL topology XML of host ``host_id`` of ``doc``.

    Parameters
    ----------
    doc : dict
        A topology document (validated here).
    host_id : str
        Id of a ``host`` group.

    Returns
    -------
    str
        XML text NCCL reads with ``NCCL_TOPO_FILE``.

    Raises
    ------
    InvalidTopology
        Invalid document, no such host, or a host without a CPU node.
    """
    from designer.engine.model.topology import Topology

    topo = doc if isinstance(doc, Topology) else Topology.from_document(doc)
    if topo.groups.get(host_id, {}).get("kind") != "host":
        raise InvalidTopology(f'no host "{host_id}"', [Problem("host", f'no host group "{host_id}"')])
    h = _Host(topo, host_id)
    sockets = _sockets(h)
    if not sockets:
        raise InvalidTopology(f'host "{host_id}" has no cpu node: NCCL XML needs one',
                              [Problem("host", "no cpu node")])
    tree = _children(h, sockets)
    em = _Emitter(h, tree)
    amd = any(_is_amd_gpu(h.attrs(n)) for n in h.members if h.kind(n) == "gpu")
    version = 2 if amd else 1      # RCCL's reader wants 2, NCCL's 1
    em.lines.append(f'<system version="{version}" name="{_safe(topo.name or host_id)}">')
    for k, socket in enumerate(sockets):
        attrs = h.attrs(socket)
        vendor, family, model = _cpu_ids(h, socket)
        numa = attrs.get("numa", attrs.get("socket", k))
        affinity = f' affinity="{_safe(attrs["affinity"])}"' if attrs.get("affinity") else ""
        em.lines.append(f'  <cpu numaid="{int(numa)}"{affinity} arch="x86_64" vendor="{vendor}" '
                        f'familyid="{family}" modelid="{model}">')
        children = tree.get(socket, [])
        complexes = [c for c, _ in children if h.kind(c) == "cpu"]
        for child, link in children:
            extra = ""
            if h.kind(child) == "cpu" and (len(complexes) > 1 or len(complexes) < len(children)):
                extra = f' host_bridge="{complexes.index(child)}"'
            em.emit(child, link, 4, extra)
        em.lines.append("  </cpu>")
    em.lines.append("</system>")
    return "\n".join(em.lines) + "\n"
