"""One run of a job or a sweep chunk on a worker: progress, heartbeat, cancellation, and how it
ends (docs/RELIABILITY.md, "Exactly-once completion").

Used by ``designer.services.runner`` (jobs) and ``designer.services.sweeps`` (chunks), below both.
Each run increments the row's ``attempts``, which doubles as the run's token: every write is
conditional on the row still being this run's, so a superseded runner's writes are dropped.

Modules
-------
``tracking``  :class:`Run` (the engine's progress callback; stops on a cancel or when superseded)
              and :class:`Heartbeat` (a side thread that keeps the run's heartbeat fresh)
``finish``    :func:`job_finish` (a job's terminal write, exactly once), :func:`done_message`,
              :func:`error_text`
"""
from designer.services.runs.finish import done_message, error_text, job_finish
from designer.services.runs.tracking import Heartbeat, Run

__all__ = ["Run", "Heartbeat", "job_finish", "done_message", "error_text"]
