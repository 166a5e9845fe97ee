"""Size checks every text importer runs before it looks at an upload.

Why: each line of an uploaded log or table goes through a handful of patterns. Even when every
pattern is linear, an importer's cost is only predictable when the text and its longest line are
bounded *before* any pattern runs, so an over-long input is refused in one linear pass with a
located error (``line 7``) instead of being half parsed.

The longest legitimate lines are NCCL's ``NCCL INFO`` debug lines listing a ring over every rank
(~5 characters a rank: ~20 kB for 4,096 ranks) and a 192-column ``nvidia-smi topo -m`` row
(~1.5 kB), so :data:`MAX_LINE_CHARS` leaves a wide margin over both.
"""
from __future__ import annotations

from designer.engine.errors import ImportFormatError, Problem

__all__ = ["MAX_LINE_CHARS", "check_text_size"]

#: Longest line any text importer reads, in characters (64 KiB).
MAX_LINE_CHARS = 64 * 1024


def check_text_size(text: str, what: str, *, max_chars: int,
                    max_line_chars: int = MAX_LINE_CHARS) -> None:
    """Refuse ``text`` longer than ``max_chars`` or with a line over ``max_line_chars``.

    Linear in ``len(text)``: the total is checked first, then the lines are measured with
    ``str.splitlines`` (C code, no pattern).

    Raises
    ------
    ImportFormatError
        Located at ``input`` (total size) or ``line N`` (first over-long line), saying the size
        found and the limit.
    """
    if len(text) > max_chars:
        raise ImportFormatError(f"{what} is too large", [Problem(
            "input", f"{len(text):,} characters, over the limit of {max_chars:,}")])
    if len(text) <= max_line_chars:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > max_line_chars:
            raise ImportFormatError(f"{what} has a line too long to be real tool output", [Problem(
                f"line {number}", f"{len(line):,} characters, over the limit of {max_line_chars:,} per line")])
