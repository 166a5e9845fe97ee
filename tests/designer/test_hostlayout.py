"""The host drawing follows the PCIe tree (designer/figures/hostlayout.py; the editor's
static/js/editor/layout.js hostBlock applies the same rule, tests/js/layout.test.mjs).

A small imported-style server (no socket roles)::

    nic0  nic1                     row 0  (NICs: the fabric side)
       \\   |
    gpu0 | gpu1  nvme0             row 1  (devices; no NVSwitch, so its row is dropped)
      \\  | /      |
       sw0        |                row 2  (PCIe switch)
        |         |
       cpu0 ------+                row 3  (root complex = the CPU)
        |
       mem0                        row 4

gpu0, gpu1 and nic0 hang off sw0; nvme0 and nic1 straight off cpu0.
"""
from __future__ import annotations

from itertools import pairwise

from designer.figures.hostlayout import host_tree_layout

KINDS = {"cpu0": "cpu", "mem0": "memory", "sw0": "pcie_switch", "gpu0": "gpu", "gpu1": "gpu", "nic0": "nic",
         "nic1": "nic", "nvme0": "nvme"}
LINKS = [("cpu0", "mem0"), ("cpu0", "sw0"), ("sw0", "gpu0"), ("sw0", "gpu1"), ("sw0", "nic0"),
         ("cpu0", "nvme0"), ("cpu0", "nic1")]


def test_rows_follow_the_tree_with_nics_on_the_fabric_side():
    pos, _, rows = host_tree_layout(KINDS, LINKS)
    row = {n: r for n, (_, r) in pos.items()}
    assert row == {"nic0": 0, "nic1": 0, "gpu0": 1, "gpu1": 1, "nvme0": 1, "sw0": 2, "cpu0": 3, "mem0": 4}
    assert rows == 5


def test_columns_are_a_tidy_tree():
    """Leaves in tree order take columns 0.5, 1.5, ...: gpu0, gpu1, nic0 (sw0's), nvme0, nic1 (cpu0's);
    sw0 sits over the mean of its children, cpu0 over the mean of sw0 and its own leaves."""
    pos, width, _ = host_tree_layout(KINDS, LINKS)
    col = {n: x for n, (x, _) in pos.items()}
    assert [col[n] for n in ("gpu0", "gpu1", "nic0", "nvme0", "nic1")] == [0.5, 1.5, 2.5, 3.5, 4.5]
    assert col["sw0"] == 1.5  # (0.5 + 1.5 + 2.5) / 3
    assert col["cpu0"] == (1.5 + 3.5 + 4.5) / 3 and col["mem0"] == col["cpu0"]
    assert width == 5


def test_no_node_sits_on_a_link_of_two_others():
    """A former bug: gpu0-cpu0 drawn straight through nic0. No node lies on the segment of a link
    it is not an end of (within 0.05 columns)."""
    pos, _, _ = host_tree_layout(KINDS, LINKS + [("gpu0", "nic0")])
    for a, b in LINKS:
        (xa, ya), (xb, yb) = pos[a], pos[b]
        for n, (x, y) in pos.items():
            if n in (a, b) or not min(ya, yb) < y < max(ya, yb):
                continue
            t = (y - ya) / (yb - ya)
            assert abs(xa + t * (xb - xa) - x) > 0.05, (a, b, n)


def test_sockets_sit_under_their_root_complexes():
    """DGX style: cpu0 (role socket) links rc0 and rc1 (root complexes), each with a switch and a GPU."""
    kinds = {"cpu0": "cpu", "rc0": "cpu", "rc1": "cpu", "sw0": "pcie_switch", "sw1": "pcie_switch",
             "gpu0": "gpu", "gpu1": "gpu"}
    links = [("cpu0", "rc0"), ("cpu0", "rc1"), ("rc0", "sw0"), ("rc1", "sw1"), ("sw0", "gpu0"), ("sw1", "gpu1")]
    pos, _, rows = host_tree_layout(kinds, links, {"cpu0": "socket", "rc0": "root_complex", "rc1": "root_complex"})
    assert pos["gpu0"] == (0.5, 0) and pos["sw0"] == (0.5, 1) and pos["rc0"] == (0.5, 2)
    assert pos["cpu0"] == (1.0, 3) and rows == 4


def test_nodes_of_a_row_never_overlap_and_every_node_is_placed():
    kinds = {**KINDS, "nvs0": "nvswitch", "nvs1": "nvswitch", "lonely": "gpu"}
    pos, width, _ = host_tree_layout(kinds, LINKS)
    assert set(pos) == set(kinds)
    by_row = {}
    for x, r in pos.values():
        by_row.setdefault(r, []).append(x)
    for xs in by_row.values():
        xs.sort()
        assert all(b - a >= 1 for a, b in pairwise(xs))
    assert all(0 < x < width for x, _ in pos.values())


def test_nvswitches_keep_off_a_nic_link_crossing_their_row():
    """The H200 NCCL XML import (tests/engine/data/import/dgx-h200-nccl-topo.xml)::

        [nic0]        [nic1]           row 0
        4 NVSwitches                   row 1, spread at 0.75 2.25 3.75 5.25
        gpu0 gpu1 | gpu2 gpu3          row 2 (every GPU to every NVSwitch)
          [sw0]       [sw1]            row 3
          [cpu0]──────[cpu1]           row 4

    nic0 (2.5) to sw0 (1.5) crosses row 1 at 2.17, nic1 (5.5) to sw1 (4.5) at 5.17: nvs1 and nvs3
    sat on those links. Each moves by quarter columns to the nearest place >= 0.4 column clear:
    2.75 and 5.75 (the same numbers as tests/js/layout.test.mjs)."""
    kinds = {"cpu0": "cpu", "cpu1": "cpu", "sw0": "pcie_switch", "sw1": "pcie_switch", "nic0": "nic", "nic1": "nic",
             **{f"gpu{i}": "gpu" for i in range(4)}, **{f"nvs{i}": "nvswitch" for i in range(4)}}
    links = [("sw0", "cpu0"), ("gpu0", "sw0"), ("gpu1", "sw0"), ("nic0", "sw0"), ("sw1", "cpu1"), ("gpu2", "sw1"),
             ("gpu3", "sw1"), ("nic1", "sw1"), ("cpu0", "cpu1")]
    links += [(f"gpu{g}", f"nvs{n}") for g in range(4) for n in range(4)]
    pos, width, _ = host_tree_layout(kinds, links)
    assert [pos[f"nvs{i}"] for i in range(4)] == [(0.75, 1), (2.75, 1), (3.75, 1), (5.75, 1)]
    assert width == 6
    for nic, sw in (("nic0", "sw0"), ("nic1", "sw1")):
        (xa, ra), (xb, rb) = pos[nic], pos[sw]
        x = xa + (xb - xa) * (1 - ra) / (rb - ra)
        assert all(abs(pos[f"nvs{i}"][0] - x) >= 0.4 for i in range(4))
