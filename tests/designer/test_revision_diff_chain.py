"""The diff of any two revisions is composed from the diffs stored with the revisions between
them (``bridge.digest.compose_diffs``), so the diff page reads no document; it equals the two
documents' diff (``document_diff``) whatever the edits between them."""
from __future__ import annotations

import copy
import random
from unittest import mock

import pytest
from django.urls import reverse

from designer import selectors, services
from designer.bridge import digest
from designer.models import RevisionDigest


def _random_step(document: dict, rng: random.Random, serial: list[int]) -> dict:
    """A copy of ``document`` with a few random edits: latency and attrs changes (some undone
    later by chance), nodes and links added and removed, a rename now and then."""
    new = copy.deepcopy(document)
    for _ in range(rng.randint(1, 4)):
        action = rng.choice(["latency", "attrs", "add", "remove", "rename", "revert"])
        if action == "latency" and new["links"]:
            rng.choice(new["links"])["latency_ns"] = float(rng.choice([1, 2, 3]))
        elif action == "attrs" and new["nodes"]:
            rng.choice(new["nodes"])["attrs"] = {"x": rng.choice([0, 1])}
        elif action == "add":
            serial[0] += 1
            nid = f"extra{serial[0]}"
            new["nodes"].append({"id": nid, "kind": "nvme", "group": "h0"})
            new["links"].append({"id": f"{nid}-l", "a": nid, "b": new["nodes"][0]["id"], "tech": "pcie5x4",
                                 "capacity_gbps": 100.0, "latency_ns": 1.0})
        elif action == "remove":
            extras = [n["id"] for n in new["nodes"] if n["id"].startswith("extra")]
            if extras:
                gone = rng.choice(extras)
                new["nodes"] = [n for n in new["nodes"] if n["id"] != gone]
                new["links"] = [lk for lk in new["links"] if gone not in (lk["a"], lk["b"])]
        elif action == "rename":
            new["name"] = rng.choice(["a", "b", "c"])
        elif action == "revert" and new["links"]:
            new["links"][0]["latency_ns"] = document["links"][0]["latency_ns"]
    return new


def test_composed_diffs_equal_the_end_documents_diff():
    """300 random chains of up to 6 revisions (the ids of removed items are never reused, as
    composition cannot see through a re-add): composing the adjacent diffs gives the ends'
    diff, and turning it round gives the diff read backwards."""
    base = {"name": "a", "groups": [{"id": "h0", "kind": "host"}],
            "nodes": [{"id": f"h0/n{i}", "kind": "gpu", "group": "h0"} for i in range(4)],
            "links": [{"id": f"l{i}", "a": "h0/n0", "b": f"h0/n{i}", "tech": "nvlink4",
                       "capacity_gbps": 450.0, "latency_ns": 5.0} for i in range(1, 4)]}
    rng, serial = random.Random(7), [0]
    for _ in range(300):
        chain = [base]
        for _ in range(rng.randint(1, 6)):
            chain.append(_random_step(chain[-1], rng, serial))
        steps = [digest.document_diff(x, y) for x, y in zip(chain, chain[1:])]
        composed = digest.compose_diffs(steps)
        assert composed == digest.document_diff(chain[0], chain[-1])
        assert digest.reverse_diff(composed) == digest.document_diff(chain[-1], chain[0])


def test_a_re_added_id_or_a_huge_result_is_left_to_the_documents():
    removed = {"nodes": {"added": [], "removed": ["x"], "changed": []}}
    added = {"nodes": {"added": ["x"], "removed": [], "changed": []}}
    assert digest.compose_diffs([removed, added]) is None
    many = {"links": {"added": [f"l{i}" for i in range(digest.MAX_STORED_DIFF + 1)],
                      "removed": [], "changed": []}}
    assert digest.compose_diffs([many]) is None
    assert digest.compose_diffs([])["total"] == 0


@pytest.mark.django_db
def test_every_pair_of_revisions_is_diffed_without_reading_a_document(client, small_topology, user):
    """Revisions saved from patches and from whole documents (the API's PUT, an import) all
    keep their diff: every pair (a, b), both directions, answers the documents' diff with
    the document reader switched off; before, only r(n-1) -> r(n) of a patch did."""
    doc = small_topology.current_revision.document
    gpu = next(n for n in doc["nodes"] if n["kind"] == "gpu")
    services.revision_save(topology=small_topology, user=user, base_revision=1,
                           patch={"links": {"update": [dict(doc["links"][2], latency_ns=3.0)]}})
    whole = copy.deepcopy(small_topology.revisions.get(number=2).document)
    whole["name"] = "renamed"
    whole["nodes"].append({"id": "h0/nvme9", "kind": "nvme", "group": "h0"})
    services.revision_save(topology=small_topology, user=user, base_revision=2, document=whole)
    services.revision_save(topology=small_topology, user=user, base_revision=3,
                           patch={"nodes": {"update": [dict(gpu, attrs={"x": 1})]},
                                  "links": {"update": [dict(doc["links"][2], latency_ns=doc["links"][2]["latency_ns"])]}})
    documents = {r.number: r.document for r in small_topology.revisions.all()}
    assert RevisionDigest.objects.get(revision__topology=small_topology, revision__number=3).summary["diff"]
    client.force_login(user)
    url = reverse("revision_diff", args=[small_topology.pk])
    with mock.patch.object(selectors, "revision_document_parsed", side_effect=AssertionError("read")):
        for a in documents:
            for b in documents:
                page = client.get(url, {"a": a, "b": b})
                assert page.status_code == 200, (a, b)
                assert page.context["diff"] == digest.document_diff(documents[a], documents[b]), (a, b)


@pytest.mark.django_db
def test_a_revision_without_a_stored_diff_falls_back_to_the_documents(client, small_topology, user):
    """A revision saved before diffs were kept (its digest's diff is null): the page compares
    the two documents and answers the same."""
    doc = small_topology.current_revision.document
    services.revision_save(topology=small_topology, user=user, base_revision=1,
                           patch={"links": {"update": [dict(doc["links"][2], latency_ns=3.0)]}})
    row = RevisionDigest.objects.get(revision__topology=small_topology, revision__number=2)
    row.summary = {**row.summary, "diff": None}
    row.save()
    client.force_login(user)
    page = client.get(reverse("revision_diff", args=[small_topology.pk]), {"a": 2, "b": 1})
    documents = [small_topology.revisions.get(number=n).document for n in (2, 1)]
    assert page.context["diff"] == digest.document_diff(*documents)
    assert page.context["diff"]["links"]["changed"][0]["fields"]["latency_ns"][0] == 3.0
