"""SimAI / ASTRA-sim workload import: fixtures written from aliyun/SimAI's ``example/`` files
(https://github.com/aliyun/SimAI/tree/main/example — ``microAllReduce.txt`` at commit b1151087:
one 512 MiB all-reduce over 8 GPUs; ``workload_ep_test.txt`` and ``microAllReduce_dp.txt`` at
commit 9fdd6840: tp 4, ep 4 on 32 GPUs, 43 layers with TP all-gather/reduce-scatter and EP
all-to-all; tp 8 on 16 GPUs, 2 layers with TP all-reduces forward and DP all-reduces of the
weight gradients).

    microAllReduce on one DGX-H100:  [gpu0..gpu7] == NVSwitch plane
    workload_ep_test on 4 DGX-H100:  h0..h3, 8 GPUs each, rail-optimized
"""
import json
import pathlib
import subprocess
import sys

import pytest

from designer.engine.errors import ImportFormatError
from designer.engine.io.simai import parse_simai, simai_job
from designer.engine.analysis.simulate import simulate

DATA = pathlib.Path(__file__).parent / "data" / "simai"
HEADER = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 ga: 1 all_gpus: 8"
LAYER = "l -1 1000 ALLREDUCE 1048576 1000 NONE 0 1000 NONE 0 0"


def test_micro_allreduce_imports_and_its_step_is_compute_then_the_allreduce():
    """One layer: fwd compute 556,000 ns, then a 512 MiB TP all-reduce; ig and wg compute 1 ns
    each; update 1 ns. Step = compute + the all-reduce alone on the host (its own pattern time)."""
    wl = simai_job((DATA / "microAllReduce.txt").read_text())
    assert wl["job"]["layout"] == {"tp": 8, "pp": 1, "dp": 1, "ep": 1}
    r = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 1}}, "workload": wl})
    j = r["summary"]["job"]
    ar = r["summary"]["patterns"]["m0.f0.comm"]
    assert j["complete"]
    assert j["compute_s"] == pytest.approx((556_000 + 1 + 1 + 1) * 1e-9, rel=1e-12)
    assert j["step_time_s"] == pytest.approx(j["compute_s"] + ar["completion_s"], rel=1e-9)
    assert j["exposed_communication_s"] == pytest.approx(ar["completion_s"], rel=1e-9)


def test_ep_example_imports_with_ep_and_edp_groups_and_completes_on_four_hosts():
    wl = simai_job((DATA / "workload_ep_test.txt").read_text())
    job = wl["job"]
    assert job["layout"] == {"tp": 4, "pp": 1, "dp": 8, "ep": 4}
    groups = {p["patterns"][0]["groups"]["layout"] for p in job["phases"] if p.get("patterns")}
    assert groups == {"tp", "ep", "edp", "dp"}
    r = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 4}}, "workload": wl})
    j = r["summary"]["job"]
    assert j["complete"] and j["critical_path"][-1] == "update"
    assert j["step_time_s"] >= j["compute_s"] + j["exposed_communication_s"] - 1e-12
    a2a = r["summary"]["patterns"]["m0.f10.comm"]                  # an ALLTOALL_EP of 24 MiB
    assert a2a["kind"] == "alltoall" and a2a["flows"] == 32 * 3     # 8 ep groups × 4·3 pairs


def test_dp_example_overlaps_the_weight_gradient_all_reduces_across_hosts():
    """microAllReduce_dp: per layer a 556,000 ns forward then a 16 MiB TP all-reduce; backward
    1 ns input- and weight-gradient computes; each weight gradient's DP all-reduce (128 MiB for
    the transformer layer, then 64 MiB for the embedding) starts without waiting, so the two run
    together over the same rails and the update waits for both."""
    wl = simai_job((DATA / "microAllReduce_dp.txt").read_text())
    assert wl["job"]["layout"] == {"tp": 8, "pp": 1, "dp": 2, "ep": 1}
    r = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 2}}, "workload": wl})
    j, pats = r["summary"]["job"], r["summary"]["patterns"]
    assert j["complete"] and j["critical_path"][-1] == "update"
    assert j["compute_s"] == pytest.approx((2 * 556_000 + 4 + 2) * 1e-9, rel=1e-9)
    assert pats["m0.wg1.comm"]["bytes"] == 2 * pats["m0.wg0.comm"]["bytes"]     # 128 vs 64 MiB per rank
    ph = {p["id"]: p for p in j["phases"]}
    wg1, wg0 = ph["m0.wg1.comm"], ph["m0.wg0.comm"]
    assert wg0["start_s"] < wg1["end_s"]                                    # they overlap
    assert ph["update"]["start_s"] == pytest.approx(max(wg0["end_s"], wg1["end_s"]), rel=1e-12)
    dp_flows = [f for f in r["flows"] if f["pattern"] == "m0.wg1.comm"]
    assert dp_flows and all(f["src"].split("/")[0] != f["dst"].split("/")[0] for f in dp_flows)


@pytest.mark.parametrize("text, where, words", [
    (f"{HEADER} zz: 3\n1\n{LAYER}", "line 1", "unknown header field 'zz'"),
    (f"NOPE model_parallel_NPU_group: 8 all_gpus: 8\n1\n{LAYER}", "line 1", "unknown parallelism type"),
    (f"{HEADER}\n1\n{LAYER.replace('ALLREDUCE', 'BROADCAST')}", "line 3", "unsupported communication type 'BROADCAST'"),
    (f"{HEADER}\n1\n{LAYER} 7", "line 3", "expected 12 columns"),
    (f"{HEADER}\n2\n{LAYER}", "line 2", "says 2 layers, the file has 1"),
    (f"{HEADER}\n1\n{LAYER.replace('1000 ALLREDUCE', 'x ALLREDUCE')}", "line 3", "fwd compute time"),
])
def test_bad_files_are_located_errors(text, where, words):
    with pytest.raises(ImportFormatError) as exc:
        parse_simai(text)
    assert any(p.path == where and words in p.message for p in exc.value.problems), exc.value.problems


def test_pp_comm_becomes_stage_to_stage_sends():
    text = f"{HEADER.replace('pp: 1', 'pp: 2').replace('all_gpus: 8', 'all_gpus: 16')} pp_comm: 4096\n1\n{LAYER}"
    wl = simai_job(text)
    r = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 2}}, "workload": wl})
    fwd = [f for f in r["flows"] if f["pattern"] == "m0.pp_fwd"]
    assert len(fwd) == 8 and all(f["src"].startswith("h0/") and f["dst"].startswith("h1/") for f in fwd)
    bwd = [f for f in r["flows"] if f["pattern"] == "m0.pp_bwd"]
    assert all(f["src"].startswith("h1/") for f in bwd)


def test_cli_import_workload_writes_a_job(tmp_path):
    out = tmp_path / "job.json"
    proc = subprocess.run([sys.executable, "-m", "designer.engine", "import-workload",
                           str(DATA / "microAllReduce.txt"), "--format", "simai", "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["job"]["source"] == "simai"
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{HEADER} zz: 1\n1\n{LAYER}\n")
    proc = subprocess.run([sys.executable, "-m", "designer.engine", "import-workload", str(bad), "-o", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "line 1: unknown header field 'zz'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_a_workload_the_size_of_simais_gpt7b_example_simulates_in_seconds():
    """SimAI's ``example/workload_gpt7b_64g.txt`` has this header (tp 8, ga 8, 64 GPUs) and 1,058
    layer lines, mostly TP all-gather / reduce-scatter pairs of 16 MiB; this file has the same
    header and size with alternating such lines: 33,857 chained phases. The step loop's work
    follows what runs (dependency counters, an index of the transferring paths), so it is
    ~40k small solves, not 34k phases rescanned at each of 40k events."""
    import time

    header = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 32 ga: 8 "
              "all_gpus: 64 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0")
    rows = ["attention_column\t-1\t1\tALLGATHER\t16777216\t1\tNONE\t0\t1\tNONE\t0\t100",
            "attention_row\t-1\t1\tREDUCESCATTER\t16777216\t1\tNONE\t16777216\t1\tNONE\t0\t100"]
    wl = simai_job("\n".join([header, "1058"] + [rows[i % 2] for i in range(1058)]))
    assert len(wl["job"]["phases"]) == 33_857
    t0 = time.process_time()
    r = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 8}}, "workload": wl})
    cpu = time.process_time() - t0
    j = r["summary"]["job"]
    assert j["complete"] and j["critical_path"][-1] == "update"
    # Strictly a chain: every collective is exposed, the step is compute + communication.
    assert j["step_time_s"] == pytest.approx(j["compute_s"] + j["communication_s"], rel=1e-9)
    assert cpu < 90, cpu                       # measured ~15 s on the shared 2-core machine
