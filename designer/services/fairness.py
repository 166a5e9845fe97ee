"""A fair job queue: the user with less work in flight is served first (docs/RELIABILITY.md,
"Fair job queue").

Every job and sweep-chunk message gets a Celery priority when it is published: how many of its
user's *other* jobs and chunks are queued or running, capped at :data:`LOWEST_PRIORITY`. kombu's
Redis transport keeps one list per priority and a worker pops the lists from 0 up
(``priority_steps`` 0..9 in settings), so a user's sub-second simulation (priority 0 when they
have nothing else in flight) is taken before another user's 8-chunk sweep (priority 8), and waits
only for the runs already on the pool processes. Among equal priorities the order stays FIFO.

Nothing is held back or stored: every row is published exactly as before, only its message's
place in the queue changes, so the exactly-once rules (rows are the truth, the reaper re-sends
what waited too long) are untouched. A re-sent message gets a fresh priority, so a backlog that
drained meanwhile moves its last rows up.

Below ``queue`` (it imports no other service module).
"""
from __future__ import annotations

import logging

from django.db.models import Q

from designer.choices import JobState
from designer.models import SimulationJob, SweepChunk

__all__ = ["LOWEST_PRIORITY", "message_priority"]

logger = logging.getLogger(__name__)

# kombu's Redis transport takes priorities 0 (served first) to 9.
LOWEST_PRIORITY = 9
IN_FLIGHT = (JobState.QUEUED, JobState.RUNNING)


def message_priority(model, pk: int) -> int:
    """The priority (0 = first) of the message of row ``pk`` of ``model`` (a job or a chunk).

    The count of the same user's other jobs and chunks queued or running, capped at
    :data:`LOWEST_PRIORITY`. A sweep past its prepare step counts through its chunks (its own
    row only waits for them). 0 for a row that is gone or has no user.
    """
    user_id = _user_of(model, pk)
    if user_id is None:
        return 0
    jobs = (SimulationJob.objects.filter(submitted_by_id=user_id, state__in=IN_FLIGHT)
            .filter(Q(chunks_total=0) | Q(state=JobState.QUEUED)))
    chunks = SweepChunk.objects.filter(job__submitted_by_id=user_id, state__in=IN_FLIGHT)
    if model is SimulationJob:
        jobs = jobs.exclude(pk=pk)
    else:
        chunks = chunks.exclude(pk=pk)
    # Stop counting once the cap is reached: a user's deep backlog costs two bounded reads.
    in_flight = len(jobs.values_list("pk", flat=True)[:LOWEST_PRIORITY])
    if in_flight < LOWEST_PRIORITY:
        in_flight += len(chunks.values_list("pk", flat=True)[:LOWEST_PRIORITY - in_flight])
    return in_flight


def _user_of(model, pk: int) -> int | None:
    if model is SimulationJob:
        rows = SimulationJob.objects.filter(pk=pk).values_list("submitted_by_id", flat=True)
    else:
        rows = SweepChunk.objects.filter(pk=pk).values_list("job__submitted_by_id", flat=True)
    return rows.first()
