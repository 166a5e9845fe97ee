"""Disaggregated prefill/decode inference: KV-cache bytes from the model dimensions,
KV-transfer time per request at a request rate, and the link that limits it.

Topology: 2 DGX-H100, rail-optimized; prefill = the 8 GPUs of h0 (one tp-8 instance), decode =
the 8 GPUs of h1. KV transfer of a request: h0/gpuI → h1/gpuI for I = 0..7, path
``gpuI → pcieI → nicI → leafI → nicI → pcieI → gpuI``; the 8 flows use disjoint rails, and the
narrowest hop is the GPU's own PCIe link (read from the topology below, not assumed)::

    h0/gpu0 ─PCIe─ pcie0 ─ nic0 ─400G─ leaf0 ─400G─ nic0 ─ pcie0 ─PCIe─ h1/gpu0     (× 8 rails)
"""
import pytest

from designer.engine.errors import InvalidWorkload
from designer.engine.model.fabrics import build_cluster
from designer.engine.traffic.jobs.inference import kv_cache_bytes
from designer.engine.analysis.simulate import simulate
from designer.engine.model.topology import Topology

# Tiny model: 2 layers, 2 KV heads of 64, bf16, 1,000-token prompts.
#   per token   = 2 (K, V) · 2 layers · 2 heads · 64 · 2 B = 1,024 B
#   per request = 1,024 · 1,000 = 1,024,000 B; per GPU pair (tp 8) = 128,000 B
TINY = {"kind": "inference", "layers": 2, "kv_heads": 2, "head_dim": 64, "dtype_bytes": 2,
        "prompt_tokens": 1000, "prefill": {"group": "h0", "kind": "gpu"}, "decode": {"group": "h1", "kind": "gpu"}}
PER_FLOW = 128_000


@pytest.fixture(scope="module")
def doc():
    return build_cluster("dgx-h100", 2)


@pytest.fixture(scope="module")
def pcie_gbps(doc):
    """Capacity (GPU → switch direction) of h0/gpu0's PCIe link, from the document."""
    topo = Topology.from_document(doc)
    link = topo.link_ids.index("h0/gpu0-pcie0")
    return float(topo.link_capacity_ab_gbps[link])


def run(doc, **template):
    r = simulate({"topology": doc, "workload": {"job": {"template": {**TINY, **template}}}})
    return r["summary"]["job"]


def test_kv_bytes_from_model_dimensions():
    assert kv_cache_bytes(2, 2, 64, 2, 1000) == 1_024_000
    # Llama-3-70B (80 layers, 8 KV heads of 8192 / 64 = 128), bf16: 327,680 B per token.
    assert kv_cache_bytes(80, 8, 128, 2, 1) == 327_680


def test_spaced_requests_each_take_the_pcie_time(doc, pcie_gbps):
    """1,000 requests/s with a 0.5 ms prefill (prefill utilization 0.5): request k arrives at k ms,
    prefills until k+0.5 ms, and its transfer runs alone: T = 128,000 B · 8 / PCIe rate on each of
    the 8 rails."""
    j = run(doc, request_rate=1000.0, requests=3, prefill_s=5e-4)
    inf = j["inference"]
    t = PER_FLOW * 8 / (pcie_gbps * 1e9)
    assert inf["kv_bytes_per_token"] == 1024 and inf["kv_bytes_per_request"] == 1_024_000
    assert inf["bytes_per_flow"] == PER_FLOW
    for k, d in enumerate(inf["requests_detail"]):
        assert d["kv_start_s"] == pytest.approx(k * 1e-3 + 5e-4, rel=1e-12)
        assert d["kv_transfer_s"] == pytest.approx(t, rel=1e-6)
        assert d["limiting_link"] == "h0/gpu0-pcie0:a>b"
    assert inf["kv_transfer_s"]["mean"] == pytest.approx(t, rel=1e-6) and inf["keeps_up"]
    assert inf["limiting_link"] == "h0/gpu0-pcie0:a>b"
    assert inf["offered_gbps"] == pytest.approx(1000 * 1_024_000 * 8 / 1e9)
    assert j["step_time_s"] == pytest.approx(2.5e-3 + t, rel=1e-9)


def test_overlapping_requests_share_the_links_by_hand(doc, pcie_gbps):
    """No prefill time; request 1 arrives T/2 after request 0 (rate 2/T). Request 0 sends alone
    for T/2 (half its bytes), then both share each rail at half rate: request 0's other half
    takes T → ends at 1.5 T; request 1 has sent T/2 worth by then, its last half alone → ends
    at 2 T. Both transfers take 1.5 T."""
    t = PER_FLOW * 8 / (pcie_gbps * 1e9)
    j = run(doc, request_rate=2 / t, requests=2, prefill_s=0.0)
    d0, d1 = j["inference"]["requests_detail"]
    assert d0["kv_end_s"] == pytest.approx(1.5 * t, rel=1e-6)
    assert d1["kv_start_s"] == pytest.approx(0.5 * t, rel=1e-9)
    assert d1["kv_end_s"] == pytest.approx(2.0 * t, rel=1e-6)
    assert j["inference"]["kv_transfer_s"]["max"] == pytest.approx(1.5 * t, rel=1e-6)
    # One decode instance gets a request every T/2 but each takes 1.5 T: it does not keep up.
    assert not j["inference"]["keeps_up"]
    assert j["compute_s"] == 0.0                    # arrival waits are not compute


def test_two_prefill_instances_queue_and_model_prefill_time(doc):
    """tp 4 splits h0 into 2 prefill instances (and decode tp 4 h1 into 2): requests alternate
    instances; 4 requests at 1 per µs with a 1 ms prefill: request 2 waits for request 0's
    instance. Without prefill_s the time comes from the model (a forward pass of the prompt)."""
    j = run(doc, request_rate=1e6, requests=4, prefill_s=1e-3, prefill_tp=4, decode_tp=4)
    inf = j["inference"]
    assert (inf["prefill_instances"], inf["decode_instances"], inf["bytes_per_flow"]) == (2, 2, 1_024_000 / 4)
    starts = [d["prefill_start_s"] for d in inf["requests_detail"]]
    assert starts == pytest.approx([0.0, 1e-6, 1e-3, 1e-3 + 1e-6], rel=1e-9)
    from designer.engine.traffic.jobs.models import stage_numbers, template_dims as _dims

    sides = {k: TINY[k] for k in ("kind", "prefill", "decode")}
    m = simulate({"topology": doc, "workload": {"job": {"template": {
        **sides, "model": "llama3-8b", "request_rate": 10.0, "requests": 2, "prompt_tokens": 2048}}}})["summary"]["job"]
    dims = _dims({"model": "llama3-8b", "seq_len": 2048, "micro_batch": 1}, "t")
    want = stage_numbers(dims, {"tp": 8, "pp": 1, "cp": 1, "ep": 1, "dp": 1}, 0)["fwd_s"]
    assert m["inference"]["prefill_s"] == pytest.approx(want, rel=1e-12) and want > 0
    assert m["inference"]["kv_bytes_per_token"] == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize("template, path, words", [
    ({"decode": {"group": "h0", "kind": "gpu"}}, "workload.job.template.decode", "shares GPUs"),
    ({"prefill_tp": 3}, "workload.job.template.prefill_tp", "do not split"),
    ({"request_rate": 0}, "workload.job.template.request_rate", "> 0"),
    ({"batch": 2}, "workload.job.template", "unknown field"),
    ({"model": "gpt-9"}, "workload.job.template.model", "unknown model"),
    ({"prefill_s": None, "request_rate": 1.0}, "workload.job.template.prefill_s", ">= 0"),
])
def test_bad_templates_are_located(doc, template, path, words):
    base = {"request_rate": 1.0, "prefill_s": 0.0}
    with pytest.raises(InvalidWorkload) as exc:
        run(doc, **{**base, **template})
    assert any(p.path == path and words in p.message for p in exc.value.problems), exc.value.problems
