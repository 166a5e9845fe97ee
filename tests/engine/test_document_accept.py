"""The column-wise acceptance of nodes and links (engine/document_accept.py) never vouches for a
document the item walk would fault, and validate() reports exactly what the item walk alone does."""
from __future__ import annotations

import copy

import pytest

from designer.engine.document import validator as document
from designer.engine.document.accept import accept_links, accept_nodes
from designer.engine.model.fabrics import build_cluster


@pytest.fixture(scope="module")
def valid():
    return build_cluster("dgx-h100", 2, fabric="rail-optimized", leaves_per_rail=1)


def _outcome(doc):
    """validate()'s problems, or the exception it raises (a 400-digit integer capacity overflows
    the item walk's ``math.isfinite``: the acceptance must leave that to it, unchanged)."""
    try:
        return document.validate(doc)
    except Exception as exc:   # noqa: BLE001 - compared, not swallowed
        return type(exc)


def _walk_only(doc, monkeypatch):
    """validate() with the acceptance switched off: the item walk decides everything."""
    with monkeypatch.context() as m:
        m.setattr(document, "node_columns", lambda nodes, groups: None)
        m.setattr(document, "link_columns", lambda links, index: None)
        m.setattr(document, "accept_links", lambda links, ids: False)
        return _outcome(doc)


def _deep(levels):
    v = 1
    for _ in range(levels):
        v = {"x": v}
    return v


NODE_MUTATIONS = {
    "id int": lambda n: n.update(id=7),
    "id empty": lambda n: n.update(id=""),
    "id long": lambda n: n.update(id="x" * 257),
    "id bidi": lambda n: n.update(id="gpu\u202e0"),
    "id nul": lambda n: n.update(id="a\x00b"),
    "id missing": lambda n: n.pop("id"),
    "kind unknown": lambda n: n.update(kind="toaster"),
    "kind missing": lambda n: n.pop("kind"),
    "kind list": lambda n: n.update(kind=["gpu"]),
    "group unknown": lambda n: n.update(group="nowhere"),
    "group int": lambda n: n.update(group=3),
    "capacity zero": lambda n: n.update(capacity_gbps=0),
    "capacity negative": lambda n: n.update(capacity_gbps=-1.0),
    "capacity nan": lambda n: n.update(capacity_gbps=float("nan")),
    "capacity inf": lambda n: n.update(capacity_gbps=float("inf")),
    "capacity subnormal": lambda n: n.update(capacity_gbps=1e-320),
    "capacity bool": lambda n: n.update(capacity_gbps=True),
    "capacity text": lambda n: n.update(capacity_gbps="5"),
    "capacity huge int": lambda n: n.update(capacity_gbps=10 ** 400),
    "attrs list": lambda n: n.update(attrs=[1]),
    "attrs gbps zero": lambda n: n.update(attrs={"peak_gbps": 0}),
    "attrs gbps null": lambda n: n.update(attrs={"peak_gbps": None}),
    "attrs ns negative": lambda n: n.update(attrs={"delay_ns": -1}),
    "attrs nested deep": lambda n: n.update(attrs={"a": _deep(80)}),
    "attrs nested shallow": lambda n: n.update(attrs={"a": {"b": 1}}),
    "extra nested deep": lambda n: n.update(extra=_deep(80)),
    "extra nested shallow": lambda n: n.update(extra=[1, 2]),
    "extra scalar": lambda n: n.update(note="fine"),
    "not a dict": None,
}

LINK_MUTATIONS = {
    "id int": lambda l: l.update(id=1),
    "id bidi": lambda l: l.update(id="l\u2066"),
    "id missing": lambda l: l.pop("id"),
    "a unknown": lambda l: l.update(a="ghost"),
    "b missing": lambda l: l.pop("b"),
    "b int": lambda l: l.update(b=4),
    "self loop": lambda l: l.update(b=l["a"]),
    "tech unknown": lambda l: l.update(tech="carrier-pigeon"),
    "tech int": lambda l: l.update(tech=5),
    "no capacity no tech": lambda l: (l.pop("tech", None), l.pop("capacity_gbps", None)),
    "capacity zero": lambda l: l.update(capacity_gbps=0.0),
    "capacity zero down": lambda l: l.update(capacity_gbps=0.0, status="down"),
    "capacity nan": lambda l: l.update(capacity_gbps=float("nan")),
    "capacity text": lambda l: l.update(capacity_gbps="400"),
    "latency negative": lambda l: l.update(latency_ns=-5),
    "latency inf": lambda l: l.update(latency_ns=float("inf")),
    "latency zero": lambda l: l.update(latency_ns=0),
    "direction zero": lambda l: l.update(capacity_ab_gbps=0.0),
    "direction given": lambda l: l.update(capacity_ba_gbps=100.0),
    "direction bool": lambda l: l.update(capacity_ba_gbps=False),
    "basis bad": lambda l: l.update(capacity_basis="guess"),
    "basis list": lambda l: l.update(capacity_basis=["raw"]),
    "attrs gbps negative": lambda l: l.update(attrs={"x_gbps": -1}),
    "attrs text": lambda l: l.update(attrs="x"),
    "extra nested deep": lambda l: l.update(extra=_deep(80)),
    "status down": lambda l: l.update(status="down"),
    "not a dict": None,
}


def _mutated(valid, key, index, mutate):
    doc = copy.deepcopy(valid)
    if mutate is None:
        doc[key][index] = "garbage"
    else:
        mutate(doc[key][index])
    return doc


def test_a_valid_document_is_accepted_without_the_walk(valid):
    groups = {g["id"] for g in valid["groups"]}
    ids = accept_nodes(valid["nodes"], groups)
    assert ids == {n["id"] for n in valid["nodes"]}
    assert accept_links(valid["links"], ids)
    assert document.validate(valid) == []


# (list key, index mutated, mutations, "the acceptance vouched for this list")
_ACCEPTANCE = {
    "nodes": (5, NODE_MUTATIONS, lambda doc: accept_nodes(doc["nodes"], {g["id"] for g in doc["groups"]}) is not None),
    "links": (7, LINK_MUTATIONS, lambda doc: bool(accept_links(doc["links"], {n["id"] for n in doc["nodes"]}))),
}


@pytest.mark.parametrize(("key", "name"), [(key, name) for key, (_, mutations, _) in _ACCEPTANCE.items()
                                           for name in sorted(mutations)])
def test_mutation_same_problems_and_never_a_wrong_yes(valid, key, name, monkeypatch):
    index, mutations, accepted = _ACCEPTANCE[key]
    doc = _mutated(valid, key, index, mutations[name])
    walk = _walk_only(doc, monkeypatch)
    assert _outcome(doc) == walk
    # An unknown field is found from the key shapes the acceptance read (document.keys), not
    # by the acceptance itself: it may vouch for the values while validate still refuses.
    if not isinstance(walk, list) or any(p.path.startswith(f"{key}[") and not _unknown_field(p) for p in walk):
        assert not accepted(doc)


def _unknown_field(problem) -> bool:
    return problem.message.startswith("unknown field ")


def test_duplicate_node_id(valid, monkeypatch):
    doc = copy.deepcopy(valid)
    doc["nodes"][3]["id"] = doc["nodes"][2]["id"]
    assert accept_nodes(doc["nodes"], {g["id"] for g in doc["groups"]}) is None
    assert document.validate(doc) == _walk_only(doc, monkeypatch) != []



def test_duplicate_link_id(valid, monkeypatch):
    doc = copy.deepcopy(valid)
    doc["links"][9]["id"] = doc["links"][8]["id"]
    assert not accept_links(doc["links"], {n["id"] for n in doc["nodes"]})
    assert document.validate(doc) == _walk_only(doc, monkeypatch) != []


def test_normalized_document_unchanged(valid, monkeypatch):
    """normalize() builds the same document whichever way validation went."""
    fast = document.normalize(copy.deepcopy(valid))
    with monkeypatch.context() as m:
        m.setattr(document, "node_columns", lambda nodes, groups: None)
        m.setattr(document, "link_columns", lambda links, index: None)
        m.setattr(document, "accept_links", lambda links, ids: False)
        slow = document.normalize(copy.deepcopy(valid))
    assert fast == slow


def test_fresh_link_ids_avoid_ids_given_later():
    """The set of given link ids is built only when a link lacks one, still from every link:
    a generated ``a-b`` skips an id a later link gives."""
    doc = {"format": document.FORMAT, "nodes": [{"id": "x", "kind": "gpu"}, {"id": "y", "kind": "gpu"}],
           "links": [{"a": "x", "b": "y", "capacity_gbps": 1.0}, {"a": "x", "b": "y", "capacity_gbps": 1.0},
                     {"id": "x-y", "a": "x", "b": "y", "capacity_gbps": 1.0}]}
    assert [l["id"] for l in document.normalize(doc)["links"]] == ["x-y#2", "x-y#3", "x-y"]
