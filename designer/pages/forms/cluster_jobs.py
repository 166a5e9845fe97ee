"""The scenario builder's "Jobs" mode: a shared cluster, many jobs with placements
(docs/FORMATS.md, Jobs with placements).

The page's job rows (``static/js/cluster_jobs.js``: id, a pattern kind and size, a placement by
policy and GPU count or on picked hosts) write the ``jobs`` JSON this form reads; without
JavaScript the JSON is edited directly. The form checks the shape (a non-empty list of objects
with an ``id`` and a ``placement``); the engine checks the meaning, and its problems
(``jobs[1].placement.gpus[1]: h2/gpu0 is already claimed by job 'A'``) come back next to the
jobs (:meth:`ClusterJobsForm.attach`).
"""
from __future__ import annotations

import json

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from designer.params import json_loads_bounded

__all__ = ["ClusterJobsForm", "MAX_JOBS_TEXT", "PLACEMENT_POLICIES", "MAX_PICKER_HOSTS"]

#: Characters of the posted jobs JSON (1,024 jobs of a few hundred bytes, with explicit GPU lists).
MAX_JOBS_TEXT = 2_000_000
#: The engine's placement policies (designer.engine.traffic.jobs.placement.POLICIES), for the rows.
PLACEMENT_POLICIES = [("packed", "packed — fewest hosts"),
                      ("rail-aligned", "rail-aligned — smallest leaf block"),
                      ("spread", "spread — one GPU per host in turn"), ("random", "random (seeded)")]
#: Hosts the page lists in the host picker (a bigger design takes host ids typed in).
MAX_PICKER_HOSTS = 4096


class ClusterJobsForm(forms.Form):
    """``jobs``: the shared cluster's jobs as JSON (written by the page's rows)."""

    jobs = forms.CharField(required=False, label="Jobs (JSON)", max_length=MAX_JOBS_TEXT, strip=False,
                           widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "mono"}),
                           help_text='[{"id", "patterns": [...], "placement": {"policy", "gpus"} | {"hosts": [...]}}]')

    def clean_jobs(self) -> list[dict] | None:
        text = self.cleaned_data.get("jobs") or ""
        if not text.strip():
            raise ValidationError("add at least one job")
        try:
            value = json_loads_bounded(text, max_depth=settings.FABRICSCOPE_JSON_MAX_DEPTH)
        except ValueError as exc:    # malformed, or nested too deeply (JsonTooDeep is a ValueError)
            raise ValidationError(f"not JSON: {exc}") from None
        if isinstance(value, dict) and set(value) == {"jobs"}:
            value = value["jobs"]     # the API's {"jobs": [...]} pasted whole
        if not isinstance(value, list) or not value or not all(isinstance(j, dict) for j in value):
            raise ValidationError('must be a non-empty list of jobs [{"id", "patterns", "placement"}]')
        return value

    def jobs_list(self) -> list[dict] | None:
        return self.cleaned_data.get("jobs")

    def attach(self, exc: ValidationError) -> ValidationError | None:
        """Put the engine's ``jobs...`` problems on the jobs field; returns the rest (or None)."""
        details = getattr(exc, "details", None)
        if not details:
            return exc
        rest = [d for d in details if not str(d.get("path") or "").startswith("jobs")]
        for d in details:
            if d not in rest:
                self.add_error("jobs", f"{d['path']}: {d['message']}")
        if not rest:
            return None
        from designer.exceptions import EngineValidationError

        return EngineValidationError(code=exc.engine_code, message=exc.engine_message, details=rest)

    @staticmethod
    def initial_from(scenario) -> dict:
        jobs = getattr(scenario, "placed_jobs", None) if scenario else None
        return {"jobs": json.dumps(jobs, indent=1)} if jobs is not None else {}
