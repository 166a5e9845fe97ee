"""``python -m designer.engine simulate`` as a subprocess: result JSON, progress, located errors."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "designer.engine", "simulate", *args], cwd=ROOT,
                          capture_output=True, text=True, input=stdin, timeout=300)


def test_example_scenario(tmp_path):
    out = tmp_path / "result.json"
    proc = run("examples/scenario-dgx-h100.json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "[100%] done" in proc.stderr and "routing" in proc.stderr
    result = json.loads(out.read_text())
    assert result["format"] == "fabricscope.result/1"
    assert set(result["summary"]["patterns"]) == {"ar", "load", "p"}
    assert all(p["unroutable"] == 0 for p in result["summary"]["patterns"].values())


def test_bad_scenario_is_located_without_traceback(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({
        "format": "fabricscope.scenario/1",
        "topology": {"build": {"template": "dgx-h100", "hosts": 2}},
        "workload": [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9},
                     {"id": "x", "kind": "allreduce", "participants": {"group": "h7"}, "bytes": 1e9}]}))
    proc = run(str(path), "--quiet")
    assert proc.returncode == 1
    assert "workload[1].participants.group: unknown group 'h7'" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_topology_by_path_and_not_json(tmp_path):
    build = subprocess.run([sys.executable, "-c", "import json; from designer.engine.model.fabrics import build_cluster;"
                            "print(json.dumps(build_cluster('pcie-commodity', 2)))"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    (tmp_path / "topo.json").write_text(build.stdout)
    (tmp_path / "s.json").write_text(json.dumps({"topology": "topo.json", "workload": [
        {"id": "ar", "kind": "allreduce", "bytes": 1e8}]}))
    proc = run(str(tmp_path / "s.json"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["patterns"]["ar"]["unroutable"] == 0
    (tmp_path / "broken.json").write_text("{not json")
    proc = run(str(tmp_path / "broken.json"))
    assert proc.returncode == 1 and "invalid JSON at line 1" in proc.stderr and "Traceback" not in proc.stderr


def test_a_reader_that_leaves_early_gets_no_traceback():
    """``simulate ... | head -c 10``: the pipe closes long before the result ends; the command
    stops quietly with the shell's SIGPIPE status (141), not a BrokenPipeError traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "designer.engine", "simulate", "examples/scenario-nic-failure.json",
                             "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()                      # the reader leaves
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err
