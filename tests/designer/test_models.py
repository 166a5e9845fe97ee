"""Models: constraints, immutability, and the job state machine's transition table."""
import pytest
from django.db import IntegrityError

from designer.choices import ALLOWED_TRANSITIONS, JobState, TERMINAL_STATES
from designer.exceptions import IllegalTransition, ImmutableRevision
from designer.models import SimulationJob, SweepChunk, TopologyRevision

pytestmark = pytest.mark.django_db

LEGAL = {(old, new) for old, news in ALLOWED_TRANSITIONS.items() for new in news}
ALL_PAIRS = [(old, new) for old in JobState.values for new in JobState.values]


def test_transition_table_is_the_documented_machine():
    """queued -> running -> succeeded|failed|cancelled; queued -> cancelled|failed;
    running -> queued only for the reaper; terminal states are final."""
    assert LEGAL == {
        ("queued", "running"), ("queued", "cancelled"), ("queued", "failed"),
        ("running", "succeeded"), ("running", "failed"), ("running", "cancelled"),
        ("running", "queued"),
    }
    assert all(not ALLOWED_TRANSITIONS[s] for s in TERMINAL_STATES)


@pytest.mark.parametrize("old,new", ALL_PAIRS)
def test_every_transition_is_allowed_or_refused(old, new):
    for row in (SimulationJob(state=old), SweepChunk(state=old)):
        if (old, new) in LEGAL:
            fields = row.transition(new)
            assert row.state == new and "state" in fields
        else:
            with pytest.raises(IllegalTransition):
                row.transition(new)
            assert row.state == old


def test_transition_stamps_times_and_message():
    job = SimulationJob(state=JobState.QUEUED)
    fields = job.transition(JobState.RUNNING, message="go")
    assert job.started_at and job.heartbeat_at and job.message == "go"
    assert {"state", "started_at", "heartbeat_at", "message"} <= set(fields)
    assert "finished_at" in job.transition(JobState.SUCCEEDED) and job.finished_at


def test_revision_is_immutable_and_numbers_unique(small_topology, user):
    revision = small_topology.current_revision
    assert revision.number == 1 and len(revision.checksum) == 64
    revision.message = "rewritten history"
    with pytest.raises(ImmutableRevision):
        revision.save()
    with pytest.raises(IntegrityError):
        TopologyRevision.objects.create(topology=small_topology, number=1, document={},
                                        checksum="0" * 64, author=user)


def test_progress_is_at_most_100(scenario):
    job = SimulationJob.objects.create(kind="simulate", topology=scenario.topology,
                                       revision=scenario.revision, scenario=scenario)
    with pytest.raises(IntegrityError):
        SimulationJob.objects.filter(pk=job.pk).update(progress=101)
