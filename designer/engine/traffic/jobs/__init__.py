"""Training jobs as workloads: parallelism layouts, a step as a DAG of phases,
model templates and imported (SimAI/AICB) workloads.

Modules (imported directly; this package imports none of them). The ``groups`` of a pattern,
which a layout names, are :mod:`designer.engine.traffic.groups`; a sweep of a job's step time
is :mod:`designer.engine.analysis.job_sweep`.

- :mod:`.layout` — the parallelism layout (TP/CP/EP/DP/PP, Megatron rank order) → named groups;
- :mod:`.spec` — validation of a scenario's ``workload: {"job": ...}``;
- :mod:`.dag` — the phase-by-phase event loop (max-min re-solved at every start and finish) and
  ``summary.job``;
- :mod:`.rates` — the loop's max-min rates kept per connected component of the sending patterns,
  re-solved only where a pattern started or paths finished;
- :mod:`.models` — dense and MoE transformer templates (message sizes from model dimensions);
- :mod:`.inference` — disaggregated prefill/decode: KV-cache transfers per request at a rate;
- :mod:`.report` — the step's collectives as timed inside the step, and the job's headline;
- :mod:`.checks` — the phase limit and number rules shared by spec, models and inference;
- :mod:`.placement` — a shared-cluster job's placement (explicit or a policy) and its
  fragmentation score;
- :mod:`.shared` — validation of a scenario's ``jobs`` (many jobs with placements) and the merged
  step that runs them together.
- :mod:`.ranks` — the design's GPUs in rank order (ranks of imported Chakra traces).
"""
