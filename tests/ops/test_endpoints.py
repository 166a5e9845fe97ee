"""Probes, metrics and request ids, through Django's test client (no worker needed).

``own_redis`` is a real redis-server on a temporary unix socket, stopped and started by the
tests; the database is the test database.
"""
from __future__ import annotations

import logging
import re

import pytest

from designer.choices import JobState
from designer.models import SimulationJob
from tests.conftest import RING_ALLREDUCE

pytestmark = pytest.mark.django_db


def test_healthz_needs_nothing(client, settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing is probed
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert response["Cache-Control"].startswith("max-age=0")


def test_readyz_reports_each_dependency_and_503_when_broker_down(client, own_redis):
    ready = client.get("/readyz")
    assert ready.status_code == 200, ready.content
    body = ready.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "broker"}
    for check in body["checks"].values():
        assert check["ok"] is True and 0 <= check["latency_ms"] < 1000
    own_redis.stop()
    down = client.get("/readyz")
    assert down.status_code == 503
    checks = down.json()["checks"]
    assert checks["database"]["ok"] is True
    assert checks["broker"]["ok"] is False and checks["broker"]["error"]
    own_redis.start()
    assert client.get("/readyz").status_code == 200  # recovers without a restart


def _metric(text: str, name: str, **labels) -> float:
    """Value of one sample in exposition text (labels must match exactly, in any order)."""
    for line in text.splitlines():
        match = re.match(r"^([a-z_]+)(\{(.*)\})? (\S+)$", line)
        if not match or match[1] != name:
            continue
        found = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', match[3] or ""))
        if found == {k: str(v) for k, v in labels.items()}:
            return float(match[4])
    raise AssertionError(f"no sample {name}{labels} in:\n{text}")


def test_metrics_exposition(client, own_redis, scenario, user, published):
    from designer import services
    from designer.celery import app

    client.force_login(user)
    assert client.get("/topologies/").status_code == 200
    job = services.job_submit_simulate(scenario=scenario, user=user)
    SimulationJob.objects.filter(pk=job.pk).update(state=JobState.FAILED)  # any state will do
    own_redis.client().lpush(app.conf.task_default_queue, "x", "y")  # two "messages" waiting
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    text = response.content.decode()
    assert _metric(text, "fabricscope_http_requests_total", method="GET",
                   route="topologies/", status="200") >= 1
    assert _metric(text, "fabricscope_http_request_duration_seconds_count", method="GET",
                   route="topologies/") >= 1
    assert _metric(text, "fabricscope_http_request_duration_seconds_bucket", method="GET",
                   route="topologies/", le="+Inf") >= 1
    assert _metric(text, "fabricscope_jobs", state="failed") == 1
    assert _metric(text, "fabricscope_jobs", state="running") == 0
    assert _metric(text, "fabricscope_queue_depth", queue=app.conf.task_default_queue) == 2
    assert _metric(text, "fabricscope_broker_up") == 1
    assert _metric(text, "fabricscope_database_up") == 1
    assert "# TYPE fabricscope_job_duration_seconds histogram" in text
    own_redis.stop()
    text = client.get("/metrics").content.decode()
    assert _metric(text, "fabricscope_broker_up") == 0  # a scrape still works without Redis


def test_job_duration_histogram(client, scenario, user, published):
    """Two finished simulations of 3 s and 40 s: cumulative buckets 1,1,...,2."""
    from datetime import timedelta

    from django.utils import timezone

    from designer import services
    from designer.ops.metrics import render

    now = timezone.now()
    for seconds in (3, 40):
        job = services.job_submit_simulate(scenario=scenario, user=user)
        SimulationJob.objects.filter(pk=job.pk).update(
            state=JobState.SUCCEEDED, started_at=now - timedelta(seconds=seconds),
            finished_at=now)
    text = render()
    name = "fabricscope_job_duration_seconds"
    assert _metric(text, f"{name}_bucket", kind="simulate", le="2.0") == 0
    assert _metric(text, f"{name}_bucket", kind="simulate", le="5.0") == 1
    assert _metric(text, f"{name}_bucket", kind="simulate", le="30.0") == 1
    assert _metric(text, f"{name}_bucket", kind="simulate", le="60.0") == 2
    assert _metric(text, f"{name}_count", kind="simulate") == 2
    assert _metric(text, f"{name}_sum", kind="simulate") == pytest.approx(43, abs=0.01)


def test_metrics_access_rules(client, settings):
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 403
    assert client.get("/metrics", HTTP_X_FORWARDED_FOR="10.1.2.3").status_code == 403
    assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
    settings.FABRICSCOPE_METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 403  # token set: loopback is not enough
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    ok = client.get("/metrics", REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer s3cret")
    assert ok.status_code == 200


def test_request_id_echoed_generated_and_logged(client, caplog):
    caplog.set_level(logging.INFO, logger="designer.ops.access")
    given = client.get("/healthz", HTTP_X_REQUEST_ID="trace-abc.123")
    assert given["X-Request-ID"] == "trace-abc.123"
    fresh = client.get("/topologies/")  # a redirect to sign-in still gets an id
    assert re.fullmatch(r"[0-9a-f]{32}", fresh["X-Request-ID"])
    unsafe = client.get("/healthz", HTTP_X_REQUEST_ID="bad id\nwith=spaces")
    assert re.fullmatch(r"[0-9a-f]{32}", unsafe["X-Request-ID"])
    lines = [r for r in caplog.records if r.name == "designer.ops.access"]
    assert any(r.request_id == fresh["X-Request-ID"] and r.status == 302 for r in lines)


def test_log_formats_carry_request_id():
    from designer.ops.logs import JsonFormatter, KeyValueFormatter, RequestIdFilter, request_id_var

    record = logging.makeLogRecord({"name": "designer.x", "levelname": "INFO", "msg": "job %s",
                                    "args": (7,), "job": 7})
    token = request_id_var.set("rid-1")
    try:
        RequestIdFilter().filter(record)
    finally:
        request_id_var.reset(token)
    kv = KeyValueFormatter().format(record)
    assert "request_id=rid-1" in kv and 'msg="job 7"' in kv and "job=7" in kv
    import json

    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == "rid-1" and line["msg"] == "job 7" and line["job"] == 7


def test_job_message_carries_request_id(api_for, user, scenario, own_redis, monkeypatch,
                                        django_capture_on_commit_callbacks):
    """The API request's id goes into the Celery message headers (the worker logs it)."""
    from designer.celery import app

    sent = []
    monkeypatch.setattr(app, "send_task", lambda name, **kw: sent.append((name, kw)))
    with django_capture_on_commit_callbacks(execute=True):
        response = api_for(user).post("/api/v1/jobs/", {"scenario": scenario.pk,
                                                        "kind": "simulate"},
                                      format="json", HTTP_X_REQUEST_ID="req-42")
    assert response.status_code == 201, response.content
    assert response["X-Request-ID"] == "req-42"
    assert sent == [("designer.tasks.job_run", {
        "args": [response.json()["id"]], "task_id": sent[0][1]["task_id"],
        "headers": {"request_id": "req-42"},
        "priority": 0})]  # the user's only job in flight: first in the fair queue


def test_broker_down_job_submission_is_a_clear_503_and_nothing_is_written(
        api_for, user, scenario, own_redis, client):
    own_redis.stop()
    before = SimulationJob.objects.count()
    response = api_for(user).post("/api/v1/jobs/", {"scenario": scenario.pk, "kind": "simulate"},
                                  format="json")
    assert response.status_code == 503, response.content
    error = response.json()["error"]
    assert error["code"] == "broker_unavailable"
    assert "not accepted" in error["message"] and error["details"]["retry_after_s"] == 30
    assert SimulationJob.objects.count() == before
    # Reads keep working while Redis is down: API and pages.
    assert api_for(user).get("/api/v1/jobs/").status_code == 200
    assert api_for(user).get(f"/api/v1/scenarios/{scenario.pk}/").status_code == 200
    client.force_login(user)
    assert client.get(f"/topologies/{scenario.topology_id}/").status_code == 200
    # The scenario page's "simulate" button: a clear page, nothing saved.
    page = client.post(f"/scenarios/{scenario.pk}/", _scenario_form(scenario, "simulate"))
    assert page.status_code == 503
    assert b"The job queue is unreachable" in page.content
    assert SimulationJob.objects.count() == before


def _scenario_form(scenario, action: str) -> dict:
    from tests.designer.test_pages import scenario_post

    return scenario_post(name=scenario.name, action=action)


@pytest.mark.django_db(transaction=True)
def test_publish_failing_after_commit_is_recorded_and_reported(api_for, user, scenario,
                                                               own_redis, monkeypatch):
    """Broker answers the pre-check, then the publish fails: the row says failed, API says 503."""
    def broken(*args, **kwargs):
        raise ConnectionError("connection reset by peer")

    monkeypatch.setattr("designer.services.queue._send", broken)
    response = api_for(user).post("/api/v1/jobs/", {"scenario": scenario.pk, "kind": "simulate"},
                                  format="json")
    assert response.status_code == 503, response.content
    error = response.json()["error"]
    assert error["code"] == "broker_unavailable"
    job = SimulationJob.objects.get(pk=error["details"]["job"])
    assert job.state == JobState.FAILED and job.message == "failed: job queue unreachable"
    assert "connection reset" in job.error
