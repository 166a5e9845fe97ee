"""The fidelity case table, docs/FIDELITY.md and the runner agree; predictions go through simulate.

Not a timed test and not the benchmark itself: ``python -m designer.engine bench --only fidelity``
runs every case; here one cheap case runs to check the plumbing.
"""
import math
import re
from pathlib import Path

import pytest

from designer.engine.benchmarks import fidelity
from designer.engine.analysis.simulate import simulate

DOC = Path(__file__).resolve().parents[2] / "docs" / "FIDELITY.md"
START, END = "<!-- fidelity-table:start -->", "<!-- fidelity-table:end -->"


def _doc_rows() -> dict[str, list[str]]:
    text = DOC.read_text(encoding="utf-8")
    assert START in text and END in text, "docs/FIDELITY.md lost its table markers"
    table = text.split(START, 1)[1].split(END, 1)[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:  # skip the header and the |---| line
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    return rows


def test_case_file_is_well_formed():
    data = fidelity.load_cases()
    ids = [c["id"] for c in data["cases"]]
    assert len(ids) == len(set(ids))
    assert data["tolerances"] == {"bandwidth": 0.10, "latency": 0.25}
    for case in data["cases"]:
        assert case["split"] in fidelity.SPLITS
        assert case["source"] and case["url"].startswith("https://") and case["quote"]
        assert "override" not in case and "capacity_gbps" not in str(case["topology"])  # no per-case tuning
        if "curve" in case:  # a whole nccl-tests curve: each row carries its own metric (validation only)
            assert "published" not in case and "bytes" not in case["pattern"] and case["curve"]
            continue
        assert case["class"] in data["tolerances"]
        assert case["metric"] in ("busbw_gbs", "algbw_gbs", "time_us", "round_trip_us")
        assert (case["class"] == "latency") == case["metric"].endswith("_us")
        assert case["published"] > 0


def test_issue_15_minimum_list_is_present():
    ids = {c["id"]: c for c in fidelity.load_cases()["cases"]}
    expected = {"h100x8-allreduce-ring": 370, "h100x8-allreduce-default": 480, "h100x8-reducescatter": 360,
                "h100x8-allgather": 350, "h100-pair-nvlink-copy": 380, "dgx-a100x2-allreduce-ring": 192,
                "dgx-a100x2-allreduce-8b-ring": 93.12, "hgx-h100x2-allreduce-default": 470,
                "a100-h2d-pcie4": 25.13, "h100-gin-put-round-trip": 16.7}
    assert {k: ids[k]["published"] for k in expected} == expected


def test_doc_lists_exactly_the_cases_with_the_same_figures_and_sources():
    """The results table lists the calibration split (the validation split has its own table,
    tests/engine/test_fidelity_split.py)."""
    data = fidelity.load_cases()
    rows = _doc_rows()
    calibration = [c for c in data["cases"] if c["split"] == "calibration"]
    assert set(rows) == {c["id"] for c in calibration}
    for case in calibration:
        assert rows[case["id"]][:5] == fidelity.doc_columns(case), case["id"]


def test_method_text_names_template_hosts_op_size_and_algorithm():
    case = next(c for c in fidelity.load_cases()["cases"] if c["id"] == "dgx-a100x2-allreduce-ring")
    assert fidelity.method_text(case) == "dgx-a100 ×2 rail-optimized · allreduce 8 GiB · ring"


def test_runner_predicts_through_simulate_on_one_cheap_case():
    """h100-pair-nvlink-copy: [h0/gpu0]==NV18 over 4 NVSwitches==[h0/gpu1], 1 GiB. The prediction
    is bytes / completion_s of the simulated pattern (370.8 GB/s = 18 × 20.6 GB/s before any
    latency term), and simulate is called exactly once."""
    data = fidelity.load_cases()
    calls = []

    def counting(scenario):
        calls.append(scenario)
        return simulate(scenario)

    figures = fidelity.run(data, only=["h100-pair-nvlink-copy"], simulate_fn=counting)
    assert len(calls) == 1 and figures["total"] == 1
    row = figures["cases"][0]
    case = next(c for c in data["cases"] if c["id"] == "h100-pair-nvlink-copy")
    result = simulate(calls[0])
    seconds = result["summary"]["patterns"]["case"]["completion_s"]
    assert row["predicted"] == pytest.approx(case["pattern"]["bytes"] / seconds / 1e9)
    assert row["predicted"] == pytest.approx(18 * 20.6, rel=0.01)
    assert row["error"] == pytest.approx((row["predicted"] - 380.0) / 380.0)
    assert row["pass"] is (abs(row["error"]) <= 0.10)


def _fake_result(entry, flows=()):
    return {"summary": {"patterns": {"case": entry}}, "flows": list(flows)}


def test_busbw_falls_back_to_nccl_tests_factors():
    """8 GPUs, 8e9 bytes in 1 s: algbw 8 GB/s; all-reduce busbw 8 × 2·7/8 = 14, all-gather 8 × 7/8 = 7."""
    topo = fidelity.build_topology({"template": "dgx-h100", "hosts": 1})
    for kind, busbw in (("allreduce", 14.0), ("allgather", 7.0)):
        case = {"id": "x", "metric": "busbw_gbs", "topology": {},
                "pattern": {"kind": kind, "participants": {"kind": "gpu"}, "bytes": 8e9}}
        out = fidelity.predict(case, topo=topo, simulate_fn=lambda sc: _fake_result({"completion_s": 1.0}))
        assert out["predicted"] == pytest.approx(busbw)
    reported = fidelity.predict(case, topo=topo, simulate_fn=lambda sc: _fake_result(
        {"completion_s": 1.0, "busbw_gbs": 99.0, "algorithm": "nvls"}))
    assert reported["predicted"] == 99.0 and reported["algorithm"] == "nvls"


def test_a_pattern_that_does_not_complete_fails_without_a_number():
    case = {"id": "x", "class": "bandwidth", "metric": "busbw_gbs", "published": 1.0, "source": "s", "topology": {},
            "pattern": {"kind": "allreduce", "bytes": 1.0}}
    out = fidelity.predict(case, topo=object(), simulate_fn=lambda sc: _fake_result(
        {"completion_s": None, "reason": "2 of 16 flows disconnected"}))
    row = fidelity.evaluate(case, out, {"bandwidth": 0.1})
    assert row["predicted"] is None and row["error"] is None and row["pass"] is False
    assert row["reason"] == "2 of 16 flows disconnected"


def test_round_trip_case_uses_the_routed_path():
    """h100-gin-put-round-trip: the round trip follows the simulated flow's path and equals
    latency.round_trip on it; gpu_initiated is cheaper than cpu_proxy on the same path."""
    from designer.engine.model.hop_latency import round_trip

    case = next(c for c in fidelity.load_cases()["cases"] if c["id"] == "h100-gin-put-round-trip")
    topo = fidelity.build_topology(case["topology"])
    seen = []

    def keep(scenario):
        seen.append(simulate(scenario))
        return seen[-1]

    out = fidelity.predict(case, topo=topo, simulate_fn=keep)
    path = [topo.node_index[n] for n in seen[0]["flows"][0]["path"]]
    assert topo.node_ids[path[0]] == "h0/gpu0" and topo.node_ids[path[-1]] == "h1/gpu0"
    assert out["predicted"] == pytest.approx(round_trip(topo, path, 8, initiator="gpu_initiated")["total_s"] * 1e6)
    assert out["predicted"] < round_trip(topo, path, 8, initiator="cpu_proxy")["total_s"] * 1e6
    assert math.isfinite(out["predicted"])


def test_render_table_marks_failures():
    rows = [{"id": "a", "metric": "busbw_gbs", "published": 100.0, "predicted": 120.0, "error": 0.2,
             "pass": False, "algorithm": "ring", "source": "s"},
            {"id": "b", "metric": "time_us", "published": 10.0, "predicted": None, "error": None,
             "pass": False, "algorithm": None, "source": "t"}]
    text = fidelity.render_table(rows)
    assert re.search(r"^a .*120\.00 +\+20\.0% +NO", text, re.MULTILINE) and re.search(r"^b .*— +— +NO", text, re.MULTILINE)


# ------------------------------------------------------------------ host-memory copies
def _offload(template, direction, nbytes=2**30):
    from designer.engine.model.templates import host_document
    from designer.engine.model.topology import Topology

    topo = Topology.from_document(host_document(template))
    pattern = {"id": "o", "kind": "host_offload", "direction": direction, "participants": {"ids": ["h0/gpu0"]},
               "bytes": nbytes}
    return topo, simulate({"topology": topo, "workload": [pattern]})


def test_gpu_read_of_host_memory_is_capped_at_the_measured_h2d_rate():
    """[h0/mem0]--[h0/cpu0]--[h0/rc0]--pcie5x16--[h0/pcie0]--pcie5x16--[h0/gpu0] (DGX H100): an
    SM copy *from* host memory is non-posted-read bound — 35.2 GB/s measured (nvbandwidth#24,
    catalog.PCIE_MEASURED_GBYTES) — while the copy *to* host memory (posted writes) keeps the
    48 GB/s link rate. On the A100 (Gen4) the measured 25.13 GB/s is above the 24 GB/s link rate,
    so nothing changes there."""
    from designer.engine.catalog import PCIE_MEASURED_GBYTES

    h2d = PCIE_MEASURED_GBYTES["pcie5x16"]["h2d"][0]
    _, up = _offload("dgx-h100", "from_host")
    _, down = _offload("dgx-h100", "to_host")
    seconds = lambda r: r["summary"]["patterns"]["o"]["completion_s"]  # noqa: E731
    assert 2**30 / seconds(up) / 1e9 == pytest.approx(h2d, rel=1e-6)
    assert 2**30 / seconds(down) / 1e9 == pytest.approx(48.0, rel=1e-6)
    _, a100 = _offload("dgx-a100", "from_host")
    assert 2**30 / seconds(a100) / 1e9 == pytest.approx(24.0, rel=1e-6)


def test_host_read_cap_applies_to_host_to_gpu_flows_only():
    """``both``: the to-host half keeps the link rate, the from-host half gets the read cap; a
    GPU-to-GPU or NIC-into-GPU flow (posted writes by the NIC) never gets one."""
    from designer.engine.traffic.workloads import host_read_caps_gbps

    topo, _ = _offload("dgx-h100", "both")
    ids = topo.node_index
    src = [ids["h0/gpu0"], ids["h0/mem0"], ids["h0/nic0"], ids["h0/gpu1"]]
    dst = [ids["h0/mem0"], ids["h0/gpu0"], ids["h0/gpu0"], ids["h0/gpu0"]]
    caps = host_read_caps_gbps(topo, src, dst)
    assert math.isinf(caps[0]) and math.isinf(caps[2]) and math.isinf(caps[3])
    assert caps[1] == pytest.approx(35.2 * 8)
