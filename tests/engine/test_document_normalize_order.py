"""``document.normalize`` builds nodes and links without a copy call per scalar: the
result — values and key order — equals the previous two-step construction (``_ordered`` then a
re-ordering of each link), on links with extra keys, explicit None values, missing ids that
collide, capacities from the tech (effective and raw basis) and given ones. Topology::

    [x]--eth400--[y]   three x–y links (ids: none, none, "x-y#2"), one x–z with extras, one y–z
        \\--------[z]
"""
import copy

import orjson

from designer.engine.document import normalize
from designer.engine.document import normalizer as document
from designer.engine.catalog import TECHS


def _old_ordered(item, order):
    out = {k: document._copy(item[k]) for k in order if item.get(k) is not None}
    for k, v in item.items():
        if k not in out and k not in order:
            out[k] = document._copy(v)
    return out


def _old_links(links, basis):
    used = {l["id"] for l in links if l.get("id") is not None}
    out = []
    for l in links:
        new = _old_ordered(l, document._LINK_ORDER)
        if "id" not in new:
            new["id"] = document._fresh_id(f"{l['a']}-{l['b']}", used)
        tech = TECHS.get(l.get("tech")) if l.get("tech") is not None else None
        if l.get("capacity_gbps") is None:
            link_basis = l.get("capacity_basis") or basis
            if link_basis == "explicit":
                link_basis = basis
            new["capacity_gbps"] = tech.raw_gbps if link_basis == "raw" else tech.effective_gbps
            new["capacity_basis"] = link_basis
        else:
            new["capacity_gbps"] = float(l["capacity_gbps"])
            new["capacity_basis"] = l.get("capacity_basis") or "explicit"
        if l.get("latency_ns") is None:
            new["latency_ns"] = tech.latency_ns if tech is not None else 0.0
        ordered = {k: new[k] for k in document._LINK_ORDER if k in new}
        ordered.update(new)
        out.append(ordered)
    return out


def _doc(basis=None):
    doc = {"format": document.FORMAT, "name": "t",
           "nodes": [{"attrs": {"role": "leaf", "deep": {"a": [1, 2]}}, "kind": "switch", "id": "x", "capacity_gbps": None},
                     {"id": "y", "kind": "switch", "group": None, "capacity_gbps": 800},
                     {"kind": "switch", "id": "z", "attrs": {"extra": [1, {"b": 2}]}}],
           "links": [{"b": "y", "a": "x", "tech": "eth400"},
                     {"a": "x", "b": "y", "tech": "eth400", "capacity_basis": "explicit", "latency_ns": 5},
                     {"id": "x-y#2", "a": "x", "b": "y", "capacity_gbps": 100, "tech": None},
                     {"id": "xz", "a": "x", "b": "z", "capacity_gbps": 400.0, "status": "up",
                      "attrs": {"cable_m": 3, "notes": ["a"]}, "bundle": 2, "latency_ns": None, "capacity_basis": "raw"},
                     {"a": "y", "id": None, "b": "z", "tech": "eth400", "capacity_basis": "raw"}]}
    if basis:
        doc["capacity_basis"] = basis
    return doc


def _old_normalize(doc):
    basis = doc.get("capacity_basis") or document.DEFAULT_BASIS
    out = {"format": document.FORMAT, "name": doc.get("name", "")}
    for k, v in doc.items():
        if k not in ("format", "name", "groups", "nodes", "links"):
            out[k] = document._copy(v)
    out["groups"] = [_old_ordered(g, document._GROUP_ORDER) for g in doc.get("groups") or []]
    out["nodes"] = [_old_ordered(n, document._NODE_ORDER) for n in doc["nodes"]]
    out["links"] = _old_links(doc["links"], basis)
    return out


def test_same_values_and_key_order_as_before():
    for basis in (None, "raw", "effective"):
        doc = _doc(basis)
        before = copy.deepcopy(doc)
        got = normalize(doc)
        assert orjson.dumps(got) == orjson.dumps(_old_normalize(doc))    # bytes: key order too
        assert doc == before                                            # the input is not touched
        ids = [l["id"] for l in got["links"]]
        assert ids[:3] == ["x-y", "x-y#3", "x-y#2"] and len(set(ids)) == len(ids)


def test_copies_do_not_alias_the_input():
    doc = _doc()
    got = normalize(doc)
    got["nodes"][0]["attrs"]["deep"]["a"].append(3)
    got["links"][3]["attrs"]["notes"].append("b")
    assert doc["nodes"][0]["attrs"]["deep"]["a"] == [1, 2] and doc["links"][3]["attrs"]["notes"] == ["a"]
