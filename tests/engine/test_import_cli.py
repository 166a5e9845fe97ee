"""``python -m designer.engine import`` / ``export`` as subprocesses."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import networkx as nx

from tests.engine._import_helpers import DATA

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, stdin: bytes | None = None):
    return subprocess.run([sys.executable, "-m", "designer.engine", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=120)


def test_import_sniffs_and_warns_on_stderr(tmp_path):
    out = tmp_path / "vm.json"
    done = cli("import", str(DATA / "vm-1gpu-10gbe-nccl.xml"), "--host-id", "vm1", "-o", str(out))
    assert done.returncode == 0, done.stderr
    stderr = done.stderr.decode()
    assert "warning: cpu #0: numaid '-1'" in stderr and "imported nccl-xml" in stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "fabricscope.topology/1" and doc["groups"][0]["id"] == "vm1"
    assert {n["id"] for n in doc["nodes"]} == {"vm1/cpu0", "vm1/gpu0", "vm1/nic0"}


def test_import_stdin_with_format_and_export_formats(tmp_path):
    done = cli("import", "-", "--format", "nvidia-smi", stdin=(DATA / "dgx-a100-topo-m.txt").read_bytes())
    assert done.returncode == 0, done.stderr
    doc_path = tmp_path / "smi.json"
    doc_path.write_bytes(done.stdout)
    xml = cli("export", str(doc_path), "--host", "h0")
    assert xml.returncode == 0 and xml.stdout.startswith(b'<system version="1"')
    graphml = tmp_path / "h0.graphml"
    assert cli("export", str(doc_path), "--host", "h0", "--format", "graphml", "-o", str(graphml)).returncode == 0
    graph = nx.read_graphml(graphml)
    assert graph.number_of_nodes() == len(json.loads(done.stdout)["nodes"])
    assert graph.nodes["h0/gpu0"]["kind"] == "gpu"
    as_json = cli("export", str(doc_path), "--format", "json")
    assert json.loads(as_json.stdout)["format"] == "fabricscope.topology/1"


def test_errors_are_one_line_exit_1(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<!DOCTYPE x [<!ENTITY a "b">]><system/>')
    done = cli("import", str(bad))
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    assert done.stderr.decode().startswith("error: ")
    missing = cli("export", str(DATA / "nope.json"), "--host", "h0")
    assert missing.returncode == 1 and b"Traceback" not in missing.stderr
