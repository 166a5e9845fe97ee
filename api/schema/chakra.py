"""Docs of ``POST /topologies/<id>/chakra-import/`` (decorates ``api.views.chakra.ChakraImportView.post``)."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema

from api.schema.helpers import errors, example
from api.serializers.chakra import ChakraImportRequestSerializer, ChakraImportResultSerializer

__all__ = ["post"]

# One rank's trace, all bytes ASCII so the example can travel as text: a GlobalMetadata
# (version "0.0.4") and one COMP_NODE (id 1, 100 µs), each varint-length-prefixed.
_TRACE = "\x07\n\x050.0.4" + "\x06\x08\x01\x18\x04\x38\x64"

post = extend_schema(
    summary="Convert uploaded Chakra execution traces into a job on the topology's GPUs",
    description="Reads one Chakra `.et` trace per rank (mlcommons/chakra et_def.proto) and the "
                "communicator-group JSON, and returns the job (`workload`, to put in a scenario) and a "
                "summary (ranks, nodes by type, bytes by collective). Rank r runs on the current "
                "revision's r-th GPU. Nothing is saved; only the uploaded bytes are read. A trace that "
                "cannot be read is a 400 located under `traces` (`rank 3 (trace.3.et) byte 1,204: "
                "truncated varint`) (docs/FORMATS.md, \"Chakra execution traces\").",
    request={"multipart/form-data": ChakraImportRequestSerializer},
    responses={200: ChakraImportResultSerializer, **errors(400, 403, 404, 413)},
    examples=[OpenApiExample("one rank", value={"traces": [_TRACE]}, request_only=True,
                             media_type="multipart/form-data"),
              example("converted", {"workload": {"job": {"name": "chakra", "source": "chakra", "phases": [
                  {"id": "n1", "after": [], "compute_s": 0.0001}]}},
                  "summary": {"ranks": 1, "distinct_rank_files": 1, "nodes": {"COMP_NODE": 1}, "phases": 1,
                              "bytes_by_collective": {}, "groups": {}}, "warnings": []})])
