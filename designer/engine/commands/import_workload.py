"""``import-workload``: a SimAI / ASTRA-sim workload file, or Chakra execution traces, as a job.

``import-workload FILE --format simai -o job.json`` reads a SimAI workload;
``import-workload --format chakra TRACE_DIR_OR_FILES... --groups groups.json --template dgx-h100
--hosts 2 -o job.json`` reads one ``.et`` file per rank (a directory means its ``*.et`` files)
and maps rank ``r`` onto the design's ``r``-th GPU (``--template``/``--topology``).

Writes ``{"job": {...}}`` — a scenario's ``workload`` (docs/FORMATS.md, Jobs) — on stdout or into
``-o``; a summary (SimAI: layout, phases, patterns; Chakra: ranks, nodes by type, bytes by
collective) goes to stderr, and ``--summary`` prints only the Chakra summary (JSON) without the
job. Bad input is a located error (``line 7: fwd comm type: ...``, ``rank 3 (trace.3.et) byte
1,204: truncated varint``).
"""
from __future__ import annotations

import json
import pathlib
import sys

FORMATS = ("simai", "chakra")


def add_arguments(parser) -> None:
    from designer.engine.commands._design_source import add_design_arguments

    parser.add_argument("file", nargs="+", help="workload file ('-' for stdin); for chakra: .et files or directories")
    parser.add_argument("--format", choices=FORMATS, default="simai", help="input format (default simai)")
    parser.add_argument("--time-unit-s", type=float, default=1e-9,
                        help="seconds per compute-time unit of the file (default 1e-9: SimAI's ns cycles)")
    parser.add_argument("--groups", default=None, help="chakra: communicator-group JSON {\"pg_name\": [ranks]}")
    parser.add_argument("--summary", action="store_true", help="chakra: print the summary only (JSON)")
    parser.add_argument("-o", "--output", default=None, help="write the job here, not stdout")
    add_design_arguments(parser, required=False)


def run(args) -> int:
    if args.format == "chakra":
        return _run_chakra(args)
    from designer.engine.io.simai import simai_job

    if len(args.file) != 1:
        print("error: simai takes one workload file", file=sys.stderr)
        return 2
    if args.file[0] == "-":
        text = sys.stdin.read()
    else:
        with open(args.file[0], encoding="utf-8") as fh:
            text = fh.read()
    workload = simai_job(text, time_unit_s=args.time_unit_s)
    job = workload["job"]
    patterns = sum(len(p.get("patterns", [])) for p in job["phases"])
    _write(args, workload, f"imported {args.format}: layout {job['layout']}, {len(job['phases']):,} phases, "
                           f"{patterns:,} patterns")
    return 0


def _trace_files(paths: list[str]) -> list[pathlib.Path]:
    files = []
    for p in map(pathlib.Path, paths):
        files.extend(sorted(p.glob("*.et")) if p.is_dir() else [p])
    return files


def _run_chakra(args) -> int:
    from designer.engine.analysis.nccl_tests import compile_topology
    from designer.engine.commands._design_source import design_of
    from designer.engine.io.chakra import chakra_job
    from designer.engine.traffic.jobs.ranks import rank_gpu_ids

    if not (args.template or args.topology):
        print("error: chakra needs the design its ranks run on (--template/--hosts or --topology)", file=sys.stderr)
        return 2
    gpu_ids = rank_gpu_ids(compile_topology(design_of(args)))
    traces = [(f.name, f.read_bytes) for f in _trace_files(args.file)]
    groups = pathlib.Path(args.groups).read_bytes() if args.groups else None
    result = chakra_job(traces, groups, gpu_ids)
    for line in result.warnings:
        print(f"warning: {line}", file=sys.stderr)
    s = result.summary
    if args.summary:
        print(json.dumps(s, indent=1))
        return 0
    nodes = ", ".join(f"{k} {v:,}" for k, v in s["nodes"].items())
    _write(args, result.workload, f"imported chakra: {s['ranks']} ranks, {s['phases']:,} phases; nodes {nodes}; "
                                  f"bytes {s['bytes_by_collective']}")
    return 0


def _write(args, workload: dict, summary: str) -> None:
    out = json.dumps(workload, indent=1)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(out + "\n")
        print(f"{summary} -> {args.output}", file=sys.stderr)
    else:
        print(out)
        print(summary, file=sys.stderr)
