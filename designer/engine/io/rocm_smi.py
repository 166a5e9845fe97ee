"""Import AMD ``rocm-smi --showtopo`` (or ``amd-smi topology``) output as one host, and the GPU⇄GPU
fabric links importers share.

``rocm-smi --showtopo`` prints, per pair of GPUs, a *weight*, a *hop count* and a *link type*
(``XGMI`` or ``PCIE``), then each GPU's NUMA node::

    ================================ Weight between two GPUs =================================
           GPU0         GPU1   ...
    GPU0   0            15     ...
    ================================= Hops between two GPUs ==================================
    ...
    =============================== Link Type between two GPUs ===============================
    GPU0   0            XGMI   ...
    ======================================= Numa Nodes =======================================
    GPU[0]          : (Topology) Numa Node: 0
    GPU[0]          : (Topology) Numa Affinity: 0

How it maps (the templates' vocabulary, ``amd-mi300x``):

- each NUMA node → a socket ``cpu`` node; each GPU hangs off its NUMA node's socket (the
  output shows no PCIe switch and no NIC), so two GPUs of one socket without xGMI are ``PHB``
  and of two sockets ``SYS``;
- a pair whose link type is ``XGMI`` and whose weight is one xGMI hop (15: the kernel driver
  adds 15 per physical xGMI hop, 20 per PCIe segment — ROCm/rocm-systems#7372) → one direct
  ``gpu``–``gpu`` link, tech ``xgmi-mi300`` (or the GPU model's, :data:`servers.XGMI_TECH_BY_MODEL`);
  ``topo_matrix`` calls it ``NV1``. The hop table is not used to decide directness: it reads 1
  for every xGMI pair, direct or not (ROCm/rocm-systems#5763, open-mpi/hwloc#775);
- ``PCIE`` pairs: hops 2 = same socket, 3 = different sockets (AMD MI200 system-optimization
  guide), used only when the NUMA section is missing (always for ``amd-smi topology``, whose
  ``WEIGHT TABLE:`` / ``HOPS TABLE:`` / ``LINK TYPE TABLE:`` name GPUs by bus id: GPU ``k`` is the
  ``k``-th bus id, kept in ``attrs.busid``).

Defaults, each with a warning: GPU model MI300X (``--showtopo`` does not name it; a
``--showproductname`` block in the same text does, ``Card Series``/``Card Model``), AMD Zen 3/4
inter-socket figures, PCIe Gen5 x16 GPU links, no NICs.

:class:`GpuLink` / :class:`FabricHostModel` carry direct GPU⇄GPU links that are not NVLink
(the shared ``_model.NvLink`` only writes ``nvlink<gen>x<n>``): the NCCL/RCCL XML importer
uses them for RCCL's ``<xgmi>`` elements too; :func:`write_gpu_links` adds them to the document.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.bounded_text import check_text_size
from designer.engine.io._model import Device, HostModel, Numa
from designer.engine.io.pci_ids import PCI_MODELS, family_of

__all__ = ["GpuLink", "FabricHostModel", "parse_rocm_smi", "parse_sections", "write_gpu_links",
           "check_reproduction", "xgmi_tech", "rocm_matrix", "XGMI_HOP_WEIGHT", "looks_like_rocm_smi",
           "check_host_size", "MAX_HOST_NODES", "MAX_HOST_LINKS"]

#: Nodes (sockets, bridges, devices) and GPU links one imported host may have: a server has a
#: few hundred PCIe objects at most, and writing and checking the host is quadratic in them (an
#: NCCL XML of 3,200 copies of one <pci> line, only 280 kB, took many seconds of CPU).
MAX_HOST_NODES = 1024
MAX_HOST_LINKS = 4096
#: Weight the amdgpu driver gives one physical xGMI hop (ROCm/rocm-systems#7372).
XGMI_HOP_WEIGHT = 15
MAX_TEXT_CHARS = 1024 * 1024
_MAX_GPUS = 64

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_GPU = re.compile(r"^GPU([0-9]{1,4})$")   # bounded: int() of 5,000 digits is a ValueError
# Digits bounded: int() of a 5,000-digit index or node was a ValueError (a 500); such lines are
# not rocm-smi's and are ignored like any other unknown line.
_NUMA = re.compile(r"^GPU\[([0-9]{1,6})\]\s*:\s*\(Topology\)\s*Numa (Node|Affinity)\s*:\s*(-?[0-9]{1,9}|NONE|N/A)\s*$",
                   re.I)
# The value is matched on the right-stripped line: a lazy ".{1,200}?" before "\s*$" re-scanned the
# trailing blanks for each of its 200 lengths (200 × the line's length).
_CARD = re.compile(r"^GPU\[([0-9]{1,6})\]\s*:\s*Card (Series|Model|SKU)\s*:\s*(.{1,200})$", re.I)
_SECTIONS = {"weight": "weight between two gpus", "hops": "hops between two gpus",
             "type": "link type between two gpus"}
# amd-smi topology (rocm-smi's successor): "WEIGHT TABLE:", "HOPS TABLE:", "LINK TYPE TABLE:" with
# devices named by PCI bus id, the diagonal "SELF" (ROCm/rocm-systems#5763 shows the layout).
# Title words of an amd-smi table ("LINK TYPE"); the " TABLE:" tail is cut by hand in _amd_title
# (a lazy "[A-Z ]*?" before "\s+TABLE" was quadratic in a line of blanks).
_AMD_NAME = re.compile(r"[A-Z][A-Z ]*")
_AMD_SECTIONS = {"WEIGHT": "weight", "HOPS": "hops", "LINK TYPE": "type"}
_BUSID = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


@dataclass
class GpuLink:
    """A direct GPU⇄GPU link that is not NVLink: ``a``/``b`` are source keys, ``tech`` a catalog
    name or None with ``capacity_gbps`` (Gb/s per direction) then."""

    a: str
    b: str
    tech: str | None
    capacity_gbps: float | None = None


@dataclass
class FabricHostModel(HostModel):
    """A :class:`HostModel` with direct non-NVLink GPU links (xGMI)."""

    gpu_links: list[GpuLink] = field(default_factory=list)


def check_host_size(model: HostModel, what: str) -> None:
    """Refuse a parsed host above :data:`MAX_HOST_NODES` nodes or :data:`MAX_HOST_LINKS` GPU links
    (NVLink and xGMI entries), before the quadratic steps that write and check it.

    Raises
    ------
    ImportFormatError
        Located at ``/`` with the counts.
    """
    nodes, stack = 0, [c for numa in model.numas for c in numa.children]
    nodes += len(model.numas)
    while stack and nodes <= MAX_HOST_NODES:
        item = stack.pop()
        nodes += 1
        stack.extend(getattr(item, "children", ()))
    links = len(model.nvlinks) + len(getattr(model, "gpu_links", ()))
    if nodes > MAX_HOST_NODES or links > MAX_HOST_LINKS:
        raise ImportFormatError(
            f"{what} describes more than one server can hold: {nodes:,}{'+' if stack else ''} nodes, {links:,} GPU "
            f"links (at most {MAX_HOST_NODES:,} and {MAX_HOST_LINKS:,})", [Problem("/", "too many devices or links")])


def looks_like_rocm_smi(head: str) -> bool:
    """Whether text (its first kilobytes) is ``rocm-smi --showtopo`` or ``amd-smi topology`` output."""
    low = head.lower()
    return any(title in low for title in _SECTIONS.values()) or (
        "link type table" in low and ("hops table" in low or "weight table" in low))


def xgmi_tech(model: str | None) -> str:
    """Catalog xGMI tech of an AMD GPU model (MI300X figures for an unknown one)."""
    from designer.engine.model.servers import XGMI_TECH_BY_MODEL

    return XGMI_TECH_BY_MODEL.get(family_of(model), "xgmi-mi300")


def _clean(text: str) -> list[str]:
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return [line.rstrip() for line in text.split("\n")]


def _section_of(line: str) -> str | None:
    """Section a title line opens (``weight``/``hops``/``type``/``other``), None for other lines:
    rocm-smi's ``==== Weight between two GPUs ====`` or amd-smi's ``WEIGHT TABLE:``."""
    title = _rocm_title(line)
    if title is not None:
        name = title.lower()
        return next((k for k, v in _SECTIONS.items() if v in name), "other")
    amd = _amd_title(line)
    if amd is not None:
        return _AMD_SECTIONS.get(" ".join(amd.upper().split()), "other")
    return None


def _rocm_title(line: str) -> str | None:
    """``Weight between two GPUs`` of ``==== Weight between two GPUs ====``, else None.

    What ``^=+\\s*(.*?)\\s*=+$`` captured, cut with ``str.strip`` in linear time: that pattern
    was cubic in a line of ``=`` (1,000 characters: 4 s of CPU).
    """
    body = line.lstrip("=")
    if body == line or not line.endswith("="):
        return None
    if not body:                          # only "=": two or more make an empty title
        return "" if len(line) >= 2 else None
    return body.rstrip("=").strip()


def _amd_title(line: str) -> str | None:
    """``LINK TYPE`` of ``LINK TYPE TABLE:`` (as ``^([A-Z][A-Z ]*?)\\s+TABLE\\s*:?$``), else None."""
    head = line[:-1] if line.endswith(":") else line
    head = head.rstrip()
    if not head.endswith("TABLE"):
        return None
    name = head[:-len("TABLE")]
    if not name[-1:].isspace():
        return None
    name = name.rstrip()
    return name if _AMD_NAME.fullmatch(name) else None


def _device_token(token: str) -> bool:
    return bool(_GPU.match(token) or _BUSID.match(token))


def parse_sections(text: str) -> dict:
    """The tables of the output: ``{"gpus": ["GPU0", …], "weight"|"hops"|"type": {(a, b): cell},
    "numa": {i: node}, "card": {i: name}, "busid": {"GPU0": "0000:05:00.0"}}``. ``amd-smi
    topology`` tables (``WEIGHT TABLE:`` …, devices named by bus id) read the same way, GPU
    ``k`` being the ``k``-th bus id of the first table.

    Raises
    ------
    ImportFormatError
        No GPU table, a row of the wrong length, more than 64 GPUs (line located).
    """
    check_text_size(text, "rocm-smi output", max_chars=MAX_TEXT_CHARS)
    out: dict = {"gpus": [], "numa": {}, "card": {}, "busid": {}}
    label: dict[str, str] = {}      # bus id (amd-smi) -> GPU label
    section, header = None, None
    for lineno, line in enumerate(_clean(text), start=1):
        stripped = line.strip()
        opened = _section_of(stripped)
        if opened is not None:
            section, header = opened, None
            continue
        _other_lines(stripped, out)
        if section not in _SECTIONS or not stripped:
            continue
        tokens = stripped.split()
        if header is None and all(_device_token(t) for t in tokens):
            if len(tokens) > _MAX_GPUS:
                raise ImportFormatError(f"more than {_MAX_GPUS} GPUs refused")
            for t in tokens:
                if _BUSID.match(t) and t.lower() not in label:
                    label[t.lower()] = f"GPU{len(label)}"
                    out["busid"][label[t.lower()]] = t.lower()
            header = [label.get(t.lower(), t) for t in tokens]
            out["gpus"] = out["gpus"] or header
            out.setdefault(section, {})
            continue
        if header is None or not _device_token(tokens[0]):
            continue
        tokens[0] = label.get(tokens[0].lower(), tokens[0])
        if len(tokens) - 1 != len(header):
            cells = len(tokens) - 1
            raise ImportFormatError(f"row {tokens[0]} has {cells} cells, expected {len(header)}",
                                    [Problem(f"line {lineno}", f"{cells} cells for {len(header)} GPUs")])
        for col, cell in zip(header, tokens[1:]):
            out[section][(tokens[0], col)] = cell
    if not out["gpus"]:
        raise ImportFormatError("not rocm-smi --showtopo / amd-smi topology output: no GPU table",
                                [Problem("format", "no GPU table")])
    return out


def _other_lines(line: str, out: dict) -> None:
    numa = _NUMA.match(line)
    if numa and numa.group(2).lower() == "node":
        value = numa.group(3)
        out["numa"][int(numa.group(1))] = int(value) if value.lstrip("-").isdigit() else -1
        return
    card = _CARD.match(line.rstrip())
    if card and (card.group(2).lower() == "series" or int(card.group(1)) not in out["card"]):
        out["card"][int(card.group(1))] = card.group(3)


def _int(cell: str | None) -> int | None:
    try:
        return int(cell) if cell is not None else None
    except ValueError:
        return None


def _numa_of(parsed: dict, model: FabricHostModel) -> dict[str, int]:
    """NUMA node per GPU: the Numa section, else single-linkage on PCIE hops <= 2 (same socket)."""
    gpus = parsed["gpus"]
    given = {g: parsed["numa"].get(int(g[3:])) for g in gpus}
    if all(v is not None and v >= 0 for v in given.values()):
        return given
    model.warn("NUMA node not shown for every GPU: sockets inferred from PCIE hops (2 = same socket; "
               "an xGMI hive is kept on one socket)")
    group = {g: i for i, g in enumerate(gpus)}
    for a in gpus:
        for b in gpus:
            hops = _int(parsed.get("hops", {}).get((a, b)))
            kind = parsed.get("type", {}).get((a, b), "").upper()
            if a < b and (kind == "XGMI" or kind == "PCIE" and hops == 2):
                old, new = group[b], group[a]
                group = {g: (new if v == old else v) for g, v in group.items()}
    firsts = sorted(set(group.values()))
    return {g: firsts.index(v) for g, v in group.items()}


def _gpu_model(parsed: dict, gpu_model: str | None, model: FabricHostModel) -> str:
    if gpu_model:
        return str(gpu_model)
    amd = {e.model.upper() for e in PCI_MODELS.values() if e.vendor == "1002"}
    cards = {family_of(c) for c in parsed["card"].values()} & amd   # "Card SKU: M3000100" is no model
    if len(cards) == 1:
        return next(iter(cards))
    model.warn("GPU model not shown by rocm-smi --showtopo: MI300X assumed (xGMI links xgmi-mi300)")
    return "MI300X"


def parse_rocm_smi(text: str, gpu_model: str | None = None) -> FabricHostModel:
    """Parse ``rocm-smi --showtopo`` text into a :class:`FabricHostModel` (warnings inside it).

    Parameters
    ----------
    text : str
        The output (untrusted).
    gpu_model : str, optional
        GPU model when the text does not name it (``MI300X``, ``MI325X``).

    Raises
    ------
    ImportFormatError
        When the text holds no GPU table (see :func:`parse_sections`).
    """
    parsed = parse_sections(text)
    model = FabricHostModel()
    gpus = parsed["gpus"]
    name = _gpu_model(parsed, gpu_model, model)
    numa_of = _numa_of(parsed, model)
    for numa in sorted(set(numa_of.values())):
        node = Numa(numa, numa, "amd-zen34")
        for g in (g for g in gpus if numa_of[g] == numa):
            attrs = {"model": name, "name": g, "numa_affinity": numa}
            if g in parsed["busid"]:
                attrs["busid"] = parsed["busid"][g]
            node.children.append(Device("gpu", g, attrs, gen=5, width=16, order=(int(g[3:]),)))
        model.numas.append(node)
    tech = xgmi_tech(name)
    for i, a in enumerate(gpus):
        for b in gpus[i + 1:]:
            _pair(parsed, a, b, tech, model)
    model.warn("rocm-smi shows no PCIe switches or NICs: each GPU on its NUMA node's host bridge "
               "over PCIe Gen5 x16, no NICs imported")
    if len(model.numas) > 1:
        model.warn("CPU model not shown by rocm-smi: inter-socket link uses AMD Zen 3/4 figures "
                   "(NCCL's AMD_ZEN34, catalog xgmi-zen3)")
    return model


def _pair(parsed: dict, a: str, b: str, tech: str, model: FabricHostModel) -> None:
    kind = (parsed.get("type", {}).get((a, b)) or parsed.get("type", {}).get((b, a)) or "").upper()
    if kind != "XGMI":
        return
    weight = _int(parsed.get("weight", {}).get((a, b)))
    if weight is None:
        model.warn("no weight table: every XGMI pair taken as one direct xGMI link")
        hops = 1
    else:
        hops = max(1, round(weight / XGMI_HOP_WEIGHT))
    if hops == 1:
        model.gpu_links.append(GpuLink(a, b, tech))
    else:
        model.warn(f"{a}-{b}: {hops} xGMI hops (weight {weight}), not a direct link; no link imported")


def write_gpu_links(doc: dict, model: HostModel, ids: dict) -> None:
    """Append ``model.gpu_links`` (when it has them) to ``doc`` as ``gpu``–``gpu`` links, ids as
    the shared writer names them (``h0/gpu0-gpu1``); a link whose end is missing is warned about."""
    links = getattr(model, "gpu_links", None) or []
    taken = {l["id"] for l in doc["links"]}
    for gl in links:
        a, b = ids.get(gl.a), ids.get(gl.b)
        if a is None or b is None:
            model.warn(f"GPU link {gl.a} -> {gl.b} skipped: endpoint not in the topology")
            continue
        lid, n = f"{a}-{b.rsplit('/', 1)[-1]}", 1
        while lid in taken:
            lid, n = f"{a}-{b.rsplit('/', 1)[-1]}-{n}", n + 1
        taken.add(lid)
        link = {"id": lid, "a": a, "b": b}
        if gl.tech is not None:
            link["tech"] = gl.tech
        else:
            link["capacity_gbps"] = float(gl.capacity_gbps or 0.0)
        doc["links"].append(link)


def rocm_matrix(text: str) -> dict:
    """The output's GPU pairs in ``nvidia-smi topo -m`` vocabulary, for
    :func:`designer.engine.io.compare.import_matrix`: a direct xGMI pair → ``NV1``, other xGMI
    pairs no code (they have none), PCIE hops 2 → ``PHB`` (same socket; the output cannot tell
    PHB from NODE), 3 → ``SYS``, the diagonal ``X``."""
    parsed = parse_sections(text)
    cells = {}
    for a in parsed["gpus"]:
        for b in parsed["gpus"]:
            code = _code(parsed, a, b)
            if code is not None:
                cells[(a, b)] = code
    return {"matrix": cells, "legend": {}}


def _code(parsed: dict, a: str, b: str) -> str | None:
    if a == b:
        return "X"
    kind = (parsed.get("type", {}).get((a, b)) or "").upper()
    weight, hops = _int(parsed.get("weight", {}).get((a, b))), _int(parsed.get("hops", {}).get((a, b)))
    if kind == "XGMI":
        return "NV1" if weight is None or round(weight / XGMI_HOP_WEIGHT) <= 1 else None
    if kind == "PCIE" and hops is not None:
        return "PHB" if hops <= 2 else "SYS"
    return None


def check_reproduction(text: str, doc: dict, host_id: str, ids: dict, model: HostModel) -> dict:
    """Compare ``topo_matrix`` of the imported host with the output's GPU pairs (:func:`rocm_matrix`);
    warn per differing cell. Returns :func:`designer.engine.io.compare.import_matrix`'s comparison."""
    from designer.engine.io.compare import import_matrix

    comparison = import_matrix(doc, host_id, ids, parsed=rocm_matrix(text))
    for row, col, code, actual in comparison["differ"][:10]:
        model.warn(f"matrix not reproduced (inconsistent input?): {row}/{col}: {code} in the input, "
                   f"{actual} imported")
    return comparison
