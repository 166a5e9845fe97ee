"""What the diagnosis tests share: a published nccl-tests log, and the engine — the real
``designer.engine.analysis.diagnose`` when it is in the tree, else a small stand-in patched over
the bridge's engine calls only (``designer.bridge.diagnose._runs_from_logs``,
``designer.bridge.diagnosis_check``, ``designer.bridge.run_diagnose``), so the web side's
plumbing (validation, storage, job run, pages) is tested the same way either way.

The stand-in is not a diagnosis: it predicts a flat 360 GB/s ±10 % and offers two fixed
explanations, enough to exercise every field of the documented result (docs/FORMATS.md,
"Diagnosis"). Tests assert only what holds for the real engine too.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

__all__ = ["LOG", "BAD_LOG", "use_engine"]

LOG = (Path(__file__).resolve().parents[1] / "engine" / "data" / "nccl_tests"
       / "all_reduce_2x_hgx_h100_nccl_tests_319.txt").read_text()
# A header, then a row of 4 of its 13 columns: "line 3: expected 13 columns, got 4".
BAD_LOG = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
           "    33554432       8388608     float     sum      -1   1543.4   21.74   40.76      0   1542.6   21.75   40.78      0\n"
           "8 2 float sum\n")


def use_engine(monkeypatch) -> str:
    """``"real"`` when the engine's diagnosis exists; else patch the stand-in in and say ``"fake"``."""
    if importlib.util.find_spec("designer.engine.analysis.diagnose") is not None:
        return "real"
    monkeypatch.setattr("designer.bridge.diagnose._runs_from_logs", _runs_from_logs)
    monkeypatch.setattr("designer.bridge.diagnosis_check", _plan)
    monkeypatch.setattr("designer.bridge.run_diagnose", _run)
    return "fake"


def _runs_from_logs(pairs):
    return [{"label": label, "hosts": None, "gpus": None,
             "rows": [{"bytes": r["size_bytes"], "busbw_gbps": r["out_of_place"]["busbw_gbs"],
                       "time_us": r["out_of_place"]["time_us"]} for r in parsed.rows]}
            for label, parsed in pairs]


def _plan(*, document, runs, op, options):
    sizes = {r["bytes"] for run in runs for r in run["rows"]}
    return {"candidates": 2, "sizes": len(sizes), "runs": len(runs), "estimate_s": 0.1}


def _run(job, progress):
    runs = job.inputs["runs"]
    sizes = sorted({r["bytes"] for run in runs for r in run["rows"]})
    expected = [{"bytes": b, "busbw_gbps": 360.0, "low_gbps": 324.0, "high_gbps": 396.0} for b in sizes]
    out_runs = [{"label": run["label"], "hosts": run["hosts"], "healthy": False,
                 "outside": [r["bytes"] for r in run["rows"]], "worst_ratio": 40.6 / 360,
                 "rows": [{"bytes": r["bytes"], "busbw_gbps": r["busbw_gbps"]} for r in run["rows"]]}
                for run in runs]
    explanations = []
    for rank, (label, factor, fit) in enumerate((("h1/nic3 at 12 %", 0.12, 2.1), ("leaf0 down", 0.5, 40.0)), 1):
        progress(rank / 2, f"candidate {rank} of 2")
        explanations.append({"rank": rank, "kind": "nic_degraded", "target": label.split()[0], "label": label,
                             "failures": [{"target": label.split()[0], "mode": "degrade", "factor": factor}],
                             "fit_error_pct": fit, "curve": [{"bytes": b, "busbw_gbps": 360.0 * factor} for b in sizes],
                             "runs": [run["label"] for run in runs]})
    return {"format": "fabricscope.diagnosis/1", "op": job.parameters["op"], "ranks": 16, "tolerance_pct": 10.0,
            "expected": expected, "runs": out_runs, "healthy": False, "explanations": explanations,
            "summary": "every run is below the band; most likely h1/nic3 at 12 %"}
