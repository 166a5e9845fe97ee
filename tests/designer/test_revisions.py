"""Revision saves: validation with located problems, stale bases, and concurrent saves.

Concurrency: N threads save on the same base revision; the topology row lock (PostgreSQL
``SELECT ... FOR UPDATE``; SQLite ``BEGIN IMMEDIATE``) plus the unique (topology, number)
constraint must give exactly one winner and N-1 RevisionConflicts naming the new head.
"""
import copy
import threading

import pytest
from django.db import connection

from designer import services
from designer.exceptions import EngineValidationError, RevisionConflict
from designer.models import Topology, TopologyRevision


def _edited(document, n):
    doc = copy.deepcopy(document)
    doc["name"] = f"edit-{n}"
    return doc


@pytest.mark.django_db
def test_save_appends_and_updates_head(small_topology, user):
    first = small_topology.current_revision
    revision = services.revision_save(topology=small_topology, user=user,
                                      document=_edited(first.document, 1), base_revision=first,
                                      message="rename")
    assert revision.number == 2 and revision.author == user and revision.message == "rename"
    small_topology.refresh_from_db()
    assert small_topology.revision_number == 2
    assert small_topology.current_revision == revision
    assert small_topology.gpu_count == 16 and small_topology.host_count == 2
    assert revision.checksum != first.checksum


@pytest.mark.django_db
def test_stale_base_is_refused_with_current_number(small_topology, user):
    doc = small_topology.current_revision.document
    services.revision_save(topology=small_topology, user=user, document=_edited(doc, 1),
                           base_revision=1)
    with pytest.raises(RevisionConflict) as info:
        services.revision_save(topology=small_topology, user=user, document=_edited(doc, 2),
                               base_revision=1)
    assert info.value.current_number == 2 and info.value.base_number == 1
    assert info.value.as_dict()["details"]["current_number"] == 2
    assert TopologyRevision.objects.filter(topology=small_topology).count() == 2


@pytest.mark.django_db
def test_invalid_document_gives_located_problems(small_topology, user):
    doc = copy.deepcopy(small_topology.current_revision.document)
    doc["links"][0]["b"] = "h9/nic99"
    with pytest.raises(EngineValidationError) as info:
        services.revision_save(topology=small_topology, user=user, document=doc,
                               base_revision=1)
    details = info.value.as_dict()["details"]
    assert info.value.engine_code == "invalid_topology"
    assert any(d["path"] == "links[0].b" and "h9/nic99" in d["message"] for d in details)
    assert "document" in info.value.message_dict
    assert Topology.objects.get(pk=small_topology.pk).revision_number == 1


@pytest.mark.django_db
def test_checksum_is_of_canonical_json(small_topology):
    from designer.bridge import document_checksum

    revision = small_topology.current_revision
    reordered = dict(reversed(list(revision.document.items())))
    assert document_checksum(reordered) == revision.checksum


@pytest.mark.django_db(transaction=True)
def test_concurrent_saves_on_one_base_have_exactly_one_winner(small_topology, user):
    base = small_topology.current_revision
    threads, barrier = 20, threading.Barrier(20)
    outcomes: list = []

    def save(n):
        try:
            barrier.wait()
            outcomes.append(services.revision_save(
                topology=Topology.objects.get(pk=small_topology.pk), user=user,
                document=_edited(base.document, n), base_revision=base.number))
        except RevisionConflict as exc:
            outcomes.append(exc)
        except Exception as exc:  # anything else (a lock error...) is a failure
            outcomes.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=save, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    winners = [o for o in outcomes if isinstance(o, TopologyRevision)]
    conflicts = [o for o in outcomes if isinstance(o, RevisionConflict)]
    assert len(outcomes) == threads
    assert len(winners) == 1, outcomes
    assert len(conflicts) == threads - 1, [o for o in outcomes if not isinstance(
        o, (TopologyRevision, RevisionConflict))]
    assert all(c.current_number == 2 for c in conflicts)
    assert list(TopologyRevision.objects.filter(topology=small_topology)
                .values_list("number", flat=True).order_by("number")) == [1, 2]
    assert Topology.objects.get(pk=small_topology.pk).current_revision == winners[0]
