"""``import-workload FILE --format simai -o job.json``: a SimAI / ASTRA-sim workload file as a job.

Writes ``{"job": {...}}`` — a scenario's ``workload`` (docs/FORMATS.md, Jobs) — on stdout or into
``-o``; a summary line (layout, phases, patterns) goes to stderr. Unknown header fields, columns
or communication types are located errors (``line 7: fwd comm type: unsupported ...``).
"""
from __future__ import annotations

import json
import sys

FORMATS = ("simai",)


def add_arguments(parser) -> None:
    parser.add_argument("file", help="workload file ('-' for stdin)")
    parser.add_argument("--format", choices=FORMATS, default="simai", help="input format (default simai)")
    parser.add_argument("--time-unit-s", type=float, default=1e-9,
                        help="seconds per compute-time unit of the file (default 1e-9: SimAI's ns cycles)")
    parser.add_argument("-o", "--output", default=None, help="write the job here, not stdout")


def run(args) -> int:
    from designer.engine.io.simai import simai_job

    if args.file == "-":
        text = sys.stdin.read()
    else:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    workload = simai_job(text, time_unit_s=args.time_unit_s)
    out = json.dumps(workload, indent=1)
    job = workload["job"]
    patterns = sum(len(p.get("patterns", [])) for p in job["phases"])
    summary = (f"imported {args.format}: layout {job['layout']}, {len(job['phases']):,} phases, "
               f"{patterns:,} patterns")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(out + "\n")
        print(f"{summary} -> {args.output}", file=sys.stderr)
    else:
        print(out)
        print(summary, file=sys.stderr)
    return 0
