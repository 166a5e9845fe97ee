"""The form of the Diagnose page: measured nccl-tests runs (uploaded or pasted, each labelled with
the hosts it ran on), the collective and the runs' options.

Shapes only: :data:`RUN_SLOTS` runs of up to :data:`MAX_DIAGNOSE_LOG_BYTES` each. What a log says
and which hosts exist are checked by the engine through the service; its located problems
(``runs[1].log: line 37: ...``, ``runs[0].hosts[1]: ...``) come back next to the run's own field
(:func:`attach`).
"""
from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

from designer.selectors import NCCL_ALGORITHMS, NCCL_OPS, NCCL_PROTOCOLS
from designer.services import NIC_POLICIES
from designer.services.diagnose import MAX_DIAGNOSE_LOG_BYTES

__all__ = ["DiagnoseForm", "RUN_SLOTS", "attach"]

#: Runs the page takes at once (the API takes up to ``MAX_DIAGNOSE_RUNS``).
RUN_SLOTS = 4
_RUN_PATH = re.compile(r"^runs\[(\d+)\]\.(\w+)")
_SPLIT = re.compile(r"[\s,]+")


def _slot_fields(i: int) -> dict[str, forms.Field]:
    # Short labels: each slot is a <fieldset> whose legend ("Run 2") names the run.
    return {
        f"run{i}_label": forms.CharField(required=False, max_length=200, label="Label",
                                         help_text="empty: the file name"),
        f"run{i}_hosts": forms.CharField(required=False, max_length=20_000, label="Hosts",
                                         help_text="the hosts it ran on, e.g. h2, h3 (empty: every host)"),
        f"run{i}_file": forms.FileField(required=False, label="Log file",
                                         help_text="stdout, or nccl-tests' JSON result file"),
        f"run{i}_text": forms.CharField(required=False, label="Or paste the log", strip=False,
                                        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false",
                                                                     "class": "mono"})),
    }


class DiagnoseForm(forms.Form):
    op = forms.ChoiceField(choices=NCCL_OPS, initial="all_reduce", label="Collective",
                           help_text="The nccl-tests binary the runs used (all_reduce_perf …).")
    algorithm = forms.ChoiceField(choices=NCCL_ALGORITHMS, initial="auto", required=False,
                                  help_text="NCCL_ALGO of the runs; auto: the engine's choice per size")
    protocol = forms.ChoiceField(choices=NCCL_PROTOCOLS, initial="auto", required=False,
                                 help_text="NCCL_PROTO of the runs")
    channels = forms.IntegerField(required=False, min_value=1, max_value=32,
                                  help_text="empty: the engine's count")
    nic_policy = forms.ChoiceField(choices=[("", "default")] + [(p, p) for p in NIC_POLICIES], required=False,
                                   label="NIC policy", help_text="how GPUs pick NICs")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for i in range(RUN_SLOTS):   # one group of fields per run slot
            self.fields.update(_slot_fields(i))

    @classmethod
    def for_request(cls, request) -> "DiagnoseForm":
        """Bound to the POST and its uploads; on GET unbound, ``?op=`` choosing the collective."""
        if request.method == "POST":
            return cls(request.POST, request.FILES)
        op = request.GET.get("op")
        return cls(initial={"op": op} if op in dict(NCCL_OPS) else None)

    def slots(self) -> list[dict]:
        """The run fields grouped per run, for the template."""
        return [{"n": i + 1, **{key: self[f"run{i}_{key}"] for key in ("label", "hosts", "file", "text")}}
                for i in range(RUN_SLOTS)]

    def clean(self):
        data = super().clean()
        runs = [run for i in range(RUN_SLOTS) if (run := self._run(i, data)) is not None]
        if not runs and not self.errors:
            raise ValidationError("upload or paste at least one nccl-tests log")
        data["runs"] = runs
        return data

    def _run(self, i: int, data: dict) -> dict | None:
        upload, text = data.get(f"run{i}_file"), data.get(f"run{i}_text") or ""
        if upload is None and not text.strip():
            return None
        if upload is not None:
            if upload.size > MAX_DIAGNOSE_LOG_BYTES:
                self.add_error(f"run{i}_file", f"{upload.name} is {upload.size / 1024:.0f} KiB; the limit is "
                                               f"{MAX_DIAGNOSE_LOG_BYTES // 1024} KiB")
                return None
            text = upload.read().decode("utf-8", errors="replace")
        hosts = [h for h in _SPLIT.split(data.get(f"run{i}_hosts") or "") if h]
        label = data.get(f"run{i}_label") or (upload.name if upload is not None else f"run{i + 1}")
        return {"label": label, "hosts": hosts or None, "log": text, "slot": i}

    def params(self) -> dict:
        """The service's arguments: ``runs`` (without the page's slot numbers), ``op``, ``options``."""
        data = self.cleaned_data
        options = {k: data.get(k) for k in ("algorithm", "protocol", "channels", "nic_policy")}
        runs = [{k: v for k, v in run.items() if k != "slot"} for run in data["runs"]]
        return {"runs": runs, "op": data["op"], "options": options}


def attach(exc: ValidationError, form: DiagnoseForm) -> None:
    """Each located problem next to its run's field: ``runs[i].log`` under that run's file or
    pasted text, ``runs[i].hosts…`` under its hosts; anything else above the form."""
    slots = [run["slot"] for run in form.cleaned_data.get("runs") or []]
    details = getattr(exc, "details", None)
    if details is None:
        for path, messages in (exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]):
            for message in messages:
                form.add_error(_field(form, path or "", slots), message)
        return
    for problem in details:
        path, message = problem.get("path") or "", problem.get("message", "")
        field = _field(form, path, slots)
        form.add_error(field, message if field and field.endswith(("_text", "_file")) else
                       (f"{path}: {message}" if path else message))


def _field(form: DiagnoseForm, path: str, slots: list[int]) -> str | None:
    match = _RUN_PATH.match(path)
    if match is None or int(match[1]) >= len(slots):
        return path if path in form.fields else None
    slot = slots[int(match[1])]
    if match[2] == "hosts":
        return f"run{slot}_hosts"
    if match[2] in ("log", "rows"):
        return f"run{slot}_file" if form.cleaned_data.get(f"run{slot}_file") else f"run{slot}_text"
    return None
