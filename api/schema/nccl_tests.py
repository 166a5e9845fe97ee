"""Docs of ``POST /topologies/<id>/nccl-tests/`` (decorates ``api.views.nccl_tests.NcclTestsView.post``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api.schema.helpers import errors, example
from api.serializers.nccl_tests import (
        NcclTestsRequestSerializer,
        NcclTestsResultSerializer,
)

__all__ = ["post"]

# Rows of NVIDIA/nccl-tests#319 (2 HGX H100 hosts, 16 ranks): a request the docs can send as is.
_LOG = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "  1073741824     268435456     float     sum      -1    45390   23.66   44.36      0    45333   23.69   44.41      0\n"
        "  2147483648     536870912     float     sum      -1    90808   23.65   44.34      0    90719   23.67   44.38      0\n")

post = extend_schema(
    summary="Predicted nccl-tests table of a topology (and a real run side by side)",
    description="The rows `<op>_perf -b min_bytes -e max_bytes -f factor` would print on the topology's "
                "current revision, every GPU one rank: time (µs), algbw and busbw (GB/s, nccl-tests' "
                "factors) and the engine's algorithm. With `log` (the stdout of a real run) the run is "
                "parsed and compared at exactly its sizes: `comparison[].error_pct` = (predicted − "
                "measured) / measured busbw. `logs` (up to 6 `{name, text}`, `log` counted) overlays "
                "several runs of one collective on one prediction, one `runs[]` entry each. `protocol` "
                "(LL, LL128, Simple) and `channels` (1–32) force NCCL's choice, as NCCL_PROTO and "
                "NCCL_MIN/MAX_NCHANNELS do. Every nccl-tests binary is an `op` (broadcast, reduce, "
                "gather, scatter with `root`; hypercube); `redop` is echoed; `hosts_subset` (h0,h3) "
                "and `nic_policy` choose the ranks and the NIC routing; `env` takes NCCL knobs as "
                "NAME=VALUE (an unmodelled one is a 400 at `env[k]`). A log may be stdout or "
                "nccl-tests' JSON result file. Runs inline for topologies of up to 16 hosts; a log "
                "that is not nccl-tests output is a 400 located at `log` (`line 37: expected 13 "
                "columns, got 4`).",
    request=NcclTestsRequestSerializer,
    responses={200: NcclTestsResultSerializer, **errors(400, 403, 404, 413)},
    examples=[example("2 GiB all-reduce sweep", {"op": "all_reduce", "min_bytes": "1G", "max_bytes": "2G",
                                                "factor": 2, "algorithm": "auto"}, request=True),
              example("compare with a run", {"op": "all_reduce", "min_bytes": "1G", "max_bytes": "2G",
                                             "log": _LOG}, request=True),
              example("broadcast from rank 3 with NCCL knobs", {"op": "broadcast", "root": 3, "min_bytes": "1M",
                                                                "max_bytes": "1G", "hosts_subset": "h0,h1",
                                                                "env": ["NCCL_ALGO=Ring", "NCCL_PROTO=Simple"]},
                      request=True)])
