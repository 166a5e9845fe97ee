"""The topology document's text (designer/engine/document/writer.py) and the hand-over normalize.

``dump`` used to encode each item with the stdlib (``json.dumps``); it now uses orjson. What must
not change: the document read back (values, key order), one item per line, NaN refused, and
what orjson cannot encode (ints beyond 64 bits) still written. The small cluster:
4 DGX-H100, rail-optimized (``[h0/gpu0]--pcie--[h0/nic0]==400G==[leaf0]==[spine0]``).
"""
from __future__ import annotations

import io
import json

import pytest

from designer.engine.document import dump, normalize, normalize_handed_over, write_document
from designer.engine.model.fabrics import build_cluster


def _stdlib_dump(doc: dict) -> str:
    """The previous writer, verbatim: the reference the new text must read back equal to."""
    lists = ("groups", "nodes", "links")
    head = [f"{json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in doc.items() if k not in lists]
    parts = []
    for key in lists:
        if key in doc:
            items = ",\n  ".join(json.dumps(x, allow_nan=False) for x in doc[key])
            parts.append(f'"{key}": [\n  {items}\n ]' if items else f'"{key}": []')
    return "{" + ",\n ".join(head + parts) + "}\n"


def _ordered(value):
    """The value with every dict as a list of pairs: equality then checks key order too."""
    if isinstance(value, dict):
        return [(k, _ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


@pytest.fixture(scope="module")
def doc():
    return normalize(build_cluster("dgx-h100", 4, fabric="rail-optimized", storage=1))


def test_text_reads_back_as_the_stdlib_text_did(doc):
    text = dump(doc)
    assert _ordered(json.loads(text)) == _ordered(json.loads(_stdlib_dump(doc))) == _ordered(doc)
    # one item per line: the head lines, then one line per group, node and link
    assert len(text.splitlines()) == len(_stdlib_dump(doc).splitlines())
    out = io.BytesIO()
    assert write_document(doc, out) == len(out.getvalue())
    assert out.getvalue().decode("utf-8") == text


@pytest.mark.parametrize("value", [2 ** 70, -(2 ** 65), "é ✓ \u2028 \"q\" \\", None, 1e16, 1e-05, 0.1 + 0.2, 5e-324])
def test_values_orjson_writes_differently_read_back_equal(value):
    doc = {"format": "fabricscope.topology/1", "groups": [],
           "nodes": [{"id": "n", "attrs": {"v": value, "k": [value]}}],
           "links": []}
    assert _ordered(json.loads(dump(doc))) == _ordered(json.loads(_stdlib_dump(doc))) == _ordered(doc)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_not_json_numbers_are_refused(bad):
    with pytest.raises(ValueError):
        dump({"nodes": [{"id": "n", "attrs": {"x": bad}}]})


def test_empty_lists_and_no_lists():
    for doc in ({}, {"format": "x"}, {"nodes": [], "links": []}, {"format": "x", "groups": [{"id": "g"}]}):
        assert json.loads(dump(doc)) == doc == json.loads(_stdlib_dump(doc))


def test_normalize_handed_over_equals_normalize():
    built = build_cluster("dgx-h100", 4, fabric="rail-optimized", storage=1)
    expected = normalize(json.loads(json.dumps(built)))
    assert _ordered(normalize_handed_over(built)) == _ordered(expected)
