"""The Explore page's form: which options to vary (a checkbox per value) and the job mix.

Each axis whose boxes are left empty is not varied: the design's own value is used (the service
completes the grid's base from the current revision). The traffic is JSON: a list of jobs with
placements (docs/FORMATS.md, "Jobs with placements") or one workload. The form checks shapes;
the engine checks meaning, and a located problem (``grid.switch[1]: …``, ``jobs[0].placement…``)
comes back above the form or next to the field it names.
"""
from __future__ import annotations

import json
import math

from django import forms
from django.core.exceptions import ValidationError

from designer.bridge import facts

__all__ = ["ExploreForm", "AXIS_FIELDS", "default_traffic", "attach"]

OVERSUBSCRIPTIONS = (("1", "1:1"), ("1.5", "1.5:1"), ("2", "2:1"), ("3", "3:1"), ("4", "4:1"))
PLANES = (("1", "1"), ("2", "2"), ("4", "4"), ("8", "8"))
TIERS = (("auto", "as the radix needs"), ("2", "2"), ("3", "3"))
#: Form field → grid axis, in the order the grid varies them.
AXIS_FIELDS = {"templates": "template", "fabrics": "fabric", "tiers": "tiers", "oversubscriptions": "oversubscription",
               "switches": "switch", "nic_link_techs": "nic_link_tech", "planes": "planes"}
_MAX_TRAFFIC_BYTES = 256 * 1024


def _boxes(choices, label: str, help_text: str = "") -> forms.MultipleChoiceField:
    return forms.MultipleChoiceField(choices=choices, required=False, label=label, help_text=help_text,
                                     widget=forms.CheckboxSelectMultiple)


def default_traffic(gpus: int) -> str:
    """A DeepSeek-V3-shaped MoE step over (at most 1,024 of) the design's GPUs: expert all-to-all
    across hosts, the workload the rail-only comparison is about."""
    g = max(8, min(int(gpus or 8), 1024))
    ep = math.gcd(g, 32)
    job = [{"id": "moe", "job": {"layout": {"tp": 1, "ep": ep, "dp": g},
                                 "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}},
            "placement": {"policy": "packed", "gpus": g}}]
    return json.dumps(job, indent=1)


class ExploreForm(forms.Form):
    templates = _boxes([(n, n) for n in facts.TEMPLATE_NAMES], "Scale-up domain (host template)",
                       "several: compare servers (dgx-h100) with racks (gb200-nvl72) at one GPU count")
    fabrics = _boxes([(f, f) for f in facts.FABRICS], "Fabric kind",
                     "rail-only: no spine; cross-rail traffic relays over NVLink (PXN)")
    tiers = _boxes(TIERS, "Switch tiers")
    oversubscriptions = _boxes(OVERSUBSCRIPTIONS, "Oversubscription (leaf down : up)")
    switches = _boxes(facts.switch_choices(), "Switch model")
    nic_link_techs = _boxes(facts.nic_speed_choices(), "NIC link (speed)")
    planes = _boxes(PLANES, "Planes (rail-optimized)")
    gpus = forms.IntegerField(required=False, min_value=1, max_value=65_536, label="Cluster size (GPUs)",
                              help_text="blank: the design's own host count")
    traffic = forms.CharField(widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
                              max_length=_MAX_TRAFFIC_BYTES, label="Job mix (JSON)",
                              help_text="a list of jobs with placements, or one workload (an object)")
    chunks = forms.IntegerField(min_value=1, max_value=64, initial=4, label="Chunks (parallel tasks)")

    def clean_traffic(self):
        try:
            value = json.loads(self.cleaned_data["traffic"])
        except json.JSONDecodeError as exc:
            raise ValidationError(f"not JSON: line {exc.lineno}: {exc.msg}") from None
        if not isinstance(value, (list, dict)):
            raise ValidationError("a list of jobs or a workload object")
        return value

    def clean(self):
        data = super().clean()
        if not any(data.get(f) for f in AXIS_FIELDS) and not data.get("gpus"):
            raise ValidationError("check at least one option to vary")
        return data

    def request(self) -> dict:
        """The grid request (docs/FORMATS.md, "Design-space explorer") of the cleaned form."""
        d = self.cleaned_data
        grid = {}
        for field, axis in AXIS_FIELDS.items():
            values = d.get(field) or []
            if axis == "tiers":
                values = [None if v == "auto" else int(v) for v in values]
            elif axis == "oversubscription":
                values = [float(v) if "." in v else int(v) for v in values]
            elif axis == "planes":
                values = [int(v) for v in values]
            if values:
                grid[axis] = values
        traffic = d["traffic"]
        key = "jobs" if isinstance(traffic, list) else "workload"
        return {"base": {"gpus": d["gpus"]} if d.get("gpus") else {}, "grid": grid or {"gpus": [d["gpus"]]},
                key: traffic}


def attach(exc: ValidationError, form: ExploreForm) -> None:
    """Each located problem above the form, path first (``grid.switch[1]: unknown …``); a
    problem of the traffic (``jobs…``, ``workload…``) next to the traffic field."""
    details = getattr(exc, "details", None)
    if details is None:
        for message in exc.messages:
            form.add_error(None, message)
        return
    for problem in details:
        path, message = problem.get("path") or "", problem.get("message", "")
        field = "traffic" if path.startswith(("jobs", "workload")) else None
        form.add_error(field, f"{path}: {message}" if path else message)
