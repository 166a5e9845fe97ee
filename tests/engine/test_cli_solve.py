"""``python -m designer.engine solve``: subprocess runs, output shape and error exit codes."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# [h0]--l1 100G--[sw]--l2 30G--[h1]; a: l1 only, b: l1 then l2, c: l1 with a 10G demand.
PROBLEM = {
    "links": [{"id": "l1", "capacity_gbps": 100.0}, {"id": "l2", "capacity_gbps": 30.0}],
    "flows": [{"id": "a", "links": ["l1"], "demand_gbps": None, "bytes": 1e9},
              {"id": "b", "links": ["l1", "l2"], "bytes": 3e9},
              {"id": "c", "links": ["l1"], "demand_gbps": 10, "bytes": 1e9}],
}


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "designer.engine", "solve", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_solve_file(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PROBLEM))
    proc = run_cli(str(path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # b is held to 30 by l2, c to its demand 10; a takes the rest of l1: 60.
    assert out["rates_gbps"] == {"a": 60.0, "b": 30.0, "c": 10.0}
    assert out["bottleneck"] == {"a": "l1", "b": "l2", "c": None}
    assert out["utilization"] == {"l1": 1.0, "l2": 1.0}
    assert "completion_s" not in out


def test_solve_stdin_timeline():
    """a: 8 Gb at 60G -> 0.1333 s; then b (24 Gb at 30G) and c (8 Gb at 10G) both end at 0.8 s."""
    proc = run_cli("-", "--timeline", stdin=json.dumps(PROBLEM))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["completion_s"]["a"] == pytest.approx(8 / 60)
    assert out["completion_s"]["b"] == pytest.approx(0.8)
    assert out["completion_s"]["c"] == pytest.approx(0.8)


def test_unknown_link_is_located():
    bad = json.loads(json.dumps(PROBLEM))
    bad["flows"][1]["links"] = ["l1", "l9"]
    bad["links"][0]["capacity_gbps"] = -5
    proc = run_cli("-", stdin=json.dumps(bad))
    assert proc.returncode == 1
    assert "flows[1].links[1]: unknown link id 'l9'" in proc.stderr
    assert "links[0].capacity_gbps" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("doc, where", [
    ({"links": [{"id": "l1", "capacity_gbps": "fast"}], "flows": []}, "links[0].capacity_gbps"),
    ({"links": [{"id": "l1", "capacity_gbps": True}], "flows": []}, "links[0].capacity_gbps"),
    ({"links": [], "flows": [{"id": "f", "links": []}]}, "flows[0].links"),
    ({"links": [], "flows": [{"id": "f", "links": [], "demand_gbps": -1}]}, "flows[0].demand_gbps"),
    ({"flows": []}, "links"),
])
def test_bad_values_exit_1(doc, where):
    proc = run_cli("-", stdin=json.dumps(doc))
    assert proc.returncode == 1 and f"error: {where}" in proc.stderr and "Traceback" not in proc.stderr


def test_timeline_needs_bytes_and_bad_json():
    doc = {"links": [{"id": "l1", "capacity_gbps": 1.0}], "flows": [{"id": "f", "links": ["l1"]}]}
    proc = run_cli("-", "--timeline", stdin=json.dumps(doc))
    assert proc.returncode == 1 and "flows[0].bytes" in proc.stderr
    proc = run_cli("-", stdin="{not json")
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr


def test_missing_file_and_help(tmp_path):
    proc = run_cli(str(tmp_path / "absent.json"))
    assert proc.returncode == 1 and "no such file" in proc.stderr
    proc = run_cli("--help")
    assert proc.returncode == 0 and "--timeline" in proc.stdout
