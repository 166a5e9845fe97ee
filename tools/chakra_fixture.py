"""Write the Chakra trace fixture of ``tests/engine/data/chakra/``: four ranks, two communicators.

Messages follow the public schema, mlcommons/chakra ``schema/protobuf/et_def.proto``
(``GlobalMetadata`` then ``Node``s, each varint-length-prefixed, as Chakra's ``et_feeder`` reads
them), written by :mod:`designer.engine.io.chakra_write`. Every rank runs the same program
(node ids 1-13); rank 3 computes slower in node 3, ranks 0-1 send to ranks 2-3 in node 7::

    1 METADATA → 2 MEM_LOAD 5 µs → 3 COMP 100 µs (rank 3: 120) → 4 ALL_REDUCE 8 MiB (tp)
      → 5 COMP 50 µs → 6 ALL_GATHER 4 MiB (tp) ┐
                     → 7 SEND/RECV 2 MiB r→r+2  ┴→ 8 COMP 30 µs → 9 REDUCE_SCATTER 16 MiB (world) ┐
                                                                → 10 ALL_TO_ALL 1 MiB (tp)       ┴→ 11 BROADCAST 1 MiB (tp)
      → 12 MEM_STORE 5 µs → 13 BARRIER (world)

Communicators (``groups.json``): ``tp0`` = ranks 0, 1 and ``tp1`` = ranks 2, 3.
Run ``python tools/chakra_fixture.py`` from the repository root.
"""
from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from designer.engine.io.chakra_write import COMM_TYPE_CODES, encode_trace  # noqa: E402

__all__ = ["GROUPS", "RANKS", "rank_nodes", "main"]

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "engine" / "data" / "chakra"
RANKS = 4
GROUPS = {"tp0": [0, 1], "tp1": [2, 3]}
MIB = 1024 * 1024


def _coll(nid, name, comm, size, deps, pg=None, ctrl=False):
    attrs = [("comm_type", COMM_TYPE_CODES[comm]), ("comm_size", size), ("is_cpu_op", False, "bool")]
    if pg is not None:
        attrs.append(("pg_name", pg, "string"))
    dep_key = "ctrl_deps" if ctrl else "data_deps"
    return {"id": nid, "name": name, "type": "COMM_COLL_NODE", dep_key: deps, "attrs": attrs}


def rank_nodes(rank: int) -> list[dict]:
    """The nodes of one rank (see the module docstring)."""
    tp = f"tp{rank // 2}"
    p2p = ({"type": "COMM_SEND_NODE", "attrs": [("comm_dst", rank + 2, "int32"), ("comm_size", 2 * MIB)]}
           if rank < 2 else {"type": "COMM_RECV_NODE", "attrs": [("comm_src", rank - 2, "int32"), ("comm_size", 2 * MIB)]})
    return [
        {"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "type": "METADATA_NODE"},
        {"id": 2, "name": "load_batch", "type": "MEM_LOAD_NODE", "data_deps": [1], "duration_micros": 5,
         "attrs": [("tensor_size", 4096)]},
        {"id": 3, "name": "aten::mm fwd", "type": "COMP_NODE", "data_deps": [2], "start_time_micros": 10,
         "duration_micros": 120 if rank == 3 else 100, "inputs": {"values": "[[1,2,3]]", "shapes": "[[64,64]]",
                                                                  "types": "[Tensor(float)]"}},
        _coll(4, "nccl:all_reduce", "ALL_REDUCE", 8 * MIB, [3], tp),
        {"id": 5, "name": "aten::mm bwd", "type": "COMP_NODE", "data_deps": [4], "duration_micros": 50},
        _coll(6, "nccl:all_gather", "ALL_GATHER", 4 * MIB, [5], tp, ctrl=True),
        {"id": 7, "name": "nccl:send_recv", "data_deps": [5], **p2p},
        {"id": 8, "name": "optimizer", "type": "COMP_NODE", "ctrl_deps": [6], "data_deps": [7], "duration_micros": 30},
        _coll(9, "nccl:reduce_scatter", "REDUCE_SCATTER", 16 * MIB, [8]),
        _coll(10, "nccl:all_to_all", "ALL_TO_ALL", MIB, [8], tp),
        _coll(11, "nccl:broadcast", "BROADCAST", MIB, [9, 10], tp),
        {"id": 12, "name": "store_ckpt", "type": "MEM_STORE_NODE", "data_deps": [11], "duration_micros": 5},
        _coll(13, "nccl:barrier", "BARRIER", 0, [12]),
    ]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for r in range(RANKS):
        (OUT / f"trace.{r}.et").write_bytes(encode_trace(rank_nodes(r)))
    (OUT / "groups.json").write_text(json.dumps(GROUPS) + "\n", encoding="utf-8")
    print(f"wrote {RANKS} ranks and groups.json to {OUT}")


if __name__ == "__main__":
    main()
