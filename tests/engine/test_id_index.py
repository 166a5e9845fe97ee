"""``designer.engine.solve.id_index.IdIndex``: compiled id → position lookups give the dict's
positions, or None (never a wrong position) for anything the dict would refuse or that the
NUL-joined buffer cannot carry; the topology loader gives the same link ends with and without it."""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.solve.kernels import loader as _kernel_loader

from designer.engine.document import accept as document_accept
from designer.engine.solve.id_index import IdIndex

needs_aot = pytest.mark.skipif(_kernel_loader.aot_kernels() is None, reason="AOT kernels not built")


def _ids(rng, n: int) -> list[str]:
    """Unique ids: ASCII, prefixes of one another, non-ASCII (é, 中, an emoji), long ones."""
    alphabet = list("abcxyz0189/_-:.") + ["é", "中", "\U0001f600"]
    out = {"h0/gpu1", "h0/gpu10", "h0/gpu1/x", "h", "é"}
    while len(out) < n:
        out.add("".join(rng.choice(alphabet, int(rng.integers(1, 30)))))
    return sorted(out)


@needs_aot
@pytest.mark.parametrize("seed", range(5))
def test_positions_are_the_dicts(seed):
    rng = np.random.default_rng(seed)
    ids = _ids(rng, 3000)
    index = IdIndex.of(ids)
    assert index is not None
    position = dict(zip(ids, range(len(ids))))
    wanted = [ids[k] for k in rng.integers(0, len(ids), 20000)]
    np.testing.assert_array_equal(index.positions(wanted), [position[w] for w in wanted])


@needs_aot
@pytest.mark.parametrize("bad", ["h0/gpu", "h0/gpu1 ", "", "h0/gpu1\0h0/gpu10", 7, None, "\ud800"])
def test_anything_the_dict_would_refuse_gives_none(bad):
    index = IdIndex.of(["h0/gpu1", "h0/gpu10", "a"])
    assert index.positions(["a", bad, "h0/gpu10"]) is None
    assert index.positions(["a", "h0/gpu10", "h0/gpu1"]).tolist() == [2, 1, 0]


@needs_aot
def test_empty_lists_and_duplicates():
    assert IdIndex.of(["a", "b", "a"]) is None         # not unique: the table refuses it
    assert IdIndex.of(["a", ""]).positions(["", "a", ""]).tolist() == [1, 0, 1]   # "" is an id too
    index = IdIndex.of(["a", "b"])
    assert index.positions([]).tolist() == []
    assert IdIndex.of([]).positions([]).tolist() == []
    assert IdIndex.of([]).positions(["a"]) is None


def test_without_aot_there_is_no_index(monkeypatch):
    monkeypatch.setattr("designer.engine.solve.id_index.aot_kernels", lambda: None)
    assert IdIndex.of(["a"]) is None


@needs_aot
def test_link_ends_are_the_same_with_and_without_the_compiled_lookup(monkeypatch):
    from designer.engine.model.fabrics import build_cluster

    doc = build_cluster("dgx-h100", 4, fabric="rail-optimized")
    nodes, links = doc["nodes"], doc["links"]
    cols = document_accept.node_columns(nodes, {g["id"] for g in doc.get("groups", [])})
    ids = cols["columns"]["id"]
    compiled = document_accept.link_columns(links, cols["index"], ids)
    calls = []
    monkeypatch.setattr(IdIndex, "positions", lambda self, s: calls.append(1) or None)
    by_dict = document_accept.link_columns(links, cols["index"], ids)
    assert calls   # the dict answered this time
    for end in ("a", "b"):
        np.testing.assert_array_equal(compiled[end], by_dict[end])
    links[3] = {**links[3], "b": "no-such-node"}
    monkeypatch.undo()
    assert document_accept.link_columns(links, cols["index"], ids) is None   # refused, as by the dict


def _fnv1a(text: str) -> int:
    h = 2166136261
    for byte in text.encode():
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def _colliding(count: int, bits: int = 8, prefix: str = "x", width: int = 0) -> list[str]:
    """``count`` ids (``prefix`` then a number, zero-padded to ``width``) whose FNV-1a hashes
    agree in their low ``bits``: one slot of a small table."""
    out, k = [], 0
    start = _fnv1a(prefix)
    while len(out) < count:
        h = start
        number = str(k).zfill(width)
        for byte in number.encode():   # the prefix's hash continued: long prefixes stay cheap
            h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
        if h & ((1 << bits) - 1) == 0:
            out.append(prefix + number)
        k += 1
    return out


@needs_aot
def test_ids_chosen_to_collide_are_left_to_the_dict():
    """The table is not keyed: an untrusted document could crowd one slot and make every probe
    walk all of its ids (quadratic). A table whose keys do not fit within MAX_PROBES of their
    slot is refused (the dict answers); one that fits answers exactly, present or absent."""
    from designer.engine.solve.kernels.constants import MAX_PROBES

    crowded = _colliding(MAX_PROBES + 2)            # 66 ids -> a 256-slot table, one slot
    assert len(crowded) * 2 < 256 <= 1 << (2 * len(crowded)).bit_length()
    assert IdIndex.of(crowded) is None
    fits = _colliding(MAX_PROBES // 2)
    index = IdIndex.of(fits)
    assert index is not None
    assert index.positions(fits[::-1]).tolist() == list(range(len(fits)))[::-1]
    assert index.positions([fits[0], _colliding(MAX_PROBES // 2 + 1)[-1]]) is None   # absent, same slot


@needs_aot
def test_ids_sharing_a_slot_and_a_long_prefix_are_left_to_the_dict():
    """Found in review: 48 ids of ~1,000 bytes, 996 of them in common, in one slot (within
    MAX_PROBES): a lookup of the last compared ~47k bytes. A key that costs a lookup more than
    MAX_COMPARED_PER_BYTE bytes of other keys per byte of its own refuses the table; short
    colliding ids, or long ids that differ early, keep it."""
    from designer.engine.solve.kernels.constants import MAX_COMPARED_PER_BYTE, MAX_PROBES

    long_prefix = "p" * 996
    crowded = _colliding(48, prefix=long_prefix, width=5)   # 1,001 bytes each
    assert len(crowded) < MAX_PROBES and {len(i) for i in crowded} == {1001}
    assert IdIndex.of(crowded) is None
    short = _colliding(48)
    assert IdIndex.of(short) is not None
    early = [f"{k}-" + "q" * 996 for k in range(48)]   # long, but they differ in their first bytes
    index = IdIndex.of(early)
    assert index is not None and index.positions(early).tolist() == list(range(48))
    assert MAX_COMPARED_PER_BYTE * 1000 < 47 * 996   # the crafted set is over the bound
