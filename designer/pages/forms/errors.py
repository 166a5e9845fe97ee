"""Service and engine errors next to the form fields they name.

Engine errors come back as :class:`designer.exceptions.EngineValidationError` with located paths
(``workload[0].bytes``, ``routing.seed``, ``build.spines``); :func:`attach_errors` puts each one
next to the field it names, the rest above the form.
"""
from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

__all__ = ["attach_errors", "form_status"]

_PATTERN_FIELDS = {"bytes": "bytes_value", "participants": "ids", "algorithm": "algorithm",
                   "src": "src", "dst": "dst", "prefill": "src", "decode": "dst", "source": "src",
                   "id": "pid", "kind": "kind", "demand_gbps": "demand_gbps", "channels": "kind"}
_SCENARIO_FIELDS = {"latency.message_bytes": "latency_value", "latency.initiators": "latency_initiators",
                    "latency.flows": "latency_flows", "latency": "latency_on",
                    "routing.nic_policy": "nic_policy", "routing.multipath": "multipath",
                    "routing.seed": "seed", "mode": "mode", "name": "name",
                    "description": "description", "failures": "failures_down",
                    "over": "sweep_over", "policies": "policies"}


def attach_errors(exc: ValidationError, form: forms.Form,
                  formset: forms.BaseFormSet | None = None) -> None:
    """Put a service/engine error next to the field its path names (else above the form)."""
    details = getattr(exc, "details", None)
    if details is None:  # a plain Django ValidationError: {field: [messages]} or a list
        items = exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]
        for field, messages in items:
            for message in messages:
                _add(form, field if field in form.fields else None, message)
        return
    for problem in details or [{"path": "", "message": str(exc)}]:
        path, message = problem.get("path") or "", problem.get("message", "")
        if not _attach_pattern(path, message, formset):
            _add(form, _scenario_field(path, form), f"{path}: {message}" if path else message)


def _attach_pattern(path: str, message: str, formset) -> bool:
    match = re.match(r"^workload\[(\d+)\](?:\.(\w+))?", path)
    if formset is None or not match or int(match.group(1)) >= len(formset.forms):
        return False
    form = formset.forms[int(match.group(1))]
    field = _PATTERN_FIELDS.get(match.group(2) or "")
    if field == "ids" and form.cleaned_data.get("select") == "group":
        field = "group"
    _add(form, field, message)
    return True


def _scenario_field(path: str, form: forms.Form) -> str | None:
    for prefix, field in _SCENARIO_FIELDS.items():
        if path == prefix or path.startswith(prefix + "[") or path.startswith(prefix + "."):
            if field == "failures_down" and form.cleaned_data.get("failures_degrade"):
                return "failures_down"
            return field
    # A generator parameter (engine.fabrics locates them by name: "leaves_per_rail", "build.spines").
    name = re.split(r"[.\[]", path.removeprefix("build."))[0]
    return name if name in form.fields else None


def _add(form: forms.Form, field: str | None, message: str) -> None:
    form.add_error(field if field in form.fields else None, message)


def form_status(form) -> bool:
    """Whether a bound form or formset shows errors."""
    failed = form.total_error_count() if hasattr(form, "total_error_count") else form.errors
    return bool(form.is_bound and failed)
