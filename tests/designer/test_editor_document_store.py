"""The editor's compressed document kept on disk (``designer/editor_document.py``): written when
a revision is saved, read by a process that did not save it, never taken from a file of another
database, and the store kept within its byte bound by removing the least recently used."""
from __future__ import annotations

import gzip
import json
import os

import pytest

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(settings, tmp_path):
    """A fresh disk store and an empty per-process cache."""
    from designer import editor_document

    settings.VAR_DIR = tmp_path
    editor_document.cache_clear()
    yield editor_document.store_dir()
    editor_document.cache_clear()


def test_saved_revision_is_compressed_on_disk_for_another_process(store, user, monkeypatch,
                                                                  django_capture_on_commit_callbacks):
    from designer import editor_document, services

    with django_capture_on_commit_callbacks(execute=True):  # the save's after-commit warm-up
        topology = services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2)
    revision = topology.current_revision
    files = list(store.iterdir())
    assert [f.name for f in files] == [f"{revision.pk}-{revision.checksum}.json.gz"]
    # Another process (its cache empty) answers from the file: the stored text is not read again.
    editor_document.cache_clear()
    monkeypatch.setattr(editor_document, "document_text", _never_read)
    body = editor_document.document_gzip(topology.pk, revision.pk)
    assert body == files[0].read_bytes()
    assert json.loads(gzip.decompress(body)) == revision.document


def test_a_file_of_another_database_is_not_taken(store, user):
    """Ids restart in a new database: the checksum in the name tells the files apart."""
    from designer import editor_document, services

    topology = services.topology_build(owner=user, name="pod-1", template="dgx-h100", hosts=1)
    revision = topology.current_revision
    store.mkdir(parents=True)
    stale = store / f"{revision.pk}-{'0' * 64}.json.gz"
    stale.write_bytes(gzip.compress(b'{"name": "another database"}'))
    body = editor_document.document_gzip(topology.pk, revision.pk)
    assert json.loads(gzip.decompress(body)) == revision.document
    assert (store / f"{revision.pk}-{revision.checksum}.json.gz").exists()


def test_store_keeps_its_bound_by_removing_the_least_recently_used(tmp_path):
    from designer import editor_document

    for i, name in enumerate(["old", "used", "new"]):
        path = tmp_path / f"{name}.json.gz"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 1000 + i))
    os.utime(tmp_path / "used.json.gz", (2000, 2000))  # read recently (a hit touches the file)
    (tmp_path / "other.txt").write_bytes(b"y" * 1000)  # not the store's: never counted or removed
    editor_document._prune(tmp_path, 250)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json.gz", "other.txt", "used.json.gz"]
    editor_document._prune(tmp_path, 10)  # the newest stays even over the bound
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.txt", "used.json.gz"]


@pytest.mark.parametrize("content", [b"", b"{\"not\": \"gzip\"}", b"\x1f\x8b\x08"])
def test_a_damaged_file_is_replaced_not_served(store, user, content):
    """An empty, foreign or cut file under the revision's name (a crash mid-write on a file
    system that kept the name) is removed and compressed again, never served."""
    from designer import editor_document, services

    topology = services.topology_build(owner=user, name="pod-1", template="dgx-h100", hosts=1)
    revision = topology.current_revision
    path = store / f"{revision.pk}-{revision.checksum}.json.gz"
    store.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    editor_document.cache_clear()
    body = editor_document.document_gzip(topology.pk, revision.pk)
    assert json.loads(gzip.decompress(body)) == revision.document
    assert path.read_bytes() == body


def test_pruning_removes_part_files_left_by_a_killed_writer(tmp_path):
    from designer import editor_document

    (tmp_path / "kept.json.gz").write_bytes(b"x" * 10)
    left, fresh = tmp_path / "tmpold.part", tmp_path / "tmpnew.part"
    left.write_bytes(b"half")
    fresh.write_bytes(b"being written")
    os.utime(left, (1000, 1000))
    editor_document._prune(tmp_path, 10**9)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json.gz", "tmpnew.part"]


def test_unwritable_store_still_answers(store, user, settings, tmp_path):
    from designer import editor_document, services

    topology = services.topology_build(owner=user, name="pod-1", template="dgx-h100", hosts=1)
    (tmp_path / "blocked").write_bytes(b"")
    settings.VAR_DIR = tmp_path / "blocked"  # a file where the directory would be
    body = editor_document.document_gzip(topology.pk, topology.current_revision_id)
    assert json.loads(gzip.decompress(body)) == topology.current_revision.document


def _never_read(topology_id, revision_id):
    raise AssertionError("the stored text was read again")
