"""Disaggregated inference: prefill GPUs, decode GPUs and the KV cache each request moves between
them, at a request rate.

``{"job": {"template": {"kind": "inference", "model": "llama3-70b", "prompt_tokens": 8192,
"prefill": {"group": "h0"}, "decode": {"group": "h1"}, "request_rate": 10, "requests": 16}}}``

Requests arrive every ``1 / request_rate`` seconds. Request ``k`` runs its prefill on prefill
instance ``k mod P`` (``P`` = prefill GPUs / ``prefill_tp``; an instance runs one prefill at a
time, so a request may queue), then moves its KV cache to decode instance ``k mod D`` with the
``kv_transfer`` pattern: prefill GPU ``i`` of the instance to decode GPU ``i`` (sizes differing:
:func:`numpy.resize` pairing, as ``kv_transfer`` does). Transfers that overlap share the links
they cross (max-min, re-solved at every start and end: :mod:`designer.engine.traffic.jobs.dag`).

**KV-cache bytes** (K and V, every layer, every prompt token)::

    per token   = 2 · layers · kv_heads · head_dim · dtype_bytes
    per request = per token · prompt_tokens
    per flow    = per request / max(prefill_tp, decode_tp)

(``head_dim`` = ``hidden / heads`` unless given; grouped-query attention keeps ``kv_heads`` <
``heads``; the KV heads are split evenly over the TP ranks, so each prefill GPU holds ``1 /
prefill_tp`` of the cache and each decode GPU receives ``1 / decode_tp`` of it.) Llama-3-70B in
bf16 (80 layers, 8 KV heads of 128): 2·80·8·128·2 = 327,680 B per token, 2.68 GB for 8,192
tokens.

**Prefill compute** per request: ``prefill_s`` when given, else the forward pass of the model
over the prompt on one instance (:func:`designer.engine.traffic.jobs.models.stage_numbers` with
``tp = prefill_tp``, one sequence of ``prompt_tokens``; GPU peak × MFU as in training templates).

``summary.job.inference``: the KV bytes, per request its arrival, prefill start, queue wait,
KV transfer start/end, ``kv_transfer_s``, TTFT and the ``limiting_link`` (the resource that
bounded the slowest transferring flow of its transfer longest), the mean/max transfer time, TTFT
and TPOT (:func:`_tpot_s`), the prefill queue (:func:`queue_verdict`), the offered KV load (Gb/s),
whether the service keeps up with the rate and a one-sentence ``verdict`` (docs/ENGINE.md,
Disaggregated inference).
"""
from __future__ import annotations

import numpy as np

from designer.engine.errors import InvalidWorkload, Problem
from designer.engine.traffic.jobs.checks import is_real
from designer.engine.catalog import GPU_COMPUTE
from designer.engine.traffic.jobs.models import model_base, stage_numbers, template_dims
from designer.engine.traffic.workloads import resolve_selector

__all__ = ["DEFAULT_OUTPUT_TOKENS", "MAX_REQUESTS", "expand_inference", "inference_summary", "kv_cache_bytes",
           "queue_verdict"]

MAX_REQUESTS = 2_000
DEFAULT_OUTPUT_TOKENS = 256
_TRAIN_KEYS = ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab", "gpu", "mfu", "peak_tflops", "precision",
               "dtype_bytes")
_KEYS = {"kind", "model", "hidden", "layers", "heads", "kv_heads", "head_dim", "ffn", "vocab", "dtype_bytes",
         "prompt_tokens", "prefill", "decode", "prefill_tp", "decode_tp", "request_rate", "requests",
         "prefill_s", "gpu", "mfu", "peak_tflops", "precision", "output_tokens", "tpot_s"}


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, dtype_bytes: float, tokens: int) -> float:
    """Bytes of the KV cache of ``tokens`` tokens: ``2 · layers · kv_heads · head_dim · dtype_bytes
    · tokens`` (K and V of every layer)."""
    return float(2 * layers * kv_heads * head_dim * dtype_bytes * tokens)


def expand_inference(topo, raw: dict, where: str = "workload.job.template", scope=None) -> tuple[list[dict], dict]:
    """Phases of the requests and the template's numbers (``JobSpec.inference``).

    Parameters
    ----------
    topo : Topology
        Resolves the ``prefill`` / ``decode`` selectors.
    raw : dict
        The template (see the module docstring).
    scope : ndarray of int64, optional
        A shared-cluster job's GPUs: ``prefill`` / ``decode`` choose among them.

    Returns
    -------
    (list of dict, dict)
        Job phases (``r{k}.arrive`` waits the arrival, ``r{k}.prefill`` computes, ``r{k}.kv``
        moves the cache) and ``{"kv_bytes_per_token", "kv_bytes_per_request", "bytes_per_flow",
        "prompt_tokens", "request_rate", "requests", "prefill_s", "prefill_tp", "decode_tp",
        "prefill_instances", "decode_instances", "dims"}``.

    Raises
    ------
    InvalidWorkload
        Unknown fields or model, bad numbers, a selector that does not split into instances,
        prefill and decode sharing GPUs, no way to get the prefill time.
    """
    dims, problems = _dims(raw, where)
    pre = _instances(topo, raw, "prefill", dims.get("prefill_tp"), where, problems, scope)
    dec = _instances(topo, raw, "decode", dims.get("decode_tp"), where, problems, scope)
    if pre and dec and set(np.concatenate(pre).tolist()) & set(np.concatenate(dec).tolist()):
        problems.append(Problem(f"{where}.decode", "shares GPUs with prefill (disaggregated: give disjoint sets)"))
    if problems:
        raise InvalidWorkload("invalid inference template", problems)
    tp_p, tp_d = len(pre[0]), len(dec[0])
    per_token = kv_cache_bytes(dims["layers"], dims["kv_heads"], dims["head_dim"], dims["dtype_bytes"], 1)
    per_request = per_token * dims["prompt_tokens"]
    prefill_s = _prefill_s(dims, tp_p, where)
    tpot_s, tpot_basis = _tpot_s(dims, tp_d, per_token, where)
    # The default (two rounds over the larger side) is capped too: 4,096 one-GPU instances would
    # otherwise make 8,192 requests, past the limit a given ``requests`` has.
    requests = dims.get("requests") or min(2 * max(len(pre), len(dec)), MAX_REQUESTS)
    ids = topo.node_ids
    phases = []
    for k in range(requests):
        i, j = k % len(pre), k % len(dec)
        phases.append({"id": f"r{k}.arrive", "wait_s": k / dims["request_rate"]})
        after = [f"r{k}.arrive"] + ([f"r{k - len(pre)}.prefill"] if k >= len(pre) else [])
        phases.append({"id": f"r{k}.prefill", "after": after, "compute_s": prefill_s})
        phases.append({"id": f"r{k}.kv", "after": [f"r{k}.prefill"], "patterns": [
            {"id": f"r{k}.kv", "kind": "kv_transfer", "bytes": per_request / max(tp_p, tp_d),
             "prefill": {"ids": [ids[n] for n in pre[i].tolist()]},
             "decode": {"ids": [ids[n] for n in dec[j].tolist()]}}]})
    meta = {"kv_bytes_per_token": per_token, "kv_bytes_per_request": per_request,
            "bytes_per_flow": per_request / max(tp_p, tp_d), "prompt_tokens": dims["prompt_tokens"],
            "request_rate": float(dims["request_rate"]), "requests": requests, "prefill_s": prefill_s,
            "prefill_tp": tp_p, "decode_tp": tp_d, "prefill_instances": len(pre), "decode_instances": len(dec),
            "tpot_s": tpot_s, "tpot_basis": tpot_basis,
            "output_tokens": dims.get("output_tokens", DEFAULT_OUTPUT_TOKENS),
            "dims": {k: dims[k] for k in ("layers", "kv_heads", "head_dim", "dtype_bytes")}}
    return phases, meta


def _dims(raw, where) -> tuple[dict, list]:
    if not isinstance(raw, dict):
        return {}, [Problem(where, "must be an object")]
    base, problems = model_base(raw, where, _KEYS, "layers, kv_heads, head_dim")
    dims = {"dtype_bytes": 2, **base, **{k: v for k, v in raw.items() if k not in ("kind", "model")}}
    if dims.get("head_dim") is None and _is_int(dims.get("hidden")) and _is_int(dims.get("heads")):
        dims["head_dim"] = dims["hidden"] // dims["heads"]
    if dims.get("kv_heads") is None and _is_int(dims.get("heads")):
        dims["kv_heads"] = dims["heads"]
    return dims, problems + _count_problems(dims, where) + _rate_problems(dims, where)


def _count_problems(dims: dict, where: str) -> list:
    """The integer fields: dimensions and tokens (required), TP sizes and requests (optional)."""
    problems = []
    for key in ("layers", "kv_heads", "head_dim", "prompt_tokens"):
        if not _is_int(dims.get(key)):
            problems.append(Problem(f"{where}.{key}", "must be an integer in 1..2**31" + (
                "" if key == "prompt_tokens" else " (or give a model)")))
    for key in ("prefill_tp", "decode_tp"):
        if key in dims and not _is_int(dims[key]):
            problems.append(Problem(f"{where}.{key}", "must be an integer in 1..2**31"))
    if "requests" in dims and (not _is_int(dims["requests"]) or dims["requests"] > MAX_REQUESTS):
        problems.append(Problem(f"{where}.requests", f"must be an integer in 1..{MAX_REQUESTS:,}"))
    return problems


def _rate_problems(dims: dict, where: str) -> list:
    """The real-valued fields: request rate, bytes per element, prefill time."""
    problems = []
    for key in ("request_rate", "dtype_bytes"):
        if not (_is_pos(dims.get(key)) and dims[key] <= 2 ** 31):
            problems.append(Problem(f"{where}.{key}", "must be a number > 0 (at most 2**31)" + (
                " (requests per second)" if key == "request_rate" else " (bytes per element)")))
    for key in ("prefill_s", "tpot_s"):
        if key in dims and not (is_real(dims[key]) and 0 <= dims[key] <= 2 ** 31):
            problems.append(Problem(f"{where}.{key}", "must be a number of seconds >= 0"))
    if "output_tokens" in dims and not _is_int(dims["output_tokens"]):
        problems.append(Problem(f"{where}.output_tokens", "must be an integer in 1..2**31"))
    return problems


def _is_int(v) -> bool:
    # Bounded like the training template's dimensions (models._MAX_DIM): 10**400 tokens made
    # float() of the KV bytes overflow (a 500).
    return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 2 ** 31


def _is_pos(v) -> bool:
    return is_real(v) and v > 0


def _instances(topo, raw, side: str, tp, where, problems, scope=None) -> list[np.ndarray]:
    """The ``side`` GPUs split into instances of ``tp`` (default: the GPUs of one host)."""
    if not isinstance(raw, dict) or side not in raw:
        problems.append(Problem(f"{where}.{side}", f"give the {side} GPUs, e.g. {{\"group\": \"h0\"}}"))
        return []
    sel = raw[side]
    if isinstance(sel, dict) and "kind" not in sel and "ids" not in sel:
        # Prefill and decode run on GPUs: {"group": "h0"} means h0's GPUs (the documented
        # example was refused for selecting h0's NICs and switches too).
        sel = {**sel, "kind": "gpu"}
    try:
        nodes = resolve_selector(topo, sel, f"{where}.{side}", scope)
    except InvalidWorkload as exc:
        problems.extend(exc.problems)
        return []
    not_gpu = [topo.node_ids[n] for n in nodes.tolist() if topo.node_kind[n] != "gpu"]
    if not_gpu:
        problems.append(Problem(f"{where}.{side}", f"selects non-GPU node(s) {not_gpu[:3]}"))
        return []
    if not isinstance(tp, int) or isinstance(tp, bool) or tp < 1:
        host = topo.node_host[int(nodes[0])]
        tp = sum(1 for n in nodes.tolist() if topo.node_host[n] == host)
    if len(nodes) % tp:
        problems.append(Problem(f"{where}.{side}_tp", f"{len(nodes)} {side} GPUs do not split into instances of {tp}"))
        return []
    return [nodes[k:k + tp] for k in range(0, len(nodes), tp)]


def _prefill_s(dims: dict, tp: int, where: str) -> float:
    if "prefill_s" in dims:
        return float(dims["prefill_s"])
    need = [k for k in ("hidden", "heads", "ffn", "vocab") if k not in dims]
    if need:
        raise InvalidWorkload("invalid inference template", [Problem(
            f"{where}.prefill_s", f"give prefill_s (seconds per request) or a model with {', '.join(need)}")])
    train = {k: dims[k] for k in _TRAIN_KEYS if k in dims}
    full = template_dims({**train, "seq_len": dims["prompt_tokens"], "micro_batch": 1}, where)
    return stage_numbers(full, {"tp": tp, "pp": 1, "cp": 1, "ep": 1, "dp": 1}, 0)["fwd_s"]


def _tpot_s(dims: dict, tp: int, kv_per_token: float, where: str) -> tuple[float | None, str]:
    """Seconds per output token on one decode instance and how they were obtained.

    Given ``tpot_s``, that. Else one request alone on the instance (batch 1): every decode step
    reads the instance's share of the weights and of the prompt's KV cache from HBM and does
    ``2 · params / tp`` FLOPs per GPU, so TPOT = max(bytes / HBM bandwidth, FLOPs / (peak × MFU))
    — memory-bound for any real model. None (with the reason) without the model dimensions or a
    GPU whose HBM bandwidth the catalog knows.
    """
    if "tpot_s" in dims:
        return float(dims["tpot_s"]), "given"
    gpu = GPU_COMPUTE.get(dims.get("gpu", "h100")) if isinstance(dims.get("gpu", "h100"), str) else None
    if any(k not in dims for k in ("hidden", "heads", "ffn", "vocab")) or gpu is None:
        return None, "give tpot_s, or a model and a catalog gpu"
    train = {k: dims[k] for k in _TRAIN_KEYS if k in dims}
    full = template_dims({**train, "seq_len": 1, "micro_batch": 1}, where)
    params = stage_numbers(full, {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "dp": 1}, 0)["params"]
    read_b = (params * dims["dtype_bytes"] + kv_per_token * dims["prompt_tokens"]) / tp
    memory_s = read_b / (gpu.hbm_gbytes_s * 1e9)
    compute_s = 2 * params / tp / (full["peak_tflops"] * 1e12 * full["mfu"])
    return max(memory_s, compute_s), "memory-bound, batch 1" if memory_s >= compute_s else "compute-bound, batch 1"


def queue_verdict(rate: float, service_s: float, servers: int) -> dict:
    """The prefill queue as a queueing model: ``utilization = rate × service / servers``.

    Requests arrive evenly (every ``1 / rate`` s) and each prefill takes ``service_s`` on one of
    ``servers`` instances in turn, a D/D/1 queue per instance: no wait while utilization < 1; at
    utilization >= 1 request ``k`` waits about ``k · (service − servers / rate)``, without bound.
    With Poisson arrivals instead (M/D/1, Pollaczek–Khinchine: L. Kleinrock, *Queueing Systems*
    vol. 1, 1975, §5.6) the mean wait is ``ρ · S / (2 (1 − ρ))`` for ρ < 1.

    Returns
    -------
    dict
        ``utilization`` (ρ), ``stable`` (ρ < 1), ``max_rate_per_s`` (servers / service: the
        largest sustainable request rate; None when service is 0), ``poisson_wait_s`` (M/D/1 mean
        wait, None when unstable).
    """
    rho = rate * service_s / servers
    stable = rho < 1
    return {"utilization": rho, "stable": stable,
            "max_rate_per_s": servers / service_s if service_s > 0 else None,
            "poisson_wait_s": rho * service_s / (2 * (1 - rho)) if stable else None}


def _stats(values: list) -> dict:
    """``mean``, ``max``, ``min`` of ``values`` (all None when a value is None or none given)."""
    if not values or any(v is None for v in values):
        return {"mean": None, "max": None, "min": None}
    return {"mean": float(np.mean(values)), "max": float(np.max(values)), "min": float(np.min(values))}


def inference_summary(job: dict, meta: dict, limits: dict) -> dict:
    """``summary.job.inference`` from the step's phases, the template numbers and the limiting
    resources the event loop recorded (``{pattern id: {"resource", "seconds"}}``).

    Returns
    -------
    dict
        The template numbers; ``requests_detail`` (per request ``request``, ``arrival_s``,
        ``prefill_start_s``, ``queue_wait_s``, ``kv_start_s``, ``kv_end_s``, ``kv_transfer_s``,
        ``ttft_s`` and ``limiting_link``); ``kv_transfer_s``, ``queue_wait_s`` and ``ttft_s`` as
        ``mean``/``max``/``min`` (None if a request never gets its cache to decode);
        ``tpot_s`` (s per output token) and ``tpot_basis``; ``e2e_s`` (mean TTFT +
        (output_tokens − 1) × TPOT); ``prefill_queue`` (:func:`queue_verdict`); ``limiting_link``
        (the one that limited the transfers longest in all); ``offered_gbps`` (rate × bytes per
        request); ``keeps_up`` (the prefill queue is stable and the slowest transfer fits in the
        interval between two requests on one decode instance) and ``verdict`` (one sentence).
    """
    by_id = {p["id"]: p for p in job["phases"]}
    detail, totals = [], {}
    for k in range(meta["requests"]):
        lim = limits.get(f"r{k}.kv")
        if lim:
            totals[lim["resource"]] = totals.get(lim["resource"], 0.0) + lim["seconds"]
        detail.append(_request_detail(k, meta, by_id[f"r{k}.prefill"], by_id[f"r{k}.kv"], lim))
    kv = _stats([d["kv_transfer_s"] for d in detail])
    interval = meta["decode_instances"] / meta["request_rate"]
    queue = queue_verdict(meta["request_rate"], meta["prefill_s"], meta["prefill_instances"])
    ttft = _stats([d["ttft_s"] for d in detail])
    tpot = meta.get("tpot_s")
    out = {**meta, "kv_transfer_s": kv, "queue_wait_s": _stats([d["queue_wait_s"] for d in detail]),
           "ttft_s": ttft, "prefill_queue": queue,
           "e2e_s": ttft["mean"] + (meta["output_tokens"] - 1) * tpot if ttft["mean"] is not None
           and tpot is not None else None,
           "limiting_link": max(totals, key=totals.get) if totals else None,
           "offered_gbps": meta["request_rate"] * meta["kv_bytes_per_request"] * 8 / 1e9,
           "keeps_up": bool(kv["max"] is not None and kv["max"] <= interval and queue["stable"]),
           "decode_interval_s": interval, "requests_detail": detail}
    out["verdict"] = _verdict(out)
    return out


def _request_detail(k: int, meta: dict, pre: dict, kv: dict, lim: dict | None) -> dict:
    """One request's times (s). TTFT runs from arrival to the cache reaching decode: the decode
    instance emits the tokens the user sees (vLLM's disaggregated prefilling, docs.vllm.ai,
    "Disaggregated Prefilling"), so queueing, prefill and the KV transfer all delay it."""
    arrival = k / meta["request_rate"]
    start, end = kv.get("start_s"), kv.get("end_s")
    pre_start = pre.get("start_s")
    return {"request": k, "arrival_s": arrival, "prefill_start_s": pre_start,
            "queue_wait_s": max(pre_start - arrival, 0.0) if pre_start is not None else None,
            "kv_start_s": start, "kv_end_s": end,
            "kv_transfer_s": end - start if start is not None and end is not None else None,
            "ttft_s": end - arrival if end is not None else None,
            "limiting_link": lim["resource"] if lim else None}


def _verdict(inf: dict) -> str:
    """One sentence: keeps up (with TTFT and TPOT), or which stage cannot and by how much."""
    q = inf["prefill_queue"]
    if not q["stable"]:
        cap = q["max_rate_per_s"]
        return (f"cannot keep up: prefill utilization {q['utilization']:.3g} ≥ 1 ({inf['request_rate']:.4g} req/s × "
                f"{_s(inf['prefill_s'])} prefill on {inf['prefill_instances']} "
                f"instance{'s' if inf['prefill_instances'] > 1 else ''}; at most "
                f"{cap:.3g} req/s): the queue grows without bound; the last of {inf['requests']} requests "
                f"waited {_s(inf['queue_wait_s']['max'])}")
    kv = inf["kv_transfer_s"]
    if kv["max"] is None:
        return "cannot keep up: a KV-cache transfer never completes"
    if kv["max"] > inf["decode_interval_s"]:
        return (f"cannot keep up: the slowest KV transfer takes {_s(kv['max'])}, longer than the "
                f"{_s(inf['decode_interval_s'])} between two requests on a decode instance")
    tpot = f", TPOT {_s(inf['tpot_s'])}" if inf.get("tpot_s") is not None else ""
    return (f"keeps up: prefill utilization {q['utilization']:.3g}, TTFT {_s(inf['ttft_s']['mean'])} "
            f"(max {_s(inf['ttft_s']['max'])}){tpot}")


def _s(x: float | None) -> str:
    """Seconds with a unit and 3 significant digits (``415 ms``, ``4.7 s``)."""
    if x is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(x) >= scale or unit == "µs":
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g} s"
