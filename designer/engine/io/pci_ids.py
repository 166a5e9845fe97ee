"""PCI vendor:device id → device model, the one table every importer uses.

NCCL topology XML (``<pci vendor device>``) and hwloc XML (``pci_type="0302 [10de:2335]"``)
name devices by PCI id; the compute capability NCCL also writes (``sm="90"``) cannot tell an
H100 from an H200, so the id wins whenever the file has one. Each entry carries the product
string of the PCI ID Repository (the ``pci.ids`` database ``lspci`` prints) and where the id
was checked.

``model`` is the short family name written to ``attrs.model`` (what templates, the editor and
result views show); ``product`` is the longer ``pci.ids`` name, kept in ``attrs.product``.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PciModel", "PCI_MODELS", "VENDORS", "NVLINK_GEN_BY_FAMILY", "lookup", "parse_id",
           "device_for_model", "family_of", "nvlink_generation"]

_PCI_IDS_NVIDIA = "https://pci-ids.ucw.cz/read/PC/10de"
_PCI_IDS_AMD = "https://pci-ids.ucw.cz/read/PC/1002"
_PCI_IDS_MLX = "https://pci-ids.ucw.cz/read/PC/15b3"
_DPDK_MLX5 = "https://doc.dpdk.org/guides/nics/mlx5.html (supported NICs, 'Device ID')"

#: PCI vendor ids of the vendors in the table.
VENDORS = {"10de": "NVIDIA", "1002": "AMD", "15b3": "Mellanox (NVIDIA Networking)"}


@dataclass(frozen=True)
class PciModel:
    """One PCI device id: ``kind`` (``gpu``/``nic``), short ``model``, ``pci.ids`` ``product``."""

    vendor: str
    device: str
    kind: str
    model: str
    product: str
    source: str


def _entries():
    gpu, nic = "gpu", "nic"
    return [
        # NVIDIA data-centre GPUs (vendor 0x10de). Source: PCI ID Repository, vendor 10de.
        ("10de", "20b0", gpu, "A100", "GA100 [A100 SXM4 40GB]", _PCI_IDS_NVIDIA),
        ("10de", "20b2", gpu, "A100", "GA100 [A100 SXM4 80GB]", _PCI_IDS_NVIDIA),
        ("10de", "20b5", gpu, "A100", "GA100 [A100 PCIe 80GB]", _PCI_IDS_NVIDIA),
        ("10de", "20f1", gpu, "A100", "GA100 [A100 PCIe 40GB]", _PCI_IDS_NVIDIA),
        ("10de", "2330", gpu, "H100", "GH100 [H100 SXM5 80GB]", _PCI_IDS_NVIDIA),
        ("10de", "2331", gpu, "H100", "GH100 [H100 PCIe]", _PCI_IDS_NVIDIA),
        ("10de", "2321", gpu, "H100", "GH100 [H100 NVL]", _PCI_IDS_NVIDIA),
        ("10de", "2335", gpu, "H200", "GH100 [H200 SXM 141GB]", _PCI_IDS_NVIDIA),
        ("10de", "233b", gpu, "H200", "GH100 [H200 NVL]", _PCI_IDS_NVIDIA),
        ("10de", "2901", gpu, "B200", "GB100 [B200]", _PCI_IDS_NVIDIA),
        ("10de", "2941", gpu, "GB200", "GB100 [HGX GB200]", _PCI_IDS_NVIDIA),
        # B100 / GB300 names as pci.ids gives them (checked against a copy of pci.ids quoted in
        # public device tables; B300 has no entry there yet, so it is not listed).
        ("10de", "29bc", gpu, "B100", "GB102 [B100]", _PCI_IDS_NVIDIA),
        ("10de", "31c2", gpu, "GB300", "GB110 [GB300]", _PCI_IDS_NVIDIA),
        ("10de", "31c3", gpu, "GB300", "GB110 [GB300]", _PCI_IDS_NVIDIA),
        # Older or inference parts the hwloc importer already named.
        ("10de", "1db1", gpu, "V100", "GV100GL [Tesla V100 SXM2 16GB]", _PCI_IDS_NVIDIA),
        ("10de", "1eb8", gpu, "T4", "TU104GL [Tesla T4]", _PCI_IDS_NVIDIA),
        ("10de", "26b5", gpu, "L40", "AD102GL [L40]", _PCI_IDS_NVIDIA),
        ("10de", "27b8", gpu, "L4", "AD104GL [L4]", _PCI_IDS_NVIDIA),
        # AMD Instinct (vendor 0x1002). Source: PCI ID Repository, vendor 1002.
        ("1002", "74a1", gpu, "MI300X", "Aqua Vanjaram [Instinct MI300X]", _PCI_IDS_AMD),
        ("1002", "74a5", gpu, "MI325X", "Aqua Vanjaram [Instinct MI325X]", _PCI_IDS_AMD),
        # NVIDIA networking (vendor 0x15b3). Sources: PCI ID Repository, vendor 15b3; DPDK mlx5.
        ("15b3", "101b", nic, "ConnectX-6", "MT28908 Family [ConnectX-6]", _PCI_IDS_MLX),
        ("15b3", "101d", nic, "ConnectX-6 Dx", "MT2892 Family [ConnectX-6 Dx]", _PCI_IDS_MLX),
        ("15b3", "101f", nic, "ConnectX-6 Lx", "MT2894 Family [ConnectX-6 Lx]", _PCI_IDS_MLX),
        ("15b3", "1021", nic, "ConnectX-7", "MT2910 Family [ConnectX-7]", _DPDK_MLX5),
        ("15b3", "1023", nic, "ConnectX-8", "ConnectX-8 SuperNIC (MT4131)", _DPDK_MLX5),
        ("15b3", "a2d6", nic, "BlueField-2",
         "MT42822 BlueField-2 integrated ConnectX-6 Dx network controller", _DPDK_MLX5),
        ("15b3", "a2dc", nic, "BlueField-3",
         "MT43244 BlueField-3 integrated ConnectX-7 network controller", _DPDK_MLX5),
    ]


#: ``(vendor, device)`` (4 lower-case hex digits each) → :class:`PciModel`.
PCI_MODELS = {(v, d): PciModel(v, d, k, m, p, s) for v, d, k, m, p, s in _entries()}
_BY_DEVICE: dict[str, list[PciModel]] = {}
for _entry in PCI_MODELS.values():
    _BY_DEVICE.setdefault(_entry.device, []).append(_entry)


def parse_id(value) -> str | None:
    """A PCI id as 4 lower-case hex digits: ``"0x2335"``, ``"2335"``, ``0x2335`` → ``"2335"``.

    NCCL writes ids as ``0x``-prefixed hex; hwloc and ``lspci -n`` without the prefix. Returns
    None for anything that is not a 16-bit id.
    """
    if value is None:
        return None
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip().lower()
        text = text.removeprefix("0x")
        if not text or len(text) > 4:
            return None
        try:
            number = int(text, 16)
        except ValueError:
            return None
    return f"{number:04x}" if 0 <= number <= 0xFFFF else None


def lookup(device, vendor=None) -> PciModel | None:
    """The table entry of a PCI ``device`` id (``vendor`` optional), or None.

    Without a vendor the device id alone decides, when exactly one vendor uses it in the table.

    Examples
    --------
    >>> lookup("0x2335", "0x10de").model
    'H200'
    >>> lookup("a2dc").model
    'BlueField-3'
    """
    dev = parse_id(device)
    if dev is None:
        return None
    if vendor is not None:
        ven = parse_id(vendor)
        return PCI_MODELS.get((ven, dev)) if ven else None
    found = _BY_DEVICE.get(dev, [])
    return found[0] if len(found) == 1 else None


def device_for_model(model: str, kind: str = "gpu") -> PciModel | None:
    """First table entry whose short model is ``model`` (case-insensitive), for exporters that
    write an id back (``"H200"`` → 10de:2335). Also accepts template names like ``H100-SXM5-80GB``
    by their family prefix."""
    wanted = str(model or "").upper()
    if not wanted:
        return None
    for entry in PCI_MODELS.values():
        if entry.kind == kind and entry.model.upper() == wanted:
            return entry
    family = wanted.split("-")[0].split(" ")[0]
    for entry in PCI_MODELS.values():
        if entry.kind == kind and entry.model.upper() == family:
            return entry
    return None


#: NVLink generation of a GPU family (NVIDIA NVLink page, https://www.nvidia.com/en-us/data-center/
#: nvlink/: A100 = NVLink 3, H100/H200 = NVLink 4, Blackwell B200/B300/GB200/GB300 = NVLink 5).
NVLINK_GEN_BY_FAMILY = {"A100": 3, "A800": 3, "H100": 4, "H200": 4, "H800": 4, "H20": 4,
                        "B100": 5, "B200": 5, "B300": 5, "GB200": 5, "GB300": 5}


def family_of(model: str | None) -> str:
    """Family part of a model string, upper case: ``"H200-SXM5-141GB"`` → ``"H200"``,
    ``"AMD Instinct MI300X OAM"`` → ``"MI300X"``; ``""`` for nothing."""
    words = str(model or "").upper().replace("-", " ").split()
    known = {e.model.upper() for e in PCI_MODELS.values()} | set(NVLINK_GEN_BY_FAMILY)
    return next((w for w in words if w in known), words[0] if words else "")


def nvlink_generation(model: str | None) -> int | None:
    """NVLink generation of a GPU model (:data:`NVLINK_GEN_BY_FAMILY`), None when unknown.

    Examples
    --------
    >>> nvlink_generation("B200"), nvlink_generation("H200-SXM5-141GB"), nvlink_generation("MI300X")
    (5, 4, None)
    """
    return NVLINK_GEN_BY_FAMILY.get(family_of(model))
