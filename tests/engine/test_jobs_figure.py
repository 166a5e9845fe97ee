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
    from designer.figures.style import fmt_time

    assert fmt_time(step) in html and "exposed communication" in html


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
    from designer.figures.style import fmt_time

    assert 'id="step-before"' in html and f'without the failures <span class="fs-n">{fmt_time(d["step_time_s"]["before"])}</span>' in html
    assert f"(×{d['slowdown']:.3g})" in html
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


def _many_phases(n: int) -> dict:
    """``n`` phases alternating compute (even) and communication (odd), 1 ms each, in a chain."""
    phases = [{"id": f"p{k}", "start_s": k * 1e-3, "end_s": (k + 1) * 1e-3, "compute_s": 1e-3 if k % 2 == 0 else 0,
               "patterns": {} if k % 2 == 0 else {f"c{k}": {"start_s": k * 1e-3, "end_s": (k + 1) * 1e-3}},
               "critical": False} for k in range(n)]
    return {"summary": {"job": {"complete": True, "step_time_s": n * 1e-3, "compute_s": n / 2 * 1e-3,
                                "communication_s": n / 2 * 1e-3, "exposed_communication_s": n / 2 * 1e-3,
                                "critical_path": [], "phases": phases}}}


def test_gantt_rows_are_in_phase_order_and_every_row_is_labelled():
    """80 rows: the categories follow the phases (not compute rows then communication rows), each
    has its own tick label, and each row is ROW_PX tall so no label is skipped."""
    from designer.figures.job import ROW_PX

    fig = job_figure(_many_phases(80))
    order = [f"p{k}" for k in range(80)]
    y = fig["layout"]["yaxis"]
    assert y["categoryorder"] == "array" and y["categoryarray"] == order
    assert y["tickmode"] == "array" and y["tickvals"] == order and y["ticktext"] == order
    assert fig["layout"]["height"] - 70 - 60 >= 80 * ROW_PX


def test_a_hung_phase_is_drawn_past_the_last_event_hatched():
    """p2 never ends: its bar runs from its start past the last event, in the 'never finishes'
    series (a zero-width bar at the horizon said nothing)."""
    r = _many_phases(3)
    r["summary"]["job"].update(complete=False, step_time_s=None, reason="phase p2 does not finish")
    r["summary"]["job"]["phases"][2]["end_s"] = None
    hung = next(t for t in job_figure(r)["data"] if t["name"] == "never finishes")
    assert hung["y"] == ["p2"] and hung["x"][0] > 0 and hung["marker"]["pattern"]["shape"] == "/"


@pytest.mark.django_db
def test_tiles_print_numbers_with_units_and_a_hung_step_names_no_critical_bottleneck(rf):
    """A 7.045341 s step prints as 7.05 s (three significant digits and a unit); a step that hangs
    shows what hangs instead of a critical bottleneck."""
    r = _many_phases(4)
    r["summary"]["job"].update(step_time_s=7.045341, compute_s=7.0, exposed_communication_s=0.045341)
    r["summary"].update(patterns={}, critical_bottleneck={"id": "h0/nic0-leaf0:a>b", "pattern": "c1"})
    html = _page(rf, r, None)
    assert 'id="tile-step"' in html and ">7.05 s<" in html and "7.045341" not in html and "45.3 ms" in html
    r["summary"]["job"].update(complete=False, step_time_s=None, reason="phase p3 does not finish",
                               hung={"phase": "p3", "patterns": ["c3"], "why": "lost"})
    html = _page(rf, r, None)
    assert 'id="tile-hang"' in html and "p3 hangs" in html and "critical bottleneck (" not in html


@pytest.mark.django_db
def test_a_hung_step_stored_before_the_hung_field_still_names_the_phase(rf):
    """A result stored without ``summary.job.hung``: the page finds the first phase that started
    and never ended (p2, pattern c1 never ends), not a critical bottleneck."""
    r = _many_phases(4)
    r["summary"].update(patterns={}, critical_bottleneck={"id": "h0/nic0-leaf0:a>b", "pattern": "c1"})
    r["summary"]["job"].update(complete=False, step_time_s=None, reason="phase p1 does not finish")
    r["summary"]["job"]["phases"][1].update(end_s=None, patterns={"c1": {"start_s": 1e-3, "end_s": None}})
    for ph in r["summary"]["job"]["phases"][2:]:
        ph.update(start_s=None, end_s=None)
    html = _page(rf, r, None)
    assert 'id="tile-hang"' in html and "p1 hangs" in html and "critical bottleneck (" not in html
