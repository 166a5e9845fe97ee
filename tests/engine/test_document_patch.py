"""Tests of ``apply_patch``: a patch by element id against a base document.

The base document used throughout::

    [g0:gpu]--pcie4x16--[sw:pcie_switch]--pcie4x16--[n0:nic]      (all in host h0, rack r0)
     link g0-sw                            link sw-n0
"""
import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.engine.document import FORMAT, normalize
from designer.engine.document.patch import InvalidPatch, apply_patch


def base():
    return normalize({
        "format": FORMAT, "name": "t",
        "groups": [{"id": "r0", "kind": "rack"}, {"id": "h0", "kind": "host", "parent": "r0"}],
        "nodes": [{"id": "g0", "kind": "gpu", "group": "h0"},
                  {"id": "sw", "kind": "pcie_switch", "group": "h0"},
                  {"id": "n0", "kind": "nic", "group": "h0", "attrs": {"rail": 0}}],
        "links": [{"id": "g0-sw", "a": "g0", "b": "sw", "tech": "pcie4x16"},
                  {"id": "sw-n0", "a": "sw", "b": "n0", "tech": "pcie4x16"}]})


def ids(doc, key):
    return [item["id"] for item in doc[key]]


def problems(doc, patch):
    with pytest.raises(InvalidPatch) as info:
        apply_patch(doc, patch)
    assert info.value.code == "invalid_patch"
    return {(p.path, p.message) for p in info.value.problems}


def test_empty_patch_is_the_base_and_leaves_it_untouched():
    doc = base()
    frozen = copy.deepcopy(doc)
    assert apply_patch(doc, {}) == frozen
    assert apply_patch(doc, {"nodes": {}, "links": {"add": [], "remove": []}}) == frozen
    assert doc == frozen


def test_add_remove_update_keep_base_order_and_append_adds():
    """Remove n0 and its link, add an NVMe behind sw, re-type nothing but give sw attrs.

    [g0]--[sw]--[nvme0]     (n0 and sw-n0 gone)
    """
    doc = base()
    frozen = copy.deepcopy(doc)
    sw = {"id": "sw", "kind": "pcie_switch", "group": "h0", "attrs": {"lanes": 48}}
    patch = {"nodes": {"remove": ["n0"], "update": [sw],
                       "add": [{"id": "nvme0", "kind": "nvme", "group": "h0"}]},
             "links": {"remove": ["sw-n0"],
                       "add": [{"id": "sw-nvme0", "a": "sw", "b": "nvme0", "tech": "pcie4x4"}]}}
    out = apply_patch(doc, patch)
    assert ids(out, "nodes") == ["g0", "sw", "nvme0"]
    assert ids(out, "links") == ["g0-sw", "sw-nvme0"]
    assert out["nodes"][1] == sw                      # replaced whole, in place
    assert out["groups"] == doc["groups"] and doc == frozen
    assert normalize(out)["links"][1]["capacity_gbps"] > 0   # still a valid topology


def test_groups_and_top_level_fields():
    doc = dict(base(), layout={"positions": {"g0": [0, 0]}})
    out = apply_patch(doc, {"groups": {"add": [{"id": "h1", "kind": "host", "parent": "r0"}],
                                       "update": [{"id": "r0", "kind": "rack", "attrs": {"row": 2}}]},
                            "name": "renamed", "layout": None, "capacity_basis": "raw"})
    assert ids(out, "groups") == ["r0", "h0", "h1"]
    assert out["groups"][0]["attrs"] == {"row": 2}
    assert (out["name"], out["capacity_basis"]) == ("renamed", "raw")
    assert "layout" not in out and "layout" in doc


def test_remove_then_add_the_same_id_replaces_it_at_the_end():
    out = apply_patch(base(), {"nodes": {"remove": ["g0"], "add": [{"id": "g0", "kind": "cpu"}]}})
    assert ids(out, "nodes") == ["sw", "n0", "g0"] and out["nodes"][2]["kind"] == "cpu"


def test_misfits_are_located_and_all_reported():
    found = problems(base(), {
        "nodes": {"remove": ["n0", "n0", "zz", 3], "update": [{"id": "h9/x"}, {"kind": "gpu"}],
                  "add": [{"id": "g0", "kind": "gpu"}, {"id": "new"}, {"id": "new"}]},
        "links": {"update": [{"id": "g0-sw"}, {"id": "g0-sw"}], "move": []},
        "groups": {"add": "h1"}})
    assert found == {
        ("nodes.remove[1]", "'n0' is removed twice"),
        ("nodes.remove[2]", "no node 'zz'"),
        ("nodes.remove[3]", "expected an id (a string), got int"),
        ("nodes.update[0].id", "no node 'h9/x'"),
        ("nodes.update[1].id", "every added or updated item needs its id (a string)"),
        ("nodes.add[0].id", "node 'g0' already exists (update it, or remove it first)"),
        ("nodes.add[2].id", "'new' is added twice"),
        ("links.update[1].id", "'g0-sw' is updated twice"),
        ("links.move", "unknown operation (use remove, update, add)"),
        ("groups.add", "expected a list, got str"),
    }


def test_update_of_a_removed_item_and_bad_shapes():
    assert problems(base(), {"links": {"remove": ["g0-sw"], "update": [{"id": "g0-sw"}]}}) == {
        ("links.update[0].id", "'g0-sw' is also removed by this patch")}
    assert problems(base(), {"nodes": ["g0"]}) == {
        ("nodes", "expected an object with add, remove and update lists")}
    assert problems(base(), {"nodes": {"update": ["g0"]}}) == {
        ("nodes.update[0]", "expected an object, got str")}
    with pytest.raises(InvalidPatch):
        apply_patch(base(), ["not", "an", "object"])


_OPS = st.lists(st.tuples(st.sampled_from(["remove", "update", "add"]),
                          st.sampled_from(["g0", "sw", "n0", "x1", "x2"])), max_size=8)


@settings(max_examples=200, deadline=None)
@given(_OPS)
def test_any_patch_applies_exactly_or_is_refused(ops):
    """Random node patches: the result has exactly base - removed + added ids, or InvalidPatch."""
    doc = base()
    patch = {"nodes": {op: [] for op in ("remove", "update", "add")}}
    for op, ident in ops:
        item = ident if op == "remove" else {"id": ident, "kind": "gpu", "tag": op}
        patch["nodes"][op].append(item)
    try:
        out = apply_patch(doc, patch)
    except InvalidPatch as exc:
        assert exc.problems and all(p.path.startswith("nodes.") for p in exc.problems)
        return
    removed = set(patch["nodes"]["remove"])
    added = [n["id"] for n in patch["nodes"]["add"]]
    expected = [i for i in ids(doc, "nodes") if i not in removed] + added
    assert ids(out, "nodes") == expected and len(set(expected)) == len(expected)
    updated = {n["id"] for n in patch["nodes"]["update"]}
    assert {n["id"] for n in out["nodes"] if n.get("tag") == "update"} == updated
