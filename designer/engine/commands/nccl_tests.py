"""``nccl-tests``: predicted nccl-tests table for a template cluster or a topology file.

Examples::

    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --op all_reduce \\
        --min-bytes 8 --max-bytes 8G --factor 2
    python -m designer.engine nccl-tests --topology pod.json --op all_gather --algorithm ring
    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --compare run.log
    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --protocol Simple --channels 16 \\
        --compare run1.log run2.log

The table has nccl-tests' own layout (``size count type redop root time algbw busbw``, time in
µs, bandwidths in GB/s) with the engine's chosen ``algorithm`` and ``protocol`` instead of the
in-place columns (a prediction has no in-place/out-of-place difference). ``--compare LOG`` reads a
real run's stdout and prints measured, predicted and the busbw error per size instead (several
logs of one collective: one such table each, against one prediction). ``--protocol`` and
``--channels`` force NCCL's protocol and channel count (``NCCL_PROTO``, ``NCCL_MIN_NCHANNELS`` =
``NCCL_MAX_NCHANNELS``) in the prediction.
"""
from __future__ import annotations

import json
import sys

__all__ = ["add_arguments", "format_comparison", "format_table", "run"]


def add_arguments(parser) -> None:
    from designer.engine.analysis.nccl_tests import MAX_CHANNELS, OPS, PROTOCOL_CHOICES, TYPE_BYTES

    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--template", help="built-in host template (with --hosts)")
    source.add_argument("--topology", help="topology document JSON file")
    parser.add_argument("--hosts", type=int, default=1, help="hosts of the template (default 1)")
    parser.add_argument("--fabric", default="rail-optimized", help="fabric generator for --hosts > 1")
    parser.add_argument("--op", default="all_reduce", choices=list(OPS), help="collective (nccl-tests binary)")
    parser.add_argument("-b", "--min-bytes", default="8", help="smallest size, like nccl-tests -b (8, 64K, 8M, 8G)")
    parser.add_argument("-e", "--max-bytes", default="8G", help="largest size, like nccl-tests -e")
    parser.add_argument("-f", "--factor", type=int, default=2, help="multiplication factor between sizes")
    parser.add_argument("-d", "--dtype", default="float", choices=list(TYPE_BYTES), help="element type")
    parser.add_argument("--algorithm", default="auto", help="auto (default) or an algorithm the engine accepts")
    parser.add_argument("--protocol", default="auto", choices=list(PROTOCOL_CHOICES),
                        help="auto (default: the engine picks per size) or force LL, LL128, Simple")
    parser.add_argument("--channels", type=int, default=None,
                        help=f"channels (1..{MAX_CHANNELS}) the collective runs on (default: the engine's count)")
    parser.add_argument("--compare", metavar="LOG", nargs="+",
                        help="stdout of one or more real nccl-tests runs (of one collective) to compare with")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")


def _topology(args):
    if args.topology:
        from designer.engine.commands._scenario_io import read_json

        return read_json(args.topology, args.topology)
    build = {"template": args.template, "hosts": args.hosts}
    if args.hosts > 1:
        build["fabric"] = args.fabric
    return {"build": build}


def run(args) -> int:
    from designer.engine.analysis.nccl_tests import compile_topology, side_by_side
    from designer.engine.io.nccl_tests_log import parse_log

    runs = []
    for path in args.compare or ():
        with open(path, encoding="utf-8", errors="replace") as fh:
            runs.append((path, parse_log(fh.read(), op=args.op)))
    topo = compile_topology(_topology(args))
    out = side_by_side(topo, args.op, min_bytes=args.min_bytes, max_bytes=args.max_bytes, factor=args.factor,
                       algorithm=args.algorithm, dtype=args.dtype, logs=runs, protocol=args.protocol,
                       channels=args.channels)
    _notes(args, out)
    title = (f"# fabricscope prediction: {topo.name or 'topology'}, {out['op']}, {out['ranks']} ranks, "
             f"algorithm {args.algorithm}, protocol {args.protocol}"
             + (f", {args.channels} channels" if args.channels else ""))
    if args.json:
        text = json.dumps(out, indent=1)
    elif not runs:
        text = format_table(out["rows"], title)
    else:
        text = "\n\n".join(format_comparison(run["comparison"], title, run["name"], run["curve"])
                            for run in out["runs"])
    sys.stdout.write(text + "\n")
    return 0


def _notes(args, out: dict) -> None:
    if out["measured_op"] and out["measured_op"] != args.op:
        print(f"note: {' '.join(args.compare)} is an {out['measured_op']} run; predicting {out['op']}",
              file=sys.stderr)
    if out["measured_ranks"] and out["measured_ranks"] != out["ranks"]:
        print(f"note: the run has {out['measured_ranks']} ranks, the topology {out['ranks']} GPUs", file=sys.stderr)


def _text(value, width: int) -> str:
    return f"{'-' if value is None else value:>{width}}"


def _time(us: float) -> str:
    # nccl-tests' own rule (src/common.cu): 0 decimals from 10 ms, 1 from 100 µs, else 2.
    return f"{us:7.0f}" if us >= 10000 else f"{us:7.1f}" if us >= 100 else f"{us:7.2f}"


def format_table(rows: list[dict], title: str) -> str:
    """The predicted sweep in nccl-tests' stdout layout (µs, GB/s), plus ``algorithm`` and
    ``protocol``, and nccl-tests' ``# Avg bus bandwidth`` trailer (mean busbw over the sizes)."""
    lines = [title, "#",
             f"# {'':>10}  {'':>12}  {'':>8}  {'':>6}  {'':>6}           predicted",
             (f"# {'size':>10}  {'count':>12}  {'type':>8}  {'redop':>6}  {'root':>6}  {'time':>7}  {'algbw':>6}  "
              f"{'busbw':>6}  {'algorithm':>9}  {'protocol':>8}"),
             f"# {'(B)':>10}  {'(elements)':>12}  {'':>8}  {'':>6}  {'':>6}  {'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}"]
    for r in rows:
        lines.append(f"{r['size_bytes']:>12}  {r['count']:>12}  {r['type']:>8}  {r['redop']:>6}  {r['root']:>6}  "
                     f"{_time(r['time_us'])}  {r['algbw_gbs']:6.2f}  {r['busbw_gbs']:6.2f}  "
                     f"{_text(r['algorithm'], 9)}  {_text(r['protocol'], 8)}")
    mean = sum(r["busbw_gbs"] for r in rows) / len(rows) if rows else 0.0
    lines += ["#", f"# Avg bus bandwidth    : {mean:g}"]
    return "\n".join(lines)


def _num(value, spec: str, width: int) -> str:
    return f"{'N/A':>{width}}" if value is None else format(value, spec)


def format_comparison(table: list[dict], title: str, source: str, curve: dict | None = None) -> str:
    """Measured (out-of-place) | predicted | busbw error per size, nccl-tests' column style, and
    the curve's trailer (:func:`designer.engine.analysis.nccl_tests.curve_summary`)."""
    lines = [title, f"# measured: {source} (out-of-place); error = (predicted - measured) / measured of busbw",
             "#",
             f"# {'':>10}  {'':>12}  {'measured':>23}  {'predicted':>23}",
             (f"# {'size':>10}  {'count':>12}  {'time':>7}  {'algbw':>6}  {'busbw':>6}  {'time':>7}  {'algbw':>6}  "
              f"{'busbw':>6}  {'error':>7}  {'algorithm':>9}"),
             (f"# {'(B)':>10}  {'(elements)':>12}  {'(us)':>7}  {'(GB/s)':>6}  {'(GB/s)':>6}  {'(us)':>7}  "
              f"{'(GB/s)':>6}  {'(GB/s)':>6}  {'(%)':>7}")]
    for r in table:
        m, p = r["measured"], r["predicted"]
        mt = f"{'N/A':>7}" if m["time_us"] is None else _time(m["time_us"])
        lines.append(f"{r['size_bytes']:>12}  {_text(r['count'], 12)}  {mt}  {_num(m['algbw_gbs'], '6.2f', 6)}  "
                     f"{_num(m['busbw_gbs'], '6.2f', 6)}  {_time(p['time_us'])}  {p['algbw_gbs']:6.2f}  "
                     f"{p['busbw_gbs']:6.2f}  {_num(r['error_pct'], '+7.1f', 7)}  {_text(r['algorithm'], 9)}")
    if not table:
        lines.append("# no size of the log is in the predicted sweep (check --min-bytes/--max-bytes/--factor)")
    elif curve and curve["sizes"]:
        lines += ["#", curve_line(curve)]
    return "\n".join(lines)


def curve_line(curve: dict) -> str:
    """``# curve: 9 sizes, 7 within ±10 %; median |error| 6.0 %, worst 88.1 % at 32 MiB``."""
    return (f"# curve: {curve['sizes']} sizes, {curve['within']} within ±{curve['tolerance_pct']:g} % of busbw; "
            f"median |error| {curve['median_abs_error_pct']:.1f} %, worst {curve['worst_abs_error_pct']:.1f} % "
            f"at {curve['worst_size_bytes']} B")
