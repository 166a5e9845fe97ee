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
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = [
    "BENCHMARKS",
    "BUSBW_FACTORS",
    "CASES_PATH",
    "build_topology",
    "doc_columns",
    "evaluate",
    "load_cases",
    "markdown_table",
    "method_text",
    "predict",
    "render_table",
    "run",
]

CASES_PATH = Path(__file__).with_name("fidelity_cases.json")
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
    result = (simulate_fn or simulate)({"topology": topo, "workload": [pattern]})
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


def _round_trip_us(case: dict, topo, result: dict) -> float:
    from designer.engine.model.hop_latency import round_trip

    flow = next(f for f in result["flows"] if f["pattern"] == "case" and f.get("status") == "ok")
    nodes = [topo.node_index[n] for n in flow["path"]]
    rt = round_trip(topo, nodes, case["pattern"]["bytes"], initiator=case.get("initiator", "gpu_initiated"))
    return rt["total_s"] * 1e6


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


def run(data: dict | None = None, *, only=None, simulate_fn=None) -> dict:
    """Evaluate every case (or those whose id contains one of ``only``); returns figures."""
    data = data or load_cases()
    rows = []
    for case in data["cases"]:
        if only and not any(text in case["id"] for text in only):
            continue
        rows.append(evaluate(case, predict(case, simulate_fn=simulate_fn), data["tolerances"]))
    passed = sum(r["pass"] for r in rows)
    return {"cases": rows, "total": len(rows), "passed": passed, "failed": len(rows) - passed}


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


def method_text(case: dict) -> str:
    """How a case is simulated, in words: ``dgx-h100 ×2 rail-optimized · allreduce 8 GiB · ring``."""
    t, p = case["topology"], case["pattern"]
    where = f"{t['template']} ×{t.get('hosts', 1)}" + (f" {t.get('fabric', 'rail-optimized')}" if t.get("hosts", 1) > 1 else "")
    if t.get("params"):
        where += " (" + ", ".join(f"{k}={v}" for k, v in sorted(t["params"].items())) + ")"
    what = p["kind"] + (f" {p['direction']}" if "direction" in p else "")
    if "src" in p:
        what += f" {p['src']['ids'][0]}→{p['dst']['ids'][0]}"
    how = p.get("algorithm", "auto") if p["kind"] in BUSBW_FACTORS and p["kind"] != "p2p" else case.get("initiator", "—")
    return f"{where} · {what} {_size(p['bytes'])} · {how}"


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
    """The docs/FIDELITY.md table: fixed columns from the case file, then the predictions of ``rows``."""
    by_id = {r["id"]: r for r in rows}
    lines = ["| case | metric | published | source | method | predicted | error | within |",
             "|---|---|---|---|---|---|---|---|"]
    for case in data["cases"]:
        r = by_id.get(case["id"])
        pred = "—" if r is None or r["predicted"] is None else f"{r['predicted']:.2f}"
        err = "—" if r is None or r["error"] is None else f"{100 * r['error']:+.1f} %"
        ok = "—" if r is None else ("yes" if r["pass"] else "**no**")
        lines.append("| " + " | ".join(doc_columns(case) + [pred, err, ok]) + " |")
    return "\n".join(lines)


def bench_fidelity() -> dict:
    figures = run()
    print(render_table(figures["cases"]), file=sys.stderr)
    print(f"{figures['passed']} of {figures['total']} within tolerance", file=sys.stderr, flush=True)
    return figures


BENCHMARKS = {"fidelity": bench_fidelity}
