"""The step Gantt (designer/figures/job.py) on a two-phase job over one DGX-H100::

    fwd (compute 10 ms) ──▶ ar (ring all-reduce of 8 GiB over gpu0..gpu7)
"""
import pytest

from designer.engine.analysis.simulate import simulate
from designer.engine.model.templates import host_document
from designer.figures.job import job_figure
from designer.figures.result import figures_for_result

PHASES = [{"id": "fwd", "compute_s": 0.01},
          {"id": "ar", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 2**30}]},
          {"id": "io", "compute_s": 0.001}]


@pytest.fixture(scope="module")
def result():
    return simulate({"topology": host_document("dgx-h100"), "workload": {"job": {"phases": PHASES}}})


def test_gantt_bars_start_and_last_as_the_phases(result):
    fig = job_figure(result)
    bars = {y: (b, x, t["name"]) for t in fig["data"] for y, b, x in zip(t["y"], t["base"], t["x"])}
    job = result["summary"]["job"]
    ar = next(p for p in job["phases"] if p["id"] == "ar")
    assert bars["fwd"][:2] == (0.0, pytest.approx(10.0))
    assert bars["ar"][0] == pytest.approx(ar["start_s"] * 1e3) and bars["ar"][1] == pytest.approx(
        (ar["end_s"] - ar["start_s"]) * 1e3)
    assert bars["fwd"][2] == bars["ar"][2] == "critical path" and bars["io"][2] == "compute"
    assert "Step" in fig["fabricscope"]["title"] and "exposed communication" in fig["fabricscope"]["title"]
    assert figures_for_result(result)["job"]["fabricscope"]["kind"] == "job"


def test_no_job_no_gantt_and_a_broken_step_says_so(result):
    assert job_figure({"summary": {}}) is None
    broken = {"summary": {"job": {**result["summary"]["job"], "complete": False, "reason": "phase ar does not finish"}}}
    assert "does not complete — phase ar does not finish" in job_figure(broken)["fabricscope"]["title"]


@pytest.mark.django_db
def test_result_page_shows_the_training_step_section(result, rf):
    from django.contrib.auth.models import AnonymousUser
    from django.template.loader import render_to_string

    from designer.pages import selectors as page_selectors

    request = rf.get("/")
    request.user = AnonymousUser()
    context = page_selectors.result_context(result=result, topology_doc=host_document("dgx-h100"))
    html = render_to_string("designer/result.html", {**context, "result": result}, request=request)
    step = result["summary"]["job"]["step_time_s"]
    assert 'id="sec-job"' in html and 'data-figure="job"' in html and 'href="#sec-job"' in html
    assert f"{step:.6f}".rstrip("0") in html and "exposed communication" in html


def _page(rf, result, doc):
    from django.contrib.auth.models import AnonymousUser
    from django.template.loader import render_to_string

    from designer.pages import selectors as page_selectors

    request = rf.get("/")
    request.user = AnonymousUser()
    context = page_selectors.result_context(result=result, topology_doc=doc)
    return render_to_string("designer/result.html", {**context, "result": result}, request=request)


@pytest.mark.django_db
def test_a_what_if_on_a_job_shows_the_step_before_and_the_slowdown(rf):
    """Two DGX-H100, tp 8 × dp 2, the DP ring of rail 0 through h0/nic0 at half rate: the page
    leads with the failed step and says what it was without the failure (×slowdown)."""
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", 2)
    phases = [{"id": "fwd", "compute_s": 0.001},
              {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e9,
                                                           "algorithm": "ring", "groups": {"layout": "dp"}}]}]
    r = simulate({"topology": doc, "workload": {"job": {"layout": {"tp": 8, "dp": 2}, "phases": phases}},
                  "failures": [{"target": "h0/nic0", "mode": "degrade", "factor": 0.5}]})
    d = r["diff"]["job"]
    assert d["slowdown"] > 1.5
    html = _page(rf, r, doc)
    assert 'id="step-before"' in html and f"{d['step_time_s']['before']:.6f}".rstrip("0") in html
    assert f"×{d['slowdown']:.3f}".rstrip("0") in html
    assert "step time (<a href=\"#sec-job\">training step</a>)" in html      # the top stat is the step


@pytest.mark.django_db
def test_an_inference_result_shows_the_kv_transfer_and_its_limiting_link(rf):
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", 2)
    template = {"kind": "inference", "layers": 2, "kv_heads": 2, "head_dim": 64, "prompt_tokens": 1000,
                "prefill": {"group": "h0", "kind": "gpu"}, "decode": {"group": "h1", "kind": "gpu"},
                "request_rate": 1000.0, "requests": 2, "prefill_s": 1e-3}
    r = simulate({"topology": doc, "workload": {"job": {"template": template}}})
    html = _page(rf, r, doc)
    inf = r["summary"]["job"]["inference"]
    assert 'id="kv-stats"' in html and inf["limiting_link"].replace(">", "&gt;") in html
    assert "KV transfer per request" in job_figure(r)["fabricscope"]["title"]
    # Arrival waits off the critical path draw no bar: the Gantt shows prefills and transfers.
    drawn = {y for t in job_figure(r)["data"] for y in t["y"]}
    assert "r0.arrive" not in drawn and {"r0.prefill", "r0.kv", "r1.kv"} <= drawn
