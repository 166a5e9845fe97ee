"""The scenario page's Chakra upload: per-rank ``.et`` traces and the communicator-group JSON
converted into a job on the scenario's revision (docs/FORMATS.md, "Chakra execution traces").

The conversion is the API's (``POST /topologies/{id}/chakra-import/``): the same bridge call
(:func:`designer.bridge.import_chakra_job`) with the same limits (rank files, hosts of the design),
reading only the uploaded bytes. ``Import file`` converts and shows the summary (ranks, nodes by
type, bytes by collective) and the job's JSON; nothing is saved until the page's Save.
"""
from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from designer import bridge
from designer.bridge.imports import CHAKRA_MAX_HOSTS, CHAKRA_MAX_RANK_FILES

__all__ = ["ChakraUploadFields", "MultipleFileField", "CHAKRA_COMMAND"]

CHAKRA_COMMAND = "python -m designer.engine import-workload --format chakra"


class _MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several uploaded files (``<input type=file multiple>``) as a list, empty when none."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", _MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, (list, tuple)) else [data] if data else []
        return [f for f in (super(MultipleFileField, self).clean(one, initial) for one in files) if f]


class ChakraUploadFields(forms.Form):
    """The two upload fields, mixed into the scenario page's job form (``JobWorkloadForm``)."""

    chakra_traces = MultipleFileField(
        required=False, label="Chakra traces (.et, one per rank)",
        help_text=f"up to {CHAKRA_MAX_RANK_FILES} rank files; the rank is the number ending the name "
                  f"(trace.3.et); rank r runs on the design's r-th GPU")
    chakra_groups = forms.FileField(required=False, label="Communicator groups (JSON)",
                                    help_text='{"<pg_name>": [ranks…]}; optional')

    def chakra_workload(self, traces: list, groups, *, revision, host_count: int) -> dict | None:
        """The uploaded traces as ``{"workload", "summary", "warnings"}`` on ``revision``'s GPUs, or
        None with the problems added to the fields (located: rank, file, byte)."""
        if len(traces) > CHAKRA_MAX_RANK_FILES:
            self.add_error("chakra_traces", f"{len(traces)} rank files; a page upload takes at most "
                                            f"{CHAKRA_MAX_RANK_FILES}: use `{CHAKRA_COMMAND}`")
            return None
        if revision is None:
            self.add_error("chakra_traces", "this topology has no revision yet: save one in the editor first")
            return None
        if host_count > CHAKRA_MAX_HOSTS:
            self.add_error("chakra_traces", f"traces are mapped inline onto designs of up to {CHAKRA_MAX_HOSTS} "
                                            f"hosts; this one has {host_count}: use `{CHAKRA_COMMAND}`")
            return None
        try:
            return bridge.import_chakra_job(document=revision.document,
                                            traces=[(f.name, f.read()) for f in traces],
                                            groups=groups.read() if groups is not None else None)
        except ValidationError as exc:
            details = getattr(exc, "details", None) or [{"path": "traces", "message": m} for m in exc.messages]
            for d in details[:50]:
                field = "chakra_groups" if "groups" in str(d.get("path") or "") else "chakra_traces"
                self.add_error(field, f"{d.get('path')}: {d.get('message')}" if d.get("path") else d.get("message"))
            return None
