"""``bom.bom_reads`` names everything the BOM reads of an item: an update that keeps its answer
keeps the BOM (random updates of every kind of node and link of a cluster with a storage
fabric, hand-picked fields and random ones), and an update of a field it reads can change it."""
from __future__ import annotations

import random

import pytest

from designer.engine.document import normalize
from designer.engine.errors import InvalidTopology
from designer.engine.model.bom import bom_reads, fabric_bom
from designer.engine.model.fabrics import build_cluster


@pytest.fixture(scope="module")
def base() -> dict:
    return normalize(build_cluster("dgx-h100", 4, fabric="rail-optimized", storage=1))


# Values an edit may put in a field: the BOM must either not read it or read it through bom_reads.
_VALUES = [None, 0, 1, 2, 400.0, 800.0, "leaf", "spine", "core", "eth-51t2", "ib-ndr-64", True, False,
           "x", 64, 128, "raw", "eth400", "eth800", "h0", "h1", "r0"]


def _updated(rng: random.Random, base: dict) -> tuple[str, dict, dict]:
    """(key, old, new): one node or link of ``base`` with one field or attr set to a random value."""
    key = rng.choice(["nodes", "links"])
    old = rng.choice(base[key])
    new = dict(old)
    if key == "nodes" and rng.random() < 0.7:
        attrs = dict(old.get("attrs") or {})
        name = rng.choice(sorted(attrs) + ["tier", "role", "storage", "model", "radix", "port_gbps", "label"])
        attrs[name] = rng.choice(_VALUES)
        new["attrs"] = attrs
    else:
        fields = sorted(set(old) - {"id", "attrs"}) + (["latency_ns", "bundle", "capacity_gbps", "capacity_basis"]
                                              if key == "links" else ["group", "capacity_gbps"])
        name = rng.choice(fields)
        if name in ("a", "b", "group"):   # another existing end (or group) keeps the document loadable
            pool = [n["id"] for n in base["nodes"]] if name != "group" else [g["id"] for g in base["groups"]]
            new[name] = rng.choice(pool)
        elif name not in ("kind", "tech"):
            new[name] = rng.choice(_VALUES)
    return key, old, new


def _with(base: dict, key: str, new: dict) -> dict:
    return {**base, key: [new if item["id"] == new["id"] else item for item in base[key]]}


@pytest.mark.parametrize("seed", range(40))
def test_an_update_that_keeps_what_the_bom_reads_keeps_the_bom(base, seed):
    rng = random.Random(seed)
    before = fabric_bom(base)
    kept = 0
    for _ in range(25):
        key, old, new = _updated(rng, base)
        if bom_reads(key, old) != bom_reads(key, new):
            continue
        try:
            after = fabric_bom(_with(base, key, new))
        except InvalidTopology:
            continue   # only a valid document is saved (and gets a BOM)
        kept += 1
        assert after == before, (key, old, new)
    assert kept   # every seed checks some


def test_a_field_the_bom_reads_changes_it(base):
    """The fields are named because the BOM reads them: a switch's model, a cable's bundle."""
    leaf = next(n for n in base["nodes"] if n["kind"] == "switch")
    cable = next(lk for lk in base["links"] if leaf["id"] in (lk["a"], lk["b"]))
    before = fabric_bom(base)
    other = dict(leaf, attrs={**leaf["attrs"], "model": "ib-ndr-64"})
    assert bom_reads("nodes", other) != bom_reads("nodes", leaf)
    assert fabric_bom(_with(base, "nodes", other)) != before
    thicker = dict(cable, bundle=2)
    assert bom_reads("links", thicker) != bom_reads("links", cable)
    assert fabric_bom(_with(base, "links", thicker)) != before
    gpu = next(n for n in base["nodes"] if n["kind"] == "gpu")
    assert bom_reads("nodes", dict(gpu, attrs={**gpu["attrs"], "model": "B200"})) == bom_reads("nodes", gpu)


def test_switch_rows_are_in_a_total_order(base):
    """Rows that tie on network, tier rank and model (custom tiers rank alike) are ordered by
    tier, radix and port speed — never by where their first switch sits in the document — so
    moving a switch between rows (bom_after_switch_update) gives the whole count's order."""
    from designer.engine.model.bom import bom_after_switch_update, bom_rows_ordered, switch_ports_used

    leaves = [n for n in base["nodes"] if n["kind"] == "switch" and n["attrs"].get("tier") == "leaf"][:2]
    custom = [dict(leaves[0], attrs={**leaves[0]["attrs"], "tier": "pod"}),
              dict(leaves[1], attrs={**leaves[1]["attrs"], "tier": "agg", "model": "eth-25t6"})]
    doc = _with(_with(base, "nodes", custom[0]), "nodes", custom[1])
    for document in (doc, {**doc, "nodes": list(reversed(doc["nodes"]))}):
        assert bom_rows_ordered(fabric_bom(document))
    moved = dict(custom[0], attrs={**custom[0]["attrs"], "model": "eth-25t6"})
    after = _with(doc, "nodes", moved)
    told = bom_after_switch_update(fabric_bom(doc), custom[0], moved,
                                   switch_ports_used(moved["id"], after["links"]))
    assert told == fabric_bom(after)


def test_a_bom_counted_before_the_total_order_is_not_moved(base):
    """A stored BOM whose rows lack a field or are out of today's order is counted again."""
    from designer.engine.model.bom import bom_after_switch_update, bom_rows_ordered

    bom = fabric_bom(base)
    leaf = next(n for n in base["nodes"] if n["kind"] == "switch")
    moved = dict(leaf, attrs={**leaf["attrs"], "model": "eth-25t6"})
    old = {**bom, "switches": [{k: v for k, v in r.items() if k != "network"} for r in bom["switches"]]}
    assert not bom_rows_ordered(old) and bom_after_switch_update(old, leaf, moved, 8) is None
    if len(bom["switches"]) > 1:
        swapped = {**bom, "switches": list(reversed(bom["switches"]))}
        assert not bom_rows_ordered(swapped) and bom_after_switch_update(swapped, leaf, moved, 8) is None
