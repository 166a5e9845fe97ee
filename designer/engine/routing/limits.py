"""Size limits of routing: how many equal-cost paths are enumerated, how many entries produced."""
from __future__ import annotations

__all__ = ["MAX_EQUAL_COST_PATHS", "MAX_PATH_ENTRIES"]

# Equal-cost paths enumerated per pair of switches (hash and split choose among these). A
# 2-tier fabric has one per spine; a 3-tier fat-tree(k) has (k/2)^2, so k=16 fits entirely.
MAX_EQUAL_COST_PATHS = 64
# Total (path, resource) entries route() may produce: ~8 bytes each in several arrays, so 60M
# entries is about 2 GB across routing and solver.
MAX_PATH_ENTRIES = 60_000_000
