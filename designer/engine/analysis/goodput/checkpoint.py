"""A checkpoint's size, and its write and read-back times on the design's storage fabric.

The write is the scenario pattern ``storage_write`` (docs/FORMATS.md, Scenario) from every GPU
of the job to the design's storage servers, each GPU writing its shard (``bytes / GPUs``,
GPUDirect), simulated by :func:`designer.engine.analysis.simulate.simulate`: the write time is
that pattern's ``completion_s`` — the same number a user gets simulating the pattern. The
read-back on restart is the ``storage_read`` of the same shards. Either time may be given
instead (``write_s``, ``read_s``); a design without storage servers needs them given.
"""
from __future__ import annotations

from designer.engine.analysis.goodput.facts import BYTES_PER_PARAMETER
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["checkpoint_bytes", "storage_time_s", "checkpoint_times"]


def checkpoint_bytes(ck: dict) -> float | None:
    """Checkpoint size (bytes): ``bytes``, else ``parameters × bytes_per_parameter`` (default
    14: mixed-precision Adam, :data:`.facts.BYTES_PER_PARAMETER`), else None."""
    if ck.get("bytes") is not None:
        return float(ck["bytes"])
    if ck.get("parameters") is not None:
        return float(ck["parameters"]) * float(ck.get("bytes_per_parameter", BYTES_PER_PARAMETER))
    return None


def storage_time_s(doc: dict, kind: str, gpu_ids: list[str], storage_ids: list[str], total_bytes: float) -> float:
    """Completion (s) of one ``storage_write`` / ``storage_read`` of ``total_bytes`` split evenly
    over ``gpu_ids``, against ``storage_ids``, simulated on ``doc`` (steady mode).

    Raises
    ------
    InvalidScenario
        The pattern does not complete (a GPU cut off from storage), located at ``checkpoint``.
    """
    from designer.engine.analysis.simulate import simulate

    scenario = {"format": "fabricscope.scenario/1", "topology": doc,
                "workload": [{"id": "checkpoint", "kind": kind, "source": {"ids": storage_ids},
                              "participants": {"ids": gpu_ids}, "bytes": total_bytes / len(gpu_ids),
                              "via": "gpudirect"}]}
    pattern = simulate(scenario)["summary"]["patterns"]["checkpoint"]
    if pattern.get("completion_s") is None:
        reason = pattern.get("reason") or "some GPU cannot reach storage"
        raise InvalidScenario("checkpoint does not complete", [Problem("checkpoint", f"{kind}: {reason}")])
    return float(pattern["completion_s"])


def checkpoint_times(doc: dict, ck: dict, gpu_ids: list[str], storage_ids: list[str]) -> dict:
    """Size, write, read and restart times of the job's checkpoint.

    Parameters
    ----------
    doc : dict
        The topology document.
    ck : dict
        The plan's ``checkpoint`` block (checked by :mod:`.request`).
    gpu_ids, storage_ids : list of str
        The job's GPUs, the design's storage servers.

    Returns
    -------
    dict
        ``bytes`` (or None), ``write_s``, ``read_s``, ``restart_overhead_s``, ``restart_s``
        (overhead + read), ``write_source`` / ``read_source`` (``given`` or ``simulated``).

    Raises
    ------
    InvalidScenario
        Neither a size nor ``write_s``; or a time to simulate on a design without storage.
    """
    size = checkpoint_bytes(ck)
    out = {"bytes": size, "restart_overhead_s": float(ck["restart_overhead_s"])}
    for key, kind in (("write_s", "storage_write"), ("read_s", "storage_read")):
        if ck.get(key) is not None:
            out[key], out[key.replace("_s", "_source")] = float(ck[key]), "given"
            continue
        if size is None:
            raise InvalidScenario("no checkpoint size", [Problem(
                f"checkpoint.{key}", "give it, or the checkpoint's bytes or parameters to simulate it")])
        if not storage_ids:
            raise InvalidScenario("no storage", [Problem(
                f"checkpoint.{key}", "the design has no storage server to simulate it on: give it")])
        out[key] = storage_time_s(doc, kind, gpu_ids, storage_ids, size)
        out[key.replace("_s", "_source")] = "simulated"
    if out["write_s"] <= 0.0:  # Young's and Daly's intervals need a checkpoint that costs time
        raise InvalidScenario("checkpoint takes no time", [Problem(
            "checkpoint.write_s", "the simulated write takes no time: give write_s")])
    out["restart_s"] = out["restart_overhead_s"] + out["read_s"]
    return out
