"""A switch's ``attrs.radix`` is what the BOM and the cabling plan count ports against: the
validator refuses anything but a whole number of ports (located), on both of its paths — the
item walk and the columnar acceptance of a big document."""
from __future__ import annotations

import pytest

from designer.engine.document import load, validate
from designer.engine.document.rules import LARGEST_RADIX
from designer.engine.model.fabrics import build_cluster


def _with_radix(value) -> tuple[dict, int]:
    doc = load(build_cluster("dgx-h100", 1))
    i = next(k for k, n in enumerate(doc["nodes"]) if n["kind"] == "switch")
    doc["nodes"][i]["attrs"]["radix"] = value
    return doc, i


@pytest.mark.parametrize("value", ["64", -5, 0, True, 64.0, 1e308, LARGEST_RADIX + 1])
def test_a_radix_that_is_not_a_whole_number_of_ports_is_refused(value):
    doc, i = _with_radix(value)
    problems = validate(doc)
    assert [p.path for p in problems] == [f"nodes[{i}].attrs.radix"]
    assert "whole number of ports" in problems[0].message


@pytest.mark.parametrize("value", [64, 512, None])
def test_a_whole_number_or_none_is_kept(value):
    assert validate(_with_radix(value)[0]) == []


def test_the_columnar_reader_leaves_it_to_the_item_walk():
    """The file reader that accepts a big document straight into columns declines one with a
    bad radix (None: the item walk then locates the problem), and reads a good one."""
    import orjson

    from designer.engine.document.columnar import read_columns

    from designer.engine.document import normalize

    good = normalize(_with_radix(64)[0])               # a saved document: normalized
    assert read_columns(orjson.dumps(good)) is not None
    i = next(k for k, n in enumerate(good["nodes"]) if n["kind"] == "switch")
    good["nodes"][i]["attrs"]["radix"] = "64"
    assert read_columns(orjson.dumps(good)) is None
