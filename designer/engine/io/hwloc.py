"""Import an hwloc XML export (``lstopo file.xml``, hwloc v2; v1 files mostly work) as one host.

hwloc describes the machine as nested ``<object type=…>`` elements: ``Machine > Package >
(Group/Die/L3 …) > NUMANode`` for CPUs and memory, and I/O objects hung at their locality:
``Bridge`` (``bridge_type="0-1"`` a host bridge, ``"1-1"`` a PCI-to-PCI bridge), ``PCIDev``
(``pci_busid``, ``pci_type="0302 [10de:20b0] …"`` class and ids, ``pci_link_speed`` in GB/s) and
``OSDev`` (``cuda0``/``nvml0`` GPUs, ``mlx5_0``/``ib0``/``eth0`` NICs, ``nvme0n1`` drives).

How it maps (see ``_model.py`` for the shared conventions):

- each ``NUMANode`` → a socket ``cpu`` node (``attrs.socket`` = NUMA domain, ``attrs.package``
  = the enclosing Package's ``os_index``); CPU vendor/family/model from the Package ``info``
  pick the inter-socket tech as NCCL does;
- a host bridge → a ``root_complex`` node on the NUMA node of its locality (the NUMANode under
  the nearest ancestor that has one); the first NUMANode when several match (warned);
- PCI bridges fold like NCCL's sysfs walk: a root port (bridge right under a host bridge) and a
  switch's downstream ports are transparent; a switch's upstream port becomes one
  ``pcie_switch``, so devices in one switch are ``PIX``;
- ``PCIDev`` class ``03xx`` of NVIDIA/AMD (or with a GPU OS device) → ``gpu``; ``02xx`` → ``nic``;
  ``0108`` → ``nvme``; other devices (USB, SATA, BMC VGA) are skipped;
- ``pci_link_speed`` (GB/s, raw) → the generation × width with that rate, preferring x16, x8, x4.

Defaults, each with a warning: link speed 0 or missing → PCIe Gen4 x16; NIC port speed →
100 Gb/s (hwloc does not record it); no NUMANode → one NUMA domain per Package (or one).
NVLinks are not in hwloc's tree: GPUs are imported without them (warned). AMD GPUs (class
``1200`` for MI300X) carry their xGMI peers in the RSMI backend's ``XGMIPeers`` info
(``"rsmi1 rsmi2 …"``, hwloc ``topology-rsmi.c``): each pair becomes one direct ``xgmi-*`` link.
"""
from __future__ import annotations

import re

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io._model import Bridge, Device, HostModel, Numa, cpu_family
from designer.engine.io.pci_ids import lookup
from designer.engine.io.rocm_smi import FabricHostModel, GpuLink, check_host_size, xgmi_tech
from designer.engine.io.safe_xml import parse_xml

__all__ = ["parse_hwloc", "speed_to_pcie", "DEFAULT_NIC_GBPS"]

DEFAULT_NIC_GBPS = 100.0
# Raw GB/s per lane and direction: 2.5/5 GT/s with 8b/10b, then 128b/130b, Gen6 FLIT.
_LANE_GBYTES = {1: 0.25, 2: 0.5, 3: 0.984615, 4: 1.969231, 5: 3.938462, 6: 7.563}
_WIDTH_PREFERENCE = (16, 8, 4, 2, 1, 32)
_GPU_VENDORS = {"10de", "1002"}
_PCI_TYPE = re.compile(r"^\s*([0-9a-fA-F]{4})\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")


def speed_to_pcie(gbytes: float) -> tuple[int, int] | None:
    """(generation, width) whose raw rate is ``gbytes`` GB/s within 0.5 %, or None (hwloc computes
    the rate exactly: lanes x GT/s x encoding / 8).

    Ambiguous rates (Gen3 x16 = Gen4 x8 = Gen5 x4) resolve to the widest link, x16 first.
    """
    for width in _WIDTH_PREFERENCE:
        for gen, lane in _LANE_GBYTES.items():
            if abs(lane * width - gbytes) <= 0.005 * lane * width:
                return gen, width
    return None


class _Reader:
    def __init__(self, model: HostModel):
        self.model = model
        self.numas: dict[int, Numa] = {}
        self.gpu_of_osdev: dict[str, str] = {}          # "rsmi3" -> GPU bus id
        self.xgmi_peers: dict[str, tuple[list, str]] = {}   # bus id -> (peer OS names, model)

    # ------------------------------------------------------------ CPU side
    def collect_numas(self, el, package: dict | None) -> None:
        kind = el.get("type")
        if kind in ("Package", "Socket"):
            package = {"index": _int(el.get("os_index")) or 0, "info": _infos(el)}
        if kind == "NUMANode":
            index = _int(el.get("os_index"))
            index = len(self.numas) if index is None or index in self.numas else index
            info = (package or {}).get("info", {})
            family = cpu_family("x86_64" if info.get("CPUVendor") else info.get("Architecture"),
                                info.get("CPUVendor"), _int(info.get("CPUFamilyNumber")),
                                _int(info.get("CPUModelNumber")))
            attrs = {"package": (package or {}).get("index", 0)}
            if info.get("CPUModel"):
                attrs["model"] = info["CPUModel"]
            self.numas[index] = Numa(index, index, family, attrs)
            el.set("_numa", str(index))
        for child in el:
            if child.tag == "object" and child.get("type") not in ("Bridge", "PCIDev", "OSDev"):
                self.collect_numas(child, package)

    def locality(self, ancestors: list) -> Numa | None:
        for anc in reversed(ancestors):
            found = [int(o.get("_numa")) for o in anc.iter("object") if o.get("_numa") is not None]
            if found:
                if len(set(found)) > 1:
                    self.model.warn(f"host bridge under {anc.get('type')} near NUMA nodes "
                                    f"{sorted(set(found))}: placed on NUMA {found[0]}")
                return self.numas[found[0]]
        return None

    # ------------------------------------------------------------ I/O side
    def walk(self, el, ancestors: list) -> None:
        for child in el:
            if child.tag != "object":
                continue
            if child.get("type") == "Bridge" and _is_host_bridge(child):
                numa = self.locality(ancestors + [el]) or self.default_numa()
                key = child.get("bridge_pci") or f"hostbridge{len(numa.children)}"
                rc = Bridge("root_complex", f"hb:{key}", attrs={"bridge_pci": key})
                rc.children = self.io_children(child, transparent=True)
                if rc.children:
                    numa.children.append(rc)
            elif child.get("type") in ("Bridge", "PCIDev"):   # I/O without a host bridge (v1 files)
                numa = self.locality(ancestors + [el]) or self.default_numa()
                numa.children.extend(self.io_item(child, transparent=True))
            else:
                self.walk(child, ancestors + [el])

    def default_numa(self) -> Numa:
        if not self.numas:
            self.model.warn("no NUMANode in the hwloc file: one NUMA domain assumed")
            self.numas[0] = Numa(0, 0, "unknown")
        return self.numas[min(self.numas)]

    def io_children(self, el, transparent: bool) -> list:
        out = []
        for child in el:
            if child.tag == "object":
                out.extend(self.io_item(child, transparent))
        return out

    def io_item(self, el, transparent: bool) -> list:
        """Items for one I/O object. ``transparent``: this bridge level is a root port or a
        switch downstream port (its children belong to the level above)."""
        kind = el.get("type")
        if kind == "Bridge":
            if transparent:   # root port / downstream port: look through it
                return self.io_children(el, transparent=False)
            switch = Bridge("switch", el.get("pci_busid") or f"bridge{id(el)}",
                            attrs={"busid": el.get("pci_busid")} if el.get("pci_busid") else {})
            self.link(el, switch)
            switch.children = self.io_children(el, transparent=True)
            return [switch] if switch.children else []
        if kind == "PCIDev":
            device = self.pci_device(el)
            return [device] if device is not None else []
        return []

    def link(self, el, item) -> None:
        speed = _float(el.get("pci_link_speed"))
        where = el.get("pci_busid") or el.get("type")
        found = speed_to_pcie(speed) if speed else None
        if found is None:
            self.model.warn(f"{where}: pci_link_speed {el.get('pci_link_speed')!r} unknown or 0, "
                            "assumed PCIe Gen4 x16")
            found = (4, 16)
        item.gen, item.width = found

    # radon D: a parser, one branch per PCI class (GPU, NIC, NVMe) and OS-device naming: kept flat.
    def pci_device(self, el) -> Device | None:
        busid = el.get("pci_busid") or f"pci{id(el)}"
        m = _PCI_TYPE.match(el.get("pci_type") or "")
        cls, vendor, device = (m.group(1).lower(), m.group(2).lower(), m.group(3).lower()) if m else ("", "", "")
        osdevs = [(o.get("name") or "", o.get("osdev_type"), (o.get("subtype") or "").lower())
                  for o in el.iter("object") if o.get("type") == "OSDev"]
        gpu_osdev = [n for n, t, s in osdevs if re.match(r"^(cuda|nvml|rsmi|opencl)\d", n) or s in ("cuda", "nvml", "rsmi")]
        # AMD Instinct MI300X/MI325X are class 1200 (processing accelerator), not 03xx display.
        if cls[:2] in ("03", "12") and (vendor in _GPU_VENDORS or gpu_osdev):
            item = self.gpu(el, busid, (vendor, device), gpu_osdev)
        elif cls.startswith("02"):
            names = [n for n, t, s in osdevs if n]
            name = next((n for n in names if re.match(r"^(mlx\d_|hfi|efa|bnxt_re|irdma|rdma)", n)),
                        names[0] if names else busid)
            attrs = {"name": name, "busid": busid, "port_gbps": DEFAULT_NIC_GBPS, "role": "compute"}
            attrs.update(_pci_attrs(vendor, device, "nic"))
            item = Device("nic", busid, attrs, order=(busid,))
            self.model.warn(f"NIC port speed not recorded by hwloc: {DEFAULT_NIC_GBPS:g} Gb/s assumed")
        elif cls.startswith("0108"):
            names = [n for n, t, s in osdevs if n]
            item = Device("nvme", busid, {"busid": busid, "name": names[0] if names else busid},
                          order=(busid,))
        else:
            return None
        self.link(el, item)
        return item

    def gpu(self, el, busid: str, pci_id: tuple, osdevs: list) -> Device:
        infos = {}
        for o in el.iter("object"):
            infos.update(_infos(o))
        index = next((int(m.group(1)) for n in osdevs if (m := re.match(r"^(?:cuda|nvml|rsmi)([0-9]{1,6})$", n))),
                     None)
        attrs = {"model": "unknown", "busid": busid, **_pci_attrs(*pci_id, "gpu")}
        if infos.get("GPUModel"):   # the driver's own name (NVML/RSMI backends) is the best
            attrs["model"] = infos["GPUModel"]
        if osdevs:
            attrs["name"] = osdevs[0]
        for name in osdevs:
            self.gpu_of_osdev[name] = busid
        peers = (infos.get("XGMIPeers") or "").split()
        if peers:   # hwloc's RSMI backend: the GPU's xGMI peers by OS device name
            self.xgmi_peers[busid] = (peers, attrs["model"])
        return Device("gpu", busid, attrs, order=(index if index is not None else 1 << 30, busid))

    def xgmi_links(self) -> None:
        """One direct xGMI ``GpuLink`` per pair of GPUs that list each other (or one lists the
        other) in ``XGMIPeers``."""
        seen = set()
        for busid, (peers, model) in sorted(self.xgmi_peers.items()):
            for name in peers:
                other = self.gpu_of_osdev.get(name)
                if other is None:
                    self.model.warn(f"pci {busid}: xGMI peer {name} is not a GPU of the file; skipped")
                    continue
                pair = tuple(sorted((busid, other)))
                if other != busid and pair not in seen:
                    seen.add(pair)
                    self.model.gpu_links.append(GpuLink(busid, other, xgmi_tech(model)))


def _pci_attrs(vendor: str, device: str, kind: str) -> dict:
    """``pci_id`` and, when the shared table knows it, ``model``/``product`` (pci_ids.py)."""
    if not device:
        return {}
    out = {"pci_id": f"{vendor}:{device}"}
    known = lookup(device, vendor)
    if known is not None and known.kind == kind:
        out["model"], out["product"] = known.model, known.product
    return out


def _is_host_bridge(el) -> bool:
    return (el.get("bridge_type") or "").startswith("0-")


def _infos(el) -> dict:
    return {i.get("name"): i.get("value") for i in el if i.tag == "info" and i.get("name")}


def _int(value) -> int | None:
    try:
        return int(str(value), 0) if value not in (None, "") else None
    except ValueError:
        return None


def _float(value) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def parse_hwloc(text: str | bytes) -> HostModel:
    """Parse hwloc XML into a :class:`HostModel` (warnings inside it).

    Raises
    ------
    ImportFormatError
        Not XML, not a ``<topology>`` document, or no Machine object.
    """
    root = parse_xml(text, what="hwloc XML")
    if root.tag != "topology":
        raise ImportFormatError(f"hwloc XML must have a <topology> root, found <{root.tag}>",
                                [Problem("/", f"root element is <{root.tag}>")])
    machine = root.find("object")
    if machine is None:
        raise ImportFormatError("hwloc XML has no <object> (Machine) element",
                                [Problem("/topology", "no Machine object")])
    model = FabricHostModel()
    reader = _Reader(model)
    reader.collect_numas(machine, None)
    if not reader.numas:
        packages = [o for o in machine.iter("object") if o.get("type") in ("Package", "Socket")]
        for p in packages:
            p.set("_numa", str(_int(p.get("os_index")) or len(reader.numas)))
            reader.numas[int(p.get("_numa"))] = Numa(int(p.get("_numa")), int(p.get("_numa")))
        if packages:
            model.warn("no NUMANode in the hwloc file: one NUMA domain per Package assumed")
    reader.walk(machine, [])
    reader.xgmi_links()
    model.numas = [reader.numas[k] for k in sorted(reader.numas)]
    check_host_size(model, "the hwloc XML")
    nvidia = [d for d in _devices(model)
              if d.kind == "gpu" and not str(d.attrs.get("pci_id", "")).startswith("1002")]
    if nvidia:
        model.warn("hwloc does not record NVLinks: GPUs imported with PCIe links only")
    return model


def _devices(model: HostModel) -> list:
    from designer.engine.io._model import walk_devices

    return [d for numa in model.numas for d in walk_devices(numa.children)]
