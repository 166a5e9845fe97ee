"""A document kept as base + cumulative patch (``designer.engine.document.delta``) against the
whole-document route, over chains of random edits.

Each step applies a random small patch (valid or not: ``test_patch_incremental.random_patch``)
both ways: to the whole current document (``normalize(apply_patch(doc, patch))``) and to the
delta, reading the base only through a lookup. The answers must be the same — the document
(``apply_patch(base, delta.to_patch())``), or the same located problems — and the delta's
canonical text, streamed in pieces, must be the document's canonical JSON byte for byte.
"""
from __future__ import annotations

import json
import random

import pytest

from designer.bridge.common import canonical_json_bytes
from designer.engine.document import normalize
from designer.engine.document.delta import Delta, DocumentItems, NotIncremental, delta_from_documents
from designer.engine.document.patch import InvalidPatch, apply_patch
from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import build_cluster
from tests.engine.test_patch_incremental import random_patch


@pytest.fixture(scope="module")
def base() -> dict:
    return normalize(build_cluster("dgx-h100", 4, fabric="rail-optimized", storage=1))


def _whole(document, patch):
    try:
        return "ok", normalize(apply_patch(document, patch))
    except InvalidPatch as exc:
        return "misfit", [str(p) for p in exc.problems]
    except InvalidTopology as exc:
        return "invalid", [str(p) for p in exc.problems]


def _delta(base_doc, delta, patch):
    """What the save does: the delta route, or the composed document when it cannot."""
    try:
        return "ok", delta.apply_normalized(patch, normalize)[0]
    except NotIncremental:
        state, document = _whole(apply_patch(base_doc, delta.to_patch()), patch)
        if state != "ok":
            return state, document
        return "ok", Delta.from_patch(delta.base, delta_from_documents(base_doc, document))
    except InvalidPatch as exc:
        return "misfit", [str(p) for p in exc.problems]
    except InvalidTopology as exc:
        return "invalid", [str(p) for p in exc.problems]


def _sorted(document) -> str:
    return json.dumps(document, sort_keys=True)


@pytest.mark.parametrize("seed", range(120))
def test_chain_of_random_patches_equals_whole_route(base, seed):
    rng = random.Random(seed)
    document, delta = base, Delta(DocumentItems(base))
    for _ in range(4):
        patch = random_patch(rng, document)
        expected = _whole(document, patch)
        state, got = _delta(base, delta, patch)
        assert state == expected[0], patch
        if state != "ok":
            assert got == expected[1], patch
            continue
        delta, document = got, expected[1]
        composed = apply_patch(base, delta.to_patch())
        assert _sorted(composed) == _sorted(document), patch
        pieces = delta.canonical_pieces(
            lambda key, first, stop: b",".join(canonical_json_bytes(x) for x in base[key][first:stop]),
            canonical_json_bytes)
        assert b"".join(pieces) == canonical_json_bytes(document)


def test_stored_patch_reads_back_as_the_same_delta(base):
    """A delta written as a patch (what a revision stores) and read back is the same document,
    and an edit of a re-added item lands where the whole route puts it."""
    node = base["nodes"][3]
    delta = Delta(DocumentItems(base)).apply({"nodes": {"remove": [node["id"]], "add": [node]}})
    again = Delta.from_patch(DocumentItems(base), delta.to_patch())
    assert apply_patch(base, again.to_patch()) == apply_patch(base, delta.to_patch())
    moved = dict(node, attrs={"label": "moved"})
    after = again.apply({"nodes": {"update": [moved]}})
    composed = apply_patch(base, after.to_patch())
    assert composed["nodes"][-1] == moved and len(composed["nodes"]) == len(base["nodes"])


def test_delta_from_documents_round_trips(base):
    rng = random.Random(7)
    document = base
    for _ in range(6):
        state, result = _whole(document, random_patch(rng, document))
        if state == "ok":
            document = result
    patch = delta_from_documents(base, document)
    assert _sorted(apply_patch(base, patch)) == _sorted(document)


def test_problem_paths_count_the_delta(base):
    """After two nodes are removed, a bad kind on the base's 40th node is at nodes[38]."""
    delta = Delta(DocumentItems(base)).apply(
        {"nodes": {"remove": [base["nodes"][1]["id"], base["nodes"][5]["id"]]},
         "links": {"remove": [lk["id"] for lk in base["links"]
                              if {lk["a"], lk["b"]} & {base["nodes"][1]["id"], base["nodes"][5]["id"]}]}})
    with pytest.raises(InvalidTopology) as exc:
        delta.apply_normalized({"nodes": {"update": [dict(base["nodes"][40], kind="toaster")]}}, normalize)
    assert [p.path for p in exc.value.problems] == ["nodes[38].kind"]


def test_a_value_equal_but_not_the_same_json_is_kept(base):
    """``1.0 == 1`` in Python, not in the stored text (nor its checksum): an edit that only turns
    an attribute's 1 into 1.0 is an update, whichever way it is found."""
    node = next(n for n in base["nodes"] if isinstance((n.get("attrs") or {}).get("socket"), int))
    edited = dict(node, attrs={**node["attrs"], "socket": float(node["attrs"]["socket"])})
    patch = {"nodes": {"update": [edited]}}
    expected = normalize(apply_patch(base, patch))
    delta = Delta(DocumentItems(base)).apply_normalized(patch, normalize)[0]
    assert canonical_json_bytes(apply_patch(base, delta.to_patch())) == canonical_json_bytes(expected)
    between = delta_from_documents(base, expected)
    assert canonical_json_bytes(apply_patch(base, between)) == canonical_json_bytes(expected)


def test_a_base_without_groups_gets_them_as_normalize_adds_them(base):
    """A stored base with no ``groups`` (none is written so today): the result has the
    ``groups: []`` normalization adds, as the whole route's."""
    base = {k: v for k, v in base.items() if k != "groups"}
    base["nodes"] = [{k: v for k, v in n.items() if k != "group"} for n in base["nodes"]]
    patch = {"links": {"update": [dict(base["links"][0], latency_ns=3.0)]}}
    expected = normalize(apply_patch(base, patch))
    delta = Delta(DocumentItems(base)).apply_normalized(patch, normalize)[0]
    assert canonical_json_bytes(apply_patch(base, delta.to_patch())) == canonical_json_bytes(expected)
