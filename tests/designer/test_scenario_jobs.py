"""The scenario page with a job workload: a job as JSON, a SimAI file imported on the
server (shown, not saved, until Save), engine problems next to the job, and a saved job shown
again on the edit page.

Data: ``small_topology`` = 2 DGX-H100 hosts (16 GPUs), rail-optimized, 1 storage server.
SimAI fixture: ``tests/engine/data/simai/microAllReduce.txt`` (aliyun/SimAI example/, one
512 MiB all-reduce over 8 GPUs — tp 8 × dp 1, so it needs 8 GPUs: on 16 it is a located error).
"""
from __future__ import annotations

import json
import pathlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from designer.models import Scenario, SimulationJob

from tests.designer.test_pages import scenario_post

pytestmark = pytest.mark.django_db

SIMAI = pathlib.Path(__file__).parents[1] / "engine" / "data" / "simai"
JOB = {"job": {"layout": {"tp": 8, "dp": 2}, "phases": [
    {"id": "fwd", "compute_s": 0.001},
    {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e8,
                                                 "groups": {"layout": "dp"}}]}]}}
# tp 8 × dp 2 on 16 GPUs: SimAI's microAllReduce with all_gpus 16 (same layer line).
SIMAI_16 = (SIMAI / "microAllReduce.txt").read_text().replace("all_gpus: 8", "all_gpus: 16")


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def job_post(**overrides) -> dict:
    return scenario_post(**{"name": "step", "workload_type": "job", "job": json.dumps(JOB),
                            "workload_format": "simai", **overrides})


def test_a_job_is_saved_shown_again_and_run(alice, small_topology, published):
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, job_post())
    assert response.status_code == 302, response.content.decode()[:3000]
    scenario = Scenario.objects.get(name="step")
    assert scenario.workload == JOB
    page = alice.get(response["Location"])
    body = page.content.decode()
    assert page.context["job_form"]["workload_type"].value() == "job"
    assert 'id="job-overview"' in body and "tp 8 × dp 2" in body and "2 (1 with compute" in body
    response = alice.post(reverse("scenario_edit", args=[scenario.pk]), job_post(action="simulate"))
    job = SimulationJob.objects.get(scenario=scenario)
    assert response["Location"] == reverse("job_detail", args=[job.pk]) and job.inputs["workload"] == JOB


def test_import_converts_the_file_and_shows_it_without_saving(alice, small_topology):
    url = reverse("scenario_new", args=[small_topology.pk])
    upload = SimpleUploadedFile("microAllReduce_16.txt", SIMAI_16.encode(), content_type="text/plain")
    response = alice.post(url, job_post(action="import", job="", workload_type="patterns",
                                        workload_file=upload))
    assert response.status_code == 200 and not Scenario.objects.exists()
    body = response.content.decode()
    assert "Imported from SimAI" in body and "HYBRID_TRANSFORMER_FWD_IN_BCKWD" in body
    assert "tp 8 × dp 2" in body and "allreduce" in body
    # The converted job fills the JSON box: saving the page as it is now saves that job.
    job_text = response.context["job_form"]["job"].value()
    imported = json.loads(job_text)
    assert imported["job"]["source"] == "simai" and imported["job"]["layout"]["dp"] == 2
    assert response.context["job_form"]["workload_type"].value() == "job"
    response = alice.post(url, job_post(job=job_text))
    assert response.status_code == 302
    assert Scenario.objects.get(name="step").workload == imported


def test_engine_problems_of_the_job_sit_next_to_it(alice, small_topology):
    bad = {"job": {**JOB["job"], "phases": [{"id": "a", "after": ["nope"]}]}}
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]), job_post(job=json.dumps(bad)))
    assert response.status_code == 400 and not Scenario.objects.exists()
    errors = response.context["job_form"].errors["job"]
    assert any("workload.job.phases[0].after[0]" in e and "unknown phase 'nope'" in e for e in errors), errors


@pytest.mark.parametrize("post, field, words", [
    ({"job": "{not json"}, "job", "not JSON"),
    ({"job": "[1, 2]"}, "job", 'must be {"job": {...}}'),
    ({"job": ""}, "job", "paste a job or import"),
    ({"action": "import", "workload_file": "bad"}, "workload_file", "line 1: unknown parallelism type"),
    ({"action": "import", "workload_file": "8gpu"}, "workload_file", None),
    ({"action": "import", "job": ""}, "workload_file", "choose a workload file"),
])
def test_bad_jobs_and_files_are_located(alice, small_topology, post, field, words):
    post = dict(post)
    if post.get("workload_file") == "bad":
        post["workload_file"] = SimpleUploadedFile("w.txt", b"NOPE model_parallel_NPU_group: 8 all_gpus: 8\n1\n")
    elif post.get("workload_file") == "8gpu":
        # Imports fine (8 GPUs of tp 8); the layout check happens on Save, against 16 GPUs.
        post["workload_file"] = SimpleUploadedFile("m.txt", (SIMAI / "microAllReduce.txt").read_bytes())
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]), job_post(**post))
    form = response.context["job_form"]
    if words is None:
        assert response.status_code == 200 and not form.errors
        response = alice.post(reverse("scenario_new", args=[small_topology.pk]),
                              job_post(job=form["job"].value()))
        errors = response.context["job_form"].errors["job"]
        assert response.status_code == 400
        assert any("workload.job.layout" in e and "16 GPUs" in e for e in errors), errors
        return
    assert response.status_code == 400
    assert any(words in e for e in form.errors[field]), form.errors
    assert not Scenario.objects.exists()


def test_pattern_scenarios_are_unchanged(alice, small_topology):
    """A post without workload_type (older clients) is a pattern list, as before."""
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]), scenario_post())
    assert response.status_code == 302
    assert isinstance(Scenario.objects.get().workload, list)


@pytest.mark.django_db(transaction=True)
def test_a_sweep_and_a_policy_comparison_of_a_job_rank_by_step_time(alice, small_topology, user, published):
    """The sweep job of a job scenario (2 chunks, run in process as the workers would) ranks NIC
    failures by step time: with NIC affinity every rail NIC down hangs the DP ring (the step does
    not complete); the page's ranking reads "step time"; the comparison's best is by step."""
    from designer import services
    from designer.models import SimulationResult, SweepChunk

    scenario = services.scenario_create(topology=small_topology, user=user, name="step", workload=JOB)
    job = services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=2)
    services.job_run(job_id=job.pk)
    for chunk in SweepChunk.objects.filter(job=job).order_by("index"):
        services.sweep_chunk_run(chunk_id=chunk.pk)
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    data = SimulationResult.objects.get(job=job).document()
    assert data["baseline"]["job"]["complete"] is True
    first = data["ranking"][0]["impact"]["job"]
    assert first["complete"]["after"] is False and first["step_time_s"]["after"] is None
    page = alice.get(reverse("job_result", args=[job.pk])).content.decode()
    assert "ranked by step-time impact" in page and "step time increase (ms)" in page
    compare = services.job_submit_compare(scenario=scenario, user=user, policies=["affinity", "any"],
                                          failures=[{"target": "h0/nic0", "mode": "down"}])
    services.job_run(job_id=compare.pk)
    compare.refresh_from_db()
    doc = SimulationResult.objects.get(job=compare).data
    assert doc["best"]["with_failures"] == "any" and "any: step " in doc["headline"]
    from designer.figures.whatif import policy_figure

    bars = policy_figure(doc)["data"]           # one bar per policy and case: the step time
    assert {tuple(sorted(set(t["x"][1]))) for t in bars} == {("step",)}
    step_any = doc["policies"]["any"]["with_failures"]["job"]["step_time_s"]
    assert bars[1]["y"][-1] == pytest.approx(step_any * 1e3)
    assert alice.get(reverse("job_result", args=[compare.pk])).status_code == 200


def test_an_inference_job_reports_ttft_tpot_and_its_queue_in_the_api_and_on_the_page(alice, small_topology, user,
                                                                                      published):
    """The inference module's documented example, run as the workers would, on 2 DGX-H100:
    10 req/s against one tp-8 prefill instance of Llama-3-70B (~415 ms per 8,192-token prompt,
    H100 at 40 % MFU): utilization ~4 ≥ 1, so the API result and the page say it cannot keep up,
    with TTFT, TPOT and the queue; the section is "Inference requests", not a training step."""
    from designer import services

    example = {"job": {"template": {"kind": "inference", "model": "llama3-70b", "prompt_tokens": 8192,
                                    "prefill": {"group": "h0"}, "decode": {"group": "h1"},
                                    "request_rate": 10, "requests": 16}}}
    scenario = services.scenario_create(topology=small_topology, user=user, name="infer", workload=example)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    inf = alice.get(f"/api/v1/jobs/{job.pk}/result/").json()["summary"]["job"]["inference"]
    q = inf["prefill_queue"]
    assert q["utilization"] == pytest.approx(10 * inf["prefill_s"]) and q["utilization"] > 1 and not q["stable"]
    assert inf["keeps_up"] is False and inf["verdict"].startswith("cannot keep up: prefill utilization")
    assert inf["ttft_s"]["max"] > inf["queue_wait_s"]["max"] > 4 and inf["tpot_s"] > 0
    page = alice.get(reverse("job_result", args=[job.pk])).content.decode()
    assert "Inference requests" in page and "Training step" not in page and 'id="tile-ttft"' in page
    assert 'id="tile-tpot"' in page and "cannot keep up" in page and "fs-verdict-bad" in page
