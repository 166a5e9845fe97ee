"""NCCL debug logs: ``POST /topologies/<id>/nccl-log/`` request and response shapes
(docs/FORMATS.md, "NCCL logs").

The serializer checks the shape and the bounds of each text; the engine reads the logs and
locates each problem (``logs: rank3.log: line 7: a connection line cut short …``).
"""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import StrictCharField

from designer.selectors import MAX_NCCL_LOG_CHARS, MAX_NCCL_LOG_FILES

__all__ = ["NcclLogRequestSerializer", "NcclLogResultSerializer"]

#: Largest NCCL graph dump accepted (an 8-GPU host's dump with 32 channels is ~10 kB).
MAX_GRAPH_DUMP_CHARS = 1024 * 1024


class _NcclLogFileSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200, help_text="the file's name: it locates the file's problems")
    text = StrictCharField(trim_whitespace=False, allow_blank=True, max_length=MAX_NCCL_LOG_CHARS,
                                 help_text="NCCL_DEBUG=INFO output (one rank's, or all ranks interleaved)")


class NcclLogRequestSerializer(serializers.Serializer):
    log = StrictCharField(required=False, allow_blank=True, trim_whitespace=False,
                                max_length=MAX_NCCL_LOG_CHARS, help_text="one log holding all ranks' lines")
    logs = _NcclLogFileSerializer(many=True, required=False, max_length=MAX_NCCL_LOG_FILES,
                          help_text=f"one log per rank or per host (up to {MAX_NCCL_LOG_FILES}, `log` counted)")
    graph_dump = StrictCharField(required=False, allow_blank=True, trim_whitespace=False,
                                       max_length=MAX_GRAPH_DUMP_CHARS,
                                       help_text="NCCL_GRAPH_DUMP_FILE XML of one host (optional)")

    def validate(self, attrs):
        if "log" in attrs and "logs" in attrs:   # the schema says oneOf: one form per request
            raise serializers.ValidationError({"logs": ["give `log` or `logs`, not both"]})
        logs = ([("log", attrs["log"])] if "log" in attrs else []) + [
            (item["name"], item["text"]) for item in attrs.get("logs", [])]
        if not logs:
            raise serializers.ValidationError({"logs": ["give the NCCL_DEBUG=INFO output as `log` or `logs`"]})
        return {"logs": logs, "graph_dump": attrs.get("graph_dump") or None}


class _NcclLogMismatchSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="ranks, hosts, nics, gdr, transport, ring, nvls, graph")
    where = serializers.CharField(help_text="what it is about: `run`, `host node1`, `channel 2`, `graph 0 (ring)`")
    message = serializers.CharField(help_text="one plain sentence")


class NcclLogResultSerializer(serializers.Serializer):
    format = serializers.CharField(help_text="fabricscope.nccl-log-check/1")
    summary = serializers.DictField(help_text="version, nranks, nodes, network, hosts[{host, ranks, nics}], "
                                              "transports {label: connections}, channels, rings, trees, "
                                              "algorithms, collectives")
    log = serializers.DictField(help_text="the parsed log: ranks, nics, gdr, peers, rings, trees, channels, nvls, "
                                          "tuning, warnings")
    graphs = serializers.ListField(child=serializers.DictField(), help_text="the parsed graph dump (if sent)")
    design = serializers.DictField(allow_null=True, help_text="name, hosts, gpus of the checked revision")
    mismatches = _NcclLogMismatchSerializer(many=True)
    notes = serializers.ListField(child=serializers.CharField())
