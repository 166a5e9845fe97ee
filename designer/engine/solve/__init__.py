"""Solving: weighted max-min fair rates and completion timelines over resource arrays.

The lowest computing layer: it knows flows, paths (CSR rows of resource indices), capacities and
weights, nothing of GPUs or switches. Everything above hands it arrays and reads rates back.

Modules
-------
- :mod:`.solver`: the one entry point the layers above call (rates, or a timeline of completions);
- :mod:`.maxmin`: weighted progressive filling (water-filling), its inputs and invariants;
- :mod:`.aggregate`: aggregation of identical flows (solved as one flow, expanded back);
- :mod:`.local`: re-solve only the paths a change reaches, from a known allocation, proven by the
  max-min certificate (or give up: solve the whole problem);
- :mod:`.timeline`: flows with sizes, finishing one after another, re-solved at each completion;
- :mod:`.id_index`: id → index tables (compiled lookups when the AOT kernels are loaded);
- :mod:`.splitmix`: the seeded 64-bit mixer shared by flow hashing and id tables;
- :mod:`.kernels`: the numba-compiled kernels, their loader (AOT module or JIT) and their build.
"""
