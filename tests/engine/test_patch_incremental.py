"""The incremental patch (``apply_patch_normalized``) against the whole-document route.

For random small patches of a normalized design — valid edits, broken edits, removals that
break references, unknown fields, renames — the incremental answer must equal
``normalize(apply_patch(base, patch))``: the same document (values and key order), or the same
located problems in the same order, or the same misfit of the patch itself.
"""
from __future__ import annotations

import json
import random

import pytest

from designer.engine.document import normalize
from designer.engine.document.patch import InvalidPatch, apply_patch, apply_patch_normalized
from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import build_cluster


@pytest.fixture(scope="module")
def base() -> dict:
    """4 DGX-H100 hosts, rail-optimized, one storage server: normalized, as a revision stores it."""
    return normalize(build_cluster("dgx-h100", 4, fabric="rail-optimized", storage=1))


def outcome(route, base: dict, patch: dict):
    """What a route answers: ("ok", document as ordered JSON), ("invalid", problems) or
    ("misfit", problems)."""
    try:
        document = route(base, patch)
    except InvalidPatch as exc:
        return "misfit", [str(p) for p in exc.problems]
    except InvalidTopology as exc:
        return "invalid", [str(p) for p in exc.problems]
    return "ok", json.dumps(document)   # not sorted: key order is part of the answer


def full(base, patch):
    return normalize(apply_patch(base, patch))


def incremental(base, patch):
    return apply_patch_normalized(base, patch)[0]


# --- random edits ----------------------------------------------------------------------------

def _node_edit(rng: random.Random, base: dict) -> dict:
    node = dict(rng.choice(base["nodes"]))
    change = rng.choice(["attr", "kind", "bad_kind", "bad_group", "capacity", "bad_capacity",
                         "unknown_key", "nested", "bad_id_type"])
    if change == "attr":
        node["attrs"] = {**(node.get("attrs") or {}), "label": f"x{rng.randint(0, 9)}"}
    elif change == "kind":
        node["kind"] = rng.choice(["gpu", "nic", "cpu", "switch"])
    elif change == "bad_kind":
        node["kind"] = "toaster"
    elif change == "bad_group":
        node["group"] = "no-such-group"
    elif change == "capacity":
        node["capacity_gbps"] = rng.choice([1.5, 400, 3200.0])
    elif change == "bad_capacity":
        node["capacity_gbps"] = rng.choice([0, -1, "fast", float("1e-320")])
    elif change == "unknown_key":
        node["colour"] = "red"
    elif change == "nested":
        node["attrs"] = {"deep": {"er": [1, {"x": 2}]}, "speed_gbps": rng.choice([10, -3, None])}
    else:
        node["group"] = 17
    return node


def _link_edit(rng: random.Random, base: dict) -> dict:
    link = dict(rng.choice(base["links"]))
    change = rng.choice(["latency", "bad_latency", "capacity", "zero_capacity", "down_zero",
                         "tech", "bad_tech", "unknown_end", "self_loop", "unknown_key", "basis"])
    if change == "latency":
        link["latency_ns"] = rng.choice([0, 5, 777.5])
    elif change == "bad_latency":
        link["latency_ns"] = -1
    elif change == "capacity":
        link["capacity_gbps"] = rng.choice([100, 400.0])
    elif change == "zero_capacity":
        link["capacity_gbps"] = 0
    elif change == "down_zero":
        link["capacity_gbps"], link["status"] = 0, "down"
    elif change == "tech":
        link.pop("capacity_gbps", None)
        link.pop("capacity_basis", None)
        link["tech"] = rng.choice(["eth400", "pcie5x16", "nvlink4"])
    elif change == "bad_tech":
        link["tech"] = "carrier-pigeon"
    elif change == "unknown_end":
        link["b"] = "h99/gpu0"
    elif change == "self_loop":
        link["b"] = link["a"]
    elif change == "unknown_key":
        link["degrade"] = 0.5
    else:
        link["capacity_basis"] = rng.choice(["raw", "explicit", "wrong"])
    return link


def _added_node(rng: random.Random, base: dict, n: int) -> dict:
    group = rng.choice([g["id"] for g in base["groups"]] + ["nowhere"])
    return {"id": f"new/n{n}", "kind": rng.choice(["gpu", "nvme", "blob"]), "group": group}


def _added_link(rng: random.Random, base: dict, n: int, new_nodes: list) -> dict:
    ids = [x["id"] for x in base["nodes"]] + [x["id"] for x in new_nodes] + ["ghost"]
    link = {"id": f"new/l{n}", "a": rng.choice(ids), "b": rng.choice(ids)}
    if rng.random() < 0.7:
        link["tech"] = rng.choice(["eth400", "pcie5x16", "nope"])
    else:
        link["capacity_gbps"] = rng.choice([100.0, -5])
    return link


def random_patch(rng: random.Random, base: dict) -> dict:
    """A small patch: a few of every kind of edit, valid or not, as a user or an attacker sends."""
    patch: dict = {}
    nodes = patch.setdefault("nodes", {})
    links = patch.setdefault("links", {})
    if rng.random() < 0.5:
        nodes["update"] = list({n["id"]: n for n in (_node_edit(rng, base) for _ in range(rng.randint(1, 3)))}.values())
    if rng.random() < 0.5:
        links["update"] = list({lk["id"]: lk for lk in (_link_edit(rng, base) for _ in range(rng.randint(1, 3)))}.values())
    updated = {x["id"] for x in nodes.get("update", []) + links.get("update", [])}
    if rng.random() < 0.3:
        nodes["remove"] = [n["id"] for n in rng.sample(base["nodes"], 2) if n["id"] not in updated]
    if rng.random() < 0.2:
        links["remove"] = [lk["id"] for lk in rng.sample(base["links"], 2) if lk["id"] not in updated]
    if rng.random() < 0.4:
        nodes["add"] = [_added_node(rng, base, k) for k in range(rng.randint(1, 2))]
    if rng.random() < 0.4:
        links["add"] = [_added_link(rng, base, k, nodes.get("add", [])) for k in range(rng.randint(1, 2))]
    if rng.random() < 0.15:
        leaf_groups = [g["id"] for g in base["groups"]]
        patch["groups"] = {"remove": [rng.choice(leaf_groups)]}
    if rng.random() < 0.15:
        patch["groups"] = {"update": [dict(rng.choice(base["groups"]), parent=rng.choice(["rack0", "nowhere", None]))]}
    if rng.random() < 0.2:
        patch["name"] = rng.choice(["renamed", "bad\u202ename", 42])
    if rng.random() < 0.05:
        patch["capacity_basis"] = "raw"   # a whole-document field: normalized whole
    if rng.random() < 0.1:
        patch["colour"] = "blue"          # an unknown top-level field
    return patch


@pytest.mark.parametrize("seed", range(200))
def test_random_small_patch_equals_full_validation(base, seed):
    rng = random.Random(seed)
    patch = random_patch(rng, base)
    assert outcome(incremental, base, patch) == outcome(full, base, patch), patch


def test_valid_small_patches_take_the_incremental_route(base):
    """The equivalence above is about the incremental route: valid edits must take it (not the
    whole-document fallback) and touch only what they name."""
    for seed in range(20):
        rng = random.Random(seed)
        link = dict(rng.choice(base["links"]), latency_ns=rng.choice([1.0, 250.0]))
        node = dict(rng.choice(base["nodes"]), attrs={"label": f"n{seed}"})
        patch = {"links": {"update": [link]}, "nodes": {"update": [node], "add": [
            {"id": f"new{seed}", "kind": "nvme", "group": node.get("group")}]}, "name": f"r{seed}"}
        document, where = apply_patch_normalized(base, patch)
        assert where is not None and len(where["links"]) == 1
        assert json.dumps(document) == json.dumps(full(base, patch))


def test_problem_is_located_in_the_whole_result(base):
    """A bad kind on the 40th node is reported at nodes[40], not at its place in the small
    document validated in its stead."""
    node = dict(base["nodes"][40], kind="toaster")
    with pytest.raises(InvalidTopology) as exc:
        apply_patch_normalized(base, {"nodes": {"update": [node]}})
    assert [p.path for p in exc.value.problems] == ["nodes[40].kind"]


def test_removed_node_breaks_the_links_naming_it(base):
    """Removing a node that untouched links still name: those links are reported, located."""
    victim = base["links"][0]["a"]
    naming = [i for i, lk in enumerate(base["links"]) if victim in (lk["a"], lk["b"])]
    with pytest.raises(InvalidTopology) as exc:
        apply_patch_normalized(base, {"nodes": {"remove": [victim]}})
    position = next(i for i, n in enumerate(base["nodes"]) if n["id"] == victim)
    expected = {f"links[{i}]" for i in naming}   # no node was removed before them
    assert {p.path.rsplit(".", 1)[0] for p in exc.value.problems} == expected
    assert position >= 0


def test_removed_group_breaks_its_nodes(base):
    host = next(g["id"] for g in base["groups"] if g["kind"] == "host")
    with pytest.raises(InvalidTopology) as exc:
        apply_patch_normalized(base, {"groups": {"remove": [host]}})
    paths = [p.path for p in exc.value.problems]
    assert paths and all(p.endswith(".group") for p in paths)
    assert len(paths) == sum(1 for n in base["nodes"] if n.get("group") == host)


def test_base_is_left_unchanged(base):
    before = json.dumps(base)
    link = dict(base["links"][3], latency_ns=12.0)
    document, where = apply_patch_normalized(base, {"links": {"update": [link]}})
    assert json.dumps(base) == before
    assert document["links"][3]["latency_ns"] == 12.0 and where == {"nodes": sorted(where["nodes"]), "links": [3]}
