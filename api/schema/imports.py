"""Docs of ``/topologies/import/`` and ``/topologies/import-preview/``.

Each name is the decorator of the ``api.views.imports.TopologyImportActions`` method of the
same name.
"""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api import serializers as s
from api.schema.examples import EXAMPLE_TOPOLOGY
from api.schema.helpers import errors, example

__all__ = ["import_", "import_preview"]

# A real (short) `nvidia-smi topo -m` output: examples are sent as they are by the docs' "try
# it out" and by schemathesis, so they must import.
_TOPO_M = ("\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n"
           "GPU0\t X \tNV4\tPIX\t0-15\t0\n"
           "GPU1\tNV4\t X \tPHB\t0-15\t0\n"
           "NIC0\tPIX\tPHB\t X \t\t\n"
           "\nNIC Legend:\n\n  NIC0: mlx5_0\n")

import_ = extend_schema(
    summary="Import a server (NCCL topology XML, nvidia-smi topo -m, hwloc XML)",
    request={"multipart/form-data": s.ImportSerializer,
             "application/json": s.ImportTextSerializer},
    responses={201: s.ImportResultSerializer, **errors(400, 403, 413, 415)},
    examples=[
        example("nvidia-smi text", {"name": "node17", "format": "nvidia-smi",
                                    "text": _TOPO_M, "host_id": "h0"},
                request=True),
        example("imported", {"topology": EXAMPLE_TOPOLOGY, "format": "nvidia-smi",
                             "warnings": ["PCIe generation and width not shown by "
                                          "nvidia-smi: Gen4 x16 assumed"]}, status=201)],
    filters=False)

import_preview = extend_schema(
    summary="Parse a server description into a one-host document without saving it",
    description="The editor's Import button: NCCL XML, `nvidia-smi topo -m` or hwloc XML in, "
                "a normalized document holding host `host_id` out, with the defaults taken.",
    request={"multipart/form-data": s.ImportPreviewSerializer,
             "application/json": s.ImportPreviewTextSerializer},
    responses={200: s.ImportPreviewResultSerializer, **errors(400, 403, 413, 415)},
    examples=[example("nvidia-smi text", {"format": "nvidia-smi", "host_id": "h4",
                                          "text": _TOPO_M}, request=True)],
    filters=False)
