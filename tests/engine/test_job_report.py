"""Honest job and inference results: the step's own collective times, a headline about the step
(what hangs and why when it does not complete), GPU peaks from the catalog, and inference TTFT,
TPOT and a stated queueing model.

Topologies: one DGX-H100 (8 GPUs on an NVSwitch plane), or 2 DGX-H100 rail-optimized::

    h0/gpuI ─PCIe─ pcieI ─ nicI ─400G─ leafI ─400G─ nicI ─ pcieI ─PCIe─ h1/gpuI     (I = 0..7)
"""
import pathlib

import pytest

from designer.engine.analysis.simulate import simulate
from designer.engine.catalog import GPU_COMPUTE
from designer.engine.errors import InvalidWorkload
from designer.engine.io.simai import simai_job
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology
from designer.engine.traffic.jobs.inference import queue_verdict
from designer.engine.traffic.jobs.models import stage_numbers, template_dims
from designer.engine.traffic.jobs.report import fmt_seconds

GIB8 = 8 * 2 ** 30
RING_S = 56e-6 + 2 * 7 / 8 * GIB8 / (18 * 20.6 * 1e9)   # ring all-reduce of 8 GiB alone on 8 H100s
SIMAI = pathlib.Path(__file__).parent / "data" / "simai" / "workload_ep_test.txt"


@pytest.fixture(scope="module")
def one():
    return Topology.from_document(host_document("dgx-h100"))


@pytest.fixture(scope="module")
def two():
    return build_cluster("dgx-h100", 2)


def ring(pid):
    return {"id": pid, "kind": "allreduce", "bytes": GIB8, "algorithm": "ring", "protocol": "Simple"}


# ------------------------------------------------------------------------ the step's collectives
def test_collectives_inside_the_step_are_timed_in_the_step_not_all_at_once(one):
    """Two 8 GiB rings one after the other: inside the step each runs alone (RING_S, busbw
    S/RING_S × 2·7/8); the all-at-once view runs both together, about twice as slow."""
    r = simulate({"topology": one, "workload": {"job": {"phases": [
        {"id": "a", "patterns": [ring("g1")]}, {"id": "b", "after": ["a"], "patterns": [ring("g2")]}]}}})
    rows = {c["pattern"]: c for c in r["summary"]["job"]["collectives"]}
    for pid in ("g1", "g2"):
        c = rows[pid]
        assert c["time_s"] == pytest.approx(RING_S, rel=1e-4)
        assert c["busbw_gbs"] == pytest.approx(GIB8 / RING_S / 1e9 * 2 * 7 / 8, rel=1e-4)
        assert (c["algorithm"], c["protocol"]) == ("ring", "Simple")
        assert r["summary"]["patterns"][pid]["completion_s"] > 1.8 * c["time_s"]     # all at once
    assert r["summary"]["job"]["step_time_s"] == pytest.approx(2 * RING_S, rel=1e-4)


# ------------------------------------------------------------------------ headlines
def test_a_simai_step_headline_speaks_of_the_step_only():
    """workload_ep_test on 4 DGX-H100: the headline gives the step time (the job's) and the
    longest collective *in the step*, not the all-at-once 'slowest pattern'."""
    r = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 4}}, "workload": simai_job(SIMAI.read_text())})
    j, head = r["summary"]["job"], r["summary"]["headline"]
    assert head.startswith(f"step {fmt_seconds(j['step_time_s'])}: compute ") and "slowest pattern" not in head
    longest = max(c["time_s"] for c in j["collectives"])
    assert f"longest collective in the step: " in head and fmt_seconds(longest) in head
    assert longest < j["step_time_s"]


def test_a_broken_step_says_what_hangs_why_and_nccls_fallback(two):
    """tp 1 × dp 16 over both hosts, h0/nic0 down: the all-reduce loses the flows of h0/gpu0's
    NIC, the step hangs in phase dp; NCCL re-initialized without that NIC would run the others'
    rails. Nothing is critical in a step that hangs."""
    phases = [{"id": "fwd", "compute_s": 1e-3},
              {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e9,
                                                           "groups": {"layout": "dp"}}]}]
    r = simulate({"topology": two, "workload": {"job": {"layout": {"tp": 1, "dp": 16}, "phases": phases}},
                  "failures": [{"target": "h0/nic0", "mode": "down"}]})
    j, head = r["summary"]["job"], r["summary"]["headline"]
    assert not j["complete"] and j["critical_path"] == []
    assert j["hung"] == {"phase": "dp", "patterns": ["g"], "why": "lost"}
    assert head.startswith("the step does not complete: phase dp hangs because g lost flows (")
    assert "h0/gpu0's only NIC" in head and "g#" not in head            # why, not the flow list
    fb = r["summary"]["patterns"]["g"]["fallback"]
    assert fb["algorithm"] and f"would run g as {fb['algorithm']}/{fb['protocol']} on 7 of 8 rails" in head
    assert (fb["rails"], fb["rails_total"]) == (7, 8)
    assert "slowest pattern" not in head


def test_a_broken_step_headline_names_two_patterns_and_counts_the_rest(two):
    """Five DP all-reduces in one phase all lose flows through h0/nic0: the headline names two
    and counts three, instead of listing every pattern."""
    pats = [{"id": f"g{k}", "kind": "allreduce", "bytes": 1e8, "algorithm": "ring", "groups": {"layout": "dp"}}
            for k in range(5)]
    r = simulate({"topology": two, "workload": {"job": {"layout": {"tp": 8, "dp": 2},
                                                        "phases": [{"id": "dp", "patterns": pats}]}},
                  "failures": [{"target": "h0/nic0", "mode": "down"}]})
    head = r["summary"]["headline"]
    assert "because g0 lost flows" in head and "; g1 lost flows" in head and ", and 3 more" in head
    assert "g2" not in head and "g4" not in head


# ------------------------------------------------------------------------ GPU figures
@pytest.mark.parametrize("gpu, bf16, fp8", [("b200", 2250.0, 4500.0), ("gb200", 2500.0, 5000.0),
                                            ("b300", 2250.0, 4500.0), ("gb300", 2500.0, 5000.0),
                                            ("mi300x", 1307.4, 2614.9), ("mi325x", 1307.4, 2614.9)])
def test_templates_know_the_published_peaks_of_newer_gpus(gpu, bf16, fp8):
    """Dense peaks (half the sparse datasheet figure; Blackwell per GPU of an 8- or 72-GPU
    system), by precision; compute time scales as 1 / peak."""
    base = {"model": "llama3-8b", "seq_len": 1024}
    assert template_dims({**base, "gpu": gpu}, "t")["peak_tflops"] == bf16
    assert template_dims({**base, "gpu": gpu, "precision": "fp8"}, "t")["peak_tflops"] == fp8
    sizes = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "dp": 1}
    h100 = stage_numbers(template_dims({**base, "gpu": "h100"}, "t"), sizes, 0)["fwd_s"]
    assert stage_numbers(template_dims({**base, "gpu": gpu}, "t"), sizes, 0)["fwd_s"] == pytest.approx(h100 * 989 / bf16)
    assert GPU_COMPUTE[gpu].source.startswith("https://")


def test_a_gpu_without_a_published_figure_is_a_located_error():
    with pytest.raises(InvalidWorkload) as exc:
        template_dims({"model": "llama3-8b", "gpu": "a100", "precision": "fp8"}, "t")
    assert exc.value.problems[0].path == "t.precision" and "a100 has no published fp8 peak" in exc.value.problems[0].message
    with pytest.raises(InvalidWorkload) as exc:
        template_dims({"model": "llama3-8b", "gpu": "tpu"}, "t")
    assert "b200" in exc.value.problems[0].message and "mi325x" in exc.value.problems[0].message


# ------------------------------------------------------------------------ inference
TINY = {"kind": "inference", "layers": 2, "kv_heads": 2, "head_dim": 64, "prompt_tokens": 1000,
        "prefill": {"group": "h0"}, "decode": {"group": "h1"}}


def test_the_documented_inference_example_is_accepted(two):
    """The inference module's own example (``{"group": "h0"}`` selects the host's GPUs): one tp-8
    prefill instance on h0, one decode instance on h1."""
    example = {"kind": "inference", "model": "llama3-70b", "prompt_tokens": 8192, "prefill": {"group": "h0"},
               "decode": {"group": "h1"}, "request_rate": 10, "requests": 16}
    inf = simulate({"topology": two, "workload": {"job": {"template": example}}})["summary"]["job"]["inference"]
    assert (inf["prefill_tp"], inf["decode_tp"], inf["prefill_instances"]) == (8, 8, 1)
    assert inf["kv_bytes_per_request"] == 327_680 * 8192


def test_a_prefill_queue_past_utilization_one_cannot_keep_up_by_hand(two):
    """10 req/s, 300 ms prefill, one instance: utilization 10 × 0.3 = 3 ≥ 1. Request k arrives at
    0.1 k s and starts its prefill when the previous one ends, at 0.3 k s: it waits 0.2 k s
    (without bound as k grows). TTFT = wait + prefill + its KV transfer."""
    inf = simulate({"topology": two, "workload": {"job": {"template": {
        **TINY, "request_rate": 10, "requests": 5, "prefill_s": 0.3}}}})["summary"]["job"]["inference"]
    q = inf["prefill_queue"]
    assert q["utilization"] == pytest.approx(3.0) and not q["stable"] and q["poisson_wait_s"] is None
    assert q["max_rate_per_s"] == pytest.approx(1 / 0.3)
    for k, d in enumerate(inf["requests_detail"]):
        assert d["queue_wait_s"] == pytest.approx(0.2 * k, abs=1e-9)
        assert d["ttft_s"] == pytest.approx(0.2 * k + 0.3 + d["kv_transfer_s"], rel=1e-9)
    assert not inf["keeps_up"]
    assert inf["verdict"].startswith("cannot keep up: prefill utilization 3 ≥ 1 (10 req/s × 300 ms prefill on 1 instance")
    assert "waited 800 ms" in inf["verdict"]


def test_a_stable_prefill_queue_keeps_up_and_states_the_poisson_wait(two):
    """5 req/s, 100 ms prefill: utilization 0.5, no wait with even arrivals (D/D/1); M/D/1 mean
    wait ρ·S / (2(1 − ρ)) = 0.5 · 0.1 / 1 = 50 ms with Poisson arrivals."""
    inf = simulate({"topology": two, "workload": {"job": {"template": {
        **TINY, "request_rate": 5, "requests": 4, "prefill_s": 0.1, "tpot_s": 0.02}}}})["summary"]["job"]["inference"]
    assert inf["prefill_queue"]["utilization"] == pytest.approx(0.5) and inf["prefill_queue"]["stable"]
    assert inf["prefill_queue"]["poisson_wait_s"] == pytest.approx(0.05)
    assert inf["queue_wait_s"]["max"] == pytest.approx(0.0, abs=1e-12) and inf["keeps_up"]
    assert inf["tpot_s"] == 0.02 and inf["tpot_basis"] == "given"
    assert inf["e2e_s"] == pytest.approx(inf["ttft_s"]["mean"] + 255 * 0.02)
    assert inf["verdict"].startswith("keeps up: prefill utilization 0.5, TTFT ") and "TPOT 20 ms" in inf["verdict"]


def test_queue_verdict_at_exactly_utilization_one_is_unstable():
    assert not queue_verdict(10.0, 0.1, 1)["stable"] and queue_verdict(10.0, 0.099, 1)["stable"]


def test_tpot_is_memory_bound_by_hand(two):
    """Llama-3-8B decoding on one tp-8 H100 instance: parameters by hand 32 · (2h² + 2h·kv +
    3h·f) + 2·V·h = 8,029,995,008 (h 4096, kv 1024, f 14336, V 128256); each token reads
    the weights (bf16) and the 8,192-token KV cache (131,072 B per token) once, split over 8 GPUs,
    at 3.35 TB/s."""
    params = 32 * (2 * 4096 ** 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 2 * 128256 * 4096
    assert params == 8_029_995_008
    inf = simulate({"topology": two, "workload": {"job": {"template": {
        "kind": "inference", "model": "llama3-8b", "prompt_tokens": 8192, "prefill": {"group": "h0"},
        "decode": {"group": "h1"}, "request_rate": 1, "requests": 2}}}})["summary"]["job"]["inference"]
    assert inf["tpot_s"] == pytest.approx((params * 2 + 131_072 * 8192) / 8 / 3.35e12, rel=1e-9)
    assert inf["tpot_basis"] == "memory-bound, batch 1"


def test_the_catalog_lists_gpu_figures_with_their_sources_for_the_api():
    """``catalog_as_dict()["gpus"]`` (the REST API's /catalog/): every GPU's dense peaks, HBM
    bandwidth and datasheet."""
    from designer.engine.catalog import catalog_as_dict

    gpus = catalog_as_dict()["gpus"]
    assert set(gpus) == set(GPU_COMPUTE) and gpus["mi300x"]["bf16_tflops"] == 1307.4
    assert gpus["a100"]["fp8_tflops"] is None and all(g["source"].startswith("https://") for g in gpus.values())
