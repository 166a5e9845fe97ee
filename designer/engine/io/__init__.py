"""Import real servers (NCCL/RCCL topology XML, ``nvidia-smi topo -m``, ``rocm-smi --showtopo``, hwloc
XML) and export NCCL XML.

Every importer turns its input into one ``host`` group of a ``fabricscope.topology/1`` document,
modelled with the templates' conventions (see ``_model.py``) so that
``pathclass.topo_matrix`` of the imported host reads like the source: the input matrix itself
for ``nvidia-smi``, the relationships NCCL computes for NCCL XML. What a source does not say
becomes a documented default and a line in ``ImportResult.warnings`` — never an error. Bad input
(not the format, malformed, hostile XML, over the limits) raises :class:`ImportFormatError`.

Modules
-------
- :mod:`.nccl_xml`, :mod:`.nvidia_smi`, :mod:`.hwloc`, :mod:`.rocm_smi`: one parser per format
  (sniffed by :func:`sniff_format`); :mod:`.safe_xml`: bounded parsing of untrusted XML;
  :mod:`.pci_ids`: PCI vendor:device ids → device models;
- :mod:`._model`: the parsers' common form of one server and its conversion to a document;
- :mod:`.compare`: the imported host's path matrix next to the file's;
- :mod:`.nccl_export`: one host of a document as NCCL topology XML;
- :mod:`.simai`: SimAI / ASTRA-sim workload files → a job; :mod:`.nccl_tests_log`: the output of
  a real nccl-tests run; :mod:`.nccl_tests_json`: nccl-tests' JSON result file, read and written;
  :mod:`.nccl_debug_log`: ``NCCL_DEBUG=INFO`` output (ranks, NICs, transports, rings, trees);
  :mod:`.nccl_graph_dump`: ``NCCL_GRAPH_DUMP_FILE`` XML (NCCL's channels, their GPUs and NICs);
- :mod:`.chakra`: Chakra execution traces (per-rank ``.et``) and communicator groups → a job;
  :mod:`.chakra_write`: ``.et`` traces written from node dicts (fixtures, benchmarks);
  :mod:`.protowire`: a bounded protobuf wire-format reader and a small writer;
- :mod:`.simai_topo`: SimAI topology text ↔ a topology document (byte-stable round trip).
- :mod:`.ops_exports`: the exports for simulators and operations, one entry point over
  :mod:`.astrasim_out` (ASTRA-sim 2.0 network YAML + system JSON), :mod:`.htsim_out` (htsim
  fat-tree ``.topo``), :mod:`.slurm_out` (Slurm ``topology.conf`` / ``topology.yaml``),
  :mod:`.dot_out` (NVIDIA Air DOT), :mod:`.netbox_out` (NetBox bulk-import CSV); they share
  :mod:`.fabric_view` (servers, switches, cables with deterministic port names).
- :mod:`.netbox_cables`: NetBox bulk-import CSV of a *physical plan's* cable schedule (racks,
  breakout ports, media, lengths) and its reader (the round trip); :mod:`.netbox_devicetype`:
  devicetype-library YAML → rack units and power; :mod:`.lldp`: ``lldpctl -f json`` and
  ``show lldp neighbors`` tables, and the as-built diff against the schedule.

Example
-------
>>> result = import_text(open("topo.txt").read(), host_id="h0")   # doctest: +SKIP
>>> result.format, result.warnings[:1]                               # doctest: +SKIP
('nvidia-smi', ['PCIe generation and width not shown by nvidia-smi: Gen4 x16 assumed ...'])
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from designer.engine.errors import ImportFormatError, Problem

__all__ = ["FORMATS", "ImportResult", "import_text", "sniff_format", "export_nccl_xml"]

#: Accepted ``format`` names (``simai-topo``, a whole SimAI cluster, is never sniffed: give it).
FORMATS = ("nccl-xml", "nvidia-smi", "hwloc", "rocm-smi", "simai-topo")
_SNIFF_CHARS = 64 * 1024
_TEXT_FORMATS = ("nvidia-smi", "rocm-smi")   # text tables that do not name the GPU model
_HOST_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


@dataclass
class ImportResult:
    """What :func:`import_text` returns.

    Attributes
    ----------
    document : dict
        A normalized ``fabricscope.topology/1`` document with one host group.
    warnings : list of str
        Every default taken for a missing or unusable value, one line each.
    format : str
        The format read (one of :data:`FORMATS`).
    ids : dict
        Source names (bus ids, ``GPU0``, ``NIC1``) -> node ids.
    matrix : dict or None
        The imported host's ``topo -m`` path classes and, for an ``nvidia-smi`` file, the
        file's own next to them (:func:`designer.engine.io.compare.import_matrix`); None when
        the host has no GPU.
    """

    document: dict
    warnings: list[str] = field(default_factory=list)
    format: str = ""
    ids: dict = field(default_factory=dict)
    matrix: dict | None = None


def sniff_format(text: str | bytes) -> str:
    """Tell the format of ``text`` from its first 64 kB.

    Returns
    -------
    str
        ``"nccl-xml"`` (a ``<system>`` root), ``"hwloc"`` (``<topology>``), ``"rocm-smi"`` (a
        ``… between two GPUs`` table title) or ``"nvidia-smi"`` (a ``GPU0`` header line).

    Raises
    ------
    ImportFormatError
        When none of them fits.
    """
    head = text[:_SNIFF_CHARS]
    if isinstance(head, (bytes, bytearray)):
        head = bytes(head).decode("utf-8", errors="replace")
    head = re.sub(r"<!--.*?(-->|$)", "", head, flags=re.S)
    if re.search(r"<system[\s>/]", head):
        return "nccl-xml"
    if re.search(r"<topology[\s>/]", head):
        return "hwloc"
    from designer.engine.io.rocm_smi import looks_like_rocm_smi

    if looks_like_rocm_smi(head):   # before nvidia-smi: its tables have a GPU0 header too
        return "rocm-smi"
    if re.search(r"(^|\s)GPU0(\s|$)", re.sub(r"\x1b\[[0-9;]*m", " ", head), flags=re.M):
        return "nvidia-smi"
    if head.lstrip().startswith("<"):
        raise ImportFormatError("XML input is neither NCCL topology XML (<system>) nor hwloc XML "
                                "(<topology>)", [Problem("format", "unknown XML root")])
    raise ImportFormatError("cannot tell the input format: expected NCCL topology XML, hwloc XML, "
                            "nvidia-smi topo -m or rocm-smi --showtopo text (or pass format=)",
                            [Problem("format", "not recognised")])


def import_text(text: str | bytes, *, format: str | None = None, host_id: str = "h0",
                name: str | None = None, gpu_model: str | None = None) -> ImportResult:
    """Import one server from text.

    Parameters
    ----------
    text : str or bytes
        The file content (untrusted).
    format : {"nccl-xml", "nvidia-smi", "hwloc", "rocm-smi", "simai-topo"}, optional
        Sniffed with :func:`sniff_format` when omitted (never as ``simai-topo``: a SimAI
        topology file is a whole cluster, :mod:`.simai_topo`; ``host_id`` is then unused).
    host_id : str
        Id of the host group (node ids ``<host_id>/gpu0`` …).
    name : str, optional
        Document name (default: ``host_id``).
    gpu_model : str, optional
        GPU model for text formats that do not name it (``nvidia-smi``: sets ``attrs.model`` and
        the NVLink generation, e.g. ``B200`` → NVLink 5; ``rocm-smi``: the xGMI link tech, e.g.
        ``MI325X``). XML files name their GPUs by PCI id; there it is ignored with a warning.

    Returns
    -------
    ImportResult

    Raises
    ------
    ImportFormatError
        Unknown format, malformed or hostile input, or input over the size/depth limits.
    """
    from designer.engine.document import normalize
    from designer.engine.io._model import to_document

    if not isinstance(host_id, str) or not _HOST_ID.match(host_id):
        raise ImportFormatError(f"host id {host_id!r} must be 1-64 letters, digits, _ . : -",
                                [Problem("host_id", "invalid host id")])
    fmt = format or sniff_format(text)
    if fmt == "simai-topo":
        return _simai_topo(text, name)
    parse = _parser(fmt)
    if fmt in _TEXT_FORMATS and isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(f"input is not UTF-8 text (byte {exc.start} is invalid)") from None
    model = parse(text, gpu_model=gpu_model) if fmt in _TEXT_FORMATS else parse(text)
    if gpu_model and fmt not in _TEXT_FORMATS:
        model.warn(f"gpu_model {gpu_model!r} ignored: {fmt} names its GPUs itself")
    ids: dict = {}
    raw = to_document(model, host_id=host_id, name=name, ids=ids)
    from designer.engine.io.rocm_smi import write_gpu_links

    write_gpu_links(raw, model, ids)   # xGMI links (rocm-smi, RCCL XML): not NVLink, not in _model
    doc = normalize(raw)
    if fmt == "nvidia-smi":
        from designer.engine.io.nvidia_smi import check_reproduction

        matrix = check_reproduction(text, doc, host_id, ids, model)
    elif fmt == "rocm-smi":
        from designer.engine.io.rocm_smi import check_reproduction

        matrix = check_reproduction(text, doc, host_id, ids, model)
    else:
        from designer.engine.io.compare import import_matrix

        matrix = import_matrix(doc, host_id, ids)
    if not matrix["rows"]:
        matrix = None
    return ImportResult(doc, list(model.warnings), fmt, ids, matrix)


def _simai_topo(text: str | bytes, name: str | None) -> ImportResult:
    """A SimAI topology file as a whole design (:mod:`.simai_topo`), not one host."""
    from designer.engine.document import normalize
    from designer.engine.io.simai_topo import simai_topo_document

    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(f"input is not UTF-8 text (byte {exc.start} is invalid)") from None
    doc, warnings = simai_topo_document(text, name=name or "simai")
    return ImportResult(normalize(doc), warnings, "simai-topo", {}, None)


def _parser(fmt: str):
    if fmt == "nccl-xml":
        from designer.engine.io.nccl_xml import parse_nccl_xml as parse
    elif fmt == "nvidia-smi":
        from designer.engine.io.nvidia_smi import parse_nvidia_smi as parse
    elif fmt == "hwloc":
        from designer.engine.io.hwloc import parse_hwloc as parse
    elif fmt == "rocm-smi":
        from designer.engine.io.rocm_smi import parse_rocm_smi as parse
    else:
        raise ImportFormatError(f"unknown import format {fmt!r} (choose from {', '.join(FORMATS)})",
                                [Problem("format", f"unknown format {fmt!r}")])
    return parse


def export_nccl_xml(doc: dict, host_id: str) -> str:
    """NCCL topology XML (``NCCL_TOPO_FILE`` format) of one host of ``doc``.

    See :func:`designer.engine.io.nccl_export.export_nccl_xml`.
    """
    from designer.engine.io.nccl_export import export_nccl_xml as export

    return export(doc, host_id)
