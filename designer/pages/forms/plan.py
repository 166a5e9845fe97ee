"""The form of the physical-plan page: rack size and budget, row length, network-rack position,
allowed media, and price/power overrides as JSON.

Shapes only; the engine checks the request (docs/FORMATS.md, "Physical plan") and its located
problems (``prices.switch:eth-51t2: …``) come back next to the field they name (:func:`attach`).
The form is a GET form: the page's address holds the plan, so the CSV download link carries it.
"""
from __future__ import annotations

import json

from django import forms

from designer.pages.forms.nccl import attach

__all__ = ["PlanForm", "MoveForm", "attach", "MEDIA_CHOICES"]

MEDIA_CHOICES = [("dac", "DAC"), ("acc", "ACC"), ("aec", "AEC"), ("aoc", "AOC"), ("sr", "SR"), ("dr", "DR"),
                 ("fr", "FR"), ("lpo", "LPO"), ("cpo", "CPO")]


class PlanForm(forms.Form):
    rack_units = forms.IntegerField(initial=42, min_value=1, max_value=60, label="Rack units (U)")
    rack_kw = forms.FloatField(initial=40.0, min_value=0.1, max_value=500.0, label="Rack power budget (kW)",
                               help_text="most halls give 30–60 kW a rack; an NVL72 draws ~120 kW")
    row_racks = forms.IntegerField(initial=10, min_value=1, max_value=200, label="Racks per row")
    network = forms.ChoiceField(choices=[("end", "end of row"), ("middle", "middle of row")], initial="end",
                                label="Network racks")
    media = forms.MultipleChoiceField(choices=MEDIA_CHOICES, required=False, widget=forms.CheckboxSelectMultiple,
                                      label="Allowed media", help_text="empty: DAC, ACC, AEC, AOC, SR, DR, FR")
    overrides = forms.CharField(required=False, max_length=20_000, widget=forms.Textarea(attrs={"rows": 3}),
                                label="Price / power overrides (JSON)",
                                help_text='{"prices": {"switch:eth-51t2": 52000}, "power": {"server:dgx-h100": 10200}}')
    rows = forms.IntegerField(initial=100, min_value=1, max_value=5000, label="Cable rows shown")

    @classmethod
    def for_request(cls, request) -> PlanForm:
        """Bound to the query string over the defaults, so the page always shows a plan."""
        defaults = {name: field.initial for name, field in cls.base_fields.items() if field.initial is not None}
        data = {**defaults, **{k: v for k, v in request.GET.items() if k in cls.base_fields}}
        if "media" in request.GET:
            data["media"] = request.GET.getlist("media")
        return cls(data)

    def clean_overrides(self):
        text = (self.cleaned_data.get("overrides") or "").strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not JSON: {exc.msg} (line {exc.lineno})") from None
        if not isinstance(value, dict) or set(value) - {"prices", "power", "units", "spacing_m"}:
            raise forms.ValidationError("an object with prices, power, units or spacing_m")
        return value

    def plan_request(self) -> dict:
        """The plan request (docs/FORMATS.md, "Physical plan") of the cleaned form."""
        d = self.cleaned_data
        request = {"rack": {"units": d["rack_units"], "power_kw": d["rack_kw"]},
                   "row": {"racks": d["row_racks"], "network": d["network"]}, **d["overrides"]}
        if d.get("media"):
            request["media"] = list(d["media"])
        return request


class MoveForm(forms.Form):
    """One device moved by hand (the elevation's drag and drop, or the keyboard's lists): shapes
    only; the engine says whether it fits (``placements.h6.rack: rack R01-01 is full …``)."""

    device = forms.CharField(max_length=200, label="Device")
    rack = forms.CharField(max_length=32, required=False, label="To rack",
                           help_text="empty: back where the automatic plan has it")
    position = forms.IntegerField(required=False, min_value=1, max_value=60, label="At unit (lowest U)",
                                  help_text="empty: the lowest free units")
