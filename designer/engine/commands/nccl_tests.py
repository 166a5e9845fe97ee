"""``nccl-tests``: predicted nccl-tests table for a template cluster or a topology file.

Examples::

    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --op all_reduce \\
        -b 8 -e 8G -f 2
    python -m designer.engine nccl-tests --topology pod.json --op all_gather --algorithm ring
    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --op broadcast -r 3 -b 1M -e 1G
    python -m designer.engine nccl-tests --template dgx-h100 --hosts 4 --hosts-subset h0,h3 \\
        --env NCCL_ALGO=Ring --env NCCL_PROTO=Simple --nic-policy pxn
    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --compare run.log run.json
    python -m designer.engine nccl-tests --template dgx-h100 --hosts 2 --format json-nccl-tests > pred.json

The table has nccl-tests' own layout (``size count type redop root time algbw busbw``, time in
µs, bandwidths in GB/s) with the engine's chosen ``algorithm`` and ``protocol`` instead of the
in-place columns (a prediction has no in-place/out-of-place difference). Every nccl-tests binary
is an ``--op``: all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast, reduce,
gather, scatter, hypercube. nccl-tests' options keep their letters (``-b -e -f -i -d -r``);
its ``-o`` reduction is ``-o/--redop`` here (``--op`` names the binary) and is only echoed.
``--env NAME=VALUE`` (repeatable) takes NCCL knobs
(:mod:`designer.engine.analysis.nccl_env`); ``--compare`` reads a run's stdout or JSON file and
prints measured, predicted and the busbw error per size; ``--format json-nccl-tests`` (or
``--output-json FILE``) writes the prediction as nccl-tests' JSON result file.
"""
from __future__ import annotations

import json
import sys

from designer.engine.commands._design_source import design_of

__all__ = ["add_arguments", "format_comparison", "format_table", "run"]


def add_arguments(parser) -> None:
    from designer.engine.analysis.nccl_tests import MAX_CHANNELS, OPS, PROTOCOL_CHOICES, REDOPS, TYPE_BYTES
    from designer.engine.analysis.nccl_tests_config import NIC_POLICY_CHOICES

    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--template", help="built-in host template (with --hosts)")
    source.add_argument("--topology", help="topology document JSON file")
    parser.add_argument("--hosts", type=int, default=1, help="hosts of the template (default 1)")
    parser.add_argument("--fabric", default="rail-optimized", help="fabric generator for --hosts > 1")
    parser.add_argument("--op", default="all_reduce", choices=list(OPS), help="collective (nccl-tests binary)")
    parser.add_argument("-b", "--min-bytes", "--minbytes", default="8", help="smallest size, like nccl-tests -b (8, 64K, 8M, 8G)")
    parser.add_argument("-e", "--max-bytes", "--maxbytes", default="8G", help="largest size, like nccl-tests -e")
    parser.add_argument("-f", "--factor", "--stepfactor", type=int, default=None,
                        help="multiplication factor between sizes (default 2)")
    parser.add_argument("-i", "--stepbytes", default=None,
                        help="additive increment between sizes, used instead of -f (as nccl-tests: -f 1 or no -f)")
    parser.add_argument("-d", "--dtype", "--datatype", default="float", choices=list(TYPE_BYTES), help="element type")
    parser.add_argument("-o", "--redop", default="sum", choices=list(REDOPS),
                        help="reduction operator, echoed in the redop column; it does not change the modelled time")
    parser.add_argument("-r", "--root", type=int, default=0, help="root rank of broadcast/reduce/gather/scatter")
    parser.add_argument("--gpus", help="GPU subset: ids in rank order (h0/gpu0,h1/gpu0) or a JSON selector")
    parser.add_argument("--hosts-subset", help="host subset: every GPU of these hosts (h0,h3)")
    parser.add_argument("--nic-policy", choices=list(NIC_POLICY_CHOICES), default=None,
                        help="NIC routing policy (default affinity)")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an NCCL knob (repeatable): NCCL_ALGO, NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS, ...")
    parser.add_argument("--algorithm", default="auto", help="auto (default) or an algorithm the engine accepts")
    parser.add_argument("--protocol", default="auto", choices=list(PROTOCOL_CHOICES),
                        help="auto (default: the engine picks per size) or force LL, LL128, Simple")
    parser.add_argument("-g", "--ngpus", type=int, default=1,
                        help="GPUs one thread drives, like nccl-tests -g (default 1, one process per GPU); "
                             "a loop's time per operation is at least -g host launches")
    parser.add_argument("--channels", type=int, default=None,
                        help=f"channels (1..{MAX_CHANNELS}) the collective runs on (default: the engine's count)")
    parser.add_argument("--compare", metavar="LOG", nargs="+",
                        help="stdout or JSON files of real nccl-tests runs (of one collective) to compare with")
    parser.add_argument("--format", choices=("text", "json", "json-nccl-tests"), default="text",
                        help="text table (default), the engine's JSON, or nccl-tests' JSON result file")
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument("--output-json", metavar="FILE", help="also write the prediction as nccl-tests' JSON file")


def run(args) -> int:
    from designer.engine.analysis.nccl_tests import compile_topology, side_by_side
    from designer.engine.analysis.nccl_tests_config import sweep_settings
    from designer.engine.io.nccl_tests_json import parse_run

    runs = []
    for path in args.compare or ():
        with open(path, encoding="utf-8", errors="replace") as fh:
            runs.append((path, parse_run(fh.read(), op=args.op)))
    topo = compile_topology(design_of(args))
    settings = sweep_settings(topo, op=args.op, algorithm=args.algorithm, protocol=args.protocol,
                              channels=args.channels, env=args.env, gpus=args.gpus, hosts=args.hosts_subset,
                              nic_policy=args.nic_policy)
    env = settings.pop("env")
    factor = args.factor if args.factor is not None or args.stepbytes else 2
    out = side_by_side(topo, args.op, min_bytes=args.min_bytes, max_bytes=args.max_bytes, factor=factor,
                       step_bytes=args.stepbytes, dtype=args.dtype, logs=runs, root=args.root, redop=args.redop,
                       gpus_per_thread=args.ngpus, **settings)
    out["env"] = env
    _notes(args, out)
    text = _render(args, topo, out, settings, factor)
    sys.stdout.write(text + "\n")
    return 0


def _render(args, topo, out: dict, settings: dict, factor) -> str:
    from designer.engine.analysis.nccl_tests import parse_size
    from designer.engine.analysis.nccl_tests_config import prediction_file

    fmt = "json" if args.json else args.format
    if fmt == "json-nccl-tests" or args.output_json:
        doc = prediction_file(topo, out, args=_argv(args), participants=settings["participants"],
                              min_bytes=parse_size(args.min_bytes, "min_bytes"),
                              max_bytes=parse_size(args.max_bytes, "max_bytes"), factor=factor,
                              step_bytes=parse_size(args.stepbytes, "step_bytes") if args.stepbytes else None)
        if args.output_json:
            with open(args.output_json, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=1)
        if fmt == "json-nccl-tests":
            return json.dumps(doc, indent=1)
    if fmt == "json":
        return json.dumps(out, indent=1)
    title = (f"# fabricscope prediction: {topo.name or 'topology'}, {out['op']}, {out['ranks']} ranks, "
             f"algorithm {out['algorithm']}, protocol {out['protocol']}"
             + (f", {out['channels']} channels" if out["channels"] else "")
             + (f", -g {out['gpus_per_thread']}" if out["gpus_per_thread"] > 1 else "")
             + (f", root {out['root']}" if out["rows"] and out["rows"][0]["root"] != -1 else "")
             + (f"; env {' '.join(out['env'])}" if out["env"] else ""))
    if not out["runs"]:
        return format_table(out["rows"], title)
    return "\n\n".join(format_comparison(run["comparison"], title, run["name"], run["curve"])
                        for run in out["runs"])


def _argv(args) -> list[str]:
    """The nccl-tests command line this prediction stands for."""
    argv = [f"{args.op}_perf", "-b", str(args.min_bytes), "-e", str(args.max_bytes)]
    argv += ["-i", str(args.stepbytes)] if args.stepbytes and not args.factor else ["-f", str(args.factor or 2)]
    argv += ["-d", args.dtype, "-o", args.redop, "-r", str(args.root)]
    return argv


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
