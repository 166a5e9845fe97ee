"""Database safety over HTTP: concurrent revision saves, deleting a topology with live jobs."""
from __future__ import annotations

import threading

import pytest
from django.db import connection

from designer import services
from designer.choices import JobState
from designer.models import SimulationJob, Topology, TopologyRevision
from designer.services.jobs import jobs_cancel_for_delete
from designer.services.runs import job_finish


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_saves_on_one_base_one_winner_nineteen_409(small_topology, user):
    """20 threads POST a revision on base 1 at once: exactly one 201 (revision 2), 19 x 409."""
    from rest_framework.test import APIClient

    document = small_topology.current_revision.document
    url = f"/api/v1/topologies/{small_topology.pk}/revisions/"
    barrier = threading.Barrier(20)
    results: list = []

    def save(i: int) -> None:
        client = APIClient()
        client.force_authenticate(user)
        try:
            barrier.wait(timeout=30)
            response = client.post(url, {"document": document, "base_revision": 1,
                                         "message": f"edit {i}"}, format="json")
            results.append((response.status_code, response.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    statuses = sorted(status for status, _ in results)
    assert statuses == [201] + [409] * 19, results
    conflicts = [body["error"] for status, body in results if status == 409]
    assert all(e["code"] == "conflict" and e["details"] == {"current_revision": 2,
                                                             "base_revision": 1}
               for e in conflicts)
    assert list(TopologyRevision.objects.filter(topology=small_topology)
                .values_list("number", flat=True).order_by("number")) == [1, 2]


@pytest.mark.django_db
def test_delete_topology_cancels_live_jobs_first(scenario, user, published, monkeypatch,
                                                 django_capture_on_commit_callbacks):
    revoked = []
    monkeypatch.setattr("designer.services.jobs.revoke", revoked.extend)
    queued = services.job_submit_simulate(scenario=scenario, user=user)
    running = services.job_submit_simulate(scenario=scenario, user=user)
    done = services.job_submit_simulate(scenario=scenario, user=user)
    SimulationJob.objects.filter(pk=running.pk).update(state=JobState.RUNNING, attempts=1)
    SimulationJob.objects.filter(pk=done.pk).update(state=JobState.SUCCEEDED)
    seen = []
    original = jobs_cancel_for_delete

    def spy(topology):
        original(topology)
        seen.extend(SimulationJob.objects.filter(topology=topology)
                    .values_list("pk", "state", "cancel_requested").order_by("pk"))
    monkeypatch.setattr("designer.services.topologies.jobs_cancel_for_delete", spy)
    with django_capture_on_commit_callbacks(execute=True):
        services.topology_delete(topology=scenario.topology)
    assert seen == [(queued.pk, "cancelled", True), (running.pk, "cancelled", True),
                    (done.pk, "succeeded", False)]
    assert sorted(revoked) == sorted([queued.celery_task_id, running.celery_task_id])
    assert not Topology.objects.filter(pk=scenario.topology_id).exists()
    # A runner still computing for a deleted job ends quietly (no exception, nothing written).
    assert job_finish(running.pk, 1, JobState.SUCCEEDED, data={"x": 1}) is False
