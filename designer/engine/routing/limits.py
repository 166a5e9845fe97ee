"""Size limits of routing: how many equal-cost paths are enumerated, how many entries produced."""
from __future__ import annotations

__all__ = ["MAX_EQUAL_COST_PATHS", "MAX_PATH_ENTRIES", "BYTES_PER_ENTRY", "MEMORY_BUDGET_BYTES"]

# Equal-cost paths enumerated per pair of switches (hash and split choose among these). A
# 2-tier fabric has one per spine; a 3-tier fat-tree(k) has (k/2)^2, so k=16 fits entirely.
MAX_EQUAL_COST_PATHS = 64
# Peak RSS of a whole `simulate` per (path, resource) entry: the 4,096-GPU all-to-all (16,773,120
# flows, 133,668,864 entries) peaks at 7.6–8.1 GB, 61 B per entry (measured, docs/PERFORMANCE.md:
# routed in 1M-flow blocks with int32 segment ids; the entry itself is 8 B in Routes.flow_res and
# again in the solver's CSC, the rest is per-path and per-flow arrays of routing, solver and
# result).
BYTES_PER_ENTRY = 61
# What one simulation may take: 12 GB of a 23 GB machine, under the 16 GB target (docs/PERFORMANCE.md).
MEMORY_BUDGET_BYTES = 12 * 10**9
# Total (path, resource) entries route() may produce: the budget at the bytes per entry above
# (196M; the 4,096-GPU all-to-all needs 134M).
MAX_PATH_ENTRIES = MEMORY_BUDGET_BYTES // BYTES_PER_ENTRY
