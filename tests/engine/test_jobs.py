"""Jobs: communicator groups, parallelism layouts and a step as a DAG of phases.

Topologies (catalog: NVLink 4 effective 20.6 GB/s per link, 18 links per H100 = 370.8 GB/s per
direction; ring Simple latency on one host = 8.4 + 14 × 3.4 = 56 µs, NCCL tuning.cc)::

    one:  [h0/gpu0..gpu7] == NVSwitch plane                  (one DGX-H100)
    two:  [h0/gpu0..7] [h1/gpu0..7], gpuI--nicI--leafI--spines (two DGX-H100, rail-optimized)
"""
import pytest

from designer.engine.errors import InvalidWorkload
from designer.engine.model.fabrics import build_cluster
from designer.engine.traffic.jobs.dag import union_length
from designer.engine.traffic.jobs.layout import normalize_layout
from designer.engine.analysis.simulate import simulate
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology

GIB8 = 8 * 2**30
NVLINK_GBS = 18 * 20.6
RING_LAT_S = 56e-6
RING_DATA_S = 2 * 7 / 8 * GIB8 / (NVLINK_GBS * 1e9)   # ring all-reduce, 8 GPUs, S = 8 GiB


@pytest.fixture(scope="module")
def one():
    return Topology.from_document(host_document("dgx-h100"))


@pytest.fixture(scope="module")
def two():
    return Topology.from_document(build_cluster("dgx-h100", 2))


def ring(pid, **extra):
    return {"id": pid, "kind": "allreduce", "bytes": GIB8, "algorithm": "ring", "protocol": "Simple", **extra}


def job(topo, phases, layout=None, failures=()):
    spec = {"phases": phases, **({"layout": layout} if layout else {})}
    return simulate({"topology": topo, "workload": {"job": spec}, "failures": list(failures)})


# ------------------------------------------------------------------------------------------ groups
def test_per_host_groups_run_one_ring_per_host_concurrently(two):
    """Two hosts, one ring per host: the hosts share nothing, so each ring takes what it takes
    alone on one host (56 µs + 2·7/8·S / NVLink) and the pattern completes when both do."""
    r = simulate({"topology": two, "workload": [ring("ar", groups="per_host")]})
    p = r["summary"]["patterns"]["ar"]
    assert p["flows"] == 16                      # 8 ring hops per host
    assert p["completion_s"] == pytest.approx(RING_LAT_S + RING_DATA_S, rel=1e-9)
    for f in r["flows"]:
        assert f["src"].split("/")[0] == f["dst"].split("/")[0]   # no flow leaves its host


def test_per_rail_groups_pair_the_same_gpu_of_each_host(two):
    r = simulate({"topology": two, "workload": [{"id": "dp", "kind": "allreduce", "bytes": 1e6,
                                                  "groups": "per_rail", "algorithm": "ring"}]})
    pairs = {(f["src"], f["dst"]) for f in r["flows"]}
    assert ("h0/gpu3", "h1/gpu3") in pairs and ("h1/gpu3", "h0/gpu3") in pairs
    assert all(a.split("/")[1] == b.split("/")[1] for a, b in pairs)
    assert r["summary"]["patterns"]["dp"]["flows"] == 16


def test_explicit_groups_and_by_attribute(two):
    groups = [["h0/gpu0", "h0/gpu1"], ["h1/gpu0", "h1/gpu1"]]
    r = simulate({"topology": two, "workload": [{"id": "a", "kind": "alltoall", "bytes": 1e6, "groups": groups}]})
    assert r["summary"]["patterns"]["a"]["flows"] == 4          # 2 groups × 2·1 pairs
    r = simulate({"topology": two, "workload": [{"id": "b", "kind": "alltoall", "bytes": 1e6,
                                                 "groups": {"by": "index"}}]})
    assert r["summary"]["patterns"]["b"]["flows"] == 16         # 8 rails × 2·1 pairs


@pytest.mark.parametrize("groups, path, text", [
    ("per_gpu", "workload[0].groups", "unknown groups"),
    ([["h0/gpu0", "h9/gpu0"]], "workload[0].groups[0][1]", "unknown node"),
    ([["h0/gpu0"], ["h0/gpu0"]], "workload[0].groups[1][0]", "already in group 0"),
    ({"by": "colour"}, "workload[0].groups.by", "no attrs.colour"),
    ({"layout": "tp"}, "workload[0].groups.layout", "need a job with a layout"),
    ([], "workload[0].groups", "empty list"),
])
def test_bad_groups_are_located(two, groups, path, text):
    with pytest.raises(InvalidWorkload) as exc:
        simulate({"topology": two, "workload": [{"id": "x", "kind": "allreduce", "bytes": 1, "groups": groups}]})
    assert any(p.path == path and text in p.message for p in exc.value.problems), exc.value.problems


# ------------------------------------------------------------------------------------------ layout
def test_megatron_rank_order_tp_inside_hosts_dp_across(two):
    """tp 4 × dp 2 × pp 2 on 16 GPUs, order tp-cp-ep-dp-pp: rank = tp + 4·dp + 8·pp."""
    lay = normalize_layout(two, {"tp": 4, "dp": 2, "pp": 2})
    ids = two.node_ids
    assert [ids[n] for n in lay.groups("tp")[1]] == ["h0/gpu4", "h0/gpu5", "h0/gpu6", "h0/gpu7"]
    assert [ids[n] for n in lay.groups("dp")[0]] == ["h0/gpu0", "h0/gpu4"]
    assert [ids[n] for n in lay.groups("pp")[0]] == ["h0/gpu0", "h1/gpu0"]
    assert len(lay.groups("tp")) == 4 and len(lay.groups("pp")) == 8


def test_ep_is_carved_from_dp(two):
    lay = normalize_layout(two, {"tp": 2, "dp": 8, "ep": 4})
    ids = two.node_ids
    assert [ids[n] for n in lay.groups("ep")[0]] == ["h0/gpu0", "h0/gpu2", "h0/gpu4", "h0/gpu6"]
    assert len(lay.groups("dp")[0]) == 8 and len(lay.groups("dp")) == 2


@pytest.mark.parametrize("layout, path, text", [
    ({"tp": 8, "dp": 4}, "workload.job.layout", "32 ranks, but the topology has 16 GPUs"),
    ({"tp": 16, "dp": 1}, "workload.job.layout.tp", "stays inside a host"),
    ({"tp": 8, "dp": 2, "ep": 4}, "workload.job.layout.ep", "must divide dp"),
    ({"tp": 8, "dp": 2, "order": "tp-dp-pp"}, "workload.job.layout.order", "each of"),
    ({"tp": 8, "dp": 2, "zp": 1}, "workload.job.layout", "unknown field"),
])
def test_layout_that_does_not_fit_is_a_located_error(two, layout, path, text):
    with pytest.raises(InvalidWorkload) as exc:
        job(two, [{"id": "c", "compute_s": 1}], layout=layout)
    assert any(p.path == path and text in p.message for p in exc.value.problems), exc.value.problems


# ------------------------------------------------------------------------------------------ DAG
def test_two_phase_dag_matches_the_hand_computed_step(one):
    """compute 10 ms, then a ring all-reduce of 8 GiB over 8 H100s: 56 µs + 2·7/8·S / 370.8 GB/s
    (= 40.5 ms); step = 10 ms + that, all communication exposed."""
    r = job(one, [{"id": "fwd", "compute_s": 0.01}, {"id": "ar", "after": ["fwd"], "patterns": [ring("g")]}])
    j = r["summary"]["job"]
    ar_s = RING_LAT_S + RING_DATA_S
    assert j["step_time_s"] == pytest.approx(0.01 + ar_s, abs=1e-6)
    assert j["compute_s"] == pytest.approx(0.01, abs=1e-12)
    assert j["communication_s"] == pytest.approx(ar_s, abs=1e-6)
    assert j["exposed_communication_s"] == pytest.approx(ar_s, abs=1e-6)
    assert j["critical_path"] == ["fwd", "ar"]
    assert [(p["start_s"], p["end_s"]) for p in j["phases"]][1] == (pytest.approx(0.01), pytest.approx(0.01 + ar_s))
    head = r["summary"]["headline"]                  # the step leads the headline
    # One sentence about the step, never the all-at-once view's "slowest pattern".
    assert head.startswith(f"step {(0.01 + ar_s) * 1e3:.4g} ms: compute 10 ms") and "slowest pattern" not in head
    assert "longest collective in the step: g (ring/Simple)" in head
    # summary.job.collectives: the ring as it ran in the step; busbw = S / time × 2·7/8.
    (c,) = j["collectives"]
    assert c["pattern"] == "g" and c["phase"] == "ar" and c["time_s"] == pytest.approx(ar_s, abs=1e-6)
    assert c["busbw_gbs"] == pytest.approx(GIB8 / ar_s / 1e9 * 2 * 7 / 8, rel=1e-4)


def test_overlapping_phases_share_nvlink_exactly(one):
    """Ring A starts at 0; ring B after a compute of d. Both wait L (latency) then send D worth
    of data alone; while both send each gets half the NVLink. A: alone d, then D − d at half →
    ends L + 2D − d; B: (D − d) at half, then d alone → ends L + 2D. Compute d overlaps A."""
    d = 0.01
    r = job(one, [{"id": "a", "patterns": [ring("A")]}, {"id": "c", "compute_s": d},
                  {"id": "b", "after": ["c"], "patterns": [ring("B")]}])
    j = r["summary"]["job"]
    ends = {p["id"]: p["end_s"] for p in j["phases"]}
    assert ends["a"] == pytest.approx(RING_LAT_S + 2 * RING_DATA_S - d, rel=1e-9)
    assert ends["b"] == pytest.approx(RING_LAT_S + 2 * RING_DATA_S, rel=1e-9)
    assert j["critical_path"] == ["c", "b"]
    assert j["exposed_communication_s"] == pytest.approx(j["step_time_s"] - d, rel=1e-9)


def test_broken_communicator_means_the_job_does_not_complete(two):
    phases = [{"id": "fwd", "compute_s": 0.001},
              {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e6,
                                                           "groups": {"layout": "dp"}}]},
              {"id": "opt", "after": ["dp"], "compute_s": 0.001}]
    ok = job(two, phases, layout={"tp": 8, "dp": 2})["summary"]["job"]
    assert ok["complete"] and ok["critical_path"] == ["fwd", "dp", "opt"]
    bad = job(two, phases, layout={"tp": 8, "dp": 2}, failures=[{"target": "h0/nic0", "mode": "down"}])
    j = bad["summary"]["job"]
    assert not j["complete"] and j["step_time_s"] is None and "dp" in j["reason"]
    assert bad["summary"]["headline"].startswith("the step does not complete: phase dp")
    assert j["phases"][2]["start_s"] is None                    # opt never starts


@pytest.mark.parametrize("phases, path, text", [
    ([{"id": "a", "after": ["b"]}, {"id": "b", "after": ["a"]}], "workload.job.phases[1].after", "cycle"),
    ([{"id": "a", "after": ["zz"]}], "workload.job.phases[0].after[0]", "unknown phase"),
    ([{"id": "a"}, {"id": "a"}], "workload.job.phases[1].id", "duplicate"),
    ([{"id": "a", "compute_s": -1}], "workload.job.phases[0].compute_s", ">= 0"),
    ([{"id": "a", "flops": 1}], "workload.job.phases[0]", "unknown field"),
])
def test_bad_phases_are_located(one, phases, path, text):
    with pytest.raises(InvalidWorkload) as exc:
        job(one, phases)
    assert any(p.path == path and text in p.message for p in exc.value.problems), exc.value.problems


def test_union_length():
    assert union_length([(0, 2), (1, 3), (5, 6)]) == 4
    assert union_length([]) == 0


# ------------------------------------------------------------------------------------------ templates
def test_template_numbers_on_a_hand_computed_small_model(two):
    """h 1024, 4 layers, 8 heads / 2 KV heads (kv = 256), f 4096, V 1000, s 512, b 2, bf16, on
    tp 8 × pp 2 (16 GPUs, dp 1). Stage 0 = layers 0–1:
    attention 2·1024² + 2·1024·256 = 2,621,440; MLP 3·1024·4096 = 12,582,912 → 15,204,352 per
    layer; stage 1 adds the output layer 1000·1024 = 1,024,000 active parameters.
    fwd FLOPs stage 0 = (2·2·512·2·15,204,352 + 4·2·512²·1024·2) / 8 = 8,321,499,136 → at
    100 TFLOPS × 0.5 = 166.43 µs; TP = 2·2·2·512·1024·2 B = 8 MiB; PP = 2·512·1024·2 / 8 B."""
    from designer.engine.traffic.jobs.layout import normalize_layout
    from designer.engine.traffic.jobs.models import stage_numbers, template_dims as _dims

    dims = _dims({"hidden": 1024, "layers": 4, "heads": 8, "kv_heads": 2, "ffn": 4096, "vocab": 1000,
                  "seq_len": 512, "micro_batch": 2, "peak_tflops": 100.0, "mfu": 0.5}, "t")
    sizes = normalize_layout(two, {"tp": 8, "pp": 2}).sizes
    s0, s1 = stage_numbers(dims, sizes, 0), stage_numbers(dims, sizes, 1)
    assert s0["fwd_s"] == pytest.approx(8_321_499_136 / 50e12, rel=1e-12)
    assert s0["bwd_s"] == pytest.approx(2 * s0["fwd_s"], rel=1e-12)
    assert s1["fwd_s"] - s0["fwd_s"] == pytest.approx(2 * 2 * 512 * 1_024_000 / 8 / 50e12, rel=1e-9)
    assert s0["tp_bytes"] == 8 * 2**20
    assert s0["pp_bytes"] == 2 * 512 * 1024 * 2 / 8
    assert s0["dp_bytes"] == 0                                   # dp 1: nothing to reduce


def test_template_expands_a_gpipe_step_with_a_located_model_error(two):
    spec = {"layout": {"tp": 8, "pp": 2}, "template": {"model": "llama3-8b", "microbatches": 2, "seq_len": 1024}}
    r = simulate({"topology": two, "workload": {"job": spec}})
    j = r["summary"]["job"]
    assert j["complete"] and j["critical_path"][0] == "F0s0" and j["critical_path"][-1] == "step"
    ids = [p["id"] for p in j["phases"]]
    assert ids.index("F1s1") < ids.index("B0s1") and "F0s0.send" in ids and "B0s0.send" in ids
    assert j["step_time_s"] > j["compute_s"] > 0
    with pytest.raises(InvalidWorkload) as exc:
        simulate({"topology": two, "workload": {"job": {**spec, "template": {"model": "gpt-5"}}}})
    assert exc.value.problems[0].path == "workload.job.template.model"


def test_failures_diff_the_step_time(two):
    """A degraded NIC (×0.5) on rail 0 slows the DP all-reduce of that rail's group; a NIC down
    breaks it. diff.job compares with the failure-free step."""
    phases = [{"id": "dp", "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e9, "algorithm": "ring",
                                         "groups": {"layout": "dp"}}]}]
    layout = {"tp": 8, "dp": 2}
    slow = job(two, phases, layout=layout, failures=[{"target": "h0/nic0", "mode": "degrade", "factor": 0.5}])
    d = slow["diff"]["job"]
    assert d["complete"] == {"before": True, "after": True} and d["slowdown"] > 1.5 and not d["broken"]
    assert d["step_time_s"]["after"] == slow["summary"]["job"]["step_time_s"]
    down = job(two, phases, layout=layout, failures=[{"target": "h0/nic0", "mode": "down"}])["diff"]["job"]
    assert down["broken"] and down["slowdown"] is None and "dp" in down["reason"]


def test_n_minus_1_nic_sweep_of_a_16_host_job_ranks_by_step_time():
    """16 DGX-H100 (128 GPUs), tp 8 × dp 16: compute 1 ms, then the DP all-reduce (ring, one GPU
    per host on each rail) — every rail NIC carries one DP ring, so any of them down breaks the
    step (ranked first); degraded to half, its rail is the slowest and the step slows. The 2
    other NICs of each host have no uplink in this build: not ranked (``skipped.unwired``)."""
    from designer.engine.analysis.job_sweep import sweep_job

    topo = Topology.from_document(build_cluster("dgx-h100", 16))
    phases = [{"id": "fwd", "compute_s": 0.001},
              {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e8,
                                                           "algorithm": "ring", "groups": {"layout": "dp"}}]}]
    sc = {"topology": topo, "workload": {"job": {"layout": {"tp": 8, "dp": 16}, "phases": phases}}}
    down = sweep_job(sc, "nic")
    # 10 NICs per host: the 8 rail NICs each carry a DP ring; the 2 others are unwired.
    assert down["evaluated"] == 128 and len(down["skipped"]["unwired"]) == 32
    broken = [e for e in down["ranking"] if e["broken"]]
    assert len(broken) == 128 and down["ranking"][:128] == broken
    assert all(e["step_time_s"] is None and "dp" in e["reason"] for e in broken)
    half = sweep_job(sc, "nic", degrade=0.5)
    slow = [e["slowdown"] for e in half["ranking"]]
    assert not any(e["broken"] for e in half["ranking"]) and slow == sorted(slow, reverse=True)
    assert slow[127] > 1.0
    assert half["ranking"][0]["step_time_s"] == pytest.approx(half["baseline"]["step_time_s"] * slow[0])


def test_moe_template_ep_alltoall_matches_the_hand_size_and_nvlink_time():
    """deepseek-v3 on 4 DGX-H100, tp 1 × ep 8 × dp 32: EP groups are the 8 GPUs of one host.
    Per micro-batch and direction the stage's 58 MoE layers send a dispatch + combine of
    b·s·k·h·d = 4096·8·7168·2 B each: S = 2·58·4096·8·7168·2 B per rank; alone on NVLink the
    all-to-all moves 7/8·S per GPU at 370.8 GB/s (plus NCCL's latency)."""
    from designer.engine.traffic.jobs.models import MODELS

    spec = {"layout": {"tp": 1, "ep": 8, "dp": 32},
            "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}
    r = simulate({"topology": build_cluster("dgx-h100", 4), "workload": {"job": spec}})
    m = MODELS["deepseek-v3"]
    size = 2 * (m["layers"] - m["dense_layers"]) * 4096 * m["top_k"] * m["hidden"] * 2
    ep = r["summary"]["patterns"]["F0s0.ep"]
    assert ep["size_bytes"] == size and ep["flows"] == 4 * 8 * 7
    phase = next(p for p in r["summary"]["job"]["phases"] if p["id"] == "F0s0.comm")
    data = 7 / 8 * size / (NVLINK_GBS * 1e9)
    assert phase["end_s"] - phase["start_s"] == pytest.approx(ep["latency_s"] + data, rel=1e-6)
    assert {"dp.s0", "edp.s0"} <= set(r["summary"]["patterns"])
