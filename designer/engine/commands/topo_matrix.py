"""``topo-matrix FILE --host ID``: the ``nvidia-smi topo -m`` matrix of one host.

Rows are the host's GPUs, columns its GPUs then NICs; the text output is aligned like
``nvidia-smi`` and ends with the legend (``--json`` prints the matrix as JSON instead).
"""
from __future__ import annotations

import json


def add_arguments(parser) -> None:
    parser.add_argument("file", help="topology document (JSON)")
    parser.add_argument("--host", required=True, help="host group id, e.g. h0")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def format_matrix(m: dict) -> str:
    """Text like ``nvidia-smi topo -m``: header, one row per GPU, NUMA column, legend."""
    width = max([len(x) for x in m["labels"]] + [4]) + 2
    lines = [" " * 8 + "".join(f"{lab:<{width}}" for lab in m["labels"]) + "NUMA Affinity"]
    for row, cells, numa in zip(m["rows"], m["matrix"], m["numa"]):
        lines.append(f"{row:<8}" + "".join(f"{c:<{width}}" for c in cells) + ("N/A" if numa is None else str(numa)))
    lines += ["", "Legend:", ""]
    lines += [f"  {code:<4} = {text}" for code, text in m["legend"].items() if not code.startswith("NIC")]
    nics = [(k, v) for k, v in m["legend"].items() if k.startswith("NIC")]
    if nics:
        lines += ["", "NIC Legend:", ""] + [f"  {k}: {v}" for k, v in nics]
    return "\n".join(lines) + "\n"


def run(args) -> int:
    from designer.engine.document import load
    from designer.engine.model.pathclass import topo_matrix
    from designer.engine.model.topology import Topology

    m = topo_matrix(Topology.from_document(load(args.file)), args.host)
    print(json.dumps(m, indent=1) if args.json else format_matrix(m), end="" if not args.json else "\n")
    return 0
