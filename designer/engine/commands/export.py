"""``export``: write one host as NCCL topology XML, a document (or one host) as GraphML/JSON, or a
design for ASTRA-sim, htsim, Slurm, NVIDIA Air or NetBox (``designer.engine.io.ops_exports``).

GraphML comes from ``Topology.to_networkx()`` through networkx (readable by networkx and yEd);
NCCL XML from :func:`designer.engine.io.export_nccl_xml` (needs ``--host``).
"""
from __future__ import annotations

import io
import sys

from designer.engine.errors import InvalidTopology, Problem

FORMATS = ("nccl-xml", "graphml", "json")
# Exports for packet-level simulators and operations (designer.engine.io.ops_exports): one file
# to stdout / -o FILE; several (astra-sim, netbox) as a JSON bundle, or into the directory -o DIR.
OPS_FORMATS = ("astra-sim", "htsim", "slurm-tree", "slurm-block", "dot-air", "netbox")
FORMATS += OPS_FORMATS
FORMATS += ("simai-topo",)   # SimAI's topology text (designer.engine.io.simai_topo)


def add_arguments(parser) -> None:
    parser.add_argument("file", help="topology document (JSON)")
    parser.add_argument("--host", default=None, help="host group id (required for nccl-xml)")
    parser.add_argument("--format", choices=FORMATS, default="nccl-xml", help="output format")
    parser.add_argument("-o", "--output", default=None, help="write here instead of stdout")


def extract_host(doc: dict, host: str) -> dict:
    """The part of ``doc`` inside host group ``host``: its group, nodes and internal links."""
    from designer.engine.model.topology import Topology

    topo = Topology.from_document(doc)
    if topo.groups.get(host, {}).get("kind") != "host":
        raise InvalidTopology(f'no host "{host}"', [Problem("host", f'no host group "{host}"')])
    keep = {topo.node_ids[i] for i in topo.nodes_of_host(host)}
    return {"format": topo.doc["format"], "name": topo.doc.get("name", ""),
            "groups": [g for g in topo.doc.get("groups", []) if g["id"] == host],
            "nodes": [n for n in topo.doc["nodes"] if n["id"] in keep],
            "links": [l for l in topo.doc["links"] if l["a"] in keep and l["b"] in keep]}


def graphml_text(doc: dict) -> str:
    """GraphML of a document (node kind/host, link tech/capacity_gbps/latency_ns)."""
    import networkx as nx

    from designer.engine.model.topology import Topology

    graph = Topology.from_document(doc).to_networkx()
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer, encoding="utf-8")
    return buffer.getvalue().decode("utf-8")


def run(args) -> int:
    from designer.engine.document import dump, load
    from designer.engine.io import export_nccl_xml

    doc = load(args.file)
    if args.format in OPS_FORMATS:
        return _write_ops(doc, args.format, args.output)
    if args.format == "simai-topo":
        from designer.engine.io.simai_topo import export_simai_topo

        return _write_text(export_simai_topo(doc), args.output)
    if args.format == "nccl-xml":
        if not args.host:
            raise InvalidTopology("--host is required for nccl-xml", [Problem("--host", "missing")])
        text = export_nccl_xml(doc, args.host)
    else:
        part = extract_host(doc, args.host) if args.host else doc
        text = graphml_text(part) if args.format == "graphml" else dump(part)
    if not text.endswith("\n"):
        text += "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _write_ops(doc: dict, fmt: str, output: str | None) -> int:
    """An ops/simulator export: one file as text; several as a bundle, or into directory ``output``."""
    import os

    from designer.engine.io.ops_exports import bundle_text, export_files, is_bundle

    files = export_files(doc, fmt)
    if is_bundle(fmt) and output:
        os.makedirs(output, exist_ok=True)
        for name, text in files.items():
            with open(os.path.join(output, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        return 0
    text = bundle_text(fmt, files) if is_bundle(fmt) else next(iter(files.values()))
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _write_text(text: str, output: str | None) -> int:
    """Write ``text`` exactly (no newline added: byte-stable formats) to ``output`` or stdout."""
    if output:
        with open(output, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
