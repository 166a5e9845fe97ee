"""Import ``nvidia-smi topo -m`` output as one host whose path classes reproduce the matrix.

The matrix only says how each pair of devices is connected (``X``, ``NV#``, ``PIX``, ``PXB``,
``PHB``, ``NODE``, ``SYS``), so the importer builds the *simplest tree* that gives the same
answers, by single-linkage clustering on the PCIe levels:

- devices not ``SYS`` to each other (and GPUs with the same *NUMA Affinity*) share a NUMA domain
  → a socket ``cpu`` node (CPU/NUMA affinity kept in its attrs); each GPU row's own *CPU
  Affinity*, *NUMA Affinity* and *GPU NUMA ID* columns are also kept on the GPU node
  (``cpu_affinity``, ``numa_affinity``, ``gpu_numa_id``), and NICs keep their OS names from the
  NIC legend (``attrs.name = "mlx5_0"``, ``attrs.smi_label = "NIC0"``);
- inside a domain, devices at ``PHB`` or closer share a host bridge; when a domain has several
  such groups (pairs at ``NODE``) each becomes a ``root_complex`` node, else devices hang off the
  socket node;
- inside a host bridge, a ``PXB`` group becomes a PCIe switch with one sub-switch per ``PIX``
  group (singletons included), a ``PIX`` group one switch;
- ``NV#`` pairs: direct GPU–GPU links of ``#`` NVLinks, unless a GPU would need more links than
  any GPU has (18): then an NVSwitch plane, each GPU joined by its ``#``.

What the matrix does not say becomes a default with a warning: PCIe Gen4 x16 links, NIC port
speed 100 Gb/s, NVLink generation 3 (4 when a GPU bonds more than 12 links; the generation of the
GPU model when the caller names it — ``NV18`` on a B200 is NVLink 5), inter-socket link
with Skylake UPI figures; a GPU pair shown as ``NV#`` has no visible PCIe relation and is placed
by its other relations. Robust to real terminal output: ANSI escapes, tabs or spaces, Windows
newlines, trailing blanks, the legend and NIC legend blocks, extra columns (``GPU NUMA ID``).
"""
from __future__ import annotations

import re

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.bounded_text import check_text_size
from designer.engine.io._model import Bridge, Device, HostModel, Numa, NvLink, walk_devices
from designer.engine.io.pci_ids import nvlink_generation

__all__ = ["parse_nvidia_smi", "parse_matrix", "LEVELS", "DEFAULT_NIC_GBPS", "MAX_NVLINKS_PER_GPU", "MAX_GPUS",
           "MAX_DEVICES"]

#: PCIe relation codes by distance (``SOC`` is the pre-2017 name of ``SYS``).
LEVELS = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5, "SOC": 5}
#: NIC port speed when the matrix cannot say, Gb/s.
DEFAULT_NIC_GBPS = 100.0
#: More NVLinks per GPU than this cannot be direct links (H100/B200 have 18).
MAX_NVLINKS_PER_GPU = 18
MAX_TEXT_CHARS = 1024 * 1024
MAX_GPUS = 64
MAX_DEVICES = 192

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_NV = re.compile(r"^NV([0-9]{1,4})$")     # bounded: int() of "NV" + 5,000 digits was a ValueError (500)
_EXTRA_COLUMNS = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_LEGEND_NIC = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


def _clean(text: str) -> list[str]:
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return [line.rstrip() for line in text.split("\n")]


# radon D: a line-by-line text parser, one branch per kind of line and cell of the table (kept in one reading pass).
def parse_matrix(text: str) -> dict:
    """Parse the table: ``{"devices": [...], "matrix": {(a, b): code}, "extra": {dev: {col: v}},
    "legend": {"NIC0": "mlx5_0"}}``.

    Raises
    ------
    ImportFormatError
        No header with ``GPU0``, a row of the wrong length, or an unknown code (line located).
    """
    check_text_size(text, "nvidia-smi output", max_chars=MAX_TEXT_CHARS)
    lines = _clean(text)
    header_at = next((i for i, l in enumerate(lines) if re.search(r"(^|\s)GPU0(\s|$)", l)), None)
    if header_at is None:
        raise ImportFormatError("not nvidia-smi topo -m output: no header line with GPU0")
    header = lines[header_at]
    extras = [c for c in _EXTRA_COLUMNS if c in header]
    for c in _EXTRA_COLUMNS:
        header = header.replace(c, "")
    devices = header.split()
    _check_devices(devices, header_at)
    legend = {m.group(1): m.group(2) for l in lines if (m := _LEGEND_NIC.match(l))}
    matrix, extra = {}, {}
    for lineno in range(header_at + 1, len(lines)):
        tokens = lines[lineno].split()
        if not tokens or tokens[0] not in devices:
            if tokens and tokens[0].startswith("Legend"):
                break
            continue
        row, cells = tokens[0], tokens[1:]
        if len(cells) < len(devices):
            raise ImportFormatError(
                f"row {row} has {len(cells)} cells, expected {len(devices)}",
                [Problem(f"line {lineno + 1}", f"{len(cells)} cells for {len(devices)} devices")])
        for col, code in zip(devices, cells):
            if code != "X" and code not in LEVELS and not _NV.match(code):
                raise ImportFormatError(f"unknown relation {code[:40]!r} between {row} and {col}",
                                        [Problem(f"line {lineno + 1}", f"unknown code {code[:40]!r}")])
            matrix[(row, col)] = code
        extra[row] = dict(zip(extras, cells[len(devices):]))
    if not any(k[0] == "GPU0" for k in matrix):
        raise ImportFormatError("nvidia-smi output has no GPU0 row")
    return {"devices": devices, "matrix": matrix, "extra": extra, "legend": legend}


def _check_devices(devices: list[str], header_at: int) -> None:
    """A header of at most :data:`MAX_GPUS` GPUs named ``GPU<k>`` and :data:`MAX_DEVICES` columns.

    One server shows 8-16 GPUs (HGX); the matrix is quadratic in the columns, and 300 GPUs
    took seconds of CPU to import, so more is refused like rocm-smi's 64 (``rocm_smi._MAX_GPUS``).
    """
    where = [Problem(f"line {header_at + 1}", "header")]
    gpus = [d for d in devices if d.startswith("GPU")]
    bad = next((d for d in gpus if not re.fullmatch(r"GPU[0-9]{1,4}", d)), None)
    if bad is not None:
        raise ImportFormatError(f"bad GPU column {bad[:40]!r} (expected GPU<k>)", where)
    if len(gpus) > MAX_GPUS or len(devices) > MAX_DEVICES:
        raise ImportFormatError(f"{len(gpus)} GPUs / {len(devices)} columns refused (at most {MAX_GPUS} GPUs "
                                f"and {MAX_DEVICES} columns: one server's nvidia-smi topo -m)", where)


class _Clusters:
    """Union-find over device names."""

    def __init__(self, items):
        self.parent = {i: i for i in items}

    def find(self, x):
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)

    def groups(self, items) -> list[list]:
        out: dict = {}
        for i in items:
            out.setdefault(self.find(i), []).append(i)
        return list(out.values())


def _level(parsed: dict, a: str, b: str) -> int | None:
    """PCIe distance of a pair, or None when hidden (NV#) or absent; either row may say it."""
    for key in ((a, b), (b, a)):
        code = parsed["matrix"].get(key)
        if code in LEVELS:
            return LEVELS[code]
    return None


def _split(parsed: dict, items: list, max_level: int, hint=None) -> list[list]:
    clusters = _Clusters(items)
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            level = _level(parsed, a, b)
            if level is not None and level <= max_level:
                clusters.union(a, b)
            elif level is None and hint is not None and hint(a, b):
                clusters.union(a, b)
    return clusters.groups(items)


# radon D: a parser, one branch per NUMA-domain case and per fact the text does not give (kept in one reading pass).
def parse_nvidia_smi(text: str, gpu_model: str | None = None) -> HostModel:
    """Parse ``nvidia-smi topo -m`` text into a :class:`HostModel` (warnings inside it).

    ``gpu_model`` (``B200``, ``H200``…), which the matrix cannot show, sets every GPU's
    ``attrs.model`` and the NVLink generation (:func:`pci_ids.nvlink_generation`: a Blackwell
    ``NV18`` is 18 NVLink 5 links, a Hopper one 18 NVLink 4).

    Raises
    ------
    ImportFormatError
        When the text is not a topo -m matrix (see :func:`parse_matrix`).
    """
    parsed = parse_matrix(text)
    model = HostModel()
    devices = parsed["devices"]
    numa_of = {d: _numa_value(parsed["extra"].get(d, {})) for d in devices}
    same_numa = lambda a, b: numa_of[a] is not None and numa_of[a] == numa_of[b]  # noqa: E731
    domains = _split(parsed, devices, 4, same_numa)
    domains.sort(key=lambda g: min(devices.index(d) for d in g))
    used = {n for n in numa_of.values() if n is not None}
    free = (i for i in range(1 << 16) if i not in used)
    for group in domains:
        numas = sorted({numa_of[d] for d in group if numa_of[d] is not None})
        if len(numas) > 1:
            model.warn(f"devices {', '.join(group)} are not SYS apart but list NUMA nodes {numas}; "
                       f"placed on NUMA {numas[0]}")
        numa = numas[0] if numas else next(free)
        cpu_aff = next((parsed["extra"][d].get("CPU Affinity") for d in group
                        if parsed["extra"].get(d, {}).get("CPU Affinity") not in (None, "N/A")), None)
        node = Numa(numa, numa, "unknown", {"cpu_affinity": cpu_aff} if cpu_aff else {})
        node.children = _domain_children(parsed, group, numa, model)
        model.numas.append(node)
    _nvlinks(parsed, model, nvlink_generation(gpu_model) if gpu_model else None)
    _defaults_warnings(parsed, model, gpu_model)
    if gpu_model:
        for numa in model.numas:
            for device in walk_devices(numa.children):
                if device.kind == "gpu":
                    device.attrs["model"] = str(gpu_model)
    return model


def _numa_value(extra: dict) -> int | None:
    value = extra.get("NUMA Affinity")
    try:
        return int(value) if value not in (None, "N/A") else None
    except ValueError:
        return None


def _domain_children(parsed: dict, group: list, numa: int, model: HostModel) -> list:
    bridges = _split(parsed, group, 3)
    if len(bridges) == 1:
        return _bridge_children(parsed, group, model)
    return [Bridge("root_complex", f"rc:{numa}:{k}", _bridge_children(parsed, members, model))
            for k, members in enumerate(bridges)]


def _bridge_children(parsed: dict, members: list, model: HostModel) -> list:
    out = []
    for tree in _split(parsed, members, 2):
        if len(tree) == 1:
            out.append(_device(parsed, tree[0]))
            continue
        leaves = _split(parsed, tree, 1)
        if len(leaves) == 1:
            out.append(Bridge("switch", f"sw:{tree[0]}", [_device(parsed, d) for d in tree]))
        else:
            top = Bridge("switch", f"sw:{tree[0]}:top")
            for leaf in leaves:
                top.children.append(Bridge("switch", f"sw:{leaf[0]}", [_device(parsed, d) for d in leaf]))
            out.append(top)
    return out


def _device(parsed: dict, name: str) -> Device:
    m = re.match(r"^GPU(\d+)$", name)
    if m:
        attrs = {"model": "unknown", "name": name, **_affinity(parsed["extra"].get(name, {}))}
        return Device("gpu", name, attrs, order=(int(m.group(1)),))
    index = parsed["devices"].index(name)
    attrs = {"name": parsed["legend"].get(name, name), "port_gbps": DEFAULT_NIC_GBPS, "role": "compute",
             "rail": sum(1 for d in parsed["devices"][:index] if not d.startswith("GPU"))}
    if name != attrs["name"]:
        attrs["smi_label"] = name   # the matrix's column name (NIC3), next to the OS name (mlx5_3)
    attrs.update(_affinity(parsed["extra"].get(name, {})))
    return Device("nic", name, attrs, order=(index,))


def _affinity(extra: dict) -> dict:
    """A row's affinity columns as node attrs: ``cpu_affinity`` (the CPU list as printed, e.g.
    ``"48-63,176-191"``), ``numa_affinity`` and ``gpu_numa_id`` (ints); ``N/A`` and blanks are
    left out."""
    out = {}
    for column, key in (("CPU Affinity", "cpu_affinity"), ("NUMA Affinity", "numa_affinity"),
                        ("GPU NUMA ID", "gpu_numa_id")):
        value = extra.get(column)
        if value in (None, "", "N/A"):
            continue
        if key == "cpu_affinity":
            out[key] = value
        else:
            try:
                out[key] = int(value)
            except ValueError:
                out[key] = value
    return out


# radon D: a parser, one branch per NV<n> case (direct links or an NVSwitch plane, generation given or guessed).
def _nvlinks(parsed: dict, model: HostModel, known_gen: int | None = None) -> None:
    gpus = [d for d in parsed["devices"] if d.startswith("GPU")]
    pairs = {}
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            m = _NV.match(parsed["matrix"].get((a, b), "")) or _NV.match(parsed["matrix"].get((b, a), ""))
            if m:
                pairs[(a, b)] = int(m.group(1))
    if not pairs:
        return
    total = {g: sum(n for p, n in pairs.items() if g in p) for g in gpus}
    busiest = max(total.values())
    gen = known_gen or (4 if busiest > 12 else 3)
    if busiest <= MAX_NVLINKS_PER_GPU:
        for (a, b), n in pairs.items():
            model.nvlinks.append(NvLink(a, b, n, gen))
    else:   # more links than a GPU has: the pairs meet in an NVSwitch plane
        per_gpu = {g: max((n for p, n in pairs.items() if g in p), default=0) for g in gpus}
        gen = known_gen or (4 if max(per_gpu.values()) > 12 else 3)
        model.nvswitches.append("nvswitch-plane")
        for g, n in per_gpu.items():
            if n:
                model.nvlinks.append(NvLink(g, "nvswitch-plane", n, gen))
    if known_gen is None:
        model.warn(f"NVLink generation not shown by nvidia-smi: NVLink{gen} assumed "
                   "(pass the GPU model, e.g. B200 for NVLink 5)")


def _defaults_warnings(parsed: dict, model: HostModel, gpu_model: str | None = None) -> None:
    model.warn("PCIe generation and width not shown by nvidia-smi: Gen4 x16 assumed for every link")
    if any(not d.startswith("GPU") for d in parsed["devices"]):
        model.warn(f"NIC port speed not shown by nvidia-smi: {DEFAULT_NIC_GBPS:g} Gb/s assumed")
    if len(model.numas) > 1:
        model.warn("CPU model not shown by nvidia-smi: inter-socket link uses Skylake UPI figures")
    if gpu_model and nvlink_generation(gpu_model) is None:
        model.warn(f"GPU model {gpu_model!r} has no known NVLink generation: heuristics used")
    for g in (d for d in parsed["devices"] if d.startswith("GPU") and not gpu_model):
        model.warn("GPU model not shown by nvidia-smi: attrs.model = 'unknown'")
        break


def check_reproduction(text: str, doc: dict, host_id: str, ids: dict, model: HostModel) -> dict:
    """Compare ``topo_matrix`` of the imported host with the input; warn per differing cell.

    Returns the comparison (:func:`designer.engine.io.compare.import_matrix`): its ``differ``
    is empty when the matrix is reproduced, the usual case; an inconsistent input matrix cannot
    be, and the warnings say where.
    """
    from designer.engine.io.compare import import_matrix

    comparison = import_matrix(doc, host_id, ids, parsed=parse_matrix(text))
    name = comparison["source"]
    for row, col, code, actual in comparison["differ"][:10]:
        model.warn(f"matrix not reproduced (inconsistent input?): {name[row]}/{name[col]}: "
                   f"{code} in the input, {actual} imported")
    return comparison
