"""Chakra traces: ``POST /topologies/<id>/chakra-import/`` request and response shapes
(docs/FORMATS.md, "Chakra execution traces").

The serializer checks the shape and the counts; the engine reads the uploaded bytes (never a
path) and locates each problem (``traces: rank 3 (trace.3.et) byte 1,204: truncated varint``).
"""
from __future__ import annotations

from rest_framework import serializers

from designer.bridge.imports import CHAKRA_MAX_RANK_FILES

__all__ = ["MAX_CHAKRA_FILES", "ChakraImportRequestSerializer", "ChakraImportResultSerializer"]

#: Rank files per request, the scenario page's too (``designer.bridge.imports``): Django's
#: ``DATA_UPLOAD_MAX_NUMBER_FILES`` (100) counts the groups file too; larger traces go through
#: ``python -m designer.engine import-workload --format chakra``.
MAX_CHAKRA_FILES = CHAKRA_MAX_RANK_FILES


class ChakraImportRequestSerializer(serializers.Serializer):
    traces = serializers.ListField(child=serializers.FileField(), min_length=1, max_length=MAX_CHAKRA_FILES,
                                   help_text="one .et file per rank (multipart, repeated `traces`); the rank is "
                                             "the number ending the file name (trace.3.et)")
    groups = serializers.FileField(required=False, help_text='communicator groups JSON {"<pg_name>": [ranks]}')

    def validate(self, attrs):
        return {"traces": [(upload.name, upload.read()) for upload in attrs["traces"]],
                "groups": attrs["groups"].read() if attrs.get("groups") is not None else None}


class ChakraImportResultSerializer(serializers.Serializer):
    workload = serializers.DictField(help_text='{"job": {...}}: a scenario\'s workload (docs/FORMATS.md, Jobs)')
    summary = serializers.DictField(help_text="ranks, distinct_rank_files, nodes (type -> count over every rank), "
                                              "phases, bytes_by_collective, groups (name -> size)")
    warnings = serializers.ListField(child=serializers.CharField())
