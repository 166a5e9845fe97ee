"""Docs of ``POST /topologies/<id>/nccl-log/`` (decorates ``api.views.nccl_log.NcclLogView.post``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api.schema.helpers import errors, example
from api.serializers.nccl_log import NcclLogRequestSerializer, NcclLogResultSerializer

__all__ = ["post"]

# Lines of NVIDIA/nccl-tests#228 (8 x A100 with NVSwitch that NCCL joined through SHM).
_LOG = ("user:5181:5232 [2] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/IB [RO]; OOB ibs85f0:192.168.1.10<0>\n"
        "user:5181:5232 [2] NCCL INFO Using network IB\n"
        "user:5180:5231 [1] NCCL INFO Channel 00 : 1[2a000] -> 0[27000] via SHM/direct/direct\n")

post = extend_schema(
    summary="Check NCCL_DEBUG=INFO logs of a real run against the topology's design",
    description="Reads the NCCL_DEBUG=INFO output of one run (`log`, or one file per rank in `logs`; "
                "`graph_dump`: an NCCL_GRAPH_DUMP_FILE of one host) and compares what NCCL saw with the "
                "current revision: ranks and hosts, the NICs NCCL lists per host, GPU Direct RDMA, each "
                "connection's transport against the design's path class, ring hops through SYS, NVLS "
                "(docs/FORMATS.md, \"NCCL logs\"). Nothing is saved. Every mismatch is one sentence "
                "(`NCCL sees 2 NICs on host user (mlx5_0, mlx5_2), the design has 8 on h0`). A log that "
                "cannot be read is a 400 located under `logs` (`rank3.log: line 7: a connection line cut "
                "short …`, two runs mixed, binary data, no NCCL line).",
    request=NcclLogRequestSerializer,
    responses={200: NcclLogResultSerializer, **errors(400, 403, 404)},
    examples=[example("one log", {"log": _LOG}, request=True),
              example("one file per rank", {"logs": [{"name": "rank1.log", "text": _LOG}]}, request=True)])
