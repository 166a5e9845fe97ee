"""Tests of the topology document: one validator test per error kind, normalize, dump, limits,
and a property test (random mutations are valid or rejected with located problems, never crash).

The small document used throughout::

    [g0:gpu]--pcie4x16--[sw:pcie_switch]--pcie4x16--[n0:nic]      (all in host h0, rack r0)
"""
import copy
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from designer.engine.document import validator as document
from designer.engine.document import FORMAT, LIMITS, dump, load, normalize, validate
from designer.engine.errors import InvalidTopology, LimitExceeded, Problem


def small():
    return {"format": FORMAT, "name": "t",
            "groups": [{"id": "r0", "kind": "rack"}, {"id": "h0", "kind": "host", "parent": "r0"}],
            "nodes": [{"id": "g0", "kind": "gpu", "group": "h0"},
                      {"id": "sw", "kind": "pcie_switch", "group": "h0"},
                      {"id": "n0", "kind": "nic", "group": "h0", "attrs": {"rail": 0}}],
            "links": [{"id": "g0-sw", "a": "g0", "b": "sw", "tech": "pcie4x16"},
                      {"id": "sw-n0", "a": "sw", "b": "n0", "tech": "pcie4x16", "capacity_gbps": 100}]}


def paths(doc):
    return [str(p) for p in validate(doc)]


def test_valid_document_has_no_problem():
    assert validate(small()) == []


@pytest.mark.parametrize("garbage", [[], [1, 2], "text", 3, None, True, 2.5])
def test_top_level_garbage_is_one_problem(garbage):
    problems = validate(garbage)
    assert len(problems) == 1 and "JSON object" in problems[0].message


@pytest.mark.parametrize("mutate, expected", [
    (lambda d: d.pop("format"), "format: missing"),
    (lambda d: d.update(format="fabricscope.topology/2"), 'format: expected "fabricscope.topology/1"'),
    (lambda d: d.pop("nodes"), "nodes: missing"),
    (lambda d: d.update(links="x"), "links: must be a list, got string"),
    (lambda d: d["nodes"].append(dict(d["nodes"][0])), 'nodes[3].id: duplicate node id "g0"'),
    (lambda d: d["links"].append(dict(d["links"][0])), 'links[2].id: duplicate link id "g0-sw"'),
    (lambda d: d["groups"].append({"id": "h0", "kind": "host"}), 'groups[2].id: duplicate group id "h0"'),
    (lambda d: d["links"][1].update(b="h3/nic9"), 'links[1].b: unknown node "h3/nic9"'),
    (lambda d: d["links"][0].update(a=None), "links[0].a: missing"),
    (lambda d: d["links"][0].update(b="g0"), 'links[0]: self-loop: both ends are "g0"'),
    (lambda d: d["nodes"][1].update(kind="router"), 'nodes[1].kind: unknown node kind "router"'),
    (lambda d: d["nodes"][1].pop("kind"), "nodes[1].kind: missing"),
    (lambda d: d["links"][0].update(tech="pcie9x16"), 'links[0].tech: unknown link technology "pcie9x16"'),
    (lambda d: d["links"][1].update(capacity_gbps=-1), "links[1].capacity_gbps: must not be negative"),
    (lambda d: d["links"][1].update(capacity_gbps=math.inf), "links[1].capacity_gbps: must be finite"),
    (lambda d: d["links"][1].update(capacity_gbps=math.nan), "links[1].capacity_gbps: must be finite"),
    (lambda d: d["links"][1].update(capacity_gbps="fast"), "links[1].capacity_gbps: must be a number"),
    (lambda d: d["links"][1].update(capacity_gbps=True), "links[1].capacity_gbps: must be a number"),
    (lambda d: d["links"][0].pop("tech"), "links[0].capacity_gbps: missing (no tech"),
    (lambda d: d["links"][0].update(latency_ns=-5), "links[0].latency_ns: must not be negative"),
    (lambda d: d["nodes"][0].update(capacity_gbps=-2), "nodes[0].capacity_gbps: must not be negative"),
    (lambda d: d["nodes"][0].update(group="h9"), 'nodes[0].group: unknown group "h9"'),
    (lambda d: d["nodes"][0].update(attrs=[1]), "nodes[0].attrs: must be an object"),
    (lambda d: d["nodes"].append(7), "nodes[3]: must be an object, got number"),
    (lambda d: d["nodes"][0].update(id=12), "nodes[0].id: must be a string, got number"),
    (lambda d: d["nodes"][0].update(id="x" * 300), "nodes[0].id: must be 1 to 256 characters"),
    (lambda d: d["groups"][0].update(kind="galaxy"), 'groups[0].kind: unknown group kind "galaxy"'),
    (lambda d: d["groups"][1].update(parent="r9"), 'groups[1].parent: unknown group "r9"'),
    (lambda d: d["groups"][0].update(parent="h0"), "group cycle"),
    (lambda d: d["groups"][0].update(parent="r0"), "groups[0].parent: group cycle: r0 -> r0"),
    (lambda d: d.update(name=5), "name: must be a string"),
    (lambda d: d["links"][0].update(capacity_basis="guess"), "links[0].capacity_basis: must be one of"),
])
def test_each_error_kind_is_reported_with_its_location(mutate, expected):
    doc = small()
    mutate(doc)
    found = paths(doc)
    assert any(p.startswith(expected) or expected in p for p in found), found


def test_all_problems_are_reported_not_only_the_first():
    doc = small()
    doc["links"][0]["b"] = "nope"
    doc["links"][1]["capacity_gbps"] = -1
    doc["nodes"][2]["kind"] = "toaster"
    assert len(validate(doc)) == 3
    with pytest.raises(InvalidTopology) as exc:
        normalize(doc)
    assert len(exc.value.problems) == 3 and all(isinstance(p, Problem) for p in exc.value.problems)


def test_limits_are_enforced(monkeypatch):
    monkeypatch.setitem(LIMITS, "max_nodes", 2)
    assert any("exceed the limit" in str(p) for p in validate(small()))
    monkeypatch.setitem(LIMITS, "max_bytes", 10)
    with pytest.raises(LimitExceeded):
        load(json.dumps(small()))


def test_problem_count_is_capped(monkeypatch):
    monkeypatch.setitem(LIMITS, "max_problems", 5)
    doc = small()
    doc["links"] += [{"a": "x", "b": "y", "tech": "zz"} for _ in range(10)]
    assert len(validate(doc)) == 5


def test_load_reports_json_errors_with_position(tmp_path):
    with pytest.raises(InvalidTopology, match="line 1 column"):
        load('{"format": ')
    path = tmp_path / "t.json"
    path.write_text(json.dumps(small()))
    assert load(path) == small() and load(str(path)) == small()
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.json")


def test_normalize_fills_catalog_figures_and_records_basis():
    """g0-sw (pcie4x16, no figure) takes the effective 24 GB/s = 192 Gb/s; sw-n0 keeps 100."""
    out = normalize(small())
    g0sw, swn0 = out["links"]
    assert g0sw["capacity_gbps"] == pytest.approx(192.0) and g0sw["capacity_basis"] == "effective"
    assert g0sw["latency_ns"] == 100.0
    assert swn0["capacity_gbps"] == 100.0 and swn0["capacity_basis"] == "explicit"
    raw = small()
    raw["capacity_basis"] = "raw"
    assert normalize(raw)["links"][0]["capacity_gbps"] == pytest.approx(252.0)
    per_link = small()
    per_link["links"][0]["capacity_basis"] = "raw"
    assert normalize(per_link)["links"][0]["capacity_gbps"] == pytest.approx(252.0)


def test_normalize_returns_a_new_deterministic_idempotent_dict():
    doc = small()
    before = copy.deepcopy(doc)
    out = normalize(doc)
    assert doc == before
    out["nodes"][2]["attrs"]["rail"] = 5
    assert doc["nodes"][2]["attrs"]["rail"] == 0
    again = normalize(normalize(small()))
    assert again == normalize(small())
    assert dump(again) == dump(normalize(json.loads(dump(small()))))
    assert list(out["links"][0])[:4] == ["id", "a", "b", "tech"]


def test_missing_link_ids_are_generated_uniquely():
    doc = small()
    for l in doc["links"]:
        del l["id"]
    doc["links"].append({"a": "g0", "b": "sw", "tech": "pcie4x16"})
    ids = [l["id"] for l in normalize(doc)["links"]]
    assert ids == ["g0-sw", "sw-n0", "g0-sw#2"]


def test_dump_roundtrips():
    out = normalize(small())
    assert json.loads(dump(out)) == out


# ---------------------------------------------------------------------------- property test
_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True),
                    st.text(max_size=6), st.sampled_from(["g0", "sw", "n0", "h0", "r0", "gpu", "pcie4x16"]),
                    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _containers(doc, path=()):
    yield path, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _containers(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _containers(v, path + (i,))


@st.composite
def mutated_documents(draw):
    doc = small()
    for _ in range(draw(st.integers(1, 4))):
        spots = [(p, c) for p, c in _containers(doc) if isinstance(c, (dict, list))]
        path, target = draw(st.sampled_from(spots))
        action = draw(st.sampled_from(["set", "delete", "append", "replace"]))
        if isinstance(target, dict):
            keys = list(target) + ["id", "kind", "a", "b", "tech", "capacity_gbps", "parent", "group"]
            key = draw(st.sampled_from(keys))
            if action == "delete":
                target.pop(key, None)
            else:
                target[key] = draw(_VALUES)
        elif action == "append" or not target:
            target.append(draw(st.one_of(_VALUES, st.just(copy.deepcopy(small()["links"][0])))))
        else:
            target[draw(st.integers(0, len(target) - 1))] = draw(_VALUES)
        if action == "replace" and draw(st.booleans()):
            doc = draw(_VALUES)
            break
    return doc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_mutations_are_valid_or_rejected_with_located_problems(doc):
    problems = validate(doc)
    if problems:
        assert all(isinstance(p, Problem) and isinstance(p.message, str) and p.message for p in problems)
        assert all(p.path or "JSON object" in p.message for p in problems)
        # a string is JSON text or a path to normalize, so it may also be a missing file
        with pytest.raises((InvalidTopology, FileNotFoundError) if isinstance(doc, str) else InvalidTopology):
            normalize(doc)
    else:
        out = normalize(doc)
        assert all(math.isfinite(l["capacity_gbps"]) and l["capacity_gbps"] >= 0 for l in out["links"])
        from designer.engine.model.topology import Topology
        Topology.compile(out)
