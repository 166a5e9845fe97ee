"""Fabric cables and switches added or removed: the digest told from the stored BOM and its
tallies (``model.bom_edit``) equals the digest of the whole edited document, and is told without
it — over random valid edits of a rail-optimized cluster with a storage fabric and of a
three-tier fat-tree."""
from __future__ import annotations

import random

import pytest

from designer.bridge import digest
from designer.engine.document import normalize
from designer.engine.document.patch import InvalidPatch, apply_patch
from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import build_cluster


@pytest.fixture(scope="module", params=["rail-optimized", "fat-tree"])
def base(request) -> dict:
    options = {"storage": 1} if request.param == "rail-optimized" else {"tiers": 3}
    return normalize(build_cluster("dgx-h100", 4, fabric=request.param, **options))


def _kinds(doc: dict) -> dict:
    return {n["id"]: n["kind"] for n in doc["nodes"]}


def _cables(doc: dict) -> list[dict]:
    kinds = _kinds(doc)
    return [lk for lk in doc["links"] if "switch" in (kinds[lk["a"]], kinds[lk["b"]])]


def _fabric_patch(rng: random.Random, base: dict) -> dict:
    """Cables removed and added (NIC to leaf, switch to switch, storage to its leaf), a switch
    added with its cables or removed with its cables, a NIC, switch or GPU replaced (removed and
    added again under its id, the same to the BOM or not), a GPU removed with its links, now and
    then a neutral update."""
    switches = [n for n in base["nodes"] if n["kind"] == "switch"]
    ends = [n for n in base["nodes"] if n["kind"] in ("nic", "storage", "switch")]
    cables = _cables(base)
    removed = {lk["id"] for lk in rng.sample(cables, rng.randint(0, 3))}
    nodes: dict = {}
    added = []
    for k in range(rng.randint(0, 3)):
        a, b = rng.choice(ends), rng.choice(switches)
        if a["id"] != b["id"]:
            added.append({"id": f"new-cable-{k}", "a": a["id"], "b": b["id"], "tech": rng.choice(["eth400", "eth800"]),
                          **rng.choice([{}, {"bundle": 2}, {"capacity_gbps": 1600.0}])})
    if rng.random() < 0.3:
        like = rng.choice(switches)
        new = dict(like, id="new-switch", attrs={**like["attrs"], "label": "added"})
        nodes["add"] = [new]
        added += [{"id": f"new-switch-up{k}", "a": new["id"], "b": rng.choice(switches)["id"], "tech": "eth400"}
                  for k in range(rng.randint(0, 2))]
    elif rng.random() < 0.4:
        gone = rng.choice(switches)["id"]
        nodes["remove"] = [gone]
        removed |= {lk["id"] for lk in base["links"] if gone in (lk["a"], lk["b"])}
        added = [lk for lk in added if gone not in (lk["a"], lk["b"])]
    if rng.random() < 0.25:   # a device replaced: removed and added again under its id
        old = rng.choice([n for n in base["nodes"] if n["kind"] in ("nic", "switch", "gpu")
                          and n["id"] not in nodes.get("remove", [])])
        nodes["remove"] = nodes.get("remove", []) + [old["id"]]
        nodes["add"] = nodes.get("add", []) + [rng.choice([
            dict(old, attrs={**(old.get("attrs") or {}), "label": "replaced"}),        # the BOM reads the same
            dict(old, attrs={**(old.get("attrs") or {}), "storage": True}),           # it does not
            {k: v for k, v in old.items() if k != "group"}])]                         # nor here (reach)
    if rng.random() < 0.2:   # a GPU removed with every link at it (power per GPU)
        gpu = rng.choice([n for n in base["nodes"] if n["kind"] == "gpu"])["id"]
        nodes["remove"] = nodes.get("remove", []) + [gpu]
        removed |= {lk["id"] for lk in base["links"] if gpu in (lk["a"], lk["b"])}
    if rng.random() < 0.3:
        link = rng.choice([lk for lk in cables if lk["id"] not in removed])
        # a neutral update: a cable's latency, which the BOM does not read
        updated = [dict(link, latency_ns=123.0)]
    else:
        updated = []
    links = {k: v for k, v in (("remove", sorted(removed)), ("add", added), ("update", updated)) if v}
    return {k: v for k, v in (("nodes", nodes), ("links", links)) if v}


def _valid(rng: random.Random, base: dict) -> tuple[dict, dict]:
    for _ in range(50):
        patch = _fabric_patch(rng, base)
        try:
            return patch, normalize(apply_patch(base, patch))
        except (InvalidPatch, InvalidTopology):
            continue
    raise AssertionError("no valid edit in 50 draws")


def _told(base: dict, patch: dict, document: dict):
    return digest.digest_after_edit(digest.revision_digest(base), patch, digest._edits(base, patch, document),
                                    digest.DocumentLookup(base, document))


@pytest.mark.parametrize("seed", range(40))
def test_a_fabric_edit_told_from_the_tallies_equals_the_whole_digest(base, seed):
    patch, document = _valid(random.Random(seed), base)
    told = _told(base, patch, document)
    whole_summary, whole_targets = digest.revision_digest(document)
    if told is not None:
        assert told[0]["bom"] == whole_summary["bom"]
        assert told[0]["bom_tallies"] == whole_summary["bom_tallies"]
        assert {k: v for k, v in told[0].items() if k != "diff"} == {k: v for k, v in whole_summary.items() if k != "diff"}
        assert digest._text(told[1]) == digest._text(whole_targets)
    summary, _ = digest.patched_digest(base, digest.revision_digest(base), patch, document)
    assert {k: v for k, v in summary.items() if k != "diff"} == {k: v for k, v in whole_summary.items() if k != "diff"}


def test_fabric_edits_are_told_without_the_document(base):
    """Most of those edits do not fall back to the whole count (the top tier stays, capacities
    are whole Gb/s), and a told one changes the BOM where the edit does."""
    told = changed = 0
    for seed in range(40):
        patch, document = _valid(random.Random(seed), base)
        result = _told(base, patch, document)
        told += result is not None
        changed += result is not None and result[0]["bom"] != digest.revision_digest(base)[0]["bom"]
    assert told >= 30 and changed >= 20


def test_a_cable_added_and_removed_by_hand(base):
    """Hand count: one 400G cable from a NIC to a leaf adds one port used at that leaf, one
    cable and 400 Gb/s of injection; removing it gives the stored BOM back."""
    nic = next(n for n in base["nodes"] if n["kind"] == "nic" and n.get("group") == "h0")
    leaf = next(n for n in base["nodes"] if n["kind"] == "switch" and n["attrs"].get("role") == "leaf")
    add = {"links": {"add": [{"id": "extra", "a": nic["id"], "b": leaf["id"], "tech": "eth400"}]}}
    document = normalize(apply_patch(base, add))
    before = digest.revision_digest(base)
    told = _told(base, add, document)
    assert told is not None
    bom, old = told[0]["bom"], before[0]["bom"]
    assert bom["ports"]["used"] == old["ports"]["used"] + 1
    assert sum(bom["cables"].values()) == sum(old["cables"].values()) + 1
    assert bom["injection_gbps"] == old["injection_gbps"] + 400.0
    back = {"links": {"remove": ["extra"]}}
    again = digest.digest_after_edit(told, back, digest._edits(document, back, base), digest.DocumentLookup(document, base))
    assert again is not None and again[0]["bom"] == old and again[0]["bom_tallies"] == before[0]["bom_tallies"]


def test_a_device_replaced_under_its_id_is_an_update(base):
    """A NIC removed and added again under its id, as a CPU, storage-marked or moved out of its
    host: the cables the edit leaves at it now count otherwise, so the whole document is counted
    (review finding: the replacement's links were read with the new version only)."""
    nic = next(n for n in base["nodes"] if n["kind"] == "nic" and n.get("group") == "h0")
    kinds = _kinds(base)
    cable = next(lk for lk in base["links"] if nic["id"] in (lk["a"], lk["b"])
                 and "switch" in (kinds[lk["a"]], kinds[lk["b"]]))
    for new in (dict(nic, kind="cpu", attrs={}), dict(nic, attrs={**nic["attrs"], "storage": True})):
        for links in ({}, {"links": {"remove": [cable["id"]]}}):
            patch = {"nodes": {"remove": [nic["id"]], "add": [new]}, **links}
            try:
                document = normalize(apply_patch(base, patch))
            except (InvalidPatch, InvalidTopology):
                continue
            told = _told(base, patch, document)
            assert told is None or told[0]["bom"] == digest.revision_digest(document)[0]["bom"]
    same = dict(nic, attrs={**nic["attrs"], "label": "spare"})
    patch = {"nodes": {"remove": [nic["id"]], "add": [same]}}
    document = normalize(apply_patch(base, patch))
    told = _told(base, patch, document)
    assert told is not None and told[0]["bom"] == digest.revision_digest(base)[0]["bom"]


def test_a_gpu_added_changes_the_power_per_gpu(base):
    """A GPU added (with its NVLink to a GPU of its host) is counted in the power per GPU."""
    gpu = next(n for n in base["nodes"] if n["kind"] == "gpu")
    twin = dict(gpu, id=gpu["id"] + "-twin")
    nvlink = next(lk for lk in base["links"] if gpu["id"] in (lk["a"], lk["b"]))
    patch = {"nodes": {"add": [twin]}, "links": {"add": [dict(nvlink, id="twin-link", a=twin["id"], b=gpu["id"])]}}
    document = normalize(apply_patch(base, patch))
    told = _told(base, patch, document)
    assert told is not None
    assert told[0]["bom"] == digest.revision_digest(document)[0]["bom"]
    assert told[0]["bom"]["power"]["gpus"] == digest.revision_digest(base)[0]["bom"]["power"]["gpus"] + 1


def test_what_the_tallies_cannot_tell_takes_the_whole_way(base):
    """A capacity that is not a whole number of Gb/s (sums could round another way) and a
    digest without tallies (saved before they were kept) are counted from the whole document —
    with the same answer."""
    nic = next(n for n in base["nodes"] if n["kind"] == "nic")
    leaf = next(n for n in base["nodes"] if n["kind"] == "switch")
    odd = {"links": {"add": [{"id": "odd", "a": nic["id"], "b": leaf["id"], "tech": "eth400", "capacity_gbps": 370.8}]}}
    document = normalize(apply_patch(base, odd))
    assert _told(base, odd, document) is None
    patch = {"links": {"add": [{"id": "extra", "a": nic["id"], "b": leaf["id"], "tech": "eth400"}]}}
    document = normalize(apply_patch(base, patch))
    summary, targets = digest.revision_digest(base)
    old = ({**summary, "bom_tallies": None}, targets)
    assert digest.digest_after_edit(old, patch, digest._edits(base, patch, document),
                                    digest.DocumentLookup(base, document)) is None
