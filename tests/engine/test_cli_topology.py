"""Subprocess runs of ``build``, ``validate`` and ``topo-matrix``, with their exit codes."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "designer.engine", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, input=stdin, timeout=120)


def test_build_validate_and_matrix(tmp_path):
    out = tmp_path / "a100.json"
    r = cli("build", "--template", "dgx-a100", "-o", out)
    assert r.returncode == 0, r.stderr
    r = cli("validate", out)
    assert r.returncode == 0 and "valid" in r.stdout
    r = cli("topo-matrix", out, "--host", "h0")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["GPU0", "GPU1"] and "NIC8" in lines[0]
    assert lines[1].split()[:10] == ["GPU0", "X"] + ["NV12"] * 7 + ["PXB"]
    assert "Legend:" in r.stdout
    # columns align: every cell starts at the same offset as its header
    assert lines[1].index("PXB") == lines[0].index("NIC0")
    r = cli("topo-matrix", out, "--host", "h0", "--json")
    assert json.loads(r.stdout)["matrix"][4][8] == "SYS"


def test_build_cluster_to_stdout_and_params():
    r = cli("build", "--template", "pcie-commodity", "--param", "gpus=4", "--hosts", "3",
            "--fabric", "leaf-spine", "--hosts-per-rack", "2", "--spines", "2")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert sum(n["kind"] == "gpu" for n in doc["nodes"]) == 12
    r = cli("validate", "-", stdin=r.stdout)
    assert r.returncode == 0


def test_validate_reports_every_problem_and_exits_1(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "x", "nodes": [{"id": "a", "kind": "gpu"}],
                               "links": [{"a": "a", "b": "zz", "tech": "nope"}]}))
    r = cli("validate", bad)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert any(l.startswith("format:") for l in lines)
    assert 'links[0].b: unknown node "zz"' in lines and any(l.startswith("links[0].tech") for l in lines)
    (tmp_path / "junk.json").write_text("{oops")
    r = cli("validate", tmp_path / "junk.json")
    assert r.returncode == 1 and "line 1" in r.stdout and "Traceback" not in r.stderr


def test_errors_are_one_clear_line():
    for args in (["build", "--template", "nope"], ["build", "--template", "dgx-h100", "--param", "x=1"],
                 ["validate", "/nonexistent.json"], ["topo-matrix", "/nonexistent.json", "--host", "h0"],
                 ["build", "--template", "dgx-h100", "--hosts", "2", "--oversubscription", "0.1"]):
        r = cli(*args)
        assert r.returncode == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip().startswith("error:"), r.stderr


def test_help_everywhere():
    for cmd in ("build", "validate", "topo-matrix"):
        r = cli(cmd, "--help")
        assert r.returncode == 0 and "usage" in r.stdout


def test_unreadable_json_names_the_file_for_every_document_command(tmp_path):
    """``validate`` and ``export`` read a document path the same way: a broken file is one
    located line naming the file, line and column, never a traceback."""
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for args in (("validate", broken), ("export", broken, "--format", "json")):
        r = cli(*args)
        assert r.returncode == 1, args
        said = r.stdout + r.stderr   # validate reports on stdout, export on stderr
        assert f"{broken}: invalid JSON at line 1 column 2" in said, (args, said)
        assert "Traceback" not in said
