"""The form of the goodput page: the job, its checkpoint, the Monte Carlo, and a design to compare.

Shapes only; the engine checks the plan (docs/FORMATS.md, "Goodput plan") and its located
problems (``checkpoint.write_s: …``) come back above the form (:func:`attach`). Per class, the
page's rate table edits the AFR (failures per unit-year, ≥ 0) and the repair time (hours, > 0),
prefilled with the cited defaults (:func:`designer.bridge.goodput_defaults`); a value equal to
its default is not sent, so the plan's rows keep naming their source. Per-model rates
(``models``) stay with the API and the CLI.
"""
from __future__ import annotations

import math

from django import forms
from django.core.exceptions import ValidationError

from designer import bridge
from designer.pages.forms.nccl import attach

__all__ = ["GoodputForm", "attach", "rate_fields"]


def _positive_hours(value) -> None:
    """A repair time must take time: a zero repair would make a degradation free."""
    if value is not None and not value > 0.0:
        raise ValidationError("must be more than 0 hours: a zero repair would make a failure free")


def rate_fields() -> list[dict]:
    """Per class: the defaults (``class``, ``unit``, ``effect``, ``afr``, ``repair_hours``,
    ``source``) and the names of its two inputs (``afr_field``, ``repair_field``)."""
    return [{**d, "afr_field": f"afr_{d['class']}", "repair_field": f"repair_{d['class']}"}
            for d in bridge.goodput_defaults()]


class GoodputForm(forms.Form):
    gpus = forms.IntegerField(required=False, min_value=1, label="Job GPUs",
                              help_text="the first N GPUs of the design; empty: all of them")
    parameters_billions = forms.FloatField(initial=8.0, min_value=1e-6, max_value=1e5, label="Model parameters (billions)",
                                           help_text="checkpoint = parameters × 14 bytes (mixed-precision Adam)")
    write_s = forms.FloatField(required=False, min_value=1e-6, label="Checkpoint write (s)",
                               help_text="empty: simulated on the design's storage servers")
    read_s = forms.FloatField(required=False, min_value=0.0, label="Checkpoint read-back (s)",
                              help_text="empty: simulated on the design's storage servers")
    restart_overhead_s = forms.FloatField(initial=600.0, min_value=0.0, max_value=1e6, label="Restart overhead (s)",
                                          help_text="detection, drain, rescheduling: before the read-back")
    exposed_communication_fraction = forms.FloatField(initial=0.1, min_value=0.0, max_value=1.0,
                                                      label="Exposed communication share",
                                                      help_text="of a step: what a degraded link slows")
    runs = forms.IntegerField(initial=200, min_value=1, max_value=2000, label="Monte Carlo runs")
    days_per_run = forms.FloatField(initial=54.0, min_value=0.01, max_value=50.0 * 365, label="Days per run")
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2 ** 32 - 1)
    against = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Compare with",
                                     help_text="another design you may view: the same plan, side by side")

    def __init__(self, *args, designs: list[tuple[int, str]] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["against"].choices = [("", "—")] + [(pk, name) for pk, name in designs]
        self.rates = rate_fields()
        for d in self.rates:  # empty: the default; Django's FloatField refuses NaN and infinities
            self.fields[d["afr_field"]] = forms.FloatField(
                required=False, min_value=0.0, max_value=1e9, initial=d["afr"], label=f"{d['class']} AFR",
                help_text="failures per unit-year")
            self.fields[d["repair_field"]] = forms.FloatField(
                required=False, max_value=1e6, initial=d["repair_hours"], validators=[_positive_hours],
                label=f"{d['class']} repair (h)", help_text="hours until the part is back")

    @classmethod
    def for_request(cls, request, designs) -> GoodputForm:
        """Bound to the POST, or on GET to the defaults (``?against=`` picks a design), so the page
        always shows a plan."""
        if request.method == "POST":
            return cls(request.POST, designs=designs)
        defaults = {name: field.initial for name, field in cls.base_fields.items() if field.initial is not None}
        for d in rate_fields():
            defaults |= {d["afr_field"]: d["afr"], d["repair_field"]: d["repair_hours"]}
        return cls({**defaults, **{k: v for k, v in request.GET.items() if k in defaults or k in cls.base_fields}},
                   designs=designs)

    def rate_rows(self) -> list[dict]:
        """The rate table: per class its defaults and its two bound fields."""
        return [{**d, "afr_input": self[d["afr_field"]], "repair_input": self[d["repair_field"]]} for d in self.rates]

    def _rates(self) -> dict:
        """``rates`` of the plan: only the values that differ from their default."""
        d, out = self.cleaned_data, {}
        for row in self.rates:
            block = {}
            for key, name in (("afr", row["afr_field"]), ("repair_hours", row["repair_field"])):
                value = d.get(name)
                if value is not None and not math.isclose(value, row[key], rel_tol=1e-12, abs_tol=0.0):
                    block[key] = value
            if block:
                out[row["class"]] = block
        return out

    def clean(self):
        data = super().clean()
        if (data.get("runs") or 0) * (data.get("days_per_run") or 0) > 100_000:
            self.add_error("runs", "runs × days per run must be at most 100,000 simulated days")
        return data

    def plan(self) -> dict:
        """The ``fabricscope.goodput-plan/1`` fields (without the topology)."""
        d = self.cleaned_data
        job = {"exposed_communication_fraction": d["exposed_communication_fraction"]}
        if d.get("gpus"):
            job["gpus"] = d["gpus"]
        checkpoint = {"parameters": d["parameters_billions"] * 1e9, "restart_overhead_s": d["restart_overhead_s"]}
        checkpoint |= {k: d[k] for k in ("write_s", "read_s") if d.get(k) is not None}
        return {"job": job, "checkpoint": checkpoint, "rates": self._rates(),
                "monte_carlo": {"runs": d["runs"], "days_per_run": d["days_per_run"], "seed": d["seed"]}}
