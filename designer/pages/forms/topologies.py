"""The New topology form (also the editor's Generate dialog: one form, ``_build_form.html``)."""
from __future__ import annotations

from django import forms
from django.conf import settings

from designer.bridge import facts
from designer.bridge.facts import MAX_BUILD_HOSTS, MAX_PREVIEW_HOSTS

__all__ = ["TopologyNewForm", "FABRIC_CHOICES", "SOURCE_CHOICES"]

FABRIC_CHOICES = [("rail-optimized", "Rail-optimized leaf/spine"),
                  ("leaf-spine", "Leaf/spine (one ToR per rack)"), ("fat-tree", "3-tier fat-tree (k)")]
SOURCE_CHOICES = [("cluster", "Generate a cluster"), ("host", "One host from a template"),
                  ("blank", "Blank")]


class TopologyNewForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    source = forms.ChoiceField(choices=SOURCE_CHOICES, initial="cluster", widget=forms.RadioSelect)
    template = forms.ChoiceField(choices=[], initial="dgx-h100")
    # The live preview counts up to MAX_PREVIEW_HOSTS (no document built); creating one builds
    # every device: in the request within MAX_BUILD_HOSTS and FABRICSCOPE_BUILD_MAX_ELEMENTS, else
    # by a job (services.topology_start), up to the job's host limit that clean_hosts keeps.
    hosts = forms.IntegerField(min_value=1, max_value=MAX_PREVIEW_HOSTS, initial=64,
                               label="Hosts (racks for a rack-scale template)",  # GB200 NVL72: 1 = a rack of 18 trays
                               help_text=f"Number of hosts of the template (preview up to "
                                         f"{MAX_PREVIEW_HOSTS:,}). Over {MAX_BUILD_HOSTS:,} hosts, "
                                         f"or over {settings.FABRICSCOPE_BUILD_MAX_ELEMENTS:,} nodes "
                                         f"+ links (a GB200 NVL72 rack makes about 1,800), it is "
                                         f"built by a job, with progress.")
    fabric = forms.ChoiceField(choices=FABRIC_CHOICES, initial="rail-optimized")
    rails = forms.IntegerField(min_value=1, max_value=64, required=False,
                               help_text="Default: one rail per compute NIC.")
    spines = forms.IntegerField(min_value=0, max_value=1024, required=False,
                                help_text="Default: the fewest (≥ 2) whose ports hold every leaf's uplinks.")
    storage = forms.IntegerField(min_value=0, max_value=256, required=False, initial=0,
                                 help_text="Storage servers attached to the fabric.")
    # Fabric generator parameters (engine.model.fabrics.build_cluster); blank = the engine's default.
    switch = forms.ChoiceField(choices=[], required=False, label="Switch model",
                               help_text="Default: 51.2 T Ethernet (NDR/XDR for InfiniBand NICs).")
    oversubscription = forms.FloatField(min_value=1.0, max_value=64.0, required=False, initial=1.0,
                                        help_text="Host ports : uplink ports of a leaf (whole ports).")
    nic_link_tech = forms.ChoiceField(choices=[], required=False, label="NIC speed",
                                      help_text="Default: the template's NIC port rate.")
    leaves_per_rail = forms.IntegerField(min_value=1, max_value=1024, required=False,
                                         help_text="Default: the fewest the switch radix allows.")
    planes = forms.IntegerField(min_value=1, max_value=64, required=False, initial=1,
                                help_text="Independent spine planes (rail-optimized).")
    tiers = forms.TypedChoiceField(choices=[("", "as the radix needs"), (2, "2 (leaf/spine)"),
                                            (3, "3 (pods + super-spines)")],
                                   coerce=int, empty_value=None, required=False,
                                   help_text="Default: a third tier only when one spine layer "
                                             "cannot hold every leaf.")
    sharp = forms.BooleanField(required=False, label="SHARP switches",
                               help_text="In-network reduction (InfiniBand): CollNet all-reduce "
                                         "becomes selectable.")

    # The generator parameters, in the order both places show them (the New page and the editor's
    # Generate dialog render this one form through _build_form.html; build_preview.js reads the
    # fields it marks, so there is no second list of parameters anywhere).
    BUILD_FIELDS = ("template", "hosts", "fabric", "switch", "oversubscription", "nic_link_tech",
                    "leaves_per_rail", "planes", "tiers", "rails", "spines", "storage", "sharp")

    def __init__(self, *args, templates: list[tuple[str, str]] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].choices = [(n, f"{n} — {d}") for n, d in templates]
        self.fields["switch"].choices = [("", "default")] + facts.switch_choices()
        self.fields["nic_link_tech"].choices = [("", "template default")] + facts.nic_speed_choices()
        for name in self.BUILD_FIELDS:
            field = self.fields[name]
            # FloatField subclasses IntegerField: ask it first, or 1.5 is sent as 1.
            kind = ("bool" if isinstance(field, forms.BooleanField) else
                    "float" if isinstance(field, forms.FloatField) else
                    "int" if isinstance(field, forms.IntegerField) or name == "tiers" else "str")
            # How build_preview.js sends the value (the build-preview API takes typed JSON).
            field.widget.attrs.update({"data-build-param": name, "data-type": kind})

    def clean_hosts(self):
        """Within MAX_BUILD_HOSTS hosts and FABRICSCOPE_BUILD_MAX_ELEMENTS nodes + links a
        cluster is built in the request; over either, up to the build job's limits, by a job on a
        worker (``services.topology_start``)."""
        hosts = self.cleaned_data["hosts"]
        limit = settings.FABRICSCOPE_BUILD_JOB_MAX_HOSTS
        if hosts is not None and self.data.get("source", "cluster") == "cluster" and hosts > limit:
            raise forms.ValidationError(
                f"at most {limit:,} hosts per created topology (FABRICSCOPE_BUILD_JOB_MAX_HOSTS: "
                f"every device is built and stored; over {MAX_BUILD_HOSTS:,} hosts by a job on a "
                f"worker); the preview counts up to {MAX_PREVIEW_HOSTS:,}")
        return hosts

    def build_fields(self) -> list:
        """Bound fields of the generator parameters, in display order (for _build_form.html)."""
        return [self[name] for name in self.BUILD_FIELDS]

    _OPTIONS = ("rails", "spines", "storage", "switch", "oversubscription", "nic_link_tech",
                "leaves_per_rail", "planes", "tiers", "sharp")

    def cluster_options(self) -> dict:
        data = self.cleaned_data
        return {k: data[k] for k in self._OPTIONS if data.get(k) not in (None, "")
                and not (k in ("storage", "sharp") and not data[k])}

    def service_args(self) -> dict:
        """The arguments of ``services.topology_new`` (the owner aside)."""
        data = self.cleaned_data
        return {"name": data["name"], "description": data["description"],
                "source": data["source"], "template": data["template"], "hosts": data["hosts"],
                "fabric": data["fabric"], "options": self.cluster_options()}
