"""``algorithm: auto`` is the default, the chosen algorithm is in the result, and what-if sweeps
use the same time model (latency + data ÷ efficiency) as ``simulate``.

Two DGX H100 hosts, rail-optimized (8 rails, one leaf per rail)::

    [hX/gpuI] ==NV18== [hX/nvswitch0..3]
    [hX/gpuI]--[hX/pcieI]--[hX/nicI]==400G==[leafI]          (X = 0, 1; I = 0..7)

An 8-byte all-reduce there is latency-bound: NCCL's tree LL, 6.8 + 2 × (7 × 0.6 + 1 × 6.98) =
29.16 µs (tuning.cc's formula, designer/engine/traffic/collectives/protocols.py, with the fabric's own
6.98 µs LL network step, designer/engine/analysis/latency.network_step; see tests/engine/test_collectives.py).
"""
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.analysis.simulate import simulate
from designer.engine.model.topology import Topology
from designer.engine.analysis.whatif import simulate_with_diff, sweep
from designer.engine.traffic.workloads import normalize_pattern

AR8 = {"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 8}


@pytest.fixture(scope="module")
def two_doc():
    return build_cluster("dgx-h100", 2)


@pytest.fixture(scope="module")
def two(two_doc):
    return Topology.from_document(two_doc)


def test_algorithm_and_protocol_default_to_auto(two):
    pattern = normalize_pattern(two, dict(AR8), "workload[0]", set())
    assert pattern["algorithm"] == "auto" and pattern["protocol"] == "auto"


def test_result_names_the_chosen_algorithm_and_the_time_of_each_alternative(two):
    """Without ``algorithm`` the result says what ran (tree / LL for 8 B on two hosts) and what
    each alternative would have taken; the chosen one is the fastest that runs."""
    entry = simulate({"topology": two, "workload": [dict(AR8)]})["summary"]["patterns"]["ar"]
    assert (entry["algorithm"], entry["protocol"]) == ("tree", "LL")
    assert entry["latency_s"] == pytest.approx(29.16e-6)
    alt = entry["alternatives"]
    assert set(alt) >= {"ring", "tree", "nvls", "nvlstree", "collnet"}
    timed = {a: v["time_s"] for a, v in alt.items() if v["time_s"] is not None}
    assert min(timed, key=timed.get) == "tree" and timed["tree"] == pytest.approx(entry["completion_s"])
    assert alt["nvls"]["time_s"] is None and alt["nvls"]["reason"]  # NVLS alone is one host only


def test_sweep_baseline_and_what_if_use_the_latency_term(two_doc):
    """The sweep's baseline job completion is simulate's latency-bound 29.16 µs, not bytes ÷ rate
    (~0); a NIC down stops the running communicator (it does not re-plan), and the what-if
    result carries the fallback NCCL would build on the live rails with its own time."""
    scenario = {"topology": two_doc, "workload": [dict(AR8)]}
    base = simulate(scenario)["summary"]["patterns"]["ar"]["completion_s"]
    out = sweep(scenario, over="nic")
    assert out["baseline"]["job_completion_s"] == pytest.approx(base) and base > 29e-6
    worst = out["ranking"][0]
    assert worst["impact"]["job_completion_s"]["before"] == pytest.approx(base)
    failed = simulate_with_diff({**scenario, "failures": [{"target": "h0/nic3"}]})
    entry = failed["summary"]["patterns"]["ar"]
    assert entry["complete"] is False
    fallback = entry["fallback"]
    assert fallback["algorithm"] in ("tree", "ring") and fallback["time_s"] >= base


def test_ring_steps_across_hosts_pay_the_cpu_vendors_net_overhead():
    """NCCL's tuning.cc charges every intra-host step of a multi-host ring at least the hosts'
    network post overhead (getNetOverhead: x86 Intel 1.0 µs, AMD 2.0 µs; ×3 for Simple). 16 GPUs
    on two hosts, ring LL, 8 B: 30 steps of which 2 cross the network (the tuner's figure is
    2.7 µs; the engine routes one: 6.98 µs on DGX H100, 7.86 µs on DGX A100, whose NICs sit a
    second PCIe switch level away: doorbell 0.64, flight 0.8, forwarding 1.53, host write 0.54) —
    DGX H100 (Xeon 8480C): 6.6 + 28 × 1.0 + 2 × 6.98 = 48.56 µs;
    DGX A100 (EPYC 7742):  6.6 + 28 × 2.0 + 2 × 7.86 = 78.32 µs."""
    from designer.engine.traffic.collectives.protocols import latency_us
    from designer.engine.traffic.collectives.select import cpu_vendor

    assert cpu_vendor("AMD EPYC 7742") == "amd" and cpu_vendor("Intel Xeon Platinum 8480C") == "intel"
    assert cpu_vendor(None) is None and cpu_vendor("Grace") is None
    assert latency_us("ring", "LL", "allreduce", 16, 2, net_overhead=2.0) == pytest.approx(68.0)
    ring = {**AR8, "algorithm": "ring"}
    for template, expected in (("dgx-h100", 48.56e-6), ("dgx-a100", 78.32e-6)):
        topo = Topology.from_document(build_cluster(template, 2))
        entry = simulate({"topology": topo, "workload": [dict(ring)]})["summary"]["patterns"]["ar"]
        assert (entry["protocol"], entry["latency_s"]) == ("LL", pytest.approx(expected))
    # one host: no network step, no overhead floor (ring LL 6.6 + 14 × 0.6 = 15 µs on 8 GPUs)
    from designer.engine.model.templates import host_document

    one = Topology.from_document(host_document("dgx-a100"))
    entry = simulate({"topology": one, "workload": [dict(ring)]})["summary"]["patterns"]["ar"]
    assert entry["latency_s"] == pytest.approx(15.0e-6)


def test_simulate_cli_result_carries_the_chosen_algorithm(tmp_path):
    """``python -m designer.engine simulate`` on a scenario without ``algorithm``: the result JSON
    names the algorithm and protocol ``auto`` chose and every alternative's predicted time."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "sc.json"
    path.write_text(json.dumps({"format": "fabricscope.scenario/1",
                                "topology": {"build": {"template": "dgx-h100", "hosts": 1}},
                                "workload": [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"},
                                              "bytes": 8 * 2**30}]}))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "designer.engine", "simulate", str(path), "--quiet"], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(proc.stdout)["summary"]["patterns"]["ar"]
    assert (entry["algorithm"], entry["protocol"]) == ("nvls", "Simple")
    assert entry["alternatives"]["ring"]["time_s"] > entry["alternatives"]["nvls"]["time_s"]


# ------------------------------------------------------------------ the net plugin's latency
def test_plugin_latency_enters_every_network_step_twice_under_simple():
    """NCCL's tuner adds the net plugin's reported latency to each step across hosts, and again
    under Simple (the flush). By hand, 16 ranks on 2 nodes, an 8 µs routed step, plugin 75 µs:

    - ring Simple: 8.4 + (30 − 2) × max(3.4, 3 × 1.0) + 2 × (8 + 2 × 75) = 8.4 + 95.2 + 316 = 419.6 µs;
    - ring LL: 6.6 + 28 × max(0.6, 1.0) + 2 × (8 + 75) = 6.6 + 28 + 166 = 200.6 µs;
    - tree LL128: 14.0 + 2 × (7 × 1.25 + 1 × (8 + 75)) = 14 + 183.5 = 197.5 µs;
    - with a plugin reporting 0 (verbs) the same formulas without the 75s.
    """
    from designer.engine.traffic.collectives.protocols import latency_us

    def lat(algorithm, protocol, plugin):
        return latency_us(algorithm, protocol, "allreduce", 16, 2, "nvlink", 1.0, net_step_us=8.0,
                          plugin_latency_us=plugin)
    assert lat("ring", "Simple", 75.0) == pytest.approx(419.6)
    assert lat("ring", "LL", 75.0) == pytest.approx(200.6)
    assert lat("tree", "LL128", 75.0) == pytest.approx(197.5)
    assert lat("ring", "Simple", 0.0) == pytest.approx(8.4 + 95.2 + 2 * 8)
    # One node: no step crosses a network, the plugin's figure never enters.
    assert latency_us("ring", "Simple", "allreduce", 8, 1, plugin_latency_us=75.0) == pytest.approx(
        latency_us("ring", "Simple", "allreduce", 8, 1))


@pytest.mark.parametrize("template, expected", [("aws-p5", 75.0), ("aws-p4d", 75.0), ("aws-p5en", 35.0),
                                                 ("dgx-h100", 0.0)])
def test_each_nic_model_carries_its_plugins_latency(template, expected):
    """EFA (p4d, p5: aws-ofi-nccl reports 75 µs), EFAv3 (p5en: 35 µs), ConnectX (NCCL's IB
    transport reports none); on one host the group crosses no network."""
    from designer.engine.traffic.collectives.common import group_of
    from designer.engine.traffic.collectives.select import net_plugin_latency_of

    topo = Topology.from_document(build_cluster(template, 2))
    pattern = normalize_pattern(topo, dict(AR8), "workload[0]", set())
    assert net_plugin_latency_of(topo, group_of(topo, pattern)) == expected


def test_an_efa_cluster_pays_the_plugin_latency_in_its_collective_time(monkeypatch):
    """The same 8 GiB ring all-reduce on 2 hosts: on p5 (EFA) it takes 2 × 2 × 75 = 300 µs longer
    than the engine's own latency without the plugin (Simple, 2 steps across hosts), times NCCL's
    ring Simple plateau across hosts, 1.4 (``protocols.ring_plateau``): 420 µs."""
    from designer.engine.traffic.collectives import select

    pattern = {"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 8 * 2 ** 30,
               "algorithm": "ring", "protocol": "Simple"}

    def latency_s():
        p5 = Topology.from_document(build_cluster("aws-p5", 2))
        return select.plan_pattern(p5, normalize_pattern(p5, dict(pattern), "workload[0]", set())).latency_s
    with_plugin = latency_s()
    monkeypatch.setattr(select, "net_plugin_latency_of", lambda topo, group, nics=None: 0.0)
    assert (with_plugin - latency_s()) * 1e6 == pytest.approx(300.0 * 1.4)
