"""Benchmark modules for ``python -m designer.engine bench``; see ``commands/bench.py``.

Modules
-------
- :mod:`.topology`: build, validate and compile a rail-optimized cluster;
- :mod:`.solver`: the max-min solver and the timeline;
- :mod:`.simulate`: routing + solving at cluster scale;
- :mod:`.whatif`: the what-if engine at cluster scale;
- :mod:`.nvl72`: GB200 NVL72 rack-scale NVLink domains;
- :mod:`.goodput`: the goodput plan of 16,384 GPUs (counts, checkpoint simulations, Monte Carlo);
- :mod:`.fidelity`: published measurements against the engine's predictions
  (cases in ``fidelity_cases.json``).
"""
