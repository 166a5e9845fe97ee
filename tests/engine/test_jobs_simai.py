"""SimAI / ASTRA-sim workload import: fixtures written from aliyun/SimAI's ``example/`` files
(``microAllReduce.txt``: one 512 MiB all-reduce over 8 GPUs; ``workload_ep_test.txt``: tp 4,
ep 4 on 32 GPUs, 43 layers with TP all-gather/reduce-scatter and EP all-to-all).

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
from designer.engine.simulate import simulate

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
