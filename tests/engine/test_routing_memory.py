"""Routing's compact variants give the routes of the plain ones.

Switch paths: the next hops of every switch scanned one matrix per switch degree, or flat (above
``_MAX_DEGREE_GROUPS`` degrees); distinct (target, switch) keys by presence table or by
``np.unique``. Each combination equals the plain depth-first enumeration of
``test_routing_switch_paths`` on every pair of switches of a three-tier fabric (16 DGX-H100,
leaves → pod spines → cores: three switch degrees) and of a two-tier one with parallel links::

    [hX/nicI]==[leafI]==[spine0..2]        (+ a second leaf0==spine0 link)
"""
import numpy as np
import pytest

from designer.engine.model.fabrics import build_cluster
from designer.engine.routing import fabric
from designer.engine.model.topology import Topology
from tests.engine.test_routing import mini
from tests.engine.test_routing_switch_paths import assert_same_paths


@pytest.fixture(scope="module")
def three_tier():
    return Topology.from_document(build_cluster("dgx-h100", 16, tiers=3, leaves_per_rail=2))


@pytest.mark.parametrize("groups", [0, 8])            # 0: every scan flat
@pytest.mark.parametrize("dense_bytes", [0, 1 << 40])  # 0: np.unique always; huge: table always
def test_switch_paths_whatever_the_scan_and_dedupe(monkeypatch, three_tier, groups, dense_bytes):
    monkeypatch.setattr(fabric, "_MAX_DEGREE_GROUPS", groups)
    monkeypatch.setattr(fabric, "_DENSE_BYTES_PER_KEY", dense_bytes)
    assert assert_same_paths(three_tier) == 17   # spine0 -> spine1: via each of 16 leaves, or the core
    parallel = mini(hosts=2, spines=3, extra_links=[("leaf0", "spine0", 400, "eth400")])
    assert assert_same_paths(parallel) == 4


@pytest.mark.parametrize("dense_bytes", [0, 1 << 40])
def test_distinct_is_unique_with_inverse(monkeypatch, dense_bytes):
    monkeypatch.setattr(fabric, "_DENSE_BYTES_PER_KEY", dense_bytes)
    distinct, inverse = fabric._distinct(np.array([7, 3, 7, 0, 9, 3], dtype=np.int64), 10)
    assert distinct.tolist() == [0, 3, 7, 9]
    assert inverse.tolist() == [2, 1, 2, 0, 3, 1]


def test_segment_table_weights_by_part():
    """List parts keep their weights, array parts are rows of weight 1, joined in order."""
    from designer.engine.routing.csr import SegTable

    table = SegTable()
    assert table.add("a", [[1, 2], [3]], [2.0, 1.0]) == (0, 2)
    assert table.add_csr("b", np.array([0, 3]), np.array([4, 5, 6])) == (2, 2)
    assert table.add_csr("e", np.array([1], dtype=np.int32), np.array([9], dtype=np.int32)) == (4, 1)
    assert table.add("c", [[7]]) == (5, 1)
    assert table.add("c", [[8]], [3.0]) == (5, 1)                       # known key: unchanged
    assert table.add("d", [[8], [9]], [0.25, 0.75]) == (6, 2)           # joins the last list part
    ptr, tokens, weights = table.arrays()
    assert ptr.dtype == tokens.dtype == np.int64
    assert ptr.tolist() == [0, 2, 3, 3, 6, 7, 8, 9, 10]
    assert tokens.tolist() == [1, 2, 3, 4, 5, 6, 9, 7, 8, 9]
    assert weights.tolist() == [2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.25, 0.75]
    assert table.weights == weights.tolist()
