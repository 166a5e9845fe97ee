"""Forms of the scenario builder: the scenario's fields, one form per workload pattern, the
workload as a job (DAG) or an imported SimAI file, a viewer's run, and :class:`ScenarioPageForms`,
the three forms the builder posts taken together.

Forms check shapes (numbers, choices); the engine checks meaning (its located errors come back
next to their fields: :func:`designer.pages.forms.errors.attach_errors`).
"""
from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

from designer import bridge
from designer.choices import ScenarioMode
from designer.pages.forms.chakra import ChakraUploadFields
from designer.pages.forms.cluster_jobs import ClusterJobsForm
from designer.pages.forms.errors import attach_errors, form_status

__all__ = ["ScenarioForm", "PatternForm", "PatternFormSet", "ScenarioRunForm", "JobWorkloadForm",
           "ScenarioPageForms", "BYTE_UNITS", "SWEEP_CLASSES", "split_ids"]

BYTE_UNITS = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
              "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30}
PATTERN_KINDS = [("allreduce", "All-reduce"), ("allgather", "All-gather"),
                 ("reducescatter", "Reduce-scatter"), ("alltoall", "All-to-all (MoE)"),
                 # nccl-tests' rooted ops (root: the first participant) and hypercube (2^k participants)
                 ("broadcast", "Broadcast"), ("reduce", "Reduce"), ("gather", "Gather"), ("scatter", "Scatter"),
                 ("hypercube", "Hypercube all-gather"),
                 ("p2p", "Point-to-point"), ("storage_read", "Storage read → GPU"),
                 ("storage_write", "GPU → storage write"), ("kv_transfer", "KV-cache transfer"),
                 ("host_offload", "Host-memory offload")]
NIC_POLICIES = [("affinity", "affinity — nearest NIC (NCCL default)"),
                ("pxn", "pxn — NVLink to the rail-aligned peer, then its NIC"),
                ("any", "any — every NIC of the host"), ("static", "static — bindings in the document")]
MULTIPATH = [("hash", "hash — per-flow ECMP"), ("split", "split — even split over equal paths")]
# Names are the engine's (designer.bridge.facts.sweep_classes()); a test checks they stay in step.
SWEEP_CLASSES = [("nic", "NICs"), ("pcie_switch", "PCIe switches"), ("nvswitch", "NVSwitches"),
                 ("gpu", "GPUs"), ("nic-leaf", "NIC–leaf links"), ("leaf-spine", "Leaf–spine links"),
                 ("spine-core", "Spine–core links"), ("host", "Hosts")]


def split_ids(text: str) -> list[str]:
    """``"h0/gpu0, h0/gpu1\\nh1/gpu0"`` → ids (commas, spaces or new lines separate)."""
    return [part for part in re.split(r"[\s,]+", text or "") if part]


class TargetIdsField(forms.MultipleChoiceField):
    """Ids of failure targets. A big design has 300k nodes and links, so they are not the field's
    choices (the page searches them: ``scenarios/targets/``); the form checks the ids against
    the revision (``targets["unknown"]``), and its choices are only the ids picked."""

    def valid_value(self, value) -> bool:
        return isinstance(value, str) and 0 < len(value) <= MAX_TARGET_ID

    def validate(self, value) -> None:
        super().validate(value)
        if len(value) > MAX_DOWN_TARGETS:
            raise ValidationError(f"{len(value):,} targets picked; at most {MAX_DOWN_TARGETS:,} "
                                  f"can be switched off (pick a group to fail many at once)")


MAX_DOWN_TARGETS = 500   # picked failure targets per scenario (a group fails all its members);
# under Django's 1,000 fields of a form post (DATA_UPLOAD_MAX_NUMBER_FIELDS), so the check speaks first
MAX_TARGET_ID = 256       # characters, as an id of the document


def _picked_targets(form: forms.Form, targets: dict | None) -> None:
    """The failure picker's options are the ids picked (posted, or saved): the others are
    searched by the page; ``targets["unknown"]`` (ids -> the unknown ones) checks them."""
    field = form.fields["failures_down"]
    picked = (form.data.getlist("failures_down") if form.is_bound and hasattr(form.data, "getlist")
              else form.initial.get("failures_down") or [])
    field.choices = [(i, i) for i in picked if isinstance(i, str)][:MAX_DOWN_TARGETS + 1]
    form.unknown_targets = (targets or {}).get("unknown")


def _clean_failures_down(form: forms.Form) -> list[str]:
    """The picked ids, each a group, node or link of the revision."""
    ids = form.cleaned_data.get("failures_down") or []
    unknown = form.unknown_targets(ids) if ids and form.unknown_targets else []
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ValidationError(f"not a group, node or link of this revision: {shown}")
    return ids


LATENCY_INITIATORS = [("cpu_proxy", "CPU-proxied — a host thread posts the transfer (NCCL's proxy)"),
                      ("gpu_initiated", "GPU-initiated — the GPU kernel posts it (IBGDA, NVSHMEM)")]
# The latency view's default message: the engine's (docs/FORMATS.md, Scenario ``latency``).
LATENCY_DEFAULT_BYTES = 65536


class ScenarioForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    mode = forms.ChoiceField(choices=ScenarioMode.choices, initial="steady", widget=forms.RadioSelect)
    nic_policy = forms.ChoiceField(choices=NIC_POLICIES, initial="affinity", label="NIC policy")
    multipath = forms.ChoiceField(choices=MULTIPATH, initial="hash")
    seed = forms.IntegerField(min_value=0, initial=1, required=False)
    failures_down = TargetIdsField(
        required=False, label="Down", help_text="Nodes, links or groups switched off.")
    failures_degrade = forms.CharField(
        required=False, label="Degraded", widget=forms.Textarea(attrs={"rows": 2}),
        help_text="One per line: <target> <factor>, e.g. h0/gpu0-pcie0 0.5")
    latency_on = forms.BooleanField(
        required=False, label="Show the latency view",
        help_text="What one message costs end to end: one way and round trip (ping + pong).")
    latency_value = forms.FloatField(min_value=0, initial=64, required=False, label="Message size")
    latency_unit = forms.ChoiceField(choices=[(u, u) for u in BYTE_UNITS], initial="KiB", label="Unit",
                                     required=False)
    latency_initiators = forms.MultipleChoiceField(
        choices=LATENCY_INITIATORS, required=False, initial=[v for v, _ in LATENCY_INITIATORS],
        widget=forms.CheckboxSelectMultiple, label="Who starts the transfer")
    latency_flows = forms.CharField(
        required=False, label="Flows", max_length=2000,
        help_text="Flow ids such as ar#0, comma-separated; blank: the slowest flow of each pattern.")
    sweep_over = forms.MultipleChoiceField(choices=SWEEP_CLASSES, required=False, initial=["nic"],
                                           widget=forms.CheckboxSelectMultiple, label="Sweep over")
    policies = forms.MultipleChoiceField(choices=[(v, v) for v, _ in NIC_POLICIES], required=False,
                                         initial=["affinity", "pxn", "any"],
                                         widget=forms.CheckboxSelectMultiple,
                                         label="Compare policies")

    def __init__(self, *args, targets: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        _picked_targets(self, targets)

    def clean_failures_degrade(self) -> list[dict]:
        out = []
        for n, line in enumerate((self.cleaned_data.get("failures_degrade") or "").splitlines(), 1):
            parts = line.split()
            if not parts:
                continue
            try:
                target, factor = parts[0], float(parts[1]) if len(parts) > 1 else 0.5
            except ValueError:
                raise ValidationError(f"line {n}: the factor must be a number, e.g. 0.5") from None
            if not 0 < factor <= 1 or len(parts) > 2:
                raise ValidationError(f"line {n}: write <target> <factor> with 0 < factor ≤ 1")
            out.append({"target": target, "mode": "degrade", "factor": factor})
        return out

    def clean_failures_down(self) -> list[str]:
        return _clean_failures_down(self)

    def routing(self) -> dict:
        seed = self.cleaned_data.get("seed")
        return {"nic_policy": self.cleaned_data["nic_policy"],
                "multipath": self.cleaned_data["multipath"], "seed": 1 if seed is None else seed}

    def failures(self) -> list[dict]:
        down = [{"target": t, "mode": "down"} for t in self.cleaned_data["failures_down"]]
        return down + self.cleaned_data["failures_degrade"]

    def clean(self) -> dict:
        data = super().clean()
        if data.get("latency_on"):
            if not data.get("latency_value"):   # 0 or blank: the engine wants bytes > 0
                self.add_error("latency_value", "give a message size > 0")
            if not data.get("latency_initiators"):
                self.add_error("latency_initiators", "tick at least one")
        return data

    def latency(self, kept: dict | None = None) -> dict | None:
        """The latency request (docs/FORMATS.md, Scenario ``latency``), or None when not asked;
        ``kept``: the saved request, whose ``overrides`` (set through the API or CLI, not on
        this page) stay."""
        d = self.cleaned_data
        if not d.get("latency_on"):
            return None
        size = float(d["latency_value"]) * BYTE_UNITS[d.get("latency_unit") or "KiB"]
        out = {"message_bytes": int(size) if size == int(size) else size,
               "initiators": list(d["latency_initiators"])}
        flows = split_ids(d.get("latency_flows", ""))
        if flows:
            out["flows"] = flows
        if (kept or {}).get("overrides"):
            out["overrides"] = kept["overrides"]
        return out

    @staticmethod
    def initial_from(scenario) -> dict:
        routing = scenario.routing or {}
        return {"name": scenario.name, "description": scenario.description, "mode": scenario.mode,
                "nic_policy": routing.get("nic_policy", "affinity"),
                "multipath": routing.get("multipath", "hash"), "seed": routing.get("seed", 1),
                "failures_down": [f["target"] for f in scenario.failures if f.get("mode") == "down"],
                "failures_degrade": "\n".join(f'{f["target"]} {f.get("factor", 0.5):g}'
                                              for f in scenario.failures
                                              if f.get("mode") == "degrade"),
                **_latency_initial(scenario.latency)}


def _latency_initial(latency: dict | None) -> dict:
    """The latency fields of a saved request (the page's defaults when there is none)."""
    if not latency:
        return {"latency_on": False}
    size = latency.get("message_bytes", LATENCY_DEFAULT_BYTES)
    value, unit = next(((size / BYTE_UNITS[u], u) for u in ("GiB", "MiB", "KiB")
                        if size >= BYTE_UNITS[u] and size % BYTE_UNITS[u] == 0), _bytes_unit(size))
    return {"latency_on": True, "latency_value": int(value) if value == int(value) else value,
            "latency_unit": unit,
            "latency_initiators": latency.get("initiators") or [v for v, _ in LATENCY_INITIATORS],
            "latency_flows": ", ".join(latency.get("flows") or [])}


SELECT_CHOICES = [("gpu", "All GPUs"), ("group", "GPUs of a group"), ("ids", "Listed devices")]


class PatternForm(forms.Form):
    """One workload pattern; fields not used by its kind are ignored (scenario.js hides them)."""

    pid = forms.RegexField(regex=r"^[^#\s]+$", max_length=64, label="Id",
                           error_messages={"invalid": "letters, digits, - or _; no spaces or #"})
    kind = forms.ChoiceField(choices=PATTERN_KINDS, initial="allreduce")
    select = forms.ChoiceField(choices=SELECT_CHOICES, initial="gpu", label="Participants")
    group = forms.CharField(required=False, label="Group", widget=forms.TextInput(
        attrs={"list": "group-ids", "placeholder": "h0, rack0, …"}))
    ids = forms.CharField(required=False, label="Devices", widget=forms.TextInput(
        attrs={"placeholder": "h0/gpu0, h1/gpu0"}))
    bytes_value = forms.FloatField(min_value=0, initial=1, label="Message size")
    bytes_unit = forms.ChoiceField(choices=[(u, u) for u in BYTE_UNITS], initial="GB", label="Unit")
    # All-reduce algorithms (the engine's traffic.collectives); "auto" picks as NCCL's tuner does.
    algorithm = forms.ChoiceField(choices=[(a, a) for a in ("auto", "ring", "tree", "nvls", "nvlstree", "collnet")],
                                  initial="auto")
    src = forms.CharField(required=False, label="Source", help_text="ids, or group:NAME")
    dst = forms.CharField(required=False, label="Destination", help_text="ids, or group:NAME")
    demand_gbps = forms.FloatField(required=False, min_value=0.001, label="Demand cap (Gb/s)")

    def pattern(self) -> dict:
        d = self.cleaned_data
        out = {"id": d["pid"], "kind": d["kind"],
               "bytes": float(d["bytes_value"]) * BYTE_UNITS[d["bytes_unit"]]}
        if d.get("demand_gbps"):
            out["demand_gbps"] = d["demand_gbps"]
        kind = d["kind"]
        if kind in ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "gather",
                    "scatter", "hypercube", "host_offload", "storage_read", "storage_write"):
            out["participants"] = self._selector()
        if kind == "allreduce":
            out["algorithm"] = d["algorithm"]
        if kind == "p2p":
            out["src"], out["dst"] = _selector_text(d["src"]), _selector_text(d["dst"])
        if kind == "kv_transfer":
            out["prefill"], out["decode"] = _selector_text(d["src"]), _selector_text(d["dst"])
        if kind in ("storage_read", "storage_write") and d.get("src"):
            out["source"] = _selector_text(d["src"])
        return out

    def _selector(self) -> dict:
        d = self.cleaned_data
        if d["select"] == "group":
            return {"kind": "gpu", "group": d.get("group", "")}
        if d["select"] == "ids":
            return {"ids": split_ids(d.get("ids", ""))}
        return {"kind": "gpu"}

    @staticmethod
    def initial_from(pattern: dict) -> dict:
        size, unit = _bytes_unit(pattern.get("bytes", 0))
        part = pattern.get("participants") or {}
        select = "ids" if "ids" in part else "group" if "group" in part else "gpu"
        src = pattern.get("src", pattern.get("prefill", pattern.get("source")))
        dst = pattern.get("dst", pattern.get("decode"))
        return {"pid": pattern.get("id", ""), "kind": pattern.get("kind", "allreduce"),
                "select": select, "group": part.get("group", ""),
                "ids": ", ".join(part.get("ids", [])), "bytes_value": size, "bytes_unit": unit,
                "algorithm": pattern.get("algorithm", "auto"), "src": _selector_str(src),
                "dst": _selector_str(dst), "demand_gbps": pattern.get("demand_gbps")}


PatternFormSet = forms.formset_factory(PatternForm, extra=0, min_num=1, validate_min=True,
                                       max_num=32, validate_max=True)


def _selector_text(text: str) -> dict:
    text = (text or "").strip()
    if text.startswith("group:"):
        return {"group": text[len("group:"):].strip()}
    return {"ids": split_ids(text)}


def _selector_str(sel) -> str:
    if not isinstance(sel, dict):
        return ""
    if "group" in sel:
        return f'group:{sel["group"]}'
    return ", ".join(sel.get("ids", []))


def _bytes_unit(value: float) -> tuple[float, str]:
    for unit in ("TB", "GB", "MB", "KB"):
        if value >= BYTE_UNITS[unit]:
            size = round(value / BYTE_UNITS[unit], 6)
            return (int(size) if size == int(size) else size), unit
    return (int(value) if value == int(value) else value), "B"


class ScenarioRunForm(forms.Form):
    """A viewer's run of a saved scenario: which job, the sweep/compare options, and, when the
    page's what-if section sent them (``what_if``), the failures of this run only (not saved)."""

    action = forms.ChoiceField(choices=[("simulate", "simulate"), ("sweep", "sweep"),
                                        ("compare", "compare")])
    sweep_over = ScenarioForm.base_fields["sweep_over"]
    policies = ScenarioForm.base_fields["policies"]
    what_if = forms.BooleanField(required=False, widget=forms.HiddenInput)
    failures_down = ScenarioForm.base_fields["failures_down"]
    failures_degrade = ScenarioForm.base_fields["failures_degrade"]

    def __init__(self, *args, targets: dict | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        _picked_targets(self, targets)

    clean_failures_degrade = ScenarioForm.clean_failures_degrade
    clean_failures_down = ScenarioForm.clean_failures_down
    failures = ScenarioForm.failures

    def what_if_failures(self, saved: list[dict]) -> list[dict] | None:
        """This run's failures, or None to run the ``saved`` ones (not sent, or unchanged)."""
        if not self.cleaned_data.get("what_if"):
            return None
        failures = self.failures()
        return None if failures == list(saved or []) else failures

    def service_args(self, scenario) -> dict:
        """The arguments of ``services.scenario_run`` for the saved ``scenario`` (user aside)."""
        data = self.cleaned_data
        return {"action": data["action"], "over": data.get("sweep_over"),
                "policies": data.get("policies"), "failures": self.what_if_failures(scenario.failures)}


# --- Jobs as workloads -----------------------------------------------------------------------------

class JobWorkloadForm(ChakraUploadFields):
    """The scenario page's choice between a list of patterns and a job (a step as a DAG of
    phases, docs/FORMATS.md, Jobs): the job as JSON, or a SimAI/AICB workload file converted on the
    server (:func:`designer.bridge.import_simai_job`). Engine problems of the job
    (``workload.job....``) go next to the JSON (:meth:`attach`)."""

    MAX_FILE_BYTES = 16 * 1024 * 1024   # SimAI's largest example (workload_analytical.txt) is 140 kB

    workload_type = forms.ChoiceField(choices=[("patterns", "Patterns"), ("job", "Training job (DAG)"),
                                               ("jobs", "Jobs sharing the cluster")],
                                      initial="patterns", widget=forms.RadioSelect, label="Workload",
                                      required=False)    # absent (older clients): patterns
    job = forms.CharField(required=False, label="Job (JSON)", widget=forms.Textarea(
        attrs={"rows": 10, "spellcheck": "false", "class": "mono"}),
        help_text='{"job": {"layout": {...}, "phases": [...]}} or {"job": {"layout": ..., "template": ...}}')
    workload_file = forms.FileField(required=False, label="Import a workload file",
                                    help_text="SimAI / AICB text (the format of SimAI's example/*.txt)")
    workload_format = forms.ChoiceField(choices=[("simai", "SimAI / ASTRA-sim")], initial="simai",
                                        label="Format", required=False)

    def __init__(self, *args, revision=None, host_count: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.revision, self.host_count, self.chakra_summary = revision, host_count, None

    def is_job(self) -> bool:
        return self.cleaned_data.get("workload_type") == "job"

    def clean(self):
        data = super().clean()
        upload = data.get("workload_file")
        traces = data.get("chakra_traces") or []
        if upload is not None or traces:       # a file is a job, whichever tab was showing
            data["workload_type"] = "job"
        if data.get("workload_type") != "job":
            return data
        if traces or upload is not None:
            data["workload"] = self._chakra(traces, data.get("chakra_groups")) if traces else self._imported(upload)
            # Show what was imported as the job's JSON (the page re-renders from it).
            self.data = self.data.copy()
            self.data["workload_type"] = "job"
            if data["workload"] is not None:
                self.data["job"] = _job_text(data["workload"])
        elif (data.get("job") or "").strip():
            data["workload"] = self._parsed(data["job"])
        else:
            self.add_error("job", "paste a job or import a workload file")
        return data

    def _chakra(self, traces, groups) -> dict | None:
        got = self.chakra_workload(traces, groups, revision=self.revision, host_count=self.host_count)
        if got is None:
            return None
        self.chakra_summary = {**got["summary"], "warnings": got["warnings"], "files": len(traces)}
        return got["workload"]

    def _imported(self, upload) -> dict | None:
        if upload.size > self.MAX_FILE_BYTES:
            self.add_error("workload_file", f"the file is {upload.size:,} bytes; the limit is "
                                            f"{self.MAX_FILE_BYTES:,}")
            return None
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError as exc:
            self.add_error("workload_file", f"not UTF-8 text (byte {exc.start})")
            return None
        try:
            return bridge.import_simai_job(text)
        except ValidationError as exc:
            for line in exc.messages:
                self.add_error("workload_file", f"{upload.name}: {line}")
            return None

    def _parsed(self, text: str) -> dict | None:
        import json

        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as exc:     # RecursionError: absurdly deep nesting
            self.add_error("job", f"not JSON: {exc}" if isinstance(exc, ValueError) else "nested too deeply")
            return None
        if isinstance(value, dict) and "job" not in value and ("phases" in value or "template" in value):
            value = {"job": value}     # the job object alone
        if not isinstance(value, dict) or set(value) != {"job"} or not isinstance(value["job"], dict):
            self.add_error("job", 'must be {"job": {...}} with "phases" or "template"')
            return None
        return value

    def workload(self) -> dict | None:
        return self.cleaned_data.get("workload")

    def attach(self, exc: ValidationError) -> ValidationError | None:
        """Put the engine's ``workload...`` problems on the job field; returns the rest (or None)."""
        details = getattr(exc, "details", None)
        if not details:
            return exc
        rest = [d for d in details if not str(d.get("path") or "").startswith("workload")]
        for d in details:
            if d not in rest:
                self.add_error("job", f"{d['path']}: {d['message']}")
        if not rest:
            return None
        from designer.exceptions import EngineValidationError

        return EngineValidationError(code=exc.engine_code, message=exc.engine_message, details=rest)

    @staticmethod
    def initial_from(scenario) -> dict:
        workload = scenario.workload if scenario else None
        if isinstance(workload, dict) and "job" in workload:
            return {"workload_type": "job", "job": _job_text(workload)}
        if isinstance(workload, dict) and "jobs" in workload:   # a shared cluster (ClusterJobsForm)
            return {"workload_type": "jobs"}
        return {"workload_type": "patterns"}


def _job_text(workload) -> str:
    import json

    return json.dumps(workload, indent=1) if workload is not None else ""


# --- The builder's forms together --------------------------------------------------------------

class ScenarioPageForms:
    """What the scenario builder posts: the scenario's fields (:class:`ScenarioForm`) and its
    workload, as patterns (:class:`PatternFormSet`), as a job (:class:`JobWorkloadForm`) or as
    jobs with placements sharing the cluster (:class:`~designer.pages.forms.cluster_jobs.ClusterJobsForm`), plus
    the button pressed (``action``: ``save``, ``simulate``, ``sweep``, ``compare`` or
    ``import``, which only converts an uploaded workload file and shows it).

    Bound to a POST, or on GET to ``scenario`` (None: a new scenario's defaults).
    """

    def __init__(self, request, *, scenario, targets: dict, revision=None, host_count: int = 0):
        self.scenario = scenario
        self.bound = request.method == "POST"
        if self.bound:
            self.form = ScenarioForm(request.POST, targets=targets)
            self.formset = PatternFormSet(request.POST, prefix="pattern")
            self.job_form = JobWorkloadForm(request.POST, request.FILES, revision=revision, host_count=host_count)
            self.jobs_form = ClusterJobsForm(request.POST)
            self.has_file = "workload_file" in request.FILES or "chakra_traces" in request.FILES
            self.shared = request.POST.get("workload_type") == "jobs" and not self.has_file
            self.action = request.POST.get("action", "save")
            # Cleaned now, as the page renders it: an uploaded file is converted and shown.
            self.job = self.job_form.is_valid() and self.job_form.is_job()
            return
        initial = ScenarioForm.initial_from(scenario) if scenario else {"name": "all-reduce"}
        # A job's patterns live in its phases: the pattern list starts from the default one.
        patterns = ([PatternForm.initial_from(p) for p in scenario.workload]
                    if scenario and isinstance(scenario.workload, list)
                    else [{"pid": "ar", "kind": "allreduce"}])
        self.form = ScenarioForm(initial=initial, targets=targets)
        self.formset = PatternFormSet(initial=patterns, prefix="pattern")
        self.job_form = JobWorkloadForm(initial=JobWorkloadForm.initial_from(scenario))
        self.jobs_form = ClusterJobsForm(initial=ClusterJobsForm.initial_from(scenario))
        self.action, self.has_file, self.job, self.shared = "", False, False, False

    def is_job(self) -> bool:
        """The workload posted is a job (pasted or imported), not a list of patterns."""
        return self.job

    def is_valid(self) -> bool:
        """Everything checks out for a save (and a run); ``import`` never saves."""
        if not self.bound:
            return False
        if self.action == "import":
            if not self.has_file:
                self.job_form.is_valid()          # cleaned first: add_error needs cleaned_data
                self.job_form.add_error("workload_file", "choose a workload file (or Chakra traces) to import")
            return False
        if self.shared:
            return self.form.is_valid() & self.jobs_form.is_valid()   # both, so both show errors
        return (self.form.is_valid() and self.job_form.is_valid()
                and (self.is_job() or self.formset.is_valid()))

    def service_args(self) -> dict:
        """The arguments of ``services.scenario_submit`` (user, topology and scenario aside)."""
        data = self.form.cleaned_data
        workload = ({"jobs": self.jobs_form.jobs_list()} if self.shared
                    else self.job_form.workload() if self.is_job()
                    else [f.pattern() for f in self.formset.forms])
        fields = {"name": data["name"], "description": data["description"], "workload": workload,
                  "routing": self.form.routing(), "failures": self.form.failures(),
                  "mode": data["mode"],
                  "latency": self.form.latency(self.scenario.latency if self.scenario else None)}
        return {"fields": fields, "action": self.action, "over": data.get("sweep_over"),
                "policies": data.get("policies")}

    def attach(self, exc: ValidationError) -> None:
        """Each of the service's located errors next to its field (the job's next to the job)."""
        rest = (self.jobs_form.attach(exc) if self.shared
                else self.job_form.attach(exc) if self.is_job() else exc)
        if rest is not None:
            attach_errors(rest, self.form, self.formset)

    def job_workload(self) -> dict | None:
        """The job workload the page shows (imported or pasted, else the saved one), or None."""
        if self.job_form.is_bound:
            return getattr(self.job_form, "cleaned_data", {}).get("workload")
        workload = self.scenario.workload if self.scenario else None
        return workload if isinstance(workload, dict) and "job" in workload else None

    def context(self) -> dict:
        return {"form": self.form, "formset": self.formset, "job_form": self.job_form,
                "jobs_form": self.jobs_form}

    def status(self) -> int:
        """400 when a bound form shows errors (so tests and scripts can tell), else 200."""
        forms_shown = ((self.form, self.jobs_form) if self.shared
                       else (self.form, self.job_form) if self.is_job()
                       else (self.form, self.job_form, self.formset))
        return 400 if any(form_status(f) for f in forms_shown) else 200
