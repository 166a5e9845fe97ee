"""The cheaper column reads of the topology load give exactly what the plain
computations they replace give, on usual and on unusual or invalid input: the shape codes of
``document_accept._read``, the ASCII printable test of ids, the links without capacity nor
tech found by the tech codes, the float arrays made from the tech codes, the attrs and
latency lists of ``Topology._assemble``, and the link index built at its first read."""
from __future__ import annotations

import copy
import math
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.engine.document import normalizer, validator as document

from designer.engine.document import accept as document_accept
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology, _attrs_or_empty, _floats, _latencies
from designer.engine.numbers import first_appearance_codes


# ---------------------------------------------------------------------------- _read
def _plain_read(items: list, known: frozenset) -> dict | None:
    """What ``_read`` reads, item by item (the definition it must keep)."""
    if any(type(i) is not dict for i in items):
        return None
    keys = {k for i in items for k in i}
    if any(k.__class__ is not str for k in keys):
        return None
    present = {k: [i[k] for i in items if k in i] for k in keys}
    types = {k: set(map(type, v)) for k, v in present.items()}
    if any(not t <= {str, int, float, bool, type(None)} for k, t in types.items() if k not in known):
        return None
    columns = {k: [i.get(k) for i in items] for k in keys if k in known}
    positions = {k: [n for n, i in enumerate(items) if k in i] for k in keys}
    return {"columns": columns, "present": present, "types": types, "positions": positions,
            "shapes": [tuple(i) for i in items]}


_KEYS = ["id", "a", "b", "tech", "capacity_gbps", "latency_ns", "bundle", "status", 3]
_VALUES = st.sampled_from(["x", "", 1, 1.5, -0.0, None, True, [1], {"y": 1}])


@st.composite
def _items(draw):
    """Lists of dicts with keys in any order, a key on few or on most items, now and then a
    non-string key, a structured value or an item that is not a dict."""
    n = draw(st.integers(0, 40))
    common = draw(st.lists(st.sampled_from(_KEYS[:3]), unique=True))
    items = []
    for _ in range(n):
        keys = common + draw(st.lists(st.sampled_from(_KEYS if draw(st.integers(0, 9)) == 0 else _KEYS[:-1]),
                                      unique=True, max_size=4))
        item = {k: draw(_VALUES) for k in dict.fromkeys(draw(st.permutations(list(dict.fromkeys(keys)))))}
        items.append(item)
    if items and draw(st.integers(0, 9)) == 0:
        items[draw(st.integers(0, len(items) - 1))] = draw(st.sampled_from([[1], "x", None]))
    return items


@settings(max_examples=400, deadline=None)
@given(_items(), st.sampled_from([document_accept._LINK_KEYS, document_accept._NODE_KEYS]))
def test_read_is_the_item_by_item_read(items, known):
    got, want = document_accept._read(items, known), _plain_read(items, known)
    assert (got is None) == (want is None)
    if got is None:
        return
    # every known key's column; an unknown key's only when all items have it (never read)
    assert {k: v for k, v in got["columns"].items() if k in known} == want["columns"]
    assert all(got["columns"][k] == want["present"][k] for k in got["columns"] if k not in known)
    assert got["present"] == want["present"] and got["types"] == want["types"]
    partial = {k for k, p in want["positions"].items() if len(p) != len(items)}
    assert {k: got["positions"][k].tolist() for k in got["positions"]} == {k: want["positions"][k] for k in partial}
    assert got["distinct_shapes"] == set(want["shapes"])
    assert [got["shape_list"][c] for c in got["shape_codes"].tolist()] == want["shapes"]
    assert got["shape_codes"].dtype == np.int64
    for shapes in ({s for s in got["shape_list"] if "id" in s}, set(), set(got["shape_list"])):
        assert normalizer._having_shape(got, shapes) == [n for n, s in enumerate(want["shapes"]) if s in shapes]


def test_first_appearance_codes_of_an_iterable_is_that_of_the_list():
    values = [("a", "b"), ("b",), ("a", "b"), (), ("b",)]
    want = first_appearance_codes(values)
    got = first_appearance_codes(iter(values), len(values))
    assert got[0] == want[0] and got[1].tolist() == want[1].tolist() == [0, 1, 0, 2, 1]
    assert first_appearance_codes(iter([]), 0)[1].dtype == want[1].dtype


# ---------------------------------------------------------------------------- ids
def _plain_valid_ids(ids: list, types: set) -> bool:
    if not ids:
        return True
    return types == {str} and all(1 <= len(i) <= document.LIMITS["max_id_length"] and document.unprintable(i) is None
                                  for i in ids)


def test_printable_ascii_is_isprintable_for_every_ascii_character():
    for code in range(128):
        for text in (chr(code), f"ab{chr(code)}", f"{chr(code)} z"):
            assert document_accept._printable_ascii(text) == text.isprintable(), code


_ID_CHARS = st.sampled_from(["a", "/", " ", "~", "\x00", "\x1f", "\x7f", "\x80", "é", "\u202e", "\u2028", "\t"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.text(_ID_CHARS, max_size=5), st.sampled_from(["x" * 256, "y" * 257]))))
def test_valid_ids_is_the_per_id_rule(ids):
    assert document_accept._valid_ids(ids, {str} if ids else set()) == _plain_valid_ids(ids, {str})


# ---------------------------------------------------------------------------- capacity nor tech
def _plain_no_capacity_nor_tech(tech, cap) -> bool:
    n = len(tech if tech is not None else cap)
    tech, cap = tech or [None] * n, cap or [None] * n
    return any(t is None and c is None for t, c in zip(tech, cap))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["eth400", "pcie5x16", None]), st.sampled_from([None, 1.0, 0]))),
       st.sampled_from(["both", "no tech", "no capacity"]))
def test_links_without_capacity_nor_tech_found_by_the_tech_codes(rows, which):
    tech = None if which == "no tech" else [t for t, _ in rows]
    cap = None if which == "no capacity" else [c for _, c in rows]
    want = _plain_no_capacity_nor_tech(tech, cap) if rows else False
    codes = None if tech is None else first_appearance_codes(tech)
    assert document_accept._no_capacity_nor_tech(tech, cap, codes) == want
    assert document_accept._no_capacity_nor_tech(tech, cap) == want


# ---------------------------------------------------------------------------- assemble
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0, 0.0, -0.0, 5, 7.5, 2 ** 60 + 1, None, True])))
def test_latencies_are_float_of_each_or_zero(values):
    want = np.array([float(x or 0.0) for x in values], dtype=np.float64)
    got = _latencies(values)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([None, {}, {"a": 1}, {"role": "leaf"}, [], 0])))
def test_attrs_or_empty_is_each_or_a_new_empty_dict(attrs):
    attrs = copy.deepcopy(attrs)
    got, want = _attrs_or_empty(attrs), [a or {} for a in attrs]
    assert got == want and got is not attrs
    assert all(g is a for g, a in zip(got, attrs) if a)   # the attrs themselves, not copies


@pytest.fixture(scope="module")
def cluster():
    doc = build_cluster("dgx-h100", 2, fabric="rail-optimized", leaves_per_rail=1)
    # unusual but valid: an int and a negative-zero latency, an int capacity on a tech link,
    # a basis without capacity, a link without id
    doc["links"][0]["latency_ns"] = -0.0
    doc["links"][1]["latency_ns"] = 3
    doc["links"][2].update(capacity_gbps=100)
    doc["links"][3].update(capacity_basis="raw")
    doc["links"][4].pop("id")
    return doc


def test_link_value_arrays_are_the_lists_converted(cluster):
    normalized, columns = document._normalize(copy.deepcopy(cluster), owned=True)
    assert "link_capacity_array" in columns
    want_capacity = _floats(columns["link_capacity"])
    want_latency = np.array([float(x or 0.0) for x in columns["link_latency"]], dtype=np.float64)
    assert columns["link_capacity_array"].tobytes() == want_capacity.tobytes()
    assert columns["link_latency_array"].tobytes() == want_latency.tobytes()
    assert math.copysign(1, columns["link_latency_array"][0]) == 1.0   # -0.0 made 0.0, as `or` does
    assert columns["link_latency"][0] == 0 and math.copysign(1, columns["link_latency"][0]) == -1.0


def test_link_index_built_at_the_first_read(cluster):
    topo = Topology.from_document(copy.deepcopy(cluster), owned=True)
    assert "_link_index" not in topo.__dict__   # the load leaves it to the first read
    index = topo.link_index
    assert index == {lid: i for i, lid in enumerate(topo.link_ids)} and topo.link_index is index
    compiled = Topology.compile(topo.doc)
    assert compiled.link_index == index and list(compiled.link_index) == list(index)


def test_duplicate_link_id_still_refused_with_its_location(cluster):
    doc = copy.deepcopy(cluster)
    doc["links"][7]["id"] = doc["links"][2]["id"]
    problems = document.validate(doc)
    assert [p.path for p in problems] == ["links[7].id"] and "first at links[2]" in problems[0].message
