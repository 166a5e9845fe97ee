"""Subprocess runs of ``sweep`` and ``compare``, with their exit codes and error lines."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "scenario-nic-failure.json"
PAIR = {"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}}


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "designer.engine", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, input=stdin, timeout=300)


def error_line(r) -> str:
    """The first ``error:`` line on stderr (progress lines may come before it)."""
    return next((line for line in r.stderr.splitlines() if line.startswith("error: ")), "")


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def scenario(failures=()):
    return {"format": "fabricscope.scenario/1", "topology": PAIR, "failures": list(failures),
            "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
                          "bytes": 1e9}]}


def test_sweep_top_progress_and_output_file(tmp_path):
    out = tmp_path / "sweep.json"
    r = cli("sweep", write(tmp_path, "s.json", scenario()), "--over", "nic,pcie_switch", "--top", "3", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "[100%]" in r.stderr and "failure " in r.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "fabricscope.sweep/1" and doc["candidates"] == 32 and len(doc["ranking"]) == 3
    assert len(doc["skipped"]["unwired"]) == 4   # the storage NICs: no uplink in this topology
    assert doc["ranking"][0]["impact"]["disconnected_flows"] == 2


def test_chunks_merge_to_the_whole_sweep(tmp_path):
    sc = write(tmp_path, "s.json", scenario())
    whole = json.loads(cli("sweep", sc, "--over", "nvswitch,host", "--quiet").stdout)
    parts = []
    for i in range(3):
        part = tmp_path / f"part{i}.json"
        r = cli("sweep", sc, "--over", "nvswitch,host", "--chunk", f"{i}/3", "--quiet", "-o", part)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        parts.append(part)
    merged = cli("sweep", "--merge", *reversed(parts))
    assert merged.returncode == 0, merged.stderr
    assert json.loads(merged.stdout) == whole


def test_sweep_degrade_and_explicit_failures(tmp_path):
    cands = write(tmp_path, "f.json", [{"target": "h0/gpu0-pcie0", "mode": "degrade", "factor": 0.5},
                                       {"target": {"kind": "nic", "group": "h1", "rail": 3}, "mode": "down"}])
    r = cli("sweep", write(tmp_path, "s.json", scenario()), "--failures", cands, "--quiet")
    assert r.returncode == 0, r.stderr
    labels = [e["label"] for e in json.loads(r.stdout)["ranking"]]
    assert labels == ["{group=h1,kind=nic,rail=3} down", "h0/gpu0-pcie0 ×0.5"]


def test_unknown_target_is_a_located_error_exit_1(tmp_path):
    sc = write(tmp_path, "s.json", scenario([{"target": "h0/nic0"}, {"target": "h9/nic0", "mode": "down"}]))
    for command in (("sweep", sc, "--over", "nic"), ("compare", sc)):
        r = cli(*command)
        assert r.returncode == 1, r.stderr
        assert error_line(r).startswith('error: failures[1].target: unknown node or link "h9/nic0"')
        assert "Traceback" not in r.stderr and r.stdout == ""


def test_other_errors_exit_1(tmp_path):
    sc = write(tmp_path, "s.json", scenario())
    for args, text in ((("--over", "nic,toaster"), "error: over[1]: unknown class 'toaster'"),
                       (("--over", "nic", "--chunk", "4/2"), "error: chunk: need 0 <= i < n"),
                       (("--over", "nic", "--degrade", "2"), "error: degrade: factor must be in (0, 1]"),
                       ((), "error: --over: give failure classes")):
        r = cli("sweep", sc, *args)
        assert r.returncode == 1 and error_line(r).startswith(text), r.stderr
    r = cli("compare", sc, "--policies", "affinity,teleport")
    assert r.returncode == 1 and error_line(r).startswith("error: policies[1]: unknown policy 'teleport'")
    r = cli("sweep", tmp_path / "missing.json", "--over", "nic")
    assert r.returncode == 1 and "no such file" in r.stderr


def test_compare_example_headline(tmp_path):
    r = cli("compare", EXAMPLE, "--policies", "affinity,any")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["format"] == "fabricscope.compare/1" and list(doc["policies"]) == ["affinity", "any"]
    aff = doc["policies"]["affinity"]
    assert aff["baseline"]["unroutable"] == 0 and aff["with_failures"]["unroutable"] == 3
    assert aff["impact"]["disconnected_flows"] == 3
    assert doc["headline"] in r.stderr and doc["failures"][0]["label"] == "h0/nic0 down"


def test_simulate_command_fills_the_diff_of_the_example():
    r = cli("simulate", EXAMPLE, "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["format"] == "fabricscope.result/1" and doc["diff"]["summary"]["disconnected"] == 3
