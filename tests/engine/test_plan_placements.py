"""Devices moved by hand on the floor plan (``placements`` of the plan request): lengths and media
recomputed by hand, rack power over budget named, located refusals, lenient saved placements.

The design (``build_cluster("dgx-h100", 8, fabric="rail-optimized")``) with ``spacing_m``
``rack_width`` 1 m and ``slack`` 1 m, so lengths are whole metres::

    row 1:  R01-01 [h0 h1 h2]  R01-02 [h3 h4 h5]  R01-03 [h6 h7]  R01-04 [leaf0..leaf7]
    row 2:  R02-01 [spine0 spine1]

    every host: 8 NICs, one 400G cable to each rail leaf (leaf0..leaf7, all in R01-04)

A DGX H100 is 8 U and 10.2 kW; three fill a 40 kW rack (30.6 kW with optics), a fourth does not.
"""
from __future__ import annotations

import pytest

from designer.engine.errors import InvalidScenario
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.physical_plan import plan

SPACING = {"spacing_m": {"rack_width": 1.0, "slack": 1.0}}


@pytest.fixture(scope="module")
def pod():
    return build_cluster("dgx-h100", 8, fabric="rail-optimized")


def _host_cables(p: dict, host: str) -> list[dict]:
    return [c for c in p["cables"] if c["a_device"] == host]


def _racks(p: dict) -> dict:
    return {r["id"]: r for r in p["racks"]}


def test_automatic_layout_of_the_drawing(pod):
    p = plan(pod, SPACING)
    assert {r: [d["id"] for d in rack["devices"]] for r, rack in _racks(p).items()} == {
        "R01-01": ["h0", "h1", "h2"], "R01-02": ["h3", "h4", "h5"], "R01-03": ["h6", "h7"],
        "R01-04": [f"leaf{i}" for i in range(8)], "R02-01": ["spine0", "spine1"]}
    assert p["placements"] == {}


def test_moving_a_host_two_racks_away_lengthens_its_cables_and_changes_the_medium(pod):
    before = plan(pod, SPACING)
    # h6 in R01-03 (slot 3) to the leaves in R01-04 (slot 4): 1 slot x 1 m + 1 m slack = 2 m, DAC (3 m reach).
    assert {(c["length_m"], c["medium"]) for c in _host_cables(before, "h6")} == {(2.0, "dac")}
    after = plan(pod, {**SPACING, "placements": {"h6": {"rack": "R01-01"}}})
    # Two racks away, in R01-01 (slot 1): 3 slots x 1 m + 1 m = 4 m, past DAC's 3 m: ACC (5 m reach).
    moved = _host_cables(after, "h6")
    assert len(moved) == 8 and {(c["length_m"], c["medium"], c["a_rack"]) for c in moved} == {(4.0, "acc", "R01-01")}
    assert sum(c["length_m"] for c in moved) - sum(c["length_m"] for c in _host_cables(before, "h6")) == 8 * 2.0
    # Nobody else's cables changed.
    others = lambda p: [(c["label"], c["length_m"], c["medium"]) for c in p["cables"] if c["a_device"] != "h6"]
    assert others(after) == others(before)
    # It went to the lowest free units of R01-01 (U25, above h2 at U17-U24), R01-03 keeps h7 where it was.
    racks = _racks(after)
    assert [(d["id"], d["position"], d.get("moved", False)) for d in racks["R01-01"]["devices"]] == [
        ("h0", 1, False), ("h1", 9, False), ("h2", 17, False), ("h6", 25, True)]
    assert [(d["id"], d["position"]) for d in racks["R01-03"]["devices"]] == [("h7", 9)]
    assert after["placements"] == {"h6": {"rack": "R01-01", "position": 25}}
    # Four DGX H100 in a 40 kW rack: over budget, allowed and named.
    assert racks["R01-01"]["over_power"] and after["summary"]["over_budget"] == ["R01-01"]
    assert any(f["path"] == "racks[R01-01]" and "h6" in f["message"] for f in after["flags"])
    assert racks["R01-01"]["units_used"] == 32 and racks["R01-03"]["units_used"] == 8
    # The BOM follows: 8 DAC runs became ACC runs.
    media = lambda p: {(m["kind"], m["medium"]): m["count"] for m in p["bom"]["media"]}
    assert media(after)[("host-leaf", "acc")] - media(before).get(("host-leaf", "acc"), 0) == 8
    assert after["bom"]["total_usd"] > before["bom"]["total_usd"]


def test_rack_power_after_a_move_summed_by_hand(pod):
    power = {"server:dgx-h100": 10_000, "medium:dac:400": 0.5, "medium:dac:800": 1.0, "medium:acc:400": 1.5,
             "medium:acc:800": 2.5}
    p = plan(pod, {**SPACING, "power": power, "placements": {"h6": {"rack": "R01-01"}}})
    # R01-01: four hosts x 10,000 W, plus the NIC end (ACC 400G: 1.5 W) of each host's 8 cables to the
    # leaves in R01-04, all 3 slots away (3 x 1 m + 1 m = 4 m: ACC): 4 x 8 x 1.5 W. Switch ends are in R01-04.
    assert _racks(p)["R01-01"]["power_w"] == pytest.approx(4 * 10_000 + 4 * 8 * 1.5)


def test_explicit_unit_and_the_gap_left_behind(pod):
    p = plan(pod, {**SPACING, "placements": {"h0": {"rack": "R01-03", "position": 30}}})
    racks = _racks(p)
    assert [(d["id"], d["position"]) for d in racks["R01-01"]["devices"]] == [("h1", 9), ("h2", 17)]
    assert [(d["id"], d["position"]) for d in racks["R01-03"]["devices"]] == [("h6", 1), ("h7", 9), ("h0", 30)]


def test_a_full_rack_refuses_with_a_located_error(pod):
    # 24 U racks: three 8 U hosts fill R01-01.
    with pytest.raises(InvalidScenario) as info:
        plan(pod, {**SPACING, "rack": {"units": 24}, "placements": {"h6": {"rack": "R01-01"}}})
    [problem] = info.value.problems
    assert problem.path == "placements.h6.rack"
    assert "R01-01 is full" in problem.message and "needs 8 U" in problem.message and "24 of 24 U" in problem.message


@pytest.mark.parametrize("placements, path, words", [
    ({"h6": {"rack": "R09-01"}}, "placements.h6.rack", "no rack 'R09-01'"),
    ({"h99": {"rack": "R01-01"}}, "placements.h99", "no device 'h99'"),
    ({"h6": {"rack": "R01-01", "position": 20}}, "placements.h6.position", "overlap h2 (U17–U24)"),
    ({"h6": {"rack": "R01-01", "position": 40}}, "placements.h6.position", "from 1 to 35"),
    ({"h6": {"rack": "R01-01", "position": 0}}, "placements.h6.position", "from 1 to 35"),
    ({"h6": {"rack": "R01-01", "position": 2.5}}, "placements.h6.position", "whole number"),
    ({"h6": {"rack": "R01-01", "unit": 3}}, "placements.h6.unit", "unknown key"),
    ({"h6": "R01-01"}, "placements.h6", "must be an object"),
    ([["h6", "R01-01"]], "placements", "must be an object"),
])
def test_bad_placements_are_located(pod, placements, path, words):
    with pytest.raises(InvalidScenario) as info:
        plan(pod, {**SPACING, "placements": placements})
    assert any(p.path == path and words in p.message for p in info.value.problems), info.value.problems


def test_every_problem_at_once(pod):
    with pytest.raises(InvalidScenario) as info:
        plan(pod, {"placements": {"h6": {"rack": "R09-01"}, "h7": {"rack": "R01-01", "position": 3}, "zz": {}}})
    assert {p.path for p in info.value.problems} == {"placements.h6.rack", "placements.h7.position", "placements.zz"}


def test_two_hosts_into_the_same_gap_cannot_both_fit(pod):
    # R01-01 has 42 - 24 = 18 U free: room for two 8 U hosts, not three.
    ok = plan(pod, {**SPACING, "placements": {"h6": {"rack": "R01-01"}, "h7": {"rack": "R01-01"}}})
    assert [d["position"] for d in _racks(ok)["R01-01"]["devices"]][-2:] == [25, 33]
    with pytest.raises(InvalidScenario) as info:
        plan(pod, {**SPACING, "placements": {"h3": {"rack": "R01-01"}, "h6": {"rack": "R01-01"},
                                             "h7": {"rack": "R01-01"}}})
    assert [p.path for p in info.value.problems] == ["placements.h7.rack"]


def test_saved_placements_that_no_longer_fit_stay_automatic_and_are_flagged(pod):
    saved = {"h6": {"rack": "R01-01", "position": 25}, "h0": {"rack": "R01-03", "position": 17}}
    p = plan(pod, {**SPACING, "rack": {"units": 24}}, saved_placements=saved)
    # In 24 U racks R01-01 has no U25 (h6 stays in R01-03); h0 moves to R01-03's U17-U24.
    assert p["placements"] == {"h0": {"rack": "R01-03", "position": 17}}
    assert [f["path"] for f in p["flags"] if f["path"].startswith("placements")] == ["placements.h6.position"]
    # A request's own placements replace the saved ones ({} = automatic).
    assert plan(pod, {**SPACING, "placements": {}}, saved_placements=saved)["placements"] == {}


def test_order_of_the_keys_does_not_matter(pod):
    a = {"h6": {"rack": "R01-01"}, "h7": {"rack": "R01-01"}, "h3": {"rack": "R01-03", "position": 1}}
    b = dict(reversed(list(a.items())))
    assert plan(pod, {**SPACING, "placements": a})["placements"] == plan(pod, {**SPACING, "placements": b})["placements"]
