"""``import``: read NCCL/RCCL topology XML, ``nvidia-smi topo -m``, ``rocm-smi --showtopo`` text or
hwloc XML as one host, or a SimAI topology file (``--format simai-topo``) as a whole design.

Prints the ``fabricscope.topology/1`` document (JSON) on stdout or into ``-o OUT``; every default
the importer had to take is one ``warning:`` line on stderr. The format is sniffed unless given.
"""
from __future__ import annotations

import sys

from designer.engine.io import FORMATS, import_text


def add_arguments(parser) -> None:
    parser.add_argument("file", help="input file ('-' for stdin)")
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="input format (default: sniffed from the content)")
    parser.add_argument("--host-id", default="h0", help="id of the imported host group (default h0)")
    parser.add_argument("--name", default=None, help="document name (default: the host id)")
    parser.add_argument("--gpu-model", default=None,
                        help="GPU model for nvidia-smi / rocm-smi text, which does not name it (B200: "
                             "NV18 is NVLink 5; MI325X: its xGMI links)")
    parser.add_argument("-o", "--output", default=None, help="write the document here, not stdout")


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as fh:
        return fh.read()


def run(args) -> int:
    from designer.engine.document import dump

    result = import_text(_read(args.file), format=args.format, host_id=args.host_id, name=args.name,
                         gpu_model=args.gpu_model)
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    text = dump(result.document)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        print(f"imported {result.format}: {len(result.document['nodes'])} nodes, "
              f"{len(result.document['links'])} links -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
