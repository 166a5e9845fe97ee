"""Diagnosis: ``POST /topologies/<id>/diagnose/`` request shapes (JSON and multipart).

JSON: ``{"op", "runs": [{"label", "hosts", "log"}], "options"}``, each run with a ``log``
(nccl-tests stdout) or ``rows`` (measured figures as JSON). Multipart: files under ``logs``
(one run each, labelled by its file name unless ``labels`` says otherwise), ``hosts`` once per
file (comma-separated host ids, empty: the whole design), ``op`` and the options as fields.
The shape is checked here; the content (what a log says, which hosts exist) by the engine,
through the service.
"""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import StrictCharField
from designer.selectors import NCCL_ALGORITHMS, NCCL_OPS, NCCL_PROTOCOLS
from designer.services import NIC_POLICIES
from designer.services.diagnose import MAX_DIAGNOSE_LOG_BYTES, MAX_DIAGNOSE_RUNS

__all__ = ["DiagnoseRequestSerializer", "DiagnoseUploadSerializer", "upload_data"]

_HOST = r"^[A-Za-z0-9_.:/-]{1,200}$"
# Sizes a run may list (nccl-tests' 8 B … 16 GiB by factor 2 is 32; -f 1.5 steps make more).
_MAX_ROWS = 256


class _RowSerializer(serializers.Serializer):
    # Bounds far above any real run (16 GiB messages, a few TB/s), so no absurd number reaches the engine.
    bytes = serializers.IntegerField(min_value=1, max_value=2 ** 50,
                                     help_text="message size (nccl-tests size column), bytes")
    busbw_gbps = serializers.FloatField(min_value=0, max_value=1e6, help_text="measured bus bandwidth, GB/s (10^9 B/s)")
    time_us = serializers.FloatField(min_value=0, max_value=1e12, required=False, allow_null=True, help_text="µs")


class _OptionsSerializer(serializers.Serializer):
    algorithm = serializers.ChoiceField(choices=[c for c, _ in NCCL_ALGORITHMS], required=False,
                                        help_text="NCCL_ALGO the runs used (auto: the engine's choice)")
    protocol = serializers.ChoiceField(choices=[c for c, _ in NCCL_PROTOCOLS], required=False,
                                       help_text="NCCL_PROTO the runs used")
    channels = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=32,
                                        help_text="channels the runs used (NCCL_MIN/MAX_NCHANNELS)")
    nic_policy = serializers.ChoiceField(choices=list(NIC_POLICIES), required=False,
                                         help_text="how GPUs pick NICs (docs/ENGINE.md, NIC policies)")


class _RunSerializer(serializers.Serializer):
    label = StrictCharField(max_length=200, required=False, allow_blank=True,
                            help_text="the run's name in the result (default run1, run2 …)")
    hosts = serializers.ListField(child=serializers.RegexField(_HOST), required=False, allow_null=True,
                                  max_length=4096, help_text="the hosts the run used; omitted or null: all")
    log = serializers.CharField(required=False, trim_whitespace=False, max_length=MAX_DIAGNOSE_LOG_BYTES,
                                help_text="the run's nccl-tests stdout, or its JSON result file")
    rows = _RowSerializer(many=True, required=False, max_length=_MAX_ROWS,
                          help_text="instead of log: the measured rows as JSON")

    def validate(self, attrs):
        if ("log" in attrs) == ("rows" in attrs):
            raise serializers.ValidationError('give either "log" (nccl-tests stdout) or "rows"')
        return attrs


class DiagnoseRequestSerializer(serializers.Serializer):
    op = serializers.ChoiceField(choices=[c for c, _ in NCCL_OPS], default="all_reduce",
                                 help_text="the collective the runs measured (nccl-tests binary without _perf)")
    runs = _RunSerializer(many=True, min_length=1, max_length=MAX_DIAGNOSE_RUNS,
                          help_text=f"the measured runs, 1 to {MAX_DIAGNOSE_RUNS}")
    options = _OptionsSerializer(required=False, help_text="the nccl-tests options of the runs")

    def validate_runs(self, value: list[dict]) -> list[dict]:
        return [{**run, "label": run.get("label") or f"run{i + 1}"} for i, run in enumerate(value)]


class DiagnoseUploadSerializer(serializers.Serializer):
    """The schema of a multipart request (the view turns it into the JSON shape with
    :func:`upload_data` and validates that)."""

    op = serializers.ChoiceField(choices=[c for c, _ in NCCL_OPS], default="all_reduce")
    logs = serializers.ListField(child=serializers.FileField(), min_length=1, max_length=MAX_DIAGNOSE_RUNS,
                                 help_text="nccl-tests stdout or JSON result files, one run each")
    labels = serializers.ListField(child=StrictCharField(max_length=200, allow_blank=True), required=False,
                                   help_text="a label per file, in order (default: the file names)")
    hosts = serializers.ListField(child=StrictCharField(allow_blank=True), required=False,
                                  help_text="per file, in order: comma-separated host ids (empty: all)")
    algorithm = serializers.ChoiceField(choices=[c for c, _ in NCCL_ALGORITHMS], required=False)
    protocol = serializers.ChoiceField(choices=[c for c, _ in NCCL_PROTOCOLS], required=False)
    channels = serializers.IntegerField(required=False, min_value=1, max_value=32)
    nic_policy = serializers.ChoiceField(choices=list(NIC_POLICIES), required=False)


def upload_data(data, files) -> dict:
    """A multipart request's fields and files as the JSON request's shape.

    A file over the size limit, or not UTF-8 text, is a located 400 (``logs[1]``) before it is
    read further.
    """
    uploads = files.getlist("logs")
    labels, hosts = data.getlist("labels"), data.getlist("hosts")
    runs, bad = [], {}
    for i, upload in enumerate(uploads[:MAX_DIAGNOSE_RUNS + 1]):
        if upload.size > MAX_DIAGNOSE_LOG_BYTES:
            bad[f"logs[{i}]"] = [f"{upload.name}: larger than {MAX_DIAGNOSE_LOG_BYTES // 1024} KiB"]
            continue
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            bad[f"logs[{i}]"] = [f"{upload.name}: not UTF-8 text (an nccl-tests log is plain text)"]
            continue
        names = [h.strip() for h in (hosts[i] if i < len(hosts) else "").split(",") if h.strip()]
        runs.append({"label": (labels[i] if i < len(labels) else "") or upload.name, "log": text,
                     **({"hosts": names} if names else {})})
    if bad:
        raise serializers.ValidationError(bad)
    options = {k: data[k] for k in ("algorithm", "protocol", "channels", "nic_policy") if data.get(k)}
    return {"op": data.get("op") or "all_reduce", "runs": runs, **({"options": options} if options else {})}
