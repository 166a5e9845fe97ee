"""Import an NCCL topology XML (``NCCL_TOPO_DUMP_FILE`` / ``NCCL_TOPO_FILE``) as one host.

The format (NCCL ``src/graph/xml.cc``, ``topo.cc``)::

    <system version="1">
      <cpu numaid="0" affinity="…" arch="x86_64" vendor="AuthenticAMD" familyid="23" modelid="49">
        <pci busid="0000:01:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">
          <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
            <gpu dev="0" sm="80" rank="0" gdr="1"><nvlink target="0000:c0:00.0" count="2" tclass="0x068000"/></gpu>
          </pci>
          <pci busid="0000:0c:00.0" class="0x020700" …><nic><net name="mlx5_0" dev="0" speed="200000" …/></nic></pci>
        </pci>
      </cpu>
    </system>

How it maps (see ``_model.py`` for the shared conventions):

- ``<cpu>`` is a NUMA domain → a socket ``cpu`` node; NCCL hangs devices straight off it, so they
  share one root complex (NCCL calls a path through the CPU ``PHB``); two ``<cpu>`` are ``SYS``.
  The inter-socket tech follows NCCL's vendor/family/model rules (Intel Skylake/SPR/EMR, AMD Zen).
- ``<pci class="0x0604…">`` → a PCIe switch (NCCL already folds a switch's upstream and downstream
  ports into one element), kept nested. ``link_speed``/``link_width`` → ``pcie<gen>x<width>``.
- ``<pci>`` with ``<gpu>`` (or class ``0x03…``) → ``gpu``; with ``<nic>`` (or class ``0x02…``) →
  ``nic`` (``<net speed>`` in Mb/s → ``port_gbps``); class ``0x0108…`` → ``nvme``.
- ``attrs.model``: from the ``<pci vendor device>`` id when ``pci_ids.py`` knows it (an H200 is
  ``device="0x2335"``), else from the GPU's ``sm`` (which cannot tell H100 from H200); the id is
  kept as ``attrs.pci_id`` and the ``pci.ids`` product name as ``attrs.product``.
- ``<nvlink tclass="0x068000">`` targets are NVSwitch chips: one ``nvswitch`` node per target bus
  id; other targets are GPUs (one link per pair) or, for ``0x068001``, the local CPU.
- RCCL dumps (``version="2"``, AMD GPUs with ``gcn="gfx942"``, class ``0x1200``): each
  ``<xgmi target count>`` is a direct ``gpu``–``gpu`` Infinity Fabric link (one per pair), tech
  ``xgmi-mi300``/``xgmi-mi325`` by the PCI id's model (``1002:74a1`` MI300X), as the
  ``amd-mi300x`` template has them.

Defaults (each one adds a line to the warnings, never an error): ``link_width`` missing/0 → 16
(as NCCL); ``link_speed`` missing/unknown → 8 GT/s (Gen3, NCCL's fallback); ``numaid`` missing or
-1 → the next free id; unknown CPU vendor/model → Skylake UPI figures; net ``speed`` missing or
≤0 → 10 Gb/s (NCCL's fallback); ``<gpu>`` without ``sm`` → model "unknown", NVLink3; nvlink
``count`` missing → 1; a GPU/NIC ``<pci>`` without its ``<gpu>``/``<nic>`` element (AWS-style
topology files) is still imported.
"""
from __future__ import annotations

import re

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io._model import (
    Bridge,
    Device,
    HostModel,
    Numa,
    NvLink,
    cpu_family,
)
from designer.engine.io.pci_ids import PciModel, family_of, lookup, parse_id
from designer.engine.io.rocm_smi import FabricHostModel, GpuLink, check_host_size, xgmi_tech
from designer.engine.io.safe_xml import parse_xml

__all__ = ["parse_nccl_xml", "GEN_BY_GTS", "GPU_MODEL_BY_SM", "DEFAULT_NET_GBPS"]

#: PCIe generation by transfer rate in GT/s (NCCL's kvDictPciGen keys).
GEN_BY_GTS = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}
#: GPU model name by CUDA compute capability (``sm``), for ``attrs.model``.
GPU_MODEL_BY_SM = {60: "P100", 70: "V100", 75: "T4", 80: "A100", 86: "A10", 89: "L40S",
                   90: "H100", 100: "B200", 103: "B300"}
#: Compute capability of a family the PCI id names, when the file has no ``sm`` (NVLink gen).
_SM_BY_FAMILY = {"A100": 80, "H100": 90, "H200": 90, "B100": 100, "B200": 100, "GB200": 100,
                 "B300": 103, "GB300": 103}
#: RCCL's effective xGMI rate per link by GPU architecture, GB/s per direction (ROCm/rccl
#: src/graph/topo.h: VEGA_XGMI_WIDTH 24, MI200_XGMI_WIDTH 36, GFX94X_XGMI_WIDTH 48) — used for
#: parts the catalog has no ``xgmi-*`` tech for; gfx942 (MI300X/MI325X) uses the catalog's.
_XGMI_GBYTES_BY_GCN = {"gfx906": 24.0, "gfx908": 24.0, "gfx90a": 36.0, "gfx942": 48.0, "gfx950": 48.0}
#: Port speed assumed when a ``<net>`` has no usable ``speed`` (NCCL uses 10000 Mb/s), Gb/s.
DEFAULT_NET_GBPS = 10.0
# Starts only where a run of digits starts: unanchored, "[0-9]+" retried from every digit of a long
# run was quadratic (100 kB of digits in a link_speed: minutes). Same matches otherwise.
_SPEED = re.compile(r"(?<![0-9])([0-9]+(?:\.[0-9]+)?)\s*GT/s")


def nvlink_gen(sm: int | None) -> int:
    if sm is None:
        return 3
    return 1 if sm < 70 else 2 if sm < 80 else 3 if sm < 90 else 4 if sm < 100 else 5


def _int(value: str | None, base: int = 0) -> int | None:
    if value is None or str(value).strip() == "":
        return None
    try:
        return int(str(value).strip(), base)
    except ValueError:
        return None


def _bcm_gen(el, level: int) -> int:
    """Broadcom PEX generation (4 or 5) of a switch NCCL flattens, else 0 (topo.cc getBcmGen)."""
    ids = [_int(el.get(k)) for k in ("vendor", "device", "subsystem_vendor", "subsystem_device")]
    if None in ids:
        return 0
    device = (ids[0] << 48) + (ids[1] << 32) + (ids[2] << 16) + ids[3]
    if device & 0xfffffffffffff000 == 0x1000c0101000a000:
        return 4
    if device & 0xfffffffffffff000 == (0x1000c03010000000 | level * 0x1000):
        return 5
    return 0


def _class(el) -> str:
    return (el.get("class") or "").lower()


class _Reader:
    def __init__(self, model: HostModel):
        self.model = model
        self.anon = 0
        self.gpu_keys: dict[str, str] = {}

    # ---------------------------------------------------------------- links
    def pcie_link(self, el, where: str, item) -> None:
        width = _int(el.get("link_width"))
        if not width:
            self.model.warn(f"{where}: link_width missing or 0, assumed x16 (as NCCL)")
            width = 16
        speed = el.get("link_speed")
        match = _SPEED.search(speed or "")
        gen = GEN_BY_GTS.get(float(match.group(1))) if match else None
        if gen is None:
            self.model.warn(f"{where}: link_speed {speed!r} unknown, assumed 8 GT/s (PCIe Gen3, "
                            "NCCL's fallback)")
            gen = 3
        item.gen, item.width = gen, width

    # ---------------------------------------------------------------- elements
    def busid(self, el) -> str:
        busid = (el.get("busid") or "").lower()
        if not busid:
            self.anon += 1
            busid = f"pci-anon-{self.anon}"
            self.model.warn(f"<pci> without busid: named {busid}")
        return busid

    # radon D: a parser, one branch per PCI class NCCL writes (NIC, GPU, bridge, NVMe, NVSwitch): kept flat.
    def pci(self, el, numa: Numa):
        busid = self.busid(el)
        where = f"pci {busid}"
        cls = _class(el)
        gpu_el, nic_el = el.find("gpu"), el.find("nic")
        children = [c for c in el if c.tag == "pci"]
        if nic_el is not None or (cls.startswith("0x02") and gpu_el is None):
            item = self.nic(el, nic_el, busid, numa)
        elif gpu_el is not None or cls.startswith("0x03"):
            item = self.gpu(gpu_el, busid, numa, el)
        elif cls.startswith("0x0604") or cls == "0x080100" or (not cls and children):
            item = Bridge("switch", busid, attrs={"busid": busid})
            gen = _bcm_gen(el, 0)
            for child in children:
                sub = self.pci(child, numa)
                if sub is None:
                    continue
                if gen and isinstance(sub, Bridge) and _bcm_gen(child, 1) == gen:
                    # NCCL flattens Broadcom PEX Gen4/Gen5 switches that show two levels.
                    self.model.warn(f"{where}: Broadcom Gen{gen} switch levels merged as NCCL does")
                    item.children.extend(sub.children)
                else:
                    item.children.append(sub)
        elif cls.startswith("0x0108"):
            item = Device("nvme", busid, {"busid": busid}, order=(busid,))
        elif cls.startswith("0x0680"):
            if busid not in self.model.nvswitches:
                self.model.nvswitches.append(busid)
            return None
        else:
            self.model.warn(f"{where}: class {cls or 'missing'} is not a bridge, GPU, NIC or NVMe "
                            "drive; skipped")
            return None
        self.pcie_link(el, where, item)
        return item

    def gpu(self, gpu_el, busid: str, numa: Numa, pci_el) -> Device:
        known = pci_model(pci_el, "gpu")
        if gpu_el is None:
            if known is None:
                self.model.warn(f"pci {busid}: GPU without a <gpu> element (model unknown)")
            gpu_el = {}
        dev, sm = _int(gpu_el.get("dev")), _int(gpu_el.get("sm"))
        if sm is None and gpu_el and known is None:
            self.model.warn(f"pci {busid}: GPU without sm, model unknown, NVLink3 assumed")
        attrs = {"model": GPU_MODEL_BY_SM.get(sm, f"sm{sm}" if sm else "unknown"), "busid": busid,
                 "socket": numa.socket}
        # The PCI id names the part (sm 90 is H100 and H200 alike): it wins over sm.
        attrs.update(_pci_attrs(pci_el, known))
        if sm is None and known is not None:
            sm = _SM_BY_FAMILY.get(known.model)
        for key in ("sm", "dev", "rank", "gdr"):
            value = _int(gpu_el.get(key))
            if value is not None:
                attrs[key] = value
        if hasattr(gpu_el, "findall"):
            for nv in gpu_el.findall("nvlink"):
                self.nvlink(nv, busid, sm)
            gcn = (gpu_el.get("gcn") or "").strip().lower()
            if gcn:
                attrs["gcn"] = gcn
            for x in gpu_el.findall("xgmi"):
                self.xgmi(x, busid, attrs["model"], gcn)
        return Device("gpu", busid, attrs, order=(dev if dev is not None else 1 << 30, busid))

    def xgmi(self, el, busid: str, model: str, gcn: str) -> None:
        """RCCL's ``<xgmi target count>``: a direct AMD GPU⇄GPU Infinity Fabric link (one per
        pair; RCCL lists it on both GPUs). MI300X/MI325X (gfx942) get the catalog ``xgmi-*``
        tech; other parts RCCL's per-link figure as an explicit capacity."""
        target = (el.get("target") or "").lower()
        count = _int(el.get("count")) or 1
        if not target or target == busid:     # to itself: a self-loop the document refuses
            self.model.warn(f"pci {busid}: xgmi {'to itself' if target else 'without target'} skipped")
            return
        pair = tuple(sorted((busid, target)))
        if pair in self.gpu_keys:
            return
        self.gpu_keys[pair] = busid
        if count == 1 and (gcn == "gfx942" or family_of(model) in ("MI300X", "MI325X")):
            self.model.gpu_links.append(GpuLink(busid, target, xgmi_tech(model)))
            return
        gbytes = _XGMI_GBYTES_BY_GCN.get(gcn, _XGMI_GBYTES_BY_GCN["gfx942"])
        if gcn not in _XGMI_GBYTES_BY_GCN:
            self.model.warn(f"pci {busid}: xgmi on {gcn or 'an unknown GPU'}: RCCL's gfx942 rate "
                            f"({gbytes:g} GB/s per link) assumed")
        self.model.gpu_links.append(GpuLink(busid, target, None, round(gbytes * 8.0 * count, 3)))

    def nvlink(self, nv, busid: str, sm: int | None) -> None:
        target, tclass = (nv.get("target") or "").lower(), (nv.get("tclass") or "").lower()
        count = _int(nv.get("count"))
        if not count:
            self.model.warn(f"pci {busid}: nvlink to {target or '?'} without count, assumed 1")
            count = 1
        if not target:
            self.model.warn(f"pci {busid}: nvlink without target skipped")
            return
        gen = nvlink_gen(sm)
        if tclass.startswith("0x0680") and tclass != "0x068001":
            if target not in self.model.nvswitches:
                self.model.nvswitches.append(target)
            self.model.nvlinks.append(NvLink(busid, target, count, gen))
        elif tclass == "0x068001":
            self.model.nvlinks.append(NvLink(busid, "cpu-of:" + busid, count, gen))
        else:   # GPU peer: NCCL lists the pair on both GPUs; keep one link per pair
            pair = tuple(sorted((busid, target)))
            if pair not in self.gpu_keys:
                self.gpu_keys[pair] = busid
                self.model.nvlinks.append(NvLink(busid, target, count, gen))

    def nic(self, el, nic_el, busid: str, numa: Numa) -> Device:
        nets = [] if nic_el is None else [n for n in nic_el if n.tag == "net"]
        if not nets:
            self.model.warn(f"pci {busid}: NIC without <net>: speed unknown, assumed "
                            f"{DEFAULT_NET_GBPS:g} Gb/s")
        first = nets[0] if nets else {}
        mbps = _int(first.get("speed"))
        if nets and (mbps is None or mbps <= 0):
            self.model.warn(f"pci {busid}: net {first.get('name', '?')} speed missing or <= 0, "
                            f"assumed {DEFAULT_NET_GBPS:g} Gb/s (NCCL's fallback)")
        gbps = mbps / 1000.0 if mbps and mbps > 0 else DEFAULT_NET_GBPS
        dev = _int(first.get("dev"))
        attrs = {"name": first.get("name") or busid, "busid": busid, "port_gbps": gbps,
                 "role": "compute", "rail": dev if dev is not None else 0, "socket": numa.socket}
        attrs.update(_pci_attrs(el, pci_model(el, "nic")))
        if len(nets) > 1:
            attrs["ports"] = [n.get("name") for n in nets]
        for key in ("gdr", "port", "maxconn"):
            value = _int(first.get(key))
            if value is not None:
                attrs[key] = value
        if first.get("guid"):
            attrs["guid"] = first.get("guid")
        return Device("nic", busid, attrs, order=(dev if dev is not None else 1 << 30, busid))

    def cpu(self, el, index: int, used: set) -> Numa:
        numa = _int(el.get("numaid"), 10)
        if numa is None or numa < 0 or numa in used:
            new = 0
            while new in used:
                new += 1
            self.model.warn(f"cpu #{index}: numaid {el.get('numaid')!r} missing, -1 or repeated; "
                            f"numbered {new}")
            numa = new
        used.add(numa)
        arch, vendor = el.get("arch"), el.get("vendor")
        family, model = _int(el.get("familyid")), _int(el.get("modelid"))
        kind = cpu_family(arch, vendor, family, model)
        if kind == "unknown":
            self.model.warn(f"cpu numaid {numa}: CPU arch/vendor/model unknown; inter-socket link "
                            "uses Skylake UPI figures")
        attrs = {k: v for k, v in (("arch", arch), ("vendor", vendor), ("affinity", el.get("affinity")))
                 if v}
        if family is not None:
            attrs["familyid"] = family
        if model is not None:
            attrs["modelid"] = model
        node = Numa(numa, numa, kind, attrs)
        for child in el:
            if child.tag == "pci":
                item = self.pci(child, node)
                if item is not None:
                    node.children.append(self.place(child, item, node))
            elif child.tag == "nic":   # NIC without a PCI path (virtual / plugin devices)
                self.anon += 1
                item = self.nic(child, child, f"nic-anon-{self.anon}", node)
                node.children.append(item)
        return node

    def place(self, el, item, numa: Numa):
        """Top-level items carrying ``host_bridge`` (our export extension) join that bridge."""
        hb = el.get("host_bridge")
        if hb is None:
            return item
        key = f"numa:{numa.numa}:hb:{hb}"
        for existing in numa.children:
            if isinstance(existing, Bridge) and existing.key == key:
                existing.children.append(item)
                return _Placed()
        return Bridge("root_complex", key, [item])


def pci_model(el, kind: str) -> PciModel | None:
    """The table entry of a ``<pci vendor device>`` element, if it is a known ``kind``."""
    if el is None or not hasattr(el, "get"):
        return None
    entry = lookup(el.get("device"), el.get("vendor"))
    return entry if entry is not None and entry.kind == kind else None


def _pci_attrs(el, known: PciModel | None) -> dict:
    """``model``/``product`` from the table, and the raw ``pci_id`` ("10de:2335") when given."""
    out = {}
    vendor, device = (parse_id(el.get("vendor")), parse_id(el.get("device"))) if el is not None else (None, None)
    if device:
        out["pci_id"] = f"{vendor or '?'}:{device}"
    if known is not None:
        out["model"], out["product"] = known.model, known.product
    return out


class _Placed:
    """Marker: the item went into an existing root complex (dropped by the caller)."""


def parse_nccl_xml(text: str | bytes) -> HostModel:
    """Parse NCCL topology XML into a :class:`HostModel` (warnings inside it).

    Raises
    ------
    ImportFormatError
        Not XML, not a ``<system>`` document, or no ``<cpu>`` in it.
    """
    root = parse_xml(text, what="NCCL topology XML")
    if root.tag != "system":
        raise ImportFormatError(f"NCCL topology XML must have a <system> root, found <{root.tag}>",
                                [Problem("/", f"root element is <{root.tag}>")])
    model = FabricHostModel()
    if root.get("version") not in ("1", "2", None):
        model.warn(f"system version {root.get('version')!r}: NCCL reads 1, RCCL 2; imported anyway")
    reader = _Reader(model)
    used: set = set()
    cpus = [c for c in root if c.tag == "cpu"]
    if not cpus:
        raise ImportFormatError("NCCL topology XML has no <cpu> element",
                                [Problem("/system", "no <cpu> element")])
    hashes = {c.get("host_hash") for c in cpus if c.get("host_hash")}
    if len(hashes) > 1:
        model.warn(f"{len(hashes)} host_hash values: a multi-node dump, imported as one host")
    for i, el in enumerate(cpus):
        numa = reader.cpu(el, i, used)
        numa.children = [c for c in numa.children if not isinstance(c, _Placed)]
        model.numas.append(numa)
    check_host_size(model, "the NCCL topology XML")   # before the per-link walks below
    for nv in model.nvlinks:   # nvlinks to the CPU ("cpu-of:<gpu busid>") go to the GPU's socket
        if nv.b.startswith("cpu-of:"):
            nv.b = _numa_key_of(model, nv.a)
    return model


def _numa_key_of(model: HostModel, busid: str) -> str:
    from designer.engine.io._model import walk_devices

    for numa in model.numas:
        if any(d.key == busid for d in walk_devices(numa.children)):
            return f"numa:{numa.numa}"
    return "numa:?"
