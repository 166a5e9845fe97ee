"""Diagnosis jobs: submitted through the bridge's checks (a bad log is located and nothing is
saved), stored where jobs keep their input, run on the shared machinery to a terminal state
with progress, their failures recorded; the result page's figure and text.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]

Runs: the published nccl-tests#319 all-reduce log (2 HGX H100 hosts, 10 sizes, 32 MiB–16 GiB,
busbw 40.76 GB/s at 32 MiB). The engine is the real one when present (see ``diagnose_support``).
"""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from designer import services
from designer.choices import JobKind, JobState
from designer.models import AuditEvent, ResultFigures, SimulationJob, SimulationResult
from tests.designer.diagnose_support import BAD_LOG, LOG, use_engine

pytestmark = pytest.mark.django_db


@pytest.fixture
def engine(monkeypatch, settings):
    settings.FABRICSCOPE_JOB_PROGRESS_INTERVAL = 0   # every progress call is written
    return use_engine(monkeypatch)


def _submit(topology, user, **kw):
    runs = kw.pop("runs", [{"label": "pair", "hosts": ["h0", "h1"], "log": LOG}])
    return services.job_submit_diagnose(topology=topology, user=user, runs=runs, **kw)


def test_submit_stores_parsed_runs_and_queues(engine, small_topology, user, published,
                                              django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        job = _submit(small_topology, user, options={"algorithm": "ring", "protocol": "auto"})
    assert job.kind == JobKind.DIAGNOSE and job.state == JobState.QUEUED and job.scenario is None
    assert job.revision_id == small_topology.current_revision_id
    (run,) = job.inputs["runs"]
    assert run["label"] == "pair" and run["hosts"] == ["h0", "h1"]
    assert [r["bytes"] for r in run["rows"]] == [2 ** k for k in range(25, 35)]
    assert run["rows"][0]["busbw_gbps"] == 40.76               # the log's out-of-place busbw
    assert job.parameters["op"] == "all_reduce"
    assert job.parameters["options"] == {"algorithm": "ring"}  # "auto" is the default: not kept
    assert job.parameters["plan"]["runs"] == 1 and job.parameters["plan"]["sizes"] == 10
    assert published == [("designer.tasks.job_run", [job.pk], job.celery_task_id)]
    assert AuditEvent.objects.filter(action="job.submit", details__job=job.pk).exists()


def test_bad_log_is_located_and_nothing_is_saved(engine, small_topology, user, published):
    runs = [{"label": "good", "hosts": None, "log": LOG}, {"label": "bad", "hosts": None, "log": BAD_LOG}]
    with pytest.raises(ValidationError) as caught:
        _submit(small_topology, user, runs=runs)
    assert caught.value.details == [{"path": "runs[1].log", "message": "line 3: expected 13 columns, got 4"}]
    assert not SimulationJob.objects.exists() and not published
    assert not AuditEvent.objects.filter(action="job.submit").exists()


@pytest.mark.parametrize("runs, where", [
    ([], "runs"),
    ([{"label": f"r{i}", "hosts": None, "log": LOG} for i in range(9)], "runs"),
    ([{"label": "big", "hosts": None, "log": "x" * (1024 * 1024 + 1)}], "runs[0].log"),
])
def test_run_count_and_size_limits(engine, small_topology, user, published, runs, where):
    with pytest.raises(ValidationError) as caught:
        _submit(small_topology, user, runs=runs)
    assert set(caught.value.message_dict) == {where}
    assert not SimulationJob.objects.exists()


def test_unknown_option_is_refused(engine, small_topology, user, published):
    with pytest.raises(ValidationError) as caught:
        _submit(small_topology, user, options={"nccl_algo": "ring"})
    assert "unknown option nccl_algo" in caught.value.message_dict["options"][0]


@pytest.mark.django_db(transaction=True)   # the runner's heartbeat thread reads the job row
def test_job_runs_to_success_with_progress_and_figures(engine, small_topology, user, published, monkeypatch):
    from designer import bridge

    job = _submit(small_topology, user)
    seen = []
    real = bridge.run_diagnose

    def spy(job_, progress):
        def watched(fraction, message=""):
            progress(fraction, message)
            seen.append(SimulationJob.objects.values_list("progress", "message").get(pk=job_.pk))
        return real(job_, watched)
    monkeypatch.setattr("designer.bridge.run_diagnose", spy)
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.progress == 100 and job.message.startswith("diagnosed in ")
    assert seen and all(0 <= p <= 99 for p, _ in seen)          # the engine's progress reached the row
    assert seen[-1][1]                                           # with its message
    data = SimulationResult.objects.get(job=job).document()
    assert data["format"] == "fabricscope.diagnosis/1"
    assert {"op", "ranks", "tolerance_pct", "expected", "runs", "healthy", "explanations", "summary"} <= set(data)
    assert [r["label"] for r in data["runs"]] == ["pair"]
    for e in data["expected"]:
        assert e["low_gbps"] <= e["busbw_gbps"] <= e["high_gbps"]
    assert [e["rank"] for e in data["explanations"]] == list(range(1, len(data["explanations"]) + 1))
    assert data["healthy"] == all(r["healthy"] for r in data["runs"])
    # The page's figure was built once, when the job succeeded.
    assert ResultFigures.objects.filter(result_id=job.pk, key__contains=":diagnosis:").count() == 1


@pytest.mark.django_db(transaction=True)   # the runner's heartbeat thread reads the job row
def test_engine_failure_is_recorded_never_stuck(engine, small_topology, user, published, monkeypatch):
    job = _submit(small_topology, user)

    def broken(job_, progress):
        progress(0.1, "started")
        raise RuntimeError("candidate 3 exploded")
    monkeypatch.setattr("designer.bridge.run_diagnose", broken)
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.finished_at is not None
    assert job.error == "RuntimeError: candidate 3 exploded"
    assert job.message.startswith("failed: RuntimeError")
    assert not SimulationResult.objects.filter(job=job).exists()


@pytest.mark.django_db(transaction=True)   # the runner's heartbeat thread reads the job row
def test_result_page_shows_verdict_curves_and_tables(engine, small_topology, user, published, client):
    job = _submit(small_topology, user)
    services.job_run(job_id=job.pk)
    client.force_login(user)
    response = client.get(reverse("job_result", args=[job.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="diagnosis-verdict"' in html and 'data-plot="diagnosis"' in html
    assert 'id="diagnosis-runs"' in html and "js/diagnose.js" in html
    data = SimulationResult.objects.get(job=job).document()
    for e in data["explanations"]:
        assert f'data-rank="{e["rank"] - 1}"' in html


@pytest.mark.django_db(transaction=True)   # the runner's heartbeat thread reads the job row
def test_figure_overlays_measured_band_and_explained(engine, small_topology, user, published):
    from designer.figures.diagnose import diagnosis_figure

    job = _submit(small_topology, user, runs=[{"label": "a", "hosts": ["h0", "h1"], "log": LOG},
                                              {"label": "b", "hosts": None, "log": LOG}])
    services.job_run(job_id=job.pk)
    data = SimulationResult.objects.get(job=job).document()
    fig = diagnosis_figure(data)
    traces = fig["data"]
    band = [t for t in traces if t.get("fill") == "tonexty"]
    assert len(band) == 1 and band[0]["y"] == pytest.approx([e["high_gbps"] for e in data["expected"]], rel=1e-3)
    measured = [t for t in traces if t["mode"] == "markers"]
    assert [t["name"] for t in measured] == ["measured: a", "measured: b"]
    explained = fig["fabricscope"]["explained"]
    assert len(explained) == len(data["explanations"])
    assert [traces[i]["visible"] for i in explained] == [True] + [False] * (len(explained) - 1)
    assert fig["layout"]["xaxis"]["type"] == "log"
