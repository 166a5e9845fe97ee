"""Uploaded text is parsed in linear time, and an over-long line is refused before any pattern runs.

Each hostile input is scaled 1x / 10x / 100x and the CPU time (``time.process_time``, the best
of three) must grow about linearly: ``t(100x) < 30 · t(10x) + 50 ms``. A quadratic parser grows
100 times per 10x; the ones fixed here took, before:

- nccl-tests log: a 20 kB line of ``a:1:1`` without spaces, 6.9 s (the ``\\S+:\\d+:\\d+`` debug
  prefix pattern); 40 kB of ``NCCL INFO `` 2 s (``NCCL INFO .*nranks``);
- rocm-smi: a 1,000-character line of ``=`` 2.4 s (cubic: ``^=+\\s*(.*?)\\s*=+$``);
- NCCL/hwloc XML: 32 kB of ``<!--`` 2.6 s (the tag scan's ``<!--.*?-->``); 100 kB of digits in a
  ``link_speed`` attribute, minutes.
"""
from __future__ import annotations

import math
import pathlib
import time

import pytest

from designer.engine.errors import ImportFormatError
from designer.engine.io import import_text
from designer.engine.io.bounded_text import MAX_LINE_CHARS
from designer.engine.io.nccl_tests_log import parse_log
from designer.engine.io.rocm_smi import parse_sections
from designer.engine.io.safe_xml import check_limits
from designer.engine.io.simai import parse_simai

DATA = pathlib.Path(__file__).parents[1] / "engine" / "data"


def cpu_seconds(parse, text: str, repeat: int = 3) -> float:
    """Best-of-``repeat`` CPU time of ``parse(text)``; a refusal (ImportFormatError) is an answer."""
    best = math.inf
    for _ in range(repeat):
        start = time.process_time()
        try:
            parse(text)
        except ImportFormatError:
            pass
        best = min(best, time.process_time() - start)
    return best


def assert_linear(parse, make, base: int) -> None:
    t1, t10, t100 = (cpu_seconds(parse, make(base * k)) for k in (1, 10, 100))
    assert t100 < 30 * t10 + 0.05, f"not linear: 1x {t1:.4f} s, 10x {t10:.4f} s, 100x {t100:.4f} s"
    assert t100 < 1.0, f"100x took {t100:.2f} s"


# Every input stays under MAX_LINE_CHARS at 100x, so the parser, not the size check, answers.
NCCL_LOG_LINES = {
    "host:pid:tid without spaces": lambda n: "a:1:1" * n,
    "colons": lambda n: "1:" * n,
    "host:pid:tid with spaces, no tail": lambda n: "a:1:1 " * n,
    "NCCL INFO without nranks": lambda n: "NCCL INFO " * n,
    "debug tails without a prefix": lambda n: "[0] NCCL INFO " * n,
    "digits": lambda n: "1" * n,
    "bracketed digits": lambda n: "[" + "1" * n,
    "spaces then junk": lambda n: "a:1:1" + " " * n + "x",
}


@pytest.mark.parametrize("name", NCCL_LOG_LINES)
def test_nccl_tests_log_lines_parse_in_linear_time(name):
    make = NCCL_LOG_LINES[name]
    assert_linear(parse_log, lambda n: make(n) + "\n", 120 // len(make(1)) or 1)


def test_nccl_tests_log_many_hostile_lines_parse_in_linear_time():
    line = "h:1:1 [0] NCCL INFO x " + "a:1:1" * 20 + "\n"
    assert_linear(parse_log, lambda n: line * n, 30)


def test_a_120_kb_line_is_refused_at_once_with_its_line_number():
    log = (DATA / "nccl_tests" / "all_reduce_2x_hgx_h100_nccl_tests_319.txt").read_text()
    text = log + "a:1:1" * 24_000 + "\n"              # 120,000 characters on the last line
    start = time.process_time()
    with pytest.raises(ImportFormatError) as caught:
        parse_log(text)
    assert time.process_time() - start < 0.5
    line = len(log.splitlines()) + 1
    assert [str(p) for p in caught.value.problems] == [
        f"line {line}: 120,000 characters, over the limit of {MAX_LINE_CHARS:,} per line"]


def test_a_line_just_under_the_limit_is_parsed_not_refused():
    log = (DATA / "nccl_tests" / "all_reduce_2x_hgx_h100_nccl_tests_319.txt").read_text()
    noise = ("a:1:1" * (MAX_LINE_CHARS // 5))[:MAX_LINE_CHARS]
    start = time.process_time()
    parsed = parse_log(noise + "\n" + log)
    assert time.process_time() - start < 1.0
    assert vars(parsed) == vars(parse_log(log)) | {"rows": [dict(r, line=r["line"] + 1) for r in parse_log(log).rows]}


ROCM_LINES = {
    "equals signs": lambda n: "=" * n + "x",
    "title with blank run": lambda n: "=" + " " * n + "x",
    "amd-smi title with blank run": lambda n: "A" + " " * n + "x",
    "card value with blank run": lambda n: "GPU[0] : Card Model: x" + " " * n + "y",
}


@pytest.mark.parametrize("name", ROCM_LINES)
def test_rocm_smi_lines_parse_in_linear_time(name):
    table = (DATA / "import" / "mi300x-rocm-smi-showtopo.txt").read_text()
    assert_linear(parse_sections, lambda n: ROCM_LINES[name](n) + "\n" + table, 200)


def test_rocm_smi_over_long_line_is_refused_and_located():
    with pytest.raises(ImportFormatError) as caught:
        parse_sections("header\n" + "=" * (MAX_LINE_CHARS + 1) + "\n")
    assert str(caught.value.problems[0]).startswith("line 2: 65,537 characters, over the limit")


XML_TEXTS = {
    "unclosed comments": lambda n: "<!--" * n,
    "unclosed tags": lambda n: "<a" * n,
    "doctypes without end": lambda n: "<!DOCTYPE" * n,
    "unclosed processing instructions": lambda n: "<?" * n,
    "unclosed close tags": lambda n: "</" * n,
}


@pytest.mark.parametrize("name", XML_TEXTS)
def test_xml_tag_scan_is_linear(name):
    assert_linear(check_limits, XML_TEXTS[name], 1000)


def test_xml_doctype_with_internal_subset_is_still_found_after_many_doctypes():
    with pytest.raises(ImportFormatError, match="internal DTD subset"):
        check_limits("<!DOCTYPE a>" * 1000 + "<!doctype x [ <!-- --> ]><x/>")


def test_a_long_link_speed_in_nccl_xml_imports_in_linear_time():
    xml = (DATA / "import" / "dgx-h200-nccl-topo.xml").read_text()

    def with_speed(n):
        return xml.replace('link_speed="32.0 GT/s PCIe"', f'link_speed="{"1" * n}"', 1)

    assert_linear(lambda text: import_text(text, format="nccl-xml"), with_speed, 1000)
    result = import_text(with_speed(10))
    assert any("link_speed '1111111111' unknown" in w for w in result.warnings), result.warnings


def test_simai_over_long_line_is_refused_and_located():
    text = (DATA / "simai" / "microAllReduce.txt").read_text().rstrip("\n") + "\n"
    with pytest.raises(ImportFormatError) as caught:
        parse_simai(text + "x" * (MAX_LINE_CHARS + 5) + "\n")
    line = len(text.splitlines()) + 1
    assert str(caught.value.problems[0]) == f"line {line}: 65,541 characters, over the limit of 65,536 per line"
