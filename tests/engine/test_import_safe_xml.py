"""Hostile XML is refused in bounded time and memory, with a clear ImportFormatError."""
from __future__ import annotations

import time
import tracemalloc

import pytest

from designer.engine.errors import ImportFormatError, LimitExceeded
from designer.engine.io import import_text, sniff_format
from designer.engine.io.safe_xml import MAX_XML_BYTES, MAX_XML_DEPTH, XmlLimitExceeded, parse_xml

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<system version="1"><cpu numaid="0">&lol9;</cpu></system>"""

EXTERNAL = """<?xml version="1.0"?>
<!DOCTYPE system [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<system version="1"><cpu numaid="&xxe;"/></system>"""

PARAMETER = """<!DOCTYPE system [<!ENTITY % remote SYSTEM "http://example.invalid/x.dtd"> %remote;]>
<system/>"""


@pytest.mark.parametrize("text", [BILLION_LAUGHS, EXTERNAL, PARAMETER])
def test_entities_and_dtds_refused_fast(text):
    start = time.perf_counter()
    with pytest.raises(ImportFormatError) as info:
        import_text(text, format="nccl-xml")
    assert time.perf_counter() - start < 1.0
    assert "not allowed" in info.value.message or "refused" in info.value.message
    assert info.value.problems[0].path.startswith("line ")


def test_undeclared_entity_is_a_parse_error():
    with pytest.raises(ImportFormatError) as info:
        parse_xml('<system version="1">&boom;</system>')
    assert "not well-formed" in info.value.message


def test_bare_external_doctype_of_hwloc_is_allowed_and_not_fetched():
    root = parse_xml('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM '
                     '"http://example.invalid/hwloc2.dtd">\n<topology version="2.0"/>')
    assert root.tag == "topology"


def test_100_mb_input_refused_before_parsing_in_bounded_time_and_memory():
    big = "<system>" + "<cpu numaid='0'/>" * (100 * 1024 * 1024 // 17) + "</system>"
    assert len(big) > MAX_XML_BYTES
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(LimitExceeded) as info:      # also an ImportFormatError
        import_text(big, format="nccl-xml")
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert isinstance(info.value, ImportFormatError) and info.value.code == "limit_exceeded"
    assert elapsed < 1.0 and peak < 1024 * 1024      # no copy of the input, no tree
    with pytest.raises(XmlLimitExceeded):
        import_text(big.encode(), format="nccl-xml")


def test_deep_nesting_refused_before_parsing():
    deep = "<system>" + "<pci>" * (MAX_XML_DEPTH + 5) + "</pci>" * (MAX_XML_DEPTH + 5) + "</system>"
    with pytest.raises(XmlLimitExceeded) as info:
        import_text(deep, format="nccl-xml")
    assert "deeper" in info.value.message and info.value.problems[0].path.startswith("line 1")
    deep_100k = "<system>" + "<pci>" * 100_000 + "</system>"    # would blow a recursive parser
    start = time.perf_counter()
    with pytest.raises(XmlLimitExceeded):
        import_text(deep_100k)
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize("text", ["\x00\x01garbage", "<system", "<system></cpu>", b"\xff\xfe<system/>"])
def test_garbage_is_an_import_error(text):
    with pytest.raises(ImportFormatError):
        import_text(text, format="nccl-xml")


def test_sniff():
    assert sniff_format("<!-- a comment -->\n<system version='1'/>") == "nccl-xml"
    assert sniff_format('<?xml version="1.0"?><topology version="2.0"/>') == "hwloc"
    assert sniff_format("\x1b[4m\tGPU0\tCPU Affinity\x1b[0m\nGPU0\t X \t0-3\n") == "nvidia-smi"
    with pytest.raises(ImportFormatError):
        sniff_format("<html/>")
