"""Model templates: a training step of a dense or MoE transformer as a job (phases + patterns).

``{"template": {"model": "llama3-70b", "seq_len": 8192, "micro_batch": 1, "microbatches": 8,
"gpu": "h100", "mfu": 0.4}}`` inside a job with a layout expands into phases whose message sizes
and compute times come from the model dimensions and the layout (Megatron-LM conventions).

Derivation, per micro-batch of ``b`` sequences of ``s`` tokens, hidden size ``h``, ``d`` bytes
per activation element (bf16: 2), on a pipeline stage of ``l = layers / pp`` layers:

- **parameters** per layer: attention ``2h² + 2h·kv`` (Q, O: h×h; K, V: h×kv with
  ``kv = kv_heads · h / heads``, grouped-query attention) + MLP ``3h·f`` (SwiGLU: gate, up,
  down of ``h×f``); a MoE layer has ``experts + shared`` expert MLPs of ``3h·f_e`` and a router
  ``h·experts``; embeddings ``V·h`` on the first stage and the output layer ``V·h`` on the last;
- **forward FLOPs** of a stage ``2·b·s·P_active + 4·b·s²·h·l`` (two FLOPs per multiply-add of
  every active weight, plus QKᵀ and AV; Narayanan et al. 2021, arXiv:2104.04473 §5.1), divided by
  ``tp · cp``; backward = 2 × forward; time = FLOPs ÷ (GPU peak × MFU);
- **TP** (Megatron tensor parallelism without sequence parallelism): 2 all-reduces of ``b·s·h·d``
  per layer forward and 2 backward, over each TP group of the stage — aggregated into one
  all-reduce of ``2·l·b·s·h·d`` per micro-batch and direction (same bytes; the latency is
  counted once instead of ``2l`` times);
- **PP**: each rank sends ``b·s·h·d / tp`` to its peer of the next stage (Megatron's
  scatter-gather split across the TP ranks) forward, and the same gradient backward;
- **EP** (MoE): per MoE layer a dispatch and a combine all-to-all of ``b·s·k·h·d`` per rank
  (each token to its top-``k`` experts) forward, the same backward, aggregated per stage;
- **DP**: after the last backward of a stage, an all-reduce of its dense gradients over each DP
  group: ``P_dense / tp × g`` bytes, ``g = 4`` (Megatron accumulates and reduces ``main_grad`` in
  fp32 unless ``--grad-reduce-in-bf16``); MoE expert gradients, ``P_experts / ep / tp × g``, over
  each expert-data-parallel group (``edp``: the ``dp / ep`` ranks holding the same experts).

The schedule is GPipe's (all forwards, then all backwards, per stage; same bubble
``(pp − 1) / m`` as 1F1B): ``F{i}s{p}`` (compute) → ``F{i}s{p}.comm`` (TP/EP) → ``F{i}s{p}.send``;
``F{i}s{p}`` after ``F{i}s{p−1}.send`` and ``F{i−1}s{p}.comm``; backwards mirror it from the last
stage; ``dp.s{p}`` after the stage's last backward; ``step`` after every ``dp``.
"""
from __future__ import annotations

from designer.engine.catalog import GPU_COMPUTE
from designer.engine.errors import InvalidWorkload, LimitExceeded, Problem
from designer.engine.traffic.jobs.checks import MAX_PHASES, is_real

__all__ = ["GPU_PEAK_TFLOPS", "PRECISIONS", "MODELS", "gpu_peak_tflops", "expand_template", "model_base", "stage_numbers", "template_dims"]

# Model dimensions. Llama 3: "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3 (layers,
# model dimension, FFN dimension, attention / key-value heads, vocabulary 128,000 → 128,256 in
# the released configs). DeepSeek-V3: arXiv:2412.19437 §4.2 (61 layers, hidden 7168, 128 heads,
# 1 shared + 256 routed experts of intermediate 2048, top-8, first 3 layers dense with FFN 18432,
# vocabulary 129,280); its MLA attention is approximated by standard attention with kv_heads =
# heads (more parameters than MLA: a conservative compute estimate).
MODELS = {
    "llama3-8b": {"hidden": 4096, "layers": 32, "heads": 32, "kv_heads": 8, "ffn": 14336, "vocab": 128256},
    "llama3-70b": {"hidden": 8192, "layers": 80, "heads": 64, "kv_heads": 8, "ffn": 28672, "vocab": 128256},
    "llama3-405b": {"hidden": 16384, "layers": 126, "heads": 128, "kv_heads": 8, "ffn": 53248, "vocab": 128256},
    "deepseek-v3": {"hidden": 7168, "layers": 61, "heads": 128, "kv_heads": 128, "ffn": 18432, "vocab": 129280,
                    "experts": 256, "shared_experts": 1, "top_k": 8, "expert_ffn": 2048, "dense_layers": 3},
}
# Dense tensor-core peak, TFLOPS per GPU (without sparsity), by precision: the vendor datasheet
# figures of :data:`designer.engine.catalog.GPU_COMPUTE` (each with its source there).
GPU_PEAK_TFLOPS = {name: g.bf16_tflops for name, g in GPU_COMPUTE.items()}
PRECISIONS = ("bf16", "fp8")

_MODEL_KEYS = set(MODELS["deepseek-v3"])
_KEYS = {"model", "seq_len", "micro_batch", "microbatches", "dtype_bytes", "grad_bytes", "gpu", "mfu",
         "peak_tflops", "precision", "optimizer_s", *_MODEL_KEYS}


def model_base(raw: dict, where: str, keys: set, own_dims: str) -> tuple[dict, list]:
    """The named model's dimensions (``raw["model"]``, restricted to ``keys``) and the problems
    of ``raw``: fields outside ``keys``, an unknown model (``own_dims`` says what to give instead)."""
    problems = []
    extra = set(map(str, raw)) - keys
    if extra:
        problems.append(Problem(where, f"unknown field(s) {sorted(extra)}"))
    base = {}
    if "model" in raw:
        if not isinstance(raw["model"], str) or raw["model"] not in MODELS:
            problems.append(Problem(f"{where}.model", f"unknown model {raw['model']!r} (choose from "
                                    f"{', '.join(MODELS)}, or give {own_dims})"))
        else:
            base = {k: v for k, v in MODELS[raw["model"]].items() if k in keys}
    return base, problems


def template_dims(raw: dict, where: str) -> dict:
    """The dimensions of a training template (``raw``: the template object), the named model's
    completed by the fields given and the defaults; raises :class:`InvalidWorkload` with every
    located problem."""
    base, problems = model_base(raw, where, _KEYS, "hidden, layers, heads, ffn, vocab")
    dims = {"kv_heads": None, "experts": 0, "shared_experts": 0, "top_k": 0, "expert_ffn": 0, "dense_layers": 0,
            "seq_len": 4096, "micro_batch": 1, "microbatches": 1, "dtype_bytes": 2, "grad_bytes": 4,
            "gpu": "h100", "mfu": 0.4, "optimizer_s": 0.0, **base,
            **{k: v for k, v in raw.items() if k != "model"}}
    if dims.get("kv_heads") is None:
        dims["kv_heads"] = dims.get("heads")
    _check_numbers(dims, where, problems)
    if not isinstance(dims["mfu"], (int, float)) or isinstance(dims["mfu"], bool) or not 0 < dims["mfu"] <= 1:
        problems.append(Problem(f"{where}.mfu", "must be a fraction in (0, 1]"))
    if "peak_tflops" not in dims:
        _check_gpu(dims, where, problems)
    if problems:
        raise InvalidWorkload("invalid job template", problems)
    dims.setdefault("peak_tflops", gpu_peak_tflops(dims["gpu"], dims.get("precision", "bf16")))
    return dims


def gpu_peak_tflops(gpu: str, precision: str = "bf16") -> float | None:
    """Dense peak of ``gpu`` at ``precision`` (``"bf16"`` or ``"fp8"``), TFLOPS; None when the
    catalog has no such figure (an A100 has no FP8 tensor cores)."""
    g = GPU_COMPUTE.get(gpu)
    return None if g is None else g.fp8_tflops if precision == "fp8" else g.bf16_tflops


def _check_gpu(dims: dict, where: str, problems: list) -> None:
    """A known GPU and precision with a published peak (else give ``peak_tflops``)."""
    gpu, precision = dims.get("gpu"), dims.get("precision", "bf16")
    if not isinstance(gpu, str) or gpu not in GPU_COMPUTE:
        problems.append(Problem(f"{where}.gpu", f"unknown gpu {gpu!r} (choose from "
                                f"{', '.join(GPU_COMPUTE)}, or give peak_tflops)"))
    elif precision not in PRECISIONS:
        problems.append(Problem(f"{where}.precision", f"must be one of {', '.join(PRECISIONS)}"))
    elif gpu_peak_tflops(gpu, precision) is None:
        problems.append(Problem(f"{where}.precision", f"{gpu} has no published {precision} peak "
                                "(give peak_tflops)"))


# Integer dimensions are at most 2**31 (ten times any real model's), so the FLOP and byte
# products (~s²·h·l·b < 2**160) stay finite floats; sizes that only multiply bytes are positive
# finite numbers. A string, bool, NaN or 0 here was a TypeError / ZeroDivisionError (a 500).
_MAX_DIM = 2 ** 31
_POSITIVE_INTS = ("hidden", "layers", "heads", "kv_heads", "ffn", "vocab", "seq_len", "micro_batch",
                  "microbatches")
_COUNTS = ("experts", "shared_experts", "top_k", "expert_ffn", "dense_layers")   # 0 allowed
_POSITIVE_NUMBERS = ("dtype_bytes", "grad_bytes", "peak_tflops")


def _is_int(v, least: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and least <= v <= _MAX_DIM


def _check_numbers(dims: dict, where: str, problems: list) -> None:
    for key in _POSITIVE_INTS:
        if not _is_int(dims.get(key), 1):
            problems.append(Problem(f"{where}.{key}", f"must be an integer in 1..{_MAX_DIM:,}"))
    for key in _COUNTS:
        if not _is_int(dims.get(key), 0):
            problems.append(Problem(f"{where}.{key}", f"must be an integer in 0..{_MAX_DIM:,}"))
    for key in _POSITIVE_NUMBERS:
        if key in dims and not (is_real(dims[key]) and 0 < dims[key] <= _MAX_DIM):
            problems.append(Problem(f"{where}.{key}", "must be a finite number > 0"))
    if not (is_real(dims.get("optimizer_s")) and dims["optimizer_s"] >= 0):
        problems.append(Problem(f"{where}.optimizer_s", "must be a finite number of seconds >= 0"))


def stage_numbers(dims: dict, sizes: dict, stage: int) -> dict:
    """Per-micro-batch numbers of one pipeline stage (bytes, FLOPs, seconds).

    Returns
    -------
    dict
        ``fwd_s``, ``bwd_s`` (compute per micro-batch), ``tp_bytes`` (one direction's aggregated
        TP all-reduce), ``ep_bytes`` (one direction's aggregated all-to-all size per rank),
        ``pp_bytes`` (per rank per send), ``dp_bytes`` (dense-gradient all-reduce size per rank),
        ``edp_bytes`` (expert-gradient all-reduce size per rank), ``params`` (stage parameters).
    """
    h, s, b, d = dims["hidden"], dims["seq_len"], dims["micro_batch"], dims["dtype_bytes"]
    tp, pp, cp, ep = sizes["tp"], sizes["pp"], sizes["cp"], sizes["ep"]
    first = stage * dims["layers"] // pp
    last = (stage + 1) * dims["layers"] // pp
    layers = range(first, last)
    kv = dims["kv_heads"] * h // dims["heads"]
    attn = 2 * h * h + 2 * h * kv
    moe_layers = [i for i in layers if dims["experts"] and i >= dims["dense_layers"]]
    dense_layers = len(layers) - len(moe_layers)
    expert = 3 * h * dims["expert_ffn"]
    active = len(layers) * attn + dense_layers * 3 * h * dims["ffn"] + len(moe_layers) * (
        (dims["top_k"] + dims["shared_experts"]) * expert + h * dims["experts"])
    params_dense = len(layers) * attn + dense_layers * 3 * h * dims["ffn"] + len(moe_layers) * (
        dims["shared_experts"] * expert + h * dims["experts"])
    params_expert = len(moe_layers) * dims["experts"] * expert
    if stage == pp - 1:
        active += dims["vocab"] * h           # output layer (the embedding lookup costs no FLOPs)
        params_dense += dims["vocab"] * h
    if stage == 0:
        params_dense += dims["vocab"] * h
    fwd_flops = (2 * b * s * active + 4 * b * s * s * h * len(layers)) / (tp * cp)
    rate = dims["peak_tflops"] * 1e12 * dims["mfu"]
    return {"fwd_s": fwd_flops / rate, "bwd_s": 2 * fwd_flops / rate,
            "tp_bytes": 2 * len(layers) * b * s * h * d if tp > 1 else 0,
            "ep_bytes": 2 * len(moe_layers) * b * s * dims["top_k"] * h * d if ep > 1 else 0,
            "pp_bytes": b * s * h * d / tp / cp,
            "dp_bytes": params_dense / tp * dims["grad_bytes"] if sizes["dp"] > 1 else 0,
            "edp_bytes": params_expert / ep / tp * dims["grad_bytes"] if sizes["dp"] > ep else 0,
            "params": params_dense + params_expert}


def expand_template(raw, layout, where: str = "workload.job.template") -> list[dict]:
    """Phases (the job document's ``phases``) of one training step of the template.

    Raises
    ------
    InvalidWorkload
        Unknown fields or model, bad dimensions, no layout, layers < pp.
    """
    if not isinstance(raw, dict):
        raise InvalidWorkload("bad template", [Problem(where, "must be an object like {\"model\": \"llama3-70b\"}")])
    if layout is None:
        raise InvalidWorkload("template without layout", [Problem(where, "a template needs the job's layout")])
    dims = template_dims(raw, where)
    sizes = layout.sizes
    if dims["layers"] < sizes["pp"]:
        raise InvalidWorkload("bad template", [Problem(f"{where}.layers", f"{dims['layers']} layers < pp {sizes['pp']}")])
    _check_phase_count(dims["microbatches"], sizes["pp"], where)
    pp_groups = layout.groups("pp")
    stages = [stage_numbers(dims, sizes, p) for p in range(sizes["pp"])]
    m = dims["microbatches"]
    phases = []
    for i in range(m):
        for p in range(sizes["pp"]):
            phases += _pass("F", i, p, stages[p], dims, sizes, pp_groups, layout)
    for i in range(m):
        for p in reversed(range(sizes["pp"])):
            phases += _pass("B", i, p, stages[p], dims, sizes, pp_groups, layout)
    for p in range(sizes["pp"]):
        pats = [_collective(f"dp.s{p}", "allreduce", stages[p]["dp_bytes"], "dp", p)] if stages[p]["dp_bytes"] else []
        if stages[p]["edp_bytes"]:
            pats.append(_collective(f"edp.s{p}", "allreduce", stages[p]["edp_bytes"], "edp", p))
        phases.append({"id": f"dp.s{p}", "after": [f"B{m - 1}s{p}.comm"], "patterns": pats})
    phases.append({"id": "step", "compute_s": float(dims["optimizer_s"]),
                   "after": [f"dp.s{p}" for p in range(sizes["pp"])]})
    return phases


def _check_phase_count(microbatches: int, pp: int, where: str) -> None:
    """Refuse a template before expanding it: 3 phases per pass, 2 passes per micro-batch and
    stage, a DP phase per stage and the step (10**6 micro-batches took minutes to expand only to
    be refused for its flow count)."""
    phases = 6 * microbatches * pp + pp + 1
    if phases > MAX_PHASES:
        raise LimitExceeded(f"the template expands to {phases:,} phases (limit {MAX_PHASES:,})", [Problem(
            f"{where}.microbatches", f"{microbatches:,} micro-batches × pp {pp} make {phases:,} phases "
                                     f"(6 per micro-batch and stage); the limit is {MAX_PHASES:,}")])


def _collective(pid, kind, size, group, stage) -> dict:
    return {"id": pid, "kind": kind, "bytes": float(size), "groups": {"layout": group, "stage": stage}}


def _pass(direction, i, p, numbers, dims, sizes, pp_groups, layout) -> list[dict]:
    """Compute, TP/EP communication and the send of micro-batch ``i`` on stage ``p``."""
    pp, m = sizes["pp"], dims["microbatches"]
    name = f"{direction}{i}s{p}"
    if direction == "F":
        after = ([f"F{i}s{p - 1}.send"] if p > 0 else []) + ([f"F{i - 1}s{p}.comm"] if i > 0 else [])
        compute, peer = numbers["fwd_s"], p + 1
    else:
        after = [f"B{i}s{p + 1}.send"] if p < pp - 1 else []
        after.append(f"B{i - 1}s{p}.comm" if i > 0 else f"F{m - 1}s{p}.comm")
        compute, peer = numbers["bwd_s"], p - 1
    pats = []
    if numbers["tp_bytes"]:
        pats.append(_collective(f"{name}.tp", "allreduce", numbers["tp_bytes"], "tp", p))
    if numbers["ep_bytes"]:
        pats.append(_collective(f"{name}.ep", "alltoall", numbers["ep_bytes"], "ep", p))
    out = [{"id": name, "compute_s": compute, "after": after},
           {"id": f"{name}.comm", "after": [name], "patterns": pats}]
    if 0 <= peer < pp:
        src = [int(g[p]) for g in pp_groups]
        dst = [int(g[peer]) for g in pp_groups]
        ids = layout.node_ids
        out.append({"id": f"{name}.send", "after": [f"{name}.comm"], "patterns": [
            {"id": f"{name}.pp", "kind": "p2p", "bytes": float(numbers["pp_bytes"]),
             "src": {"ids": [ids[n] for n in src]}, "dst": {"ids": [ids[n] for n in dst]}}]})
    else:
        out.append({"id": f"{name}.send", "after": [f"{name}.comm"]})
    return out
