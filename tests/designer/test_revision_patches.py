"""Revisions saved by patch are stored as base + cumulative patch, read back whole, and — with the
base indexed on disk (``designer.item_store``) — saved without reading the base document.

The indexed way must give exactly what the whole way gives: the same document, checksum (sha256
of the canonical JSON), digest, figures and located errors.
"""
from __future__ import annotations

import hashlib
import json

import orjson
import pytest

from designer import item_store, selectors, services
from designer.bridge.common import canonical_json_bytes
from designer.editor_document import document_text
from designer.engine.document import normalize
from designer.engine.document.patch import apply_patch
from designer.exceptions import EngineValidationError
from designer.models import TopologyRevision
from designer.ops import limits
from designer.services import patches

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user("patcher", password="pw-patcher-123456")


@pytest.fixture
def indexed(monkeypatch, settings, tmp_path):
    """Every design is big enough for an item store, kept in a fresh directory."""
    settings.VAR_DIR = str(tmp_path)
    monkeypatch.setattr(item_store, "MIN_ITEMS", 0)


def _save(topology, owner, patch, message="edit"):
    return services.revision_save(topology=topology, user=owner, base_revision=topology.revision_number,
                                  patch=patch, message=message)


def _latency(document, index, value):
    return {"links": {"update": [dict(document["links"][index], latency_ns=value)]}}


def _expected(document, patch):
    return normalize(apply_patch(document, patch))


def _checksum(document):
    return hashlib.sha256(canonical_json_bytes(document)).hexdigest()


def _assert_as_whole(revision, document):
    """The stored revision is ``document``, with the checksum and digest the whole document gives;
    returns its row."""
    from designer.bridge import digest

    row = TopologyRevision.objects.get(pk=revision.pk)
    whole_summary, whole_targets = digest.revision_digest(document)
    assert row.document == document and row.checksum == _checksum(document)
    assert bytes(row.digest.targets) == whole_targets
    assert {k: v for k, v in row.digest.summary.items() if k != "diff"} == {
        k: v for k, v in whole_summary.items() if k != "diff"}
    return row


def test_a_patch_is_stored_as_a_patch_and_read_back_whole(owner):
    topology = services.topology_build(owner=owner, name="p", template="dgx-h100", hosts=2)
    first = topology.current_revision.document
    patch = _latency(first, 3, 777)
    revision = _save(topology, owner, patch)
    row = TopologyRevision.objects.get(pk=revision.pk)
    assert row.stored_document is None and row.base_id == topology.revisions.get(number=1).pk
    assert row.patch == {"links": {"update": [_expected(first, patch)["links"][3]]}}
    expected = _expected(first, patch)
    assert json.dumps(row.document, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert row.checksum == _checksum(expected)
    assert orjson.loads(document_text(topology.pk, row.pk)) == expected
    assert selectors.revision_document_parsed(pk=row.pk) == expected
    # the owner's storage grows by the patch, not by another whole document
    assert limits.stored_bytes(user=owner) < 2 * len(canonical_json_bytes(first))


def test_edits_compose_into_one_patch_from_the_first_base(owner):
    topology = services.topology_build(owner=owner, name="c", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    base_pk = topology.current_revision.pk
    for step, patch in enumerate([_latency(document, 1, 11), {"name": "renamed"},
                                  {"nodes": {"add": [{"id": "h0/nvme-x", "kind": "nvme", "group": "h0"}]}},
                                  _latency(document, 1, 33)]):
        document = _expected(document, patch)
        revision = _save(topology, owner, patch, f"step {step}")
        row = TopologyRevision.objects.get(pk=revision.pk)
        assert row.base_id == base_pk   # never a chain
        assert json.dumps(row.document, sort_keys=True) == json.dumps(document, sort_keys=True)
        assert row.checksum == _checksum(document)
    topology.refresh_from_db()
    assert topology.node_count == len(document["nodes"])


def test_indexed_save_equals_the_whole_way(owner, indexed, monkeypatch):
    topology = services.topology_build(owner=owner, name="i", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    whole = topology.current_revision
    _save(topology, owner, _latency(document, 0, 5))           # the whole way, indexes the base
    document = _expected(document, _latency(document, 0, 5))
    assert item_store.store_ready(whole.pk, whole.checksum)
    reference = patches._whole

    def refused(*args, **kwargs):   # from here on, only the indexed way may answer
        raise AssertionError("the whole way was taken")

    monkeypatch.setattr(patches, "_whole", refused)
    for index, value in [(4, 250.0), (4, 7), (9, 1)]:
        patch = _latency(document, index, value)
        expected_rev = reference(whole.pk, TopologyRevision.objects.get(
            topology=topology, number=topology.revision_number).patch, patch, None)
        revision = _save(topology, owner, patch)
        document = _expected(document, patch)
        row = TopologyRevision.objects.get(pk=revision.pk)
        assert row.base_id == whole.pk
        assert json.dumps(row.document, sort_keys=True) == json.dumps(document, sort_keys=True)
        assert row.checksum == _checksum(document) == expected_rev.checksum
        assert row.digest.summary["diff"] == expected_rev.digest[0]["diff"]
    node = dict(document["nodes"][2], attrs={**document["nodes"][2].get("attrs", {}), "label": "n2"})
    _save(topology, owner, {"nodes": {"update": [node]}})
    document = _expected(document, {"nodes": {"update": [node]}})
    assert TopologyRevision.objects.get(topology=topology, number=topology.revision_number).document == document


def test_indexed_save_refuses_what_the_whole_way_refuses(owner, indexed):
    topology = services.topology_build(owner=owner, name="r", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    _save(topology, owner, _latency(document, 0, 5))
    head = topology.revision_number
    bad = dict(document["links"][7], latency_ns=-1)
    with pytest.raises(EngineValidationError) as indexed_error:
        _save(topology, owner, {"links": {"update": [bad]}})
    with pytest.raises(EngineValidationError) as ghost:
        _save(topology, owner, {"links": {"update": [dict(bad, id="no-such-link")]}})
    assert "links[7].latency_ns" in str(indexed_error.value.message_dict)
    assert "patch" in ghost.value.message_dict
    topology.refresh_from_db()
    assert topology.revision_number == head   # nothing saved


def test_an_unreadable_store_falls_back_to_the_whole_way(owner, indexed):
    topology = services.topology_build(owner=owner, name="u", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    whole = topology.current_revision
    _save(topology, owner, _latency(document, 0, 5))
    path = item_store.store_dir() / f"{whole.pk}-{whole.checksum}{item_store.SUFFIX}"
    path.write_bytes(b"FSITEMS1 cut short")
    document = _expected(document, _latency(document, 0, 5))
    revision = _save(topology, owner, _latency(document, 2, 9))
    assert TopologyRevision.objects.get(pk=revision.pk).document == _expected(document, _latency(document, 2, 9))


def test_moving_a_device_takes_the_indexed_way(owner, indexed, monkeypatch):
    """The editor saves a drag as the ``layout`` field: the digest does not read it, so the
    save reads nothing of the base and the diff is kept."""
    topology = services.topology_build(owner=owner, name="m", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    _save(topology, owner, _latency(document, 0, 5))
    document = _expected(document, _latency(document, 0, 5))
    monkeypatch.setattr(patches, "_whole", lambda *a, **k: pytest.fail("the whole way was taken"))
    moved = {"layout": {**(document.get("layout") or {}), "positions": {"h0/gpu0": [10, 20]}}}
    revision = _save(topology, owner, moved)
    row = TopologyRevision.objects.get(pk=revision.pk)
    assert row.document == _expected(document, moved)
    assert row.checksum == _checksum(_expected(document, moved))
    assert row.digest.summary["diff"]["total"] == 0


def test_adding_and_removing_devices_inside_a_host_takes_the_indexed_way(owner, indexed, monkeypatch):
    """A drive added with its PCIe link, then removed: counts, failure targets and figures are
    edited from the stored digest, and equal what the whole document gives."""
    topology = services.topology_build(owner=owner, name="a", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    _save(topology, owner, _latency(document, 0, 5))
    document = _expected(document, _latency(document, 0, 5))
    monkeypatch.setattr(patches, "_whole", lambda *a, **k: pytest.fail("the whole way was taken"))
    pcie = next(n["id"] for n in document["nodes"] if n["kind"] == "pcie_switch" and n["group"] == "h1")
    drive = {"id": "h1/nvme-new", "kind": "nvme", "group": "h1"}
    link = {"id": "h1/nvme-new-link", "a": pcie, "b": "h1/nvme-new", "tech": "pcie5x4"}
    for patch in ({"nodes": {"add": [drive]}, "links": {"add": [link]}},
                  {"nodes": {"remove": [drive["id"]]}, "links": {"remove": [link["id"]]}}):
        revision = _save(topology, owner, patch)
        document = _expected(document, patch)
        row = _assert_as_whole(revision, document)
        topology.refresh_from_db()
        assert (topology.node_count, topology.link_count) == (len(document["nodes"]), len(document["links"]))
    assert row.digest.summary["diff"]["nodes"]["removed"] == [drive["id"]]


def test_editing_a_gpu_nic_or_cable_of_the_fabric_takes_the_indexed_way(owner, indexed, monkeypatch):
    """A GPU's model, a NIC's speed and a leaf-spine cable's latency are not what the BOM reads:
    the stored BOM stays and the save reads nothing of the base; a switch's model is, and its BOM
    rows are moved (its ports read by the index); its tier is too, and takes the whole way — each
    equals the whole document's digest."""
    topology = services.topology_build(owner=owner, name="f", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    _save(topology, owner, _latency(document, 0, 5))
    document = _expected(document, _latency(document, 0, 5))
    nodes = {n["id"]: n for n in document["nodes"]}
    cable = next(lk for lk in document["links"] if nodes[lk["a"]]["kind"] == nodes[lk["b"]]["kind"] == "switch")
    gpu, nic = nodes["h0/gpu3"], nodes["h1/nic2"]
    neutral = {"nodes": {"update": [dict(gpu, attrs={**gpu["attrs"], "model": "H100-SXM5-94GB"}),
                                    dict(nic, attrs={**nic["attrs"], "port_gbps": 800.0})]},
               "links": {"update": [dict(cable, latency_ns=1500.0)]}}
    leaf = nodes[cable["a"]]
    leaf = dict(leaf, attrs={**leaf["attrs"], "model": "eth-25t6", "radix": 64})
    other_model = {"nodes": {"update": [leaf]}}
    other_tier = {"nodes": {"update": [dict(leaf, attrs={**leaf["attrs"], "tier": "spine"})]}}
    whole = patches._whole
    for patch, way in ((neutral, "indexed"), (other_model, "indexed"), (other_tier, "whole")):
        taken = []
        monkeypatch.setattr(patches, "_whole", lambda *a, **k: taken.append("whole") or whole(*a, **k))
        revision = _save(topology, owner, patch)
        document = _expected(document, patch)
        assert (taken or ["indexed"])[0] == way
        row = _assert_as_whole(revision, document)
    assert "eth-25t6" in {r["model"] for r in row.digest.summary["bom"]["switches"]}


def test_adding_and_removing_fabric_cables_and_switches_takes_the_indexed_way(owner, indexed, monkeypatch):
    """A leaf added with a cable to a spine, a NIC cabled to it and a GPU, then all removed: the
    BOM is told from the stored one and its tallies (``model.bom_edit``) without reading the base,
    equals the whole document's digest each time, and the design's GPU count follows."""
    topology = services.topology_build(owner=owner, name="c", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    _save(topology, owner, _latency(document, 0, 5))
    document = _expected(document, _latency(document, 0, 5))
    monkeypatch.setattr(patches, "_whole", lambda *a, **k: pytest.fail("the whole way was taken"))
    nodes = {n["id"]: n for n in document["nodes"]}
    leaf = next(n for n in document["nodes"] if n["kind"] == "switch" and n["attrs"].get("role") == "leaf")
    spine = next(n for n in document["nodes"] if n["kind"] == "switch" and n["attrs"].get("role") == "spine")
    new_leaf = dict(leaf, id="leaf-new", attrs={**leaf["attrs"], "index": 99})
    cables = [{"id": "leaf-new-up", "a": "leaf-new", "b": spine["id"], "tech": "eth400"},
              {"id": "h1-nic7-extra", "a": nodes["h1/nic7"]["id"], "b": "leaf-new", "tech": "eth400"}]
    gpu = nodes["h1/gpu0"]
    twin = dict(gpu, id="h1/gpu-twin")
    nvlink = next(lk for lk in document["links"] if gpu["id"] in (lk["a"], lk["b"]))
    twin_link = dict(nvlink, id="h1/gpu-twin-link", a=twin["id"], b=gpu["id"])
    before = topology.current_revision.digest.summary["bom"]
    for patch in ({"nodes": {"add": [new_leaf, twin]}, "links": {"add": cables + [twin_link]}},
                  {"nodes": {"remove": ["leaf-new", twin["id"]]},
                   "links": {"remove": [c["id"] for c in cables] + [twin_link["id"]]}}):
        revision = _save(topology, owner, patch)
        document = _expected(document, patch)
        row = _assert_as_whole(revision, document)
        assert row.digest.summary["bom_tallies"] is not None
        topology.refresh_from_db()
        assert topology.gpu_count == sum(1 for n in document["nodes"] if n["kind"] == "gpu")
    assert row.digest.summary["bom"] == before


def test_a_patched_revision_text_is_composed_from_the_store(owner, indexed):
    """The editor's and the export's JSON of a patched revision: from the base's item store, its
    canonical text (the checksum's), without parsing the base; the same document as without."""
    topology = services.topology_build(owner=owner, name="t", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    whole = topology.current_revision
    _save(topology, owner, _latency(document, 0, 5))
    revision = _save(topology, owner, {"name": "renamed"})
    expected = _expected(_expected(document, _latency(document, 0, 5)), {"name": "renamed"})
    text = document_text(topology.pk, revision.pk)
    assert text == canonical_json_bytes(expected)
    item_store.store_dir().joinpath(f"{whole.pk}-{whole.checksum}{item_store.SUFFIX}").unlink()
    assert orjson.loads(document_text(topology.pk, revision.pk)) == expected


def test_a_damaged_store_is_refused_and_the_save_is_right(owner, indexed):
    """One digit changed in a kept item of the store's text: the store no longer hashes to its
    revision's checksum, so it is removed and the save reads the database (right checksum)."""
    topology = services.topology_build(owner=owner, name="d", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    whole = topology.current_revision
    _save(topology, owner, _latency(document, 0, 5))
    document = _expected(document, _latency(document, 0, 5))
    path = item_store.store_path(whole.pk, whole.checksum)
    raw = bytearray(path.read_bytes())
    at = raw.rfind(b'"latency_ns":')
    raw[at + 13] = ord("7") if raw[at + 13] != ord("7") else ord("8")
    path.write_bytes(bytes(raw))
    assert item_store.store_open(whole.pk, whole.checksum) is None and not path.exists()
    revision = _save(topology, owner, _latency(document, 2, 9))
    expected = _expected(document, _latency(document, 2, 9))
    assert TopologyRevision.objects.get(pk=revision.pk).checksum == _checksum(expected)


def test_a_base_is_deleted_only_with_its_topology(owner, indexed):
    """A revision others are stored against cannot be deleted alone (RESTRICT); the topology's
    deletion takes them all, and its files on disk."""
    from django.db.models import RestrictedError

    topology = services.topology_build(owner=owner, name="x", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    whole = topology.current_revision
    _save(topology, owner, _latency(document, 0, 5))
    with pytest.raises(RestrictedError):
        TopologyRevision.objects.filter(pk=whole.pk).delete()
    assert item_store.store_path(whole.pk, whole.checksum).exists()
    from django.test import TestCase

    with TestCase.captureOnCommitCallbacks(execute=True):
        services.topology_delete(topology=topology, actor=owner)
    assert not TopologyRevision.objects.filter(topology_id=topology.pk).exists()
    assert not item_store.store_path(whole.pk, whole.checksum).exists()


def test_the_editor_asks_for_a_minimal_answer(owner, client):
    """``Prefer: return=minimal``: the save answers its fields, not the document it was sent;
    without it, the document comes back whole (the stored text)."""
    topology = services.topology_build(owner=owner, name="e", template="dgx-h100", hosts=2)
    document = topology.current_revision.document
    client.force_login(owner)
    url = f"/api/v1/topologies/{topology.pk}/revisions/"
    body = {"patch": _latency(document, 0, 5), "base_revision": 1, "message": "m"}
    minimal = client.post(url, body, content_type="application/json", HTTP_PREFER="return=minimal")
    assert minimal.status_code == 201 and "document" not in minimal.json()
    assert minimal["Preference-Applied"] == "return=minimal" and minimal.json()["number"] == 2
    body = {"patch": _latency(document, 1, 6), "base_revision": 2, "message": "m"}
    full = client.post(url, body, content_type="application/json")
    expected = _expected(_expected(document, _latency(document, 0, 5)), _latency(document, 1, 6))
    assert full.status_code == 201 and full.json()["document"] == expected
    assert full.json()["checksum"] == _checksum(expected)
