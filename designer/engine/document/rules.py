"""The rules every value of a ``fabricscope.topology/1`` document obeys, shared by the item walk
(:mod:`.validator`) and the column-wise acceptance (:mod:`.accept`): the format name, the size
limits, the capacity bases, the per-direction capacity keys, the smallest capacity and what
makes an id unprintable.
"""
from __future__ import annotations

import re
import sys

__all__ = ["FORMAT", "LIMITS", "BASES", "DIRECTION_KEYS", "SMALLEST_NORMAL", "UNPRINTABLE", "unprintable",
           "LARGEST_RADIX", "radix_ok"]

FORMAT = "fabricscope.topology/1"

# Size limits of one document; a 16,384-GPU rail-optimized cluster is ~110k nodes / ~180k links.
LIMITS = {
    "max_bytes": 512 * 1024 * 1024,   # JSON text
    "max_nodes": 2_000_000,
    "max_links": 4_000_000,
    "max_groups": 500_000,
    "max_id_length": 256,             # characters of one id
    "max_problems": 1000,             # validation stops listing after this many
    "max_depth": 64,                  # nesting of one value (attrs, extra fields) below its item
}

BASES = ("effective", "raw", "explicit")
# Optional per-direction capacities (Gb/s) overriding ``capacity_gbps`` for a→b / b→a, e.g. a
# measured host→device rate that differs from device→host (catalog.PCIE_MEASURED_GBYTES).
DIRECTION_KEYS = ("capacity_ab_gbps", "capacity_ba_gbps")

SMALLEST_NORMAL = sys.float_info.min  # 2.2e-308; below it (but above 0) floats are subnormal
# The largest capacity (Gb/s) or latency (ns) a document may state: 1e15 Gb/s is ~10^12 times a
# 1.6 Tb/s port, 1e15 ns is 11.6 days. Bounded so sums over millions of links and bytes ÷ rate
# products stay finite (a 1e308 capacity summed to "inf" on the BOM page).
LARGEST_QUANTITY = 1e15
# A switch's port count (``attrs.radix``), which the BOM and the cabling plan count ports against:
# a whole number from 1 (the largest catalog switch has 512 logical ports; the bound only keeps
# the counts finite).
LARGEST_RADIX = 1 << 20


def radix_ok(value) -> bool:
    """Whether ``value`` may be an ``attrs.radix``: absent (None) or a whole number of ports."""
    return value is None or (value.__class__ is int and 0 < value <= LARGEST_RADIX)
# C0 and C1 controls, DEL, line/paragraph separators, bidi embeddings/overrides/isolates.
UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def unprintable(text: str) -> str | None:
    """Why ``text`` is not fit to be an id or a name shown to users, or None when it is.

    Examples
    --------
    >>> unprintable("h0/gpu0") is None
    True
    >>> unprintable("gpu\u202e0")
    'contains U+202E (a bidi override, which shows text reversed)'
    """
    match = UNPRINTABLE.search(text)
    if match is None:
        return None
    code = ord(match.group())
    kind = ("a bidi override, which shows text reversed" if code >= 0x202a
            else "a line separator" if code >= 0x2028 else "a control character")
    return f"contains U+{code:04X} ({kind})"
