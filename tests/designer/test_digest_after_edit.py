"""A patch's digest told from the stored one and the edited items (``digest_after_edit``) equals
the digest made from the whole patched document, over random edits (valid ones) of a design."""
from __future__ import annotations

import random

import pytest

from designer.bridge import digest
from designer.engine.document import normalize
from designer.engine.document.patch import InvalidPatch, apply_patch
from designer.engine.errors import InvalidTopology
from designer.engine.model.bom import bom_reads
from designer.engine.model.fabrics import build_cluster
from tests.engine.test_patch_incremental import random_patch


@pytest.fixture(scope="module")
def base() -> dict:
    return normalize(build_cluster("dgx-h100", 4, fabric="rail-optimized", storage=1))


def _inside_host_patch(rng: random.Random, base: dict) -> dict:
    """Drives added and removed with their PCIe links, labels and latencies edited, a move."""
    pcie = [n for n in base["nodes"] if n["kind"] == "pcie_switch"]
    patch: dict = {"nodes": {}, "links": {}}
    adds = []
    for k in range(rng.randint(0, 2)):
        host = rng.choice(pcie)
        adds.append(({"id": f"{host['group']}/x{k}", "kind": rng.choice(["nvme", "cpu"]), "group": host["group"]},
                     {"id": f"{host['group']}/x{k}-l", "a": host["id"], "b": f"{host['group']}/x{k}", "tech": "pcie5x4"}))
    if adds:
        patch["nodes"]["add"] = [a for a, _ in adds]
        patch["links"]["add"] = [b for _, b in adds]
    drives = [n for n in base["nodes"] if n["kind"] == "nvme"]
    if rng.random() < 0.5 and drives:
        gone = rng.choice(drives)["id"]
        patch["nodes"]["remove"] = [gone]
        patch["links"]["remove"] = [lk["id"] for lk in base["links"] if gone in (lk["a"], lk["b"])]
    links = [lk for lk in base["links"] if lk.get("tech", "").startswith(("pcie", "nvlink"))]
    if rng.random() < 0.7:
        link = rng.choice(links)
        if link["id"] not in patch["links"].get("remove", []):
            patch["links"]["update"] = [dict(link, latency_ns=rng.choice([1.0, 99.0]),
                                             tech=rng.choice([link["tech"], "pcie5x16"]))]
    if rng.random() < 0.3:
        patch["layout"] = {"positions": {base["nodes"][0]["id"]: [1, 2]}}
    return {k: v for k, v in patch.items() if v}


def _fabric_update_patch(rng: random.Random, base: dict) -> dict:
    """Updates of GPUs, NICs, switches and network cables: attrs and latencies the BOM does not
    read (a GPU's model, a NIC's speed, a switch's label, a cable's latency) and, now and then,
    one it does (a switch's model, a cable's bundle)."""
    kinds = {n["id"]: n["kind"] for n in base["nodes"]}
    fabric = [n for n in base["nodes"] if n["kind"] in ("gpu", "nic", "switch", "storage")]
    cables = [lk for lk in base["links"] if "switch" in (kinds[lk["a"]], kinds[lk["b"]])]
    nodes = []
    for node in rng.sample(fabric, rng.randint(1, 3)):
        attrs = dict(node.get("attrs") or {})
        attrs[rng.choice(["label", "port_gbps", "model", "note"])] = rng.choice(["x", 800.0, "eth-51t2"])
        nodes.append(dict(node, attrs=attrs))
    links = [dict(lk, **rng.choice([{"latency_ns": rng.choice([50.0, 900.0])}, {"bundle": 2}, {}]))
             for lk in rng.sample(cables, rng.randint(0, 2))]
    return {k: {"update": v} for k, v in (("nodes", nodes), ("links", links)) if v}


def _valid_edit(rng: random.Random, base: dict, inside) -> tuple[dict, dict]:
    """The first valid random edit ``rng`` draws (a digest is only made of a saved revision);
    ``inside``: inside hosts (True), of the fabric ("fabric") or anything (False)."""
    draw = {True: _inside_host_patch, "fabric": _fabric_update_patch}.get(inside, random_patch)
    for _ in range(50):
        patch = draw(rng, base)
        try:
            return patch, normalize(apply_patch(base, patch))
        except (InvalidPatch, InvalidTopology):
            continue
    raise AssertionError("no valid edit in 50 draws")


@pytest.mark.parametrize("seed", range(90))
def test_digest_after_edit_equals_the_whole_digest(base, seed):
    patch, document = _valid_edit(random.Random(seed), base, inside=[False, True, "fabric"][seed % 3])
    stored = digest.revision_digest(base)
    summary, targets = digest.patched_digest(base, stored, patch, document)
    whole_summary, whole_targets = digest.revision_digest(document)
    assert digest._text(targets) == digest._text(whole_targets)
    assert {k: v for k, v in summary.items() if k != "diff"} == {k: v for k, v in whole_summary.items() if k != "diff"}


def test_inside_host_edits_are_told_without_the_document(base):
    """The edits above do not fall back to the whole document: drives and PCIe links are outside
    the fabric."""
    told = 0
    for seed in range(1, 40, 2):
        patch, document = _valid_edit(random.Random(seed), base, inside=True)
        told += digest.digest_after_edit(digest.revision_digest(base), patch, digest._edits(base, patch, document),
                                         digest.DocumentLookup(base, document)) is not None
    assert told >= 15


def test_fabric_updates_the_bom_does_not_read_are_told_without_the_document(base):
    """A GPU's, NIC's or switch's attrs and a cable's latency keep the stored BOM (the whole
    document is not read); a cable's bundle does not (its ports are counted again)."""
    told = refused = 0
    for seed in range(40):
        patch, document = _valid_edit(random.Random(seed), base, inside="fabric")
        edits = digest._edits(base, patch, document)
        result = digest.digest_after_edit(digest.revision_digest(base), patch, edits,
                                          digest.DocumentLookup(base, document))
        changed = {key for key, e in edits.items() for _, old, new in e["updated"]
                   if bom_reads(key, old) != bom_reads(key, new)}
        if not changed:
            assert result is not None, patch
            told += 1
        elif "links" in changed:
            assert result is None, patch
            refused += 1
    assert told >= 10 and refused >= 5


@pytest.mark.parametrize("seed", range(30))
def test_a_switch_model_told_from_its_links_equals_the_whole_digest(base, seed):
    """A switch's model, radix or port speed changed (with other fabric updates): its BOM rows
    are moved, its ports counted from its links, and the digest equals the whole document's."""
    rng = random.Random(seed)
    switches = [n for n in base["nodes"] if n["kind"] == "switch"]
    patch, document = _valid_edit(rng, base, inside="fabric")
    changed = []
    for node in rng.sample(switches, rng.randint(1, 2)):
        attrs = {**node["attrs"], **rng.choice([{"model": "eth-25t6", "radix": 64}, {"model": "mystery-9"},
                                                {"port_gbps": 800.0}, {"radix": None}])}
        changed.append(dict(node, attrs=attrs))
    patch = {**patch, "nodes": {"update": [n for n in patch.get("nodes", {}).get("update", [])
                                           if n["id"] not in {c["id"] for c in changed}] + changed}}
    document = normalize(apply_patch(base, patch))

    told = digest.digest_after_edit(digest.revision_digest(base), patch, digest._edits(base, patch, document),
                                    digest.DocumentLookup(base, document))
    whole_summary, whole_targets = digest.revision_digest(document)
    neutral = all(bom_reads("links", old) == bom_reads("links", new)
                  for _, old, new in digest._edits(base, patch, document).get("links", {"updated": []})["updated"])
    assert (told is not None) == neutral
    if told is not None:
        assert told[0] == whole_summary and digest._text(told[1]) == digest._text(whole_targets)


def test_a_switch_attr_the_bom_cannot_count_takes_the_whole_way(base):
    """A radix written as text cannot be counted: the edit falls back to the whole document
    (whose BOM is then None, as before), it does not fail. (The validator now refuses such a
    radix before any save — ``tests/engine/test_validator_radix.py``; the digest stays safe for
    a document that did not go through it.)"""
    leaf = next(n for n in base["nodes"] if n["kind"] == "switch")
    patch = {"nodes": {"update": [dict(leaf, attrs={**leaf["attrs"], "radix": "64"})]}}
    document = apply_patch(base, patch)

    edits = digest._edits(base, patch, document)
    assert digest.digest_after_edit(digest.revision_digest(base), patch, edits,
                                    digest.DocumentLookup(base, document)) is None
    assert digest.patched_digest(base, digest.revision_digest(base), patch, document)[0]["bom"] is None


def _whole_equal(base: dict, patch: dict, validated: bool = True) -> None:
    document = normalize(apply_patch(base, patch)) if validated else apply_patch(base, patch)
    summary, targets = digest.patched_digest(base, digest.revision_digest(base), patch, document)
    whole_summary, whole_targets = digest.revision_digest(document)
    assert {k: v for k, v in summary.items() if k != "diff"} == {k: v for k, v in whole_summary.items() if k != "diff"}
    assert digest._text(targets) == digest._text(whole_targets)


def test_a_host_link_moved_onto_a_switch_is_counted(base):
    """A PCIe link is outside the fabric by its tech, but between a NIC and a switch it is the
    fabric's injection: rewired there, the BOM is counted again (it changes)."""
    link = next(lk for lk in base["links"] if lk["id"] == "h0/nic0-pcie0")   # nic0 ⇄ its PCIe switch
    rewired = {"links": {"update": [dict(link, b="leaf1")]}}
    _whole_equal(base, rewired)
    assert digest.patched_digest(base, digest.revision_digest(base), rewired, normalize(apply_patch(base, rewired)))[
        0]["bom"] != digest.revision_digest(base)[0]["bom"]


def test_any_node_moved_to_another_group_is_counted(base):
    """A CPU cabled to a leaf in its rack (a hand-drawn design): moved out of its host group the
    cable is no longer in-rack copper — any node's group is read, whatever its kind."""
    cpu = next(n for n in base["nodes"] if n["kind"] == "cpu" and n.get("group") == "h0")   # h0 is in rack0
    leaf = next(n for n in base["nodes"] if n["kind"] == "switch")
    wired = {"nodes": {"update": [dict(leaf, group="rack0")]},
             "links": {"add": [{"id": "cpu-mgmt", "a": cpu["id"], "b": leaf["id"], "tech": "eth400"}]}}
    cabled = normalize(apply_patch(base, wired))
    loose = {k: v for k, v in cpu.items() if k != "group"}                                  # out of the rack
    _whole_equal(cabled, {"nodes": {"update": [loose]}})


def test_a_switch_figure_that_overflows_takes_the_whole_way(base):
    """A radix of 1e308 overflows the free ports to inf: the adjusted BOM is not stored (the
    database's JSON refuses Infinity); the whole count answers as before."""
    leaves = [n for n in base["nodes"] if n["kind"] == "switch"][:2]
    first = {"nodes": {"update": [dict(leaves[0], attrs={**leaves[0]["attrs"], "radix": 1e308})]}}
    once = apply_patch(base, first)      # (refused by the validator now; the digest stays safe)
    patch = {"nodes": {"update": [dict(leaves[1], attrs={**leaves[1]["attrs"], "radix": 1e308})]}}
    document = apply_patch(once, patch)
    stored = digest.revision_digest(once)
    edits = digest._edits(once, patch, document)
    if stored[0]["bom"] is not None:
        assert digest.digest_after_edit(stored, patch, edits, digest.DocumentLookup(once, document)) is None
    _whole_equal(once, patch, validated=False)
