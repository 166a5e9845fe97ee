"""``build --sharp``: a generated fabric's switches marked SHARP-capable, so CollNet can be chosen.

Fabric of the selection test: four DGX H100 on a rail-optimized InfiniBand NDR fabric (one leaf
per rail holds the four hosts, no spine; 8 rails)::

    [h0..h3/nic r]--400G--[leaf r]     r = 0..7, attrs.sharp on every leaf with sharp
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.engine.analysis.nccl_tests import predict_sweep
from designer.engine.catalog import SHARP_ATTR
from designer.engine.errors import InvalidTopology, InvalidWorkload
from designer.engine.model.fabrics import build_cluster, plan_cluster

ROOT = Path(__file__).resolve().parents[2]


def switches(doc: dict) -> list[dict]:
    return [n for n in doc["nodes"] if n["kind"] == "switch"]


def test_sharp_marks_every_fabric_switch_and_says_so():
    doc = build_cluster("dgx-h100", 16, switch="ib-ndr-64", sharp=True, storage=2)
    assert switches(doc) and all(n["attrs"][SHARP_ATTR] is True for n in switches(doc))
    assert doc["fabric"]["sharp"] is True
    plain = build_cluster("dgx-h100", 16, switch="ib-ndr-64")
    assert not any(SHARP_ATTR in n["attrs"] for n in switches(plain)) and "sharp" not in plain["fabric"]


def test_sharp_without_a_switch_picks_infiniband():
    doc = build_cluster("dgx-h100", 2, sharp=True)
    assert doc["fabric"]["switch"] == "ib-ndr-64" and doc["fabric"]["nic_link_tech"].startswith("ib")


def test_sharp_on_ethernet_is_refused_and_located():
    with pytest.raises(InvalidTopology) as err:
        build_cluster("dgx-h100", 2, switch="eth-51t2", sharp=True)
    assert err.value.problems[0].path == "sharp" and "InfiniBand" in err.value.problems[0].message
    with pytest.raises(InvalidTopology) as err:
        plan_cluster("dgx-h100", 2, sharp="yes")
    assert err.value.problems[0].path == "sharp"


def build(sharp: bool) -> dict:
    return {"build": {"template": "dgx-h100", "hosts": 4, "switch": "ib-ndr-64", "sharp": sharp}}


def test_collnet_is_chosen_only_on_a_sharp_fabric():
    """At 64 MiB on four hosts the in-network reduction halves what each NIC sends: CollNet wins
    where it can run; without SHARP it is not even a candidate (its reason names the attribute)."""
    with_sharp = predict_sweep(build(True), "all_reduce", sizes=[64 << 20])
    without = predict_sweep(build(False), "all_reduce", sizes=[64 << 20])
    assert with_sharp[0]["algorithm"] == "collnet"
    assert without[0]["algorithm"] != "collnet"
    with pytest.raises(InvalidWorkload) as err:
        predict_sweep(build(False), "all_reduce", sizes=[64 << 20], algorithm="collnet")
    assert "sharp" in err.value.problems[0].message.lower()


def test_cli_build_sharp(tmp_path):
    out = tmp_path / "pod.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "designer.engine", "build", "--template", "dgx-h100", "--hosts", "4",
                           "--sharp", "-o", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert all(n["attrs"].get(SHARP_ATTR) is True for n in switches(doc))
