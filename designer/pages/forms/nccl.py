"""The form of the nccl-tests page: which collective and sizes to predict, and a real run to overlay.

Shapes only (choices, a size up to :data:`designer.selectors.MAX_LOG_BYTES`); the engine
checks the sizes (``8``, ``64K``, ``8G``) and the log, and its located errors come back next to
the field they name (:func:`attach`).
"""
from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from designer.selectors import MAX_LOG_BYTES, NCCL_ALGORITHMS, NCCL_OPS

__all__ = ["NcclTestsForm", "attach"]


class NcclTestsForm(forms.Form):
    op = forms.ChoiceField(choices=NCCL_OPS, initial="all_reduce", label="Collective",
                           help_text="The nccl-tests binary (all_reduce_perf …); all GPUs take part.")
    algorithm = forms.ChoiceField(choices=NCCL_ALGORITHMS, initial="auto")
    min_bytes = forms.CharField(initial="8", max_length=16, label="From (-b)", help_text="8, 64K, 8M, 8G")
    max_bytes = forms.CharField(initial="8G", max_length=16, label="To (-e)")
    factor = forms.IntegerField(initial=2, min_value=2, max_value=1024, label="Factor (-f)")
    log = forms.FileField(required=False, label="nccl-tests output (optional)",
                          help_text=f"The stdout of a real run, up to {MAX_LOG_BYTES // 1024} KiB, "
                                    "to overlay on the prediction.")

    @classmethod
    def for_request(cls, request) -> NcclTestsForm:
        """Bound to the POST (and its upload), or on GET to the defaults (``?op=`` picks the
        collective), so the page always shows a prediction."""
        if request.method == "POST":
            return cls(request.POST, request.FILES)
        defaults = {name: field.initial for name, field in cls.base_fields.items() if name != "log"}
        return cls({**defaults, **{k: v for k, v in request.GET.items() if k in defaults}})

    def clean_log(self) -> str | None:
        upload = self.cleaned_data.get("log")
        if not upload:
            return None
        if upload.size > MAX_LOG_BYTES:
            raise ValidationError(f"the file is {upload.size / 1024:.0f} KiB; the limit is "
                                  f"{MAX_LOG_BYTES // 1024} KiB (keep only the nccl-tests output)")
        return upload.read().decode("utf-8", errors="replace")

    def params(self) -> dict:
        data = self.cleaned_data
        return {k: data[k] for k in ("op", "algorithm", "min_bytes", "max_bytes", "factor")} | {"log": data["log"]}


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
        target = field or (path.split(".")[0] if path.split(".")[0] in form.fields else None)
        form.add_error(target, f"{path}: {message}" if path and target != path else message)
