"""``acceptance``: the acceptance spec of a design, and the check of real nccl-tests runs against it.

Examples::

    python -m designer.engine acceptance --template dgx-h100 --hosts 4 --ops all_reduce,all_gather \\
        --format json -o spec.json
    python -m designer.engine acceptance --template dgx-h100 --hosts 4 --format csv
    python -m designer.engine acceptance --check spec.json all_reduce.log all_gather.log

The spec lists, per op and size, the least busbw and the most time a healthy cluster of this
design shows (the prediction minus the fidelity tolerance of docs/FIDELITY.md;
:mod:`designer.engine.analysis.acceptance`). ``--check`` prints pass/fail per size of every log
and exits 0 when every size passes, 1 otherwise — what a bring-up script runs.
"""
from __future__ import annotations

import json
import sys

from designer.engine.commands._design_source import add_design_arguments, design_label, design_of

__all__ = ["add_arguments", "run"]

_DEFAULT_OPS = "all_reduce,all_gather,reduce_scatter"


def add_arguments(parser) -> None:
    from designer.engine.analysis.nccl_tests import OPS, TYPE_BYTES

    add_design_arguments(parser, required=False)
    parser.add_argument("--ops", default=_DEFAULT_OPS,
                        help=f"comma-separated nccl-tests ops, or 'all' ({', '.join(OPS)}); default {_DEFAULT_OPS}")
    parser.add_argument("-b", "--min-bytes", default="8", help="smallest size (8, 64K, 8M)")
    parser.add_argument("-e", "--max-bytes", default="8G", help="largest size")
    parser.add_argument("-f", "--factor", type=int, default=2, help="factor between sizes")
    parser.add_argument("-d", "--dtype", default="float", choices=list(TYPE_BYTES), help="element type")
    parser.add_argument("--format", choices=("json", "csv"), default="json", help="spec output format")
    parser.add_argument("-o", "--output", help="write the spec here instead of stdout")
    parser.add_argument("--check", nargs="+", metavar=("SPEC", "LOG"),
                        help="a spec JSON file then nccl-tests logs: pass/fail per size, exit 0/1")


def run(args) -> int:
    if args.check:
        return _check(args.check)
    if not (args.template or args.topology):
        from designer.engine.errors import InvalidScenario, Problem

        raise InvalidScenario("no design", [Problem("--template", "give --template or --topology (or --check)")])
    from designer.engine.analysis.acceptance import acceptance_spec, spec_csv
    from designer.engine.analysis.nccl_tests import OPS

    ops = list(OPS) if args.ops.strip() == "all" else [op.strip() for op in args.ops.split(",") if op.strip()]
    spec = acceptance_spec(design_of(args), ops, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                           factor=args.factor, dtype=args.dtype, design=design_label(args))
    text = spec_csv(spec) if args.format == "csv" else json.dumps(spec, indent=1) + "\n"
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {args.output}: {sum(len(r) for r in spec['ops'].values())} sizes", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _check(paths: list[str]) -> int:
    from designer.engine.analysis.acceptance import check, verdict_lines
    from designer.engine.commands._scenario_io import read_json
    from designer.engine.errors import InvalidScenario, Problem
    from designer.engine.io.nccl_tests_log import parse_log

    if len(paths) < 2:
        raise InvalidScenario("no log", [Problem("--check", "give the spec JSON file then at least one log")])
    spec = read_json(paths[0], paths[0])
    ops = list(spec.get("ops") or ()) if isinstance(spec, dict) else []
    # A log that does not name its binary is taken as the spec's op when the spec has only one.
    default_op = ops[0] if len(ops) == 1 else None
    runs = []
    for path in paths[1:]:
        with open(path, encoding="utf-8", errors="replace") as fh:
            runs.append((path, parse_log(fh.read(), op=default_op)))
    result = check(spec, runs)
    sys.stdout.write("\n".join(verdict_lines(result)) + "\n")
    return 0 if result["passed"] else 1
