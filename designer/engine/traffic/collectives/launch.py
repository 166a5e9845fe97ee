"""One host thread issuing a collective on several GPUs: the floor of a loop's time per operation.

nccl-tests run as one process for a whole host (``all_reduce_perf -g N``: one thread, N GPUs,
each with its own communicator) issue every operation as a group of N collectives that the one
thread enqueues and launches GPU after GPU; the timed loop queues its iterations back to back,
so its time per operation is the larger of what the GPUs need and what the thread needs to issue
N of them. NCCL's tuner does not model it (its base latency is one launch per rank), and the run
recommended by NVIDIA is one process per GPU (NVIDIA/nccl-tests#333: "-g 8 ... CUDA latency
overheads of single process jobs"). The per-GPU issue time is
:data:`~designer.engine.model.hop_latency.SERIAL_LAUNCH_NS` (NVIDIA/nccl-tests#123: 4.2 µs a GPU
on a DGX A100, from 4 to 8 GPUs).

A collective pattern's ``gpus_per_thread`` (default 1) says how many of its GPUs one thread
drives; :func:`issue_floor_s` is the pattern's floor, which
:mod:`designer.engine.analysis.completion` applies to its completion:
``max(floor, latency + data_time / efficiency)``. The algorithm and protocol are chosen without
it, as NCCL's tuner chooses them.
"""
from __future__ import annotations

from designer.engine.errors import Problem
from designer.engine.model.hop_latency import serial_issue_s

__all__ = ["gpus_per_thread_of", "issue_floor_s"]


def gpus_per_thread_of(raw: dict, where: str, participants, problems: list) -> int:
    """The pattern's ``gpus_per_thread`` (default 1): an integer from 1 to its participant count
    (a thread drives at most every GPU of the communicator), else a located problem and 1."""
    value = raw.get("gpus_per_thread", 1)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        problems.append(Problem(f"{where}.gpus_per_thread", "must be an integer >= 1 (nccl-tests -g)"))
        return 1
    if participants is not None and value > len(participants):
        problems.append(Problem(f"{where}.gpus_per_thread",
                                f"{value} GPUs per thread, but the pattern has {len(participants)} participants"))
        return 1
    return value


def issue_floor_s(pattern: dict) -> float:
    """Shortest time (s) per operation of the pattern's collective when one thread issues it on
    ``gpus_per_thread`` GPUs; 0 for one GPU a thread and for patterns without the field."""
    return serial_issue_s(int(pattern.get("gpus_per_thread") or 1))
