"""Fidelity benchmark: published measurements against the engine's predictions (docs/FIDELITY.md).

``python -m designer.engine bench --only fidelity`` runs every case of ``fidelity_cases.json``
through :func:`designer.engine.analysis.simulate.simulate` with the project's own templates and catalog —
no per-case override — and prints ``published | predicted | error | source`` (on stderr; the
figures JSON goes to stdout like every benchmark). A bandwidth case passes within ±10 %, a latency
case within ±25 % (the file's ``tolerances``). It is a benchmark, not a test: nothing asserts.

Metrics (``case["metric"]``), read from the simulated pattern's summary:

- ``busbw_gbs``: nccl-tests bus bandwidth, GB/s — the pattern's ``busbw_gbs`` when the engine
  reports it, else ``bytes / completion_s`` × nccl-tests' factor (all-reduce ``2(n−1)/n``,
  all-gather / reduce-scatter / all-to-all ``(n−1)/n``);
- ``algbw_gbs``: ``bytes / completion_s`` in GB/s (copies, point to point);
- ``time_us``: ``completion_s`` in µs (nccl-tests' time column);
- ``round_trip_us``: a ping-pong along the simulated flow's routed path
  (:func:`designer.engine.model.hop_latency.round_trip`, the case's ``initiator``).

Splits (docs/FIDELITY.md, "Calibration and validation"): every case carries ``split`` —
``calibration`` (its source was read while the catalog and the model were fitted) or
``validation`` (a source never used for fitting: the model is judged on it). All cases of one
source (:func:`source_key`: the ``url`` without fragment, else ``source``) sit in one split
(:func:`split_problems`). The bench reports each split on its own (:func:`summarize`).

Curves: a case with ``curve`` (a list of ``{"bytes", "metric", "published", "column"}`` rows, one
per nccl-tests size row) instead of ``published`` is evaluated together: one
:func:`designer.engine.analysis.nccl_tests.predict_sweep` on the case's topology and pattern (kind
``allreduce`` / ``allgather`` / ``reducescatter`` / ``alltoall``, or ``p2p`` for nccl-tests'
``sendrecv``), then one figure per row (``busbw_gbs`` or ``time_us``; the row's class follows from
its metric).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = [
    "BENCHMARKS",
    "BUSBW_FACTORS",
    "CASES_PATH",
    "SPLITS",
    "build_topology",
    "case_class",
    "doc_columns",
    "evaluate",
    "evaluate_curve",
    "figure_count",
    "load_cases",
    "markdown_table",
    "method_text",
    "platform_markdown_table",
    "predict",
    "predict_curve",
    "render_splits",
    "render_table",
    "run",
    "source_key",
    "split_problems",
    "summarize",
    "validation_doc_columns",
    "validation_markdown_table",
]

CASES_PATH = Path(__file__).with_name("fidelity_cases.json")
#: The two splits, in report order.
SPLITS = ("calibration", "validation")
# nccl-tests op of a curve case's pattern kind (``p2p`` with participants = nccl-tests' sendrecv).
_CURVE_OPS = {"allreduce": "all_reduce", "allgather": "all_gather", "reducescatter": "reduce_scatter",
              "alltoall": "alltoall", "p2p": "sendrecv"}
GB = 1e9  # nccl-tests reports GB/s with GB = 1e9 bytes

# nccl-tests' bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md), by engine pattern kind.
BUSBW_FACTORS = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "p2p": lambda n: 1.0,
}


def load_cases(path: Path | str = CASES_PATH) -> dict:
    """The case file (``fabricscope.fidelity-cases/1``) as a dict."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def source_key(case: dict) -> str:
    """The key a case's source is split by: its ``url`` without ``#fragment``, else ``source``."""
    url = case.get("url")
    return url.split("#", 1)[0] if url else case["source"]


def split_problems(data: dict) -> list[str]:
    """Why the case file breaks the split rule (empty when it does not): every case has a
    ``split`` of :data:`SPLITS`, and all cases of one source (:func:`source_key`) share it."""
    problems, seen = [], {}
    for case in data["cases"]:
        split = case.get("split")
        if split not in SPLITS:
            problems.append(f"{case['id']}: split {split!r} is not one of {', '.join(SPLITS)}")
            continue
        seen.setdefault(source_key(case), {}).setdefault(split, []).append(case["id"])
    for key, splits in seen.items():
        if len(splits) > 1:
            where = "; ".join(f"{s}: {', '.join(ids)}" for s, ids in sorted(splits.items()))
            problems.append(f"source {key} sits in {len(splits)} splits ({where})")
    return problems


def case_class(metric: str) -> str:
    """The tolerance class of a metric: ``latency`` for ``*_us``, else ``bandwidth``."""
    return "latency" if metric.endswith("_us") else "bandwidth"


def figure_count(case: dict) -> int:
    """Published figures of a case: its curve's rows, or 1."""
    return len(case["curve"]) if "curve" in case else 1


def build_topology(spec: dict):
    """Compiled topology of a case: ``hosts`` copies of ``template`` with its ``params`` (one host:
    no fabric; several: ``fabric``, default rail-optimized)."""
    from designer.engine.model.fabrics import build_cluster
    from designer.engine.model.templates import host_document
    from designer.engine.model.topology import Topology

    hosts, params = int(spec.get("hosts", 1)), dict(spec.get("params") or {})
    if hosts == 1:
        return Topology.from_document(host_document(spec["template"], **params))
    return Topology.from_document(build_cluster(spec["template"], hosts, fabric=spec.get("fabric", "rail-optimized"),
                                                params=params or None))


def predict(case: dict, *, topo=None, simulate_fn=None) -> dict:
    """The engine's figure for one case, computed through ``simulate``.

    Parameters
    ----------
    case : dict
        One entry of the case file.
    topo : Topology, optional
        Prebuilt topology (default: :func:`build_topology` of ``case["topology"]``).
    simulate_fn : callable, optional
        Stand-in for :func:`designer.engine.analysis.simulate.simulate` (tests count the calls).

    Returns
    -------
    dict
        ``predicted`` (float or None when the pattern does not complete), ``algorithm``,
        ``protocol``, ``completion_s``, ``reason``.
    """
    from designer.engine.analysis.simulate import simulate

    topo = topo if topo is not None else build_topology(case["topology"])
    pattern = {"id": "case", **case["pattern"]}
    scenario = {"topology": topo, "workload": [pattern]}
    if case["metric"] == "round_trip_us":
        # The result's own latency section (what the result page and the API show), not a side
        # computation: the benchmark checks the figure users see.
        scenario["latency"] = {"message_bytes": pattern["bytes"], "initiators": [_initiator(case)]}
    result = (simulate_fn or simulate)(scenario)
    entry = result["summary"]["patterns"]["case"]
    out = {"algorithm": entry.get("algorithm"), "protocol": entry.get("protocol"),
           "completion_s": entry.get("completion_s"), "reason": entry.get("reason"), "predicted": None}
    if entry.get("completion_s") is None:
        return out
    out["predicted"] = _metric(case, topo, pattern, entry, result)
    return out


def _metric(case: dict, topo, pattern: dict, entry: dict, result: dict) -> float:
    metric, seconds = case["metric"], float(entry["completion_s"])
    if metric == "time_us":
        return seconds * 1e6
    if metric == "round_trip_us":
        return _round_trip_us(case, topo, result)
    algbw = pattern["bytes"] / seconds / GB
    if metric == "algbw_gbs":
        return float(entry["algbw_gbs"]) if entry.get("algbw_gbs") is not None else algbw
    if metric == "busbw_gbs":
        if entry.get("busbw_gbs") is not None:
            return float(entry["busbw_gbs"])
        return algbw * BUSBW_FACTORS[pattern["kind"]](_participants(topo, pattern))
    raise ValueError(f"unknown metric {metric!r}")


def _participants(topo, pattern: dict) -> int:
    from designer.engine.traffic.workloads import resolve_selector

    return len(resolve_selector(topo, pattern.get("participants", {"kind": "gpu"}), "participants"))


def _initiator(case: dict) -> str:
    return case.get("initiator", "gpu_initiated")


def _round_trip_us(case: dict, topo, result: dict) -> float:
    """The round trip of the case's flow from the result's ``latency`` section."""
    entry = next(e for e in result["latency"] if e.get("initiators"))
    return entry["initiators"][_initiator(case)]["round_trip_ns"] * 1e-3


def evaluate(case: dict, prediction: dict, tolerances: dict) -> dict:
    """One table row: published, predicted, relative error, pass within the case class's tolerance."""
    published, predicted = float(case["published"]), prediction["predicted"]
    error = None if predicted is None else (predicted - published) / published
    tol = float(tolerances[case["class"]])
    return {"id": case["id"], "class": case["class"], "metric": case["metric"], "published": published,
            "predicted": predicted, "error": error, "tolerance": tol,
            "pass": error is not None and abs(error) <= tol, "source": case["source"],
            "algorithm": prediction.get("algorithm"), "protocol": prediction.get("protocol"),
            "reason": prediction.get("reason")}


def predict_curve(case: dict, *, topo=None, sweep_fn=None) -> dict:
    """The engine's nccl-tests rows at a curve case's sizes: one
    :func:`designer.engine.analysis.nccl_tests.predict_sweep` (topology compiled once, one
    ``simulate`` per size). Returns ``{"rows": {bytes: predicted row}, "reason": None}``, or no
    rows and the reason when the collective cannot run."""
    from designer.engine.analysis.nccl_tests import predict_sweep
    from designer.engine.errors import EngineError

    topo = topo if topo is not None else build_topology(case["topology"])
    p = case["pattern"]
    try:
        rows = (sweep_fn or predict_sweep)(topo, _CURVE_OPS[p["kind"]], sizes=[r["bytes"] for r in case["curve"]],
                                           participants=p.get("participants"), algorithm=p.get("algorithm", "auto"),
                                           gpus_per_thread=p.get("gpus_per_thread", 1))
    except EngineError as exc:
        return {"rows": {}, "reason": str(exc)}
    return {"rows": {r.get("requested_bytes", r["size_bytes"]): r for r in rows}, "reason": None}


def evaluate_curve(case: dict, prediction: dict, tolerances: dict) -> list[dict]:
    """One table row per curve row (id ``<case>@<bytes>``), as :func:`evaluate`."""
    out = []
    for row in case["curve"]:
        got = prediction["rows"].get(row["bytes"])
        metric = row["metric"]
        one = {"id": f"{case['id']}@{row['bytes']}", "class": case_class(metric), "metric": metric,
               "published": row["published"], "source": case["source"]}
        pred = {"predicted": None if got is None else float(got[metric]),
                "algorithm": None if got is None else got.get("algorithm"),
                "protocol": None if got is None else got.get("protocol"), "reason": prediction.get("reason")}
        out.append({**evaluate(one, pred, tolerances), "bytes": row["bytes"]})
    return out


def _label(rows: list[dict], case: dict) -> list[dict]:
    split = case.get("split", "calibration")
    platform = case.get("platform") or case["topology"]["template"]
    marked = bool(case.get("marks"))
    return [{**r, "case": case["id"], "split": split, "platform": platform, "marked": marked,
             "curve": "curve" in case} for r in rows]


def run(data: dict | None = None, *, only=None, simulate_fn=None, sweep_fn=None) -> dict:
    """Evaluate every case (or those whose id contains one of ``only``); returns figures.

    ``cases`` lists every figure (a curve gives one per row), each labelled with its ``case``,
    ``split``, ``platform`` and ``marked`` (the case carries ``marks``: a conflicting or
    anomalous figure, kept and shown); ``splits`` holds :func:`summarize` of each split,
    ``split_problems`` :func:`split_problems` of the file."""
    data = data or load_cases()
    rows = []
    for case in data["cases"]:
        if only and not any(text in case["id"] for text in only):
            continue
        if "curve" in case:
            rows += _label(evaluate_curve(case, predict_curve(case, sweep_fn=sweep_fn), data["tolerances"]), case)
        else:
            rows += _label([evaluate(case, predict(case, simulate_fn=simulate_fn), data["tolerances"])], case)
    passed = sum(r["pass"] for r in rows)
    return {"cases": rows, "total": len(rows), "passed": passed, "failed": len(rows) - passed,
            "splits": {split: summarize([r for r in rows if r["split"] == split]) for split in SPLITS},
            "split_problems": split_problems(data)}


def _median(values: list[float]) -> float | None:
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


def _tally(rows: list[dict]) -> dict:
    bw = [abs(r["error"]) for r in rows if r["class"] == "bandwidth" and r["error"] is not None]
    lat = [abs(r["error"]) for r in rows if r["class"] == "latency" and r["error"] is not None]
    passed = sum(r["pass"] for r in rows)
    return {"figures": len(rows), "passed": passed, "failed": len(rows) - passed,
            "bandwidth_figures": sum(r["class"] == "bandwidth" for r in rows),
            "median_abs_error_bandwidth": _median(bw), "latency_figures": sum(r["class"] == "latency" for r in rows),
            "median_abs_error_latency": _median(lat)}


def summarize(rows: list[dict]) -> dict:
    """Figures of one split: counts within tolerance, median |error| of its bandwidth (and
    latency) figures (fractions), the same without marked figures (``unmarked``), per platform,
    and per case (``per_case``: a curve's median and worst |error| and the size of the worst)."""
    per_case, order = {}, []
    for r in rows:
        if r["case"] not in per_case:
            order.append(r["case"])
        per_case.setdefault(r["case"], []).append(r)
    cases = []
    for case_id in order:
        group = per_case[case_id]
        errs = [(abs(r["error"]), r.get("bytes")) for r in group if r["error"] is not None]
        worst = max(errs, default=(None, None))
        cases.append({"case": case_id, "platform": group[0]["platform"], "curve": group[0]["curve"],
                      "marked": group[0]["marked"], "figures": len(group), "passed": sum(r["pass"] for r in group),
                      "median_abs_error": _median([e for e, _ in errs]), "worst_abs_error": worst[0],
                      "worst_bytes": worst[1], "algorithms": sorted({r["algorithm"] for r in group if r["algorithm"]})})
    platforms = {}
    for r in rows:
        platforms.setdefault(r["platform"], []).append(r)
    return {**_tally(rows), "unmarked": _tally([r for r in rows if not r["marked"]]),
            "by_platform": {name: _tally(group) for name, group in platforms.items()}, "per_case": cases}


def render_table(rows: list[dict]) -> str:
    """Plain-text table: case | published | predicted | error | pass | algorithm | source."""
    head = f"{'case':<30} {'metric':<13} {'published':>10} {'predicted':>10} {'error':>8}  {'ok':<4} " \
           f"{'algorithm':<10} source"
    lines = [head, "-" * len(head)]
    for r in rows:
        pred = "—" if r["predicted"] is None else f"{r['predicted']:.2f}"
        err = "—" if r["error"] is None else f"{100 * r['error']:+.1f}%"
        lines.append(f"{r['id']:<30} {r['metric']:<13} {r['published']:>10.2f} {pred:>10} {err:>8}  "
                     f"{'yes' if r['pass'] else 'NO':<4} {r['algorithm'] or '—'!s:<10} {r['source']}")
    return "\n".join(lines)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _summary_line(name: str, summ: dict) -> str:
    line = (f"{name}: {summ['passed']} of {summ['figures']} figures within tolerance; median |error| "
            f"bandwidth {_pct(summ['median_abs_error_bandwidth'])} ({summ['bandwidth_figures']} figures)")
    if summ["latency_figures"]:
        line += f", latency {_pct(summ['median_abs_error_latency'])} ({summ['latency_figures']} figures)"
    if summ["unmarked"]["figures"] != summ["figures"]:
        u = summ["unmarked"]
        line += (f"; without marked figures {u['passed']} of {u['figures']}, median |error| bandwidth "
                 f"{_pct(u['median_abs_error_bandwidth'])}")
    return line


def render_splits(figures: dict) -> str:
    """The bench's text report: the calibration table (one row per figure), then the validation
    split per case (a curve: figures within, median and worst |error|) and per platform, each
    split with its own summary line."""
    out = []
    cal = [r for r in figures["cases"] if r["split"] == "calibration"]
    out += ["== calibration (sources used while fitting; must stay 100 % within tolerance) ==", render_table(cal),
            _summary_line("calibration", figures["splits"]["calibration"]), ""]
    val = figures["splits"]["validation"]
    head = f"{'case':<30} {'platform':<44} {'figs':>4} {'within':>6} {'median':>8} {'worst':>8} {'at size':>11}  marks"
    out += ["== validation (sources never used for fitting; the model as it stands) ==", head, "-" * len(head)]
    for c in val["per_case"]:
        at = "—" if c["worst_bytes"] is None else _size(c["worst_bytes"])
        out.append(f"{c['case']:<30} {c['platform'][:44]:<44} {c['figures']:>4} {c['passed']:>6} "
                   f"{_pct(c['median_abs_error']):>8} {_pct(c['worst_abs_error']):>8} {at:>11}  "
                   f"{'marked' if c['marked'] else ''}")
    out += ["", f"{'platform':<60} {'figs':>4} {'within':>6} {'median |err| bw':>15}"]
    for name, t in val["by_platform"].items():
        out.append(f"{name[:60]:<60} {t['figures']:>4} {t['passed']:>6} {_pct(t['median_abs_error_bandwidth']):>15}")
    out.append(_summary_line("validation", val))
    if figures.get("split_problems"):
        out += ["", "SPLIT RULE BROKEN:"] + [f"  {p}" for p in figures["split_problems"]]
    return "\n".join(out)


def method_text(case: dict) -> str:
    """How a case is simulated, in words: ``dgx-h100 ×2 rail-optimized · allreduce 8 GiB · ring``."""
    t, p = case["topology"], case["pattern"]
    where = f"{t['template']} ×{t.get('hosts', 1)}" + (f" {t.get('fabric', 'rail-optimized')}" if t.get("hosts", 1) > 1 else "")
    if t.get("params"):
        where += " (" + ", ".join(f"{k}={v}" for k, v in sorted(t["params"].items())) + ")"
    what = p["kind"] + (f" {p['direction']}" if "direction" in p else "")
    if "src" in p:
        what += f" {p['src']['ids'][0]}→{p['dst']['ids'][0]}"
    elif "ids" in (p.get("participants") or {}):
        what += f" of {len(p['participants']['ids'])} GPUs"
    if "curve" in case:
        sizes = sorted({r["bytes"] for r in case["curve"]})
        ranks = p.get("participants") or {"kind": "gpu"}
        who = f" {'+'.join(ranks['ids'])}" if "ids" in ranks else ""
        span = _size(sizes[0]) if len(sizes) == 1 else f"{_size(sizes[0])}…{_size(sizes[-1])} ({len(sizes)} sizes)"
        return f"{where} · nccl-tests {_CURVE_OPS[p['kind']]}{who} {span} · {p.get('algorithm', 'auto')}{_knobs(p)}"
    how = p.get("algorithm", "auto") if p["kind"] in BUSBW_FACTORS and p["kind"] != "p2p" else case.get("initiator", "—")
    return f"{where} · {what} {_size(p['bytes'])} · {how}{_knobs(p)}"


def _knobs(pattern: dict) -> str:
    """The run's channel count and GPUs per thread when the case sets them: `` (1 channel, -g 8)``."""
    knobs = [f"{pattern['channels']} channel{'s' if pattern['channels'] > 1 else ''}"] if "channels" in pattern else []
    knobs += [f"-g {pattern['gpus_per_thread']}"] if pattern.get("gpus_per_thread", 1) > 1 else []
    return f" ({', '.join(knobs)})" if knobs else ""


def _size(n: float) -> str:
    for unit, scale in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale:g} {unit}"
    return f"{n:g} B"


def doc_columns(case: dict) -> list[str]:
    """The fixed columns of a case's row in docs/FIDELITY.md (checked against the case file)."""
    return [f"`{case['id']}`", case["metric"], f"{case['published']:g}", f"[{case['source']}]({case['url']})",
            method_text(case)]


def markdown_table(data: dict, rows: list[dict]) -> str:
    """The docs/FIDELITY.md calibration table: fixed columns from the case file, then the
    predictions of ``rows`` (single-figure calibration cases)."""
    by_id = {r["id"]: r for r in rows}
    lines = ["| case | metric | published | source | method | predicted | error | within |",
             "|---|---|---|---|---|---|---|---|"]
    for case in data["cases"]:
        if case.get("split", "calibration") != "calibration":
            continue
        r = by_id.get(case["id"])
        pred = "—" if r is None or r["predicted"] is None else f"{r['predicted']:.2f}"
        err = "—" if r is None or r["error"] is None else f"{100 * r['error']:+.1f} %"
        ok = "—" if r is None else ("yes" if r["pass"] else "**no**")
        lines.append("| " + " | ".join(doc_columns(case) + [pred, err, ok]) + " |")
    return "\n".join(lines)


def _figures_text(case: dict) -> str:
    if "curve" not in case:
        return f"{case['metric']} {case['published']:g}"
    counts = {}
    for r in case["curve"]:
        counts[r["metric"]] = counts.get(r["metric"], 0) + 1
    return ", ".join(f"{n} × {m}" for m, n in counts.items())


def validation_doc_columns(case: dict) -> list[str]:
    """The fixed columns of a validation case's row in docs/FIDELITY.md (checked against the file)."""
    return [f"`{case['id']}`", case["platform"], _figures_text(case), f"[{case['source']}]({case['url']})",
            method_text(case)]


def validation_markdown_table(data: dict, summary: dict) -> str:
    """The docs/FIDELITY.md validation table: fixed columns, then within / median / worst |error|
    per case (``summary`` = :func:`summarize` of the validation split)."""
    by_case = {c["case"]: c for c in summary["per_case"]}
    lines = ["| case | platform | figures | source | method | within | median abs error | worst abs error |",
             "|---|---|---|---|---|---|---|---|"]
    for case in data["cases"]:
        if case.get("split") != "validation":
            continue
        c = by_case.get(case["id"])
        got = ["—", "—", "—"] if c is None else [
            f"{c['passed']}/{c['figures']}" + (" (marked)" if c["marked"] else ""),
            _pct(c["median_abs_error"]).replace("%", " %"),
            _pct(c["worst_abs_error"]).replace("%", " %") + ("" if c["worst_bytes"] is None or not c["curve"]
                                                           else f" at {_size(c['worst_bytes'])}")]
        lines.append("| " + " | ".join(validation_doc_columns(case) + got) + " |")
    return "\n".join(lines)


def platform_markdown_table(data: dict, summary: dict) -> str:
    """Per-platform validation results: figures (from the case file), within, median |error| of
    the bandwidth figures."""
    counts = {}
    for case in data["cases"]:
        if case.get("split") == "validation":
            counts[case["platform"]] = counts.get(case["platform"], 0) + figure_count(case)
    lines = ["| platform | figures | within tolerance | median abs error (bandwidth) |", "|---|---|---|---|"]
    for name, n in counts.items():
        t = summary["by_platform"].get(name)
        within = "—" if t is None else str(t["passed"])
        med = "—" if t is None else _pct(t["median_abs_error_bandwidth"]).replace("%", " %")
        lines.append(f"| {name} | {n} | {within} | {med} |")
    return "\n".join(lines)


def bench_fidelity() -> dict:
    import time

    start = time.perf_counter()
    figures = run()
    figures["run_s"] = time.perf_counter() - start
    print(render_splits(figures), file=sys.stderr)
    print(f"{figures['passed']} of {figures['total']} figures within tolerance (both splits) in "
          f"{figures['run_s']:.1f} s", file=sys.stderr, flush=True)
    return figures


BENCHMARKS = {"fidelity": bench_fidelity}
