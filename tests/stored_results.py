"""A finished simulation job in the database, stored the way the runner stores one.

Shared by the result-storage measurements (tests/designer/test_result_storage.py) and the
browser test of the stored 1,024-GPU result page (tests/browser/test_results.py).
"""
from __future__ import annotations

import hashlib
import json

from django.contrib.auth import get_user_model
from django.utils import timezone

PASSWORD = "a-long-test-password-1"


def stored_job(topology: dict, result: dict, *, username: str = "ana", prebuild: bool = True):
    """``(user, job)``: a succeeded simulate job of ``topology`` whose result is ``result``.

    The result is written by ``services.results.result_store`` (head + compressed columns) and,
    with ``prebuild``, its page figures are built as the runner builds them when a job succeeds.
    """
    from designer.choices import JobKind, JobState
    from designer.models import Scenario, SimulationJob, Topology, TopologyRevision
    from designer.services.results import result_store
    from designer.services.results import figures_prebuild

    user = get_user_model().objects.filter(username=username).first() or \
        get_user_model().objects.create_user(username, password=PASSWORD)
    topo = Topology.objects.create(owner=user, name=f"{topology.get('name') or 'cluster'} {timezone.now():%H%M%S%f}")
    checksum = hashlib.sha256(json.dumps(topology, sort_keys=True).encode()).hexdigest()
    rev = TopologyRevision.objects.create(topology=topo, number=1, document=topology, checksum=checksum,
                                          author=user)
    Topology.objects.filter(pk=topo.pk).update(current_revision=rev, revision_number=1)
    scenario = Scenario.objects.create(topology=topo, revision=rev, name="measured", created_by=user)
    now = timezone.now()
    job = SimulationJob.objects.create(kind=JobKind.SIMULATE, state=JobState.SUCCEEDED, topology=topo,
                                       revision=rev, scenario=scenario, submitted_by=user, progress=100,
                                       message="done", started_at=now, finished_at=now, attempts=1)
    result_store(job=job, document=result)
    if prebuild:
        figures_prebuild(job, result)
    return user, job
