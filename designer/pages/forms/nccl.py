"""The form of the nccl-tests page: which collective and sizes to predict, with which protocol
and channel count, and real runs to overlay.

Shapes only (choices, up to :data:`designer.selectors.MAX_NCCL_LOGS` files of up to
:data:`designer.selectors.MAX_LOG_BYTES` each); the engine checks the sizes (``8``, ``64K``,
``8G``), the knobs against the collective and the logs, and its located errors come back next to
the field they name (:func:`attach`).
"""
from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

from designer.selectors import (
    MAX_LOG_BYTES,
    MAX_NCCL_LOGS,
    NCCL_ALGORITHMS,
    NCCL_NIC_POLICIES,
    NCCL_OPS,
    NCCL_PROTOCOLS,
    NCCL_REDOPS,
)

__all__ = ["NcclTestsForm", "MultipleFileInput", "attach"]

#: NCCL's MAXCHANNELS (docs/ENGINE.md, "Size-dependent bandwidth"); the engine checks it too.
_MAX_CHANNELS = 32


class MultipleFileInput(forms.ClearableFileInput):
    """A file input that takes several files (Django's widget refuses ``multiple`` otherwise)."""

    allow_multiple_selected = True


class _LogsField(forms.FileField):
    """Up to :data:`MAX_NCCL_LOGS` uploads, each checked by ``FileField`` (a list, maybe empty)."""

    widget = MultipleFileInput

    def clean(self, data, initial=None):
        uploads = data if isinstance(data, (list, tuple)) else [data] if data else []
        return [super(_LogsField, self).clean(upload, initial) for upload in uploads]


class NcclTestsForm(forms.Form):
    op = forms.ChoiceField(choices=NCCL_OPS, initial="all_reduce", label="Collective",
                           help_text="The nccl-tests binary (all_reduce_perf …); every GPU (or the host subset) is a rank.")
    algorithm = forms.ChoiceField(choices=NCCL_ALGORITHMS, initial="auto",
                                  help_text="auto: the engine's choice per size, as NCCL's tuner")
    protocol = forms.ChoiceField(choices=NCCL_PROTOCOLS, initial="auto", required=False,
                                 help_text="auto, or force one as NCCL_PROTO does")
    channels = forms.IntegerField(required=False, min_value=1, max_value=_MAX_CHANNELS, label="Channels",
                                  help_text="empty: the engine's count; 1–32 as NCCL_MIN/MAX_NCHANNELS "
                                            "(not for alltoall, sendrecv)")
    root = forms.IntegerField(initial=0, min_value=0, required=False, label="Root (-r)",
                              help_text="root rank of broadcast, reduce, gather, scatter")
    redop = forms.ChoiceField(choices=NCCL_REDOPS, initial="sum", required=False, label="Reduction (-o)",
                              help_text="echoed in the redop column; it does not change the modelled time")
    nic_policy = forms.ChoiceField(choices=NCCL_NIC_POLICIES, initial="", required=False, label="NIC policy")
    hosts_subset = forms.CharField(required=False, max_length=2000, label="Hosts (subset)",
                                   help_text="empty: every host; else host ids like h0,h3")
    env = forms.CharField(required=False, max_length=4000, label="NCCL environment",
                          widget=forms.Textarea(attrs={"rows": 3, "placeholder": "NCCL_ALGO=Ring\nNCCL_PROTO=Simple"}),
                          help_text="NAME=VALUE per line: NCCL_ALGO, NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS, "
                                    "NCCL_NVLS_ENABLE, NCCL_PXN_DISABLE, NCCL_CROSS_NIC, NCCL_NET_GDR_LEVEL, "
                                    "NCCL_P2P_LEVEL, NCCL_IB_QPS_PER_CONNECTION")
    min_bytes = forms.CharField(initial="8", max_length=16, label="From (-b)", help_text="8, 64K, 8M, 8G")
    max_bytes = forms.CharField(initial="8G", max_length=16, label="To (-e)")
    factor = forms.IntegerField(initial=2, min_value=2, max_value=1024, label="Factor (-f)")
    # How the figures are drawn, not what is predicted: the page switches them in place too
    # (static/js/nccl_axes.js); posted with the form, a new prediction keeps them.
    size_axis = forms.ChoiceField(choices=[("log2", "log₂ (KiB, MiB, GiB)"), ("log10", "log₁₀ (kB, MB, GB)")],
                                  initial="log2", required=False, label="Size axis",
                                  widget=forms.Select(attrs={"form": "nccl-form"}))
    busbw_axis = forms.ChoiceField(choices=[("linear", "linear"), ("log", "log")], initial="linear",
                                   required=False, label="Bus bandwidth axis",
                                   widget=forms.Select(attrs={"form": "nccl-form"}))
    log = _LogsField(required=False, label="nccl-tests output (optional)",
                     help_text=f"The stdout of real runs of one collective, up to {MAX_NCCL_LOGS} files of "
                               f"{MAX_LOG_BYTES // 1024} KiB each, overlaid on the prediction (one trace "
                               "each, named by the file).")

    @classmethod
    def for_request(cls, request) -> NcclTestsForm:
        """Bound to the POST (and its upload), or on GET to the defaults (``?op=`` picks the
        collective), so the page always shows a prediction."""
        if request.method == "POST":
            return cls(request.POST, request.FILES)
        defaults = {name: field.initial for name, field in cls.base_fields.items() if name != "log"}
        return cls({**defaults, **{k: v for k, v in request.GET.items() if k in defaults}})

    def clean_log(self) -> list[tuple[str, str]]:
        """The runs as ``(file name, text)``: no more than :data:`MAX_NCCL_LOGS`, none over
        :data:`MAX_LOG_BYTES` (checked before any is read)."""
        uploads = self.cleaned_data.get("log") or []
        if len(uploads) > MAX_NCCL_LOGS:
            raise ValidationError(f"{len(uploads)} files; at most {MAX_NCCL_LOGS} runs are overlaid at once")
        for upload in uploads:
            if upload.size > MAX_LOG_BYTES:
                raise ValidationError(f"{upload.name} is {upload.size / 1024:.0f} KiB; the limit is "
                                      f"{MAX_LOG_BYTES // 1024} KiB (keep only the nccl-tests output)")
        return [(upload.name, upload.read().decode("utf-8", errors="replace")) for upload in uploads]

    def axes(self) -> dict:
        """``size_axis`` and ``busbw_axis`` for :func:`designer.figures.nccl_tests.page_context`
        (the defaults when the form is unbound or the choice is not valid)."""
        data = getattr(self, "cleaned_data", {})
        return {"size_axis": data.get("size_axis") or "log2", "busbw_axis": data.get("busbw_axis") or "linear"}

    def params(self) -> dict:
        data = self.cleaned_data
        knobs = ("op", "algorithm", "protocol", "channels", "min_bytes", "max_bytes", "factor")
        return {k: data[k] for k in knobs} | {
            "protocol": data["protocol"] or "auto", "logs": data["log"], "root": data.get("root") or 0,
            "redop": data.get("redop") or "sum", "nic_policy": data.get("nic_policy") or None,
            "hosts_subset": (data.get("hosts_subset") or "").strip() or None,
            # One knob per line; the engine locates each as env[k] (k the line, from 0).
            "env": (data.get("env") or "").splitlines()}


def attach(exc: ValidationError, form: forms.Form) -> None:
    """Each located problem next to the field its path names (``min_bytes``, ``log``), else above."""
    details = getattr(exc, "details", None)
    if details is None:
        items = exc.message_dict.items() if hasattr(exc, "error_dict") else [(None, exc.messages)]
        for field, messages in items:
            for message in messages:
                form.add_error(field if field in form.fields else None, message)
        return
    field = next(iter(exc.message_dict)) if hasattr(exc, "error_dict") else None
    for problem in details:
        path, message = problem.get("path") or "", problem.get("message", "")
        head = re.split(r"[.\[]", path)[0]   # "env[2]" and "min_bytes" name their field
        target = field or (head if head in form.fields else None)
        form.add_error(target, f"{path}: {message}" if path and target != path else message)
