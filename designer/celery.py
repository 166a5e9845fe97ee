"""The Celery application (loaded by ``DesignerConfig.ready()``; workers use ``-A designer.celery:app``).

Configuration comes from Django settings with the ``CELERY_`` prefix (see settings.py); tasks live
in ``designer/tasks.py`` and only take ids and call services.
"""
from __future__ import annotations

import os

from celery import Celery

__all__ = ["app"]

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")

app = Celery("fabricscope")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["designer"])
