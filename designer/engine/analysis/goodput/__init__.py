"""Goodput and reliability planning: failure rates × the design → interruptions, blast radius,
checkpoint interval, spares (docs/ENGINE.md, "Goodput").

Modules
-------
- :mod:`.facts`: failure classes and their default rates, fitted to the Llama 3 paper's Table 5;
  repair times and checkpoint sizing constants;
- :mod:`.counts`: units of each class in the design and under the job;
- :mod:`.request`: the ``fabricscope.goodput-plan/1`` input, checked with located problems;
- :mod:`.blast`: each class's blast radius measured by the N-1 sweep on the job's collective,
  at a reduced scale;
- :mod:`.checkpoint`: checkpoint size, write and read times simulated on the storage fabric;
- :mod:`.interval`: Young's and Daly's intervals, the ETTR, Poisson spares;
- :mod:`.montecarlo`: seeded, vectorized runs under failures;
- :mod:`.plan`: :func:`plan_goodput`, the entry point.
"""
from designer.engine.analysis.goodput.plan import GOODPUT_FORMAT, plan_goodput

__all__ = ["GOODPUT_FORMAT", "plan_goodput"]
