"""NCCL's double binary tree (``collectives.tree.node_trees``; NVIDIA/nccl src/graph/trees.cc).

The first tree is the bit tree rooted at 0 of NCCL's illustration for 14 ranks::

    0---------------8
             ______/ \\______
            4               12
          /   \\            /  \\
        2       6       10     \\
       / \\     / \\     /  \\     \\
      1   3   5   7   9   11    13

the second its mirror (even count) or its shift by one rank (odd count). Every rank then forwards
(has children) in at most one tree — with an odd count rank 0 forwards in both (it roots the
first and, shifted by one, forwards in the second) — so no host carries both trees' interior
traffic, and a tree all-reduce across hosts runs at the NICs' rate.
"""
import pytest

from designer.engine.traffic.collectives.tree import node_trees


def _parents(pairs) -> dict:
    parent, child = pairs
    return dict(zip(child.tolist(), parent.tolist()))


def test_the_first_tree_is_nccls_bit_tree():
    assert _parents(node_trees(14)[0]) == {1: 2, 3: 2, 5: 6, 7: 6, 9: 10, 11: 10, 13: 12,
                                           2: 4, 6: 4, 10: 12, 4: 8, 12: 8, 8: 0}


def test_an_even_count_mirrors_it_and_an_odd_one_shifts_it():
    first, second = node_trees(14)
    assert _parents(second) == {13 - c: 13 - p for c, p in _parents(first).items()}
    first, second = node_trees(13)
    assert _parents(second) == {(c + 1) % 13: (p + 1) % 13 for c, p in _parents(first).items()}


@pytest.mark.parametrize("count", [2, 3, 4, 5, 8, 14, 16, 31, 32, 100, 128])
def test_both_trees_span_the_ranks_and_share_almost_no_forwarder(count):
    trees = node_trees(count)
    for pairs in trees:
        up = _parents(pairs)
        assert len(up) == count - 1 and set(up.values()) <= set(range(count))
        roots = set(range(count)) - set(up)
        assert len(roots) == 1
        (root,) = roots
        assert all(_reaches(rank, root, up) for rank in range(count))
    forwarders = [set(parent.tolist()) for parent, _ in trees]
    both = forwarders[0] & forwarders[1]
    assert both == set() if count % 2 == 0 else both <= {0}


def _reaches(rank: int, root: int, up: dict) -> bool:
    """Whether walking up from ``rank`` ends at ``root`` (no cycle, no dead end)."""
    for _ in range(len(up) + 1):
        if rank == root:
            return True
        rank = up[rank]
    return False
