"""The Celery application (loaded by ``DesignerConfig.ready()``; workers use ``-A designer.celery:app``).

Configuration comes from Django settings with the ``CELERY_`` prefix (see settings.py); tasks live
in ``designer/tasks.py`` and only take ids and call services.

:class:`BeatScheduler` (``CELERY_BEAT_SCHEDULER``) runs the stale-job reaper inside the beat
process rather than publishing it: queued, it would wait behind the very jobs it must rescue
(one pool process busy with a long chunk delayed recovery by a whole chunk), and it
would never run while every pool process is dead. Beat is its own process both embedded
(``worker --beat``, as ``manage.py up`` starts it) and standalone (``celery beat``).
"""
from __future__ import annotations

import logging
import os

from celery import Celery
from celery.beat import PersistentScheduler

__all__ = ["app", "BeatScheduler", "IN_BEAT_TASKS"]

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")

logger = logging.getLogger(__name__)

# Scheduled tasks beat calls itself instead of publishing. Each must be short (it holds up beat's
# clock while it runs) and safe to run concurrently with another copy of itself.
IN_BEAT_TASKS = frozenset({"designer.tasks.jobs_reap"})

app = Celery("fabricscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["designer"])


class BeatScheduler(PersistentScheduler):
    """Celery's default scheduler, except that :data:`IN_BEAT_TASKS` run in this process."""

    def apply_async(self, entry, producer=None, advance=True, **kwargs):
        if entry.task not in IN_BEAT_TASKS:
            return super().apply_async(entry, producer=producer, advance=advance, **kwargs)
        entry = self.reserve(entry) if advance else entry
        from django.db import close_old_connections

        # Beat lives for days: drop a connection the database closed meanwhile (as Django
        # does around each request), so one database restart does not stop the reaper.
        close_old_connections()
        try:
            self.app.tasks[entry.task]()  # calling a task runs it here, synchronously
        except Exception:  # logged; the next tick tries again
            logger.exception("scheduled task %s failed in beat", entry.task)
        finally:
            close_old_connections()
        return None
