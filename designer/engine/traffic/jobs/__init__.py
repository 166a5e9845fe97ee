"""Training jobs as workloads: communicator groups, parallelism layouts, a step as a DAG of phases,
model templates and imported (SimAI/AICB) workloads.

Modules (imported directly; this package imports nothing so that :mod:`designer.engine.traffic.workloads`
can use :mod:`.groups` without a cycle):

- :mod:`.groups` — ``groups`` of a collective pattern (per host, per rail, by attribute, explicit
  lists, or from a layout);
- :mod:`.layout` — the parallelism layout (TP/CP/EP/DP/PP, Megatron rank order) → named groups;
- :mod:`.spec` — validation of a scenario's ``workload: {"job": ...}``;
- :mod:`.dag` — the phase-by-phase event loop (max-min re-solved at every start and finish) and
  ``summary.job``;
- :mod:`.models` — dense and MoE transformer templates (message sizes from model dimensions);
- :mod:`.inference` — disaggregated prefill/decode: KV-cache transfers per request at a rate;
- :mod:`.sweep` — single failures ranked by step-time impact (a view of ``whatif.sweep``).
"""
