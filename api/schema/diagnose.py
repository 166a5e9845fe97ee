"""Docs of ``POST /topologies/<id>/diagnose/`` (decorates ``api.views.diagnose.DiagnoseView.post``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api import serializers as s
from api.schema.examples import EXAMPLE_JOB
from api.schema.helpers import errors, example, retry_after
from api.serializers.diagnose import DiagnoseRequestSerializer, DiagnoseUploadSerializer

__all__ = ["post"]

# Rows of NVIDIA/nccl-tests#319 (2 HGX H100 hosts, 16 ranks): a request the docs can send as is.
_LOG = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "  1073741824     268435456     float     sum      -1    45390   23.66   44.36      0    45333   23.69   44.41      0\n"
        "  2147483648     536870912     float     sum      -1    90808   23.65   44.34      0    90719   23.67   44.38      0\n")

post = extend_schema(
    summary="Diagnose measured nccl-tests runs: which fault explains them (a background job)",
    description="Each run (nccl-tests stdout in `log`, or measured `rows` as JSON; optionally the "
                "`hosts` it ran on) is compared with the healthy prediction of the topology's current "
                "revision, and candidate faults (a NIC, link or port degraded or down) are ranked by how "
                "well their predicted curve fits the runs (docs/FORMATS.md, \"Diagnosis\"). The input is "
                "checked before anything is saved: a log that is not nccl-tests output is a 400 located "
                "at `runs[i].log` (`line 37: expected 13 columns, got 4`), an unknown host at "
                "`runs[i].hosts[j]`. Accepted (202) as a job of kind `diagnose`: poll `/jobs/{id}/`, "
                "then read `/jobs/{id}/result/` (`fabricscope.diagnosis/1`: `expected`, `runs`, "
                "`healthy`, ranked `explanations`, `summary`) and `/jobs/{id}/figures/`. Multipart: files "
                "under `logs`, `hosts` once per file (comma-separated). Rate-limited and capped like "
                "every job submission (429 `too_many_jobs`, 503 `broker_unavailable`).",
    request={"application/json": DiagnoseRequestSerializer, "multipart/form-data": DiagnoseUploadSerializer},
    parameters=[retry_after(429, 503)],
    responses={202: s.JobSerializer, **errors(400, 403, 404, 413, 415, 503, extra="job_submit")},
    examples=[example("one run on two hosts", {"op": "all_reduce", "runs": [
                          {"label": "h0+h1", "hosts": ["h0", "h1"], "log": _LOG}]}, request=True),
              example("rows as JSON, with options", {"op": "all_reduce", "runs": [
                          {"label": "rack-a", "rows": [{"bytes": 1073741824, "busbw_gbps": 44.36},
                                                       {"bytes": 2147483648, "busbw_gbps": 44.34}]}],
                          "options": {"algorithm": "ring", "nic_policy": "affinity"}}, request=True),
              example("queued", {**EXAMPLE_JOB, "kind": "diagnose", "state": "queued", "progress": 0,
                                 "message": "queued", "scenario": None, "scenario_name": None,
                                 "started_at": None, "parameters": {
                                     "op": "all_reduce", "options": {},
                                     "plan": {"candidates": 48, "sizes": 2, "runs": 1, "estimate_s": 3.1}}},
                      status=202)])
