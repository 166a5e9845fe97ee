"""Parse the stdout of a real nccl-tests run (``all_reduce_perf``, ``all_gather_perf``, …).

The output is a plain-text table (nccl-tests ``src/common.cu``, ``Reporter``)::

    # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 ...
    #  Rank  0 Group  0 Pid  1234 on node-1 device  0 [0x18] NVIDIA H100 80GB HBM3
    #                                                              out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
               8             2     float     sum      -1    37.12    0.00    0.00      0    36.58    0.00    0.00      0
    ...
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 123.456

Variants it accepts: layouts without ``redop``/``root`` (older all_gather/alltoall builds, 11
columns), ``error`` instead of ``#wrong``, ``N/A`` values (``-c 0`` prints it for ``#wrong``),
mpirun output prefixes (``[0] ``, ``[1,0]<stdout>:``), and ``NCCL INFO``/``WARN`` lines
interleaved — even in the middle of a row, where NCCL's debug output splits it over two lines.
Other lines (launcher chatter) are skipped; a line that starts like a row but has the wrong number
of columns, or a non-number where a number belongs, is an error located by line number.

Every pattern here runs in time linear in the line: the debug prefix and ``nranks`` used to be
found with unanchored patterns (``\\S+:\\d+:\\d+…``, ``NCCL INFO .*nranks``) whose backtracking
made one 40 kB line cost 18 s of CPU. They are now found from a fixed anchor (``[dev] NCCL
INFO``, ``nranks``) and checked by a short backwards scan. A log over :data:`MAX_LOG_BYTES` or
with a line over :data:`designer.engine.io.bounded_text.MAX_LINE_CHARS` is refused first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.bounded_text import check_text_size

__all__ = ["MAX_LOG_BYTES", "ParsedLog", "parse_log"]

#: Logs larger than this are refused (a full 8 B–16 GiB sweep with NCCL_DEBUG=INFO is ~200 kB).
MAX_LOG_BYTES = 4 * 1024 * 1024
# Binaries of nccl-tests; the op is the name without "_perf" (any suffix like _mpi is ignored).
_BINARY = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoall|sendrecv|broadcast|reduce|gather|"
                     r"scatter|hypercube)_perf")
# "host:pid:tid [dev] NCCL INFO ..." — possibly glued to the end of a half-printed row. Only the
# "[dev] NCCL INFO" tail is a pattern (it can start only at a "["); the "host:pid:tid " before it
# is checked by _debug_start's backwards scan, which is what keeps this linear.
_DEBUG_TAIL = re.compile(r"\[\d+\]\s+NCCL\s+(?:INFO|WARN|ERROR|TRACE)\b")
# Launcher tags: mpirun --tag-output "[1,0]<stdout>:", "[0]" (glued to every write, even mid-row).
_TAG = re.compile(r"\[\d+(?:,\d+)?\](?:<stdout>|<stderr>)?:?")
_NRANKS = re.compile(r"\bnranks (\d+)\b")
_INT = re.compile(r"^-?\d+$")
_NUMBER = re.compile(r"^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_FIGURES = ("time_us", "algbw_gbs", "busbw_gbs", "wrong")
# Header words → fields ("time" may read "cputime" with -C 1; "#wrong" was "error" before 2.13).
_HEADER_WORDS = {"size": "size", "count": "count", "type": "type", "redop": "redop", "root": "root",
                 "algbw": "algbw_gbs", "busbw": "busbw_gbs", "#wrong": "wrong", "wrong": "wrong",
                 "error": "wrong"}
_LABELS = {"time_us": "time", "algbw_gbs": "algbw", "busbw_gbs": "busbw", "wrong": "#wrong"}
# Layouts assumed when a log has rows but no header line.
_LAYOUTS = {13: ("size", "count", "type", "redop", "root") + _FIGURES * 2,
            11: ("size", "count", "type") + _FIGURES * 2}


@dataclass
class ParsedLog:
    """A parsed nccl-tests run.

    Attributes
    ----------
    op : str or None
        ``all_reduce``, ``all_gather``… from the binary name in the log (or the one given).
    rows : list of dict
        Per size: ``size_bytes``, ``count``, ``type``, ``redop``, ``root`` (None when the layout has
        no such column), ``line`` (1-based), and ``out_of_place`` / ``in_place`` = ``{time_us,
        algbw_gbs, busbw_gbs, wrong}`` (None for ``N/A``; ``in_place`` None when not printed).
    ranks : int or None
        ``#  Rank N ...`` lines counted (the ``n`` of the busbw factors), else the ``nranks N``
        of an ``NCCL INFO`` line.
    avg_busbw_gbs : float or None
        The ``# Avg bus bandwidth`` trailer.
    columns : int or None
        Columns per row of the table (13 in current nccl-tests; from the header line, else the
        first row).
    """

    op: str | None
    rows: list[dict] = field(default_factory=list)
    ranks: int | None = None
    avg_busbw_gbs: float | None = None
    columns: int | None = None


def _clean(line: str) -> str:
    """The line without NCCL debug output (from its ``host:pid:tid`` to the end) and launcher tags."""
    line = line.rstrip("\r\n")
    start = _debug_start(line)
    if start is not None:
        line = line[:start]
    return _TAG.sub(" ", line).rstrip()


def _debug_start(line: str) -> int | None:
    """Where ``host:pid:tid [dev] NCCL INFO`` begins in ``line`` (the first one), else None.

    The same match as ``\\S+:\\d+:\\d+\\s+\\[\\d+\\]\\s+NCCL\\s+(INFO|…)\\b`` searched from the left,
    in linear time: each tail is found once, and only the first valid one scans back over its
    whole non-space run.
    """
    for tail in _DEBUG_TAIL.finditer(line):
        start = _prefix_start(line, tail.start())
        if start is not None:
            return start
    return None


def _prefix_start(line: str, end: int) -> int | None:
    """Start of ``\\S+:\\d+:\\d+\\s+`` ending exactly at ``end``, scanning backwards, else None."""
    i = _skip_back(line, end, str.isspace)
    if i == end:
        return None
    for _ in range(2):                      # ":tid", then ":pid"
        digits = _skip_back(line, i, str.isdecimal)
        if digits == i or digits == 0 or line[digits - 1] != ":":
            return None
        i = digits - 1
    start = _skip_back(line, i, lambda ch: not ch.isspace())
    return start if start < i else None


def _skip_back(line: str, i: int, keep) -> int:
    """The smallest ``j <= i`` with ``keep(c)`` true for every character of ``line[j:i]``."""
    while i > 0 and keep(line[i - 1]):
        i -= 1
    return i


def _info_nranks(line: str) -> int | None:
    """``nranks N`` after the first ``NCCL INFO `` of the line (the last one, as ``.*`` took it)."""
    info = line.find("NCCL INFO ")
    if info < 0:
        return None
    last = None
    for last in _NRANKS.finditer(line, info + len("NCCL INFO ")):
        pass
    return int(last.group(1)) if last else None


def _header_names(text: str) -> tuple[str, ...] | None:
    """Field per column announced by a ``# size count type ...`` header line (None if not one)."""
    words = text.lstrip("#").split()
    if len(words) < 5 or words[:2] != ["size", "count"] or "algbw" not in words:
        return None
    return tuple("time_us" if "time" in w else _HEADER_WORDS.get(w, w) for w in words)


class _Reader:
    """Walks the lines, joining a row that NCCL debug output split across two lines."""

    def __init__(self, op: str | None):
        self.log = ParsedLog(op)
        self.problems: list[Problem] = []
        self.pending: tuple[int, list[str]] | None = None   # (line number, tokens so far)
        self.names: tuple[str, ...] | None = None
        self.info_ranks: int | None = None

    def feed(self, number: int, raw: str) -> None:
        self._sniff(raw)
        stripped = _clean(raw).strip()
        if not stripped:
            return
        if stripped.startswith("#"):
            self._comment(number, stripped)
            return
        number, tokens = self._join(number, stripped.split())
        if not _INT.match(tokens[0]):
            return                                     # launcher chatter, hostnames, warnings
        if self.names is None and len(tokens) in _LAYOUTS:
            self.names = _LAYOUTS[len(tokens)]         # no header line: the first row says
        if len(tokens) < self.expected:
            self.pending = (number, tokens)            # maybe continued after a debug line
            return
        self._row(number, tokens)

    def _sniff(self, raw: str) -> None:
        """The op ("# Collective test starting: all_reduce_perf", or the command line echoed by
        the launcher) and NCCL's ``nranks N``, wherever they appear."""
        if self.log.op is None:
            match = _BINARY.search(raw)
            self.log.op = match.group(1) if match else None
        if self.info_ranks is None:
            self.info_ranks = _info_nranks(raw)

    def _join(self, number: int, tokens: list[str]) -> tuple[int, list[str]]:
        """The pending half row continued by ``tokens`` (and where it started), unless ``tokens``
        is a complete row of its own, which leaves the pending one unfinished."""
        if self.pending is None:
            return number, tokens
        (start, before), self.pending = self.pending, None
        if _INT.match(tokens[0]) and len(tokens) == self.expected:
            self._unfinished(start, before)
            return number, tokens
        return start, before + tokens

    @property
    def expected(self) -> int:
        return len(self.names) if self.names else 13

    def finish(self) -> None:
        if self.pending is not None:
            self._unfinished(*self.pending)

    def _unfinished(self, number: int, tokens: list[str]) -> None:
        self.problems.append(Problem(f"line {number}", f"expected {self.expected} columns, got {len(tokens)}"))

    def _comment(self, number: int, text: str) -> None:
        names = _header_names(text)
        if names is not None:
            if "time_us" not in names or "busbw_gbs" not in names:
                self.problems.append(Problem(f"line {number}", "column header without time and busbw"))
            else:
                self.names = names
        elif re.match(r"#\s*Rank\s+\d+\s", text):
            self.log.ranks = (self.log.ranks or 0) + 1
        elif text.lstrip("# ").startswith("Avg bus bandwidth"):
            value = text.rsplit(":", 1)[-1].strip()
            self.log.avg_busbw_gbs = float(value) if _NUMBER.match(value) else None

    def _row(self, number: int, tokens: list[str]) -> None:
        if len(tokens) != self.expected:
            self._unfinished(number, tokens)
            return
        values, bad = {}, []
        names = self.names or _LAYOUTS[13]
        for name, token in zip(names, tokens):
            values.setdefault(name, []).append(_value(name, token, bad))
        if bad:
            name, token = bad[0]
            label = _LABELS.get(name, name)
            self.problems.append(Problem(f"line {number}", f"column {label}: expected a number, got {token!r}"))
            return
        self.log.rows.append(_record(number, values))


def _value(name: str, token: str, bad: list):
    if name in ("type", "redop"):
        return token
    if token.upper() == "N/A":
        return None
    pattern = _INT if name in ("size", "count", "root") else _NUMBER
    if not pattern.match(token):
        bad.append((name, token))
        return None
    if pattern is _INT or (name == "wrong" and _INT.match(token)):
        return int(token)
    return float(token)


def _record(number: int, values: dict) -> dict:
    def side(k):
        if len(values["time_us"]) <= k:
            return None
        return {f: values[f][k] for f in _FIGURES}

    return {"size_bytes": values["size"][0], "count": values["count"][0], "type": values["type"][0],
            "redop": values.get("redop", [None])[0], "root": values.get("root", [None])[0], "line": number,
            "out_of_place": side(0), "in_place": side(1)}


def parse_log(text: str, op: str | None = None) -> ParsedLog:
    """Parse nccl-tests stdout.

    Parameters
    ----------
    text : str
        The whole stdout (``NCCL_DEBUG=INFO`` output and launcher prefixes may be mixed in).
    op : str, optional
        The op when the log does not name its binary (``all_reduce``…); the binary named in the
        log wins.

    Returns
    -------
    ParsedLog

    Raises
    ------
    ImportFormatError
        Every located problem (``line 37: expected 13 columns, got 4``), or no result row at all.
    """
    if len(text.encode("utf-8", "ignore")) > MAX_LOG_BYTES:
        raise ImportFormatError("log too large", [Problem("log", f"larger than {MAX_LOG_BYTES // 1024} KiB")])
    check_text_size(text, "nccl-tests log", max_chars=MAX_LOG_BYTES)
    reader = _Reader(None)
    for number, line in enumerate(text.splitlines(), start=1):
        reader.feed(number, line)
    reader.finish()
    reader.log.columns = reader.expected
    reader.log.ranks = reader.log.ranks or reader.info_ranks
    if reader.problems:
        raise ImportFormatError("not a valid nccl-tests output", reader.problems)
    if not reader.log.rows:
        raise ImportFormatError("no nccl-tests result rows", [Problem(
            "log", "no result rows found (expected lines like '8  2  float  sum  -1  37.1  0.00  0.00  0 ...' "
                   "under a '# size count type ...' header)")])
    reader.log.op = reader.log.op or op
    return reader.log
