"""The largest magnitudes a scenario or job may state: bytes, rates and seconds.

Why bounds and not only "finite": a float stops at 1.8e308, so two finite sizes of 1e308 bytes sum
to ``inf``; a page that formats the sum (``filesizeformat``) raised ``OverflowError`` (a 500) and
the engine's ``bytes * 8 / rate`` overflowed to an infinite time that it then blamed on a link
"of capacity 0". Each bound below is physically generous yet leaves room for every sum and
product the engine forms, so arithmetic on accepted values stays finite:

- :data:`MAX_BYTES` = 2**60 B (1 EiB) per pattern: ~10^6 times the largest collective of a real
  training step (a 1-trillion-parameter model's fp32 gradients are 4 TB). Summed over the
  20,000,000 flows a scenario may have (2**85 B) and turned into bits (× 8) it is still far
  below 1.8e308.
- :data:`MAX_RATE_GBPS` = 10**9 Gb/s (1 Pb/s) per flow demand: ~600,000 times a 1.6 Tb/s port.
- :data:`MAX_SECONDS` = 10**9 s (~32 years) per phase's compute or wait: summed over
  50,000 phases it is 5·10**13 s.

:func:`magnitude_problem` is the one check every reader uses (scenario patterns, job phases,
the SimAI importer), so the message and the location look the same wherever a value comes in.
"""
from __future__ import annotations

from designer.engine.errors import Problem

__all__ = ["MAX_BYTES", "MAX_RATE_GBPS", "MAX_SECONDS", "magnitude_problem"]

#: Largest size of one pattern (a collective's nccl-tests size, a transfer), bytes.
MAX_BYTES = 2 ** 60
#: Largest demand cap of a pattern's flows, Gb/s.
MAX_RATE_GBPS = 10 ** 9
#: Largest compute or wait time of one job phase, seconds.
MAX_SECONDS = 10 ** 9


def magnitude_problem(where: str, value, limit: float, unit: str) -> Problem | None:
    """A located problem when ``value`` is a number above ``limit``, else None.

    Non-numbers and negative values are left to the caller's own type check, which says what
    the field must be; this one only says a number is too large, with the bound and why.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or value <= limit:        # NaN is the type check's to refuse
        return None
    shown = f"{value:.3g}" if isinstance(value, float) else _short_int(value)
    return Problem(where, f"{shown} {unit} is over the limit of {_limit_text(limit, unit)} "
                          "(larger values overflow the arithmetic of sums and rates)")


def _short_int(value: int) -> str:
    # str() of an int over 4,300 digits is itself a ValueError: count digits from the bit length.
    if value < 10 ** 30:
        return str(value)
    return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"


def _limit_text(limit: float, unit: str) -> str:
    if limit == MAX_BYTES and unit == "B":
        return f"2**60 = {MAX_BYTES:,} B (1 EiB)"
    return f"{limit:.0e} {unit}".replace("e+0", "e").replace("e+", "e")
