"""Benchmark modules for ``python -m designer.engine bench``; see ``commands/bench.py``.

Modules
-------
- :mod:`.topology`: build, validate and compile a rail-optimized cluster;
- :mod:`.solver`: the max-min solver and the timeline;
- :mod:`.simulate`: routing + solving at cluster scale;
- :mod:`.scale100k`: whole processes at 100,000 GPUs (build, ring and tree all-reduce with the result);
- :mod:`.whatif`: the what-if engine at cluster scale;
- :mod:`.shared`: 64 jobs with placements on 4,096 GPUs, solved together (``shared_64``), and ranking a new job's placements on 512 hosts (``place_512``);
- :mod:`.nvl72`: GB200 NVL72 rack-scale NVLink domains;
- :mod:`.goodput`: the goodput plan of 16,384 GPUs (counts, checkpoint simulations, Monte Carlo);
- :mod:`.diagnose`: a 16-host DGX-H100 all-reduce curve with a degraded NIC, diagnosed;
- :mod:`.steps`: training steps at scale (Llama-3-405B-class on 16,384 and 100,000 GPUs, a
  DeepSeek-V3-class MoE step with EP 64 on 16,384), each a whole process;
- :mod:`.explore`: the design-space explorer, a 36-point grid for 1,024 GPUs on one and two processes;
- :mod:`.batching`: the job loop's batched completions (``event_quantum``) against the exact loop:
  error and events on 128-256-GPU steps, random instances, and the explorer's 1,024-GPU slow point;
- :mod:`.chakra`: importing Chakra traces of 1,024 ranks (1.8 million nodes);
- :mod:`.fidelity`: published measurements against the engine's predictions
  (cases in ``fidelity_cases.json``).
"""
