"""The editor's document, sent beside its page, so that a 32k-GPU design opens within 2 s.

The editor page no longer inlines the revision it edits (a 32,768-GPU design is ~85 MB of JSON):
the page names ``?document=<revision id>`` and the browser fetches it while the editor's modules
load. Revisions are immutable, so the answer is the revision's stored JSON text as the database
holds it — never decoded into Python objects and encoded again (on the 32k design that was most
of the page's server time) — gzip-compressed once and kept in a small per-process cache keyed
by the revision id. See docs/PERFORMANCE.md, "Editor: open a 32k-GPU design collapsed".

The compressed form is also kept on disk (``VAR_DIR/editor-documents/``), written when the
revision is saved (``services.topologies.revision_append``'s after-commit warm-up): a build job
saves its revision on a worker, a process apart from the web's, and reading back and compressing
a 100,000-GPU design's 253 MB of text took the web process 1.3–2.8 s on its first open. The web
and worker processes of one machine share the directory (containers without a shared ``var``
each keep their own: the web's first open compresses once, then every web process reuses it).
A revision warmed from its saved document (:func:`document_warm`) is kept in the editor's compact
form when that pays (``designer/editor_compact.py``: each repeated host interior once; a
100,000-GPU design is 2.0 MB compressed instead of 17 MB, and the browser parses 15 MB, not 253);
``static/js/editor/compact.js`` rebuilds the document. A cold read keeps the stored text.
The file is named by the revision's id *and* its checksum, so a file left by another database (a
test run, a restored backup) whose ids restart is never taken for this one's; the directory is
kept under ``DISK_BYTES`` by removing the least recently used files. A process that cannot write
there (read-only, full) still answers, compressing in memory as before.
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading
import zlib
from collections import OrderedDict
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpResponse
from django.utils.cache import patch_vary_headers
import orjson

from designer import disk_cache
from designer.editor_compact import compact_document
from designer.models import TopologyRevision

__all__ = ["document_text", "document_gzip", "document_warm", "document_response", "cache_clear", "stored_path",
           "CACHE_BYTES", "DISK_BYTES", "store_dir"]

# Compressed documents kept per process: a 32k-GPU design compresses to a few MB, so this holds
# the designs being edited right now without growing with the number of revisions.
CACHE_BYTES = 64 * 1024 * 1024
# zlib level 1: a fraction of level 6's CPU for a slightly larger result (docs/PERFORMANCE.md);
# the compressed form is made once per revision (disk store below).
GZIP_LEVEL = 1
# Compressed documents kept on disk, shared by the web and worker processes of one machine: a
# 100,000-GPU design is ~17 MB compressed, so this holds ~60 of them.
DISK_BYTES = 1024 * 1024 * 1024
SUFFIX = ".json.gz"
# A stored file must at least look like gzip (magic, and header + trailer's length) to be served.
GZIP_MAGIC = b"\x1f\x8b"
GZIP_MIN_BYTES = 18

log = logging.getLogger(__name__)

_cache: OrderedDict[tuple[int, int], bytes] = OrderedDict()
_cache_lock = threading.Lock()


def document_text(topology_id: int, revision_id: int) -> bytes:
    """The stored JSON text of revision ``revision_id`` of topology ``topology_id``, UTF-8, as
    the database holds it (``selectors.revision_document_text``: read as text, never parsed;
    a revision stored as a patch is composed from its base).

    Raises
    ------
    Http404
        No such revision of this topology.
    """
    from designer import selectors

    text = selectors.revision_document_text(pk=revision_id, topology_id=topology_id)
    if text is None:
        raise Http404("no such revision")
    return text


def document_gzip(topology_id: int, revision_id: int) -> bytes:
    """The JSON text of :func:`document_text`, gzip-compressed (bytes): from the per-process
    cache, else from the disk store (``store_dir()``), else read, compressed and written to both
    (a revision never changes: its id, with its checksum on disk, is the key).

    Raises
    ------
    Http404
        No such revision of this topology.
    """
    key = (topology_id, revision_id)
    with _cache_lock:
        body = _cache.get(key)
        if body is not None:
            _cache.move_to_end(key)
            return body
    path = _stored_path(topology_id, revision_id)
    body = _read_stored(path)
    if body is None:
        body = _gzip(document_text(topology_id, revision_id))
        _write_stored(path, body)
    _remember(key, body)
    return body


def document_warm(topology_id: int, revision_id: int, document: dict | None = None) -> None:
    """Prepare the compressed document of a revision just saved, for the editor's first open:
    from ``document`` (the saved dict, still in memory: no 253 MB read back) in the compact form
    when it pays (:func:`designer.editor_compact.compact_document`), else as
    :func:`document_gzip` makes it."""
    compact = compact_document(document) if document is not None else None
    try:
        text = orjson.dumps(compact) if compact is not None else None
    except TypeError:  # orjson.JSONEncodeError: a value it does not write (an int over 64 bits)
        text = None
    if text is None:
        document_gzip(topology_id, revision_id)
        return
    body = _gzip(text)
    _write_stored(_stored_path(topology_id, revision_id), body)
    _remember((topology_id, revision_id), body)


def _gzip(text: bytes) -> bytes:
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip wrapper
    return compressor.compress(text) + compressor.flush()


def store_dir() -> Path:
    """Where the compressed documents are kept on disk (``VAR_DIR/editor-documents``)."""
    return Path(settings.VAR_DIR) / "editor-documents"


def _stored_path(topology_id: int, revision_id: int) -> Path:
    """The disk store's file of the revision: ``<revision id>-<checksum>.json.gz``.

    Raises
    ------
    Http404
        No such revision of this topology.
    """
    checksum = (TopologyRevision.objects.filter(pk=revision_id, topology_id=topology_id)
                .values_list("checksum", flat=True).first())
    if checksum is None:
        raise Http404("no such revision")
    return stored_path(revision_id, checksum)


def stored_path(revision_id: int, checksum: str) -> Path:
    """Where a revision's compressed document is kept on this machine's disk."""
    return store_dir() / f"{int(revision_id)}-{checksum}{SUFFIX}"


def _read_stored(path: Path) -> bytes | None:
    """The file's bytes (its time touched, for the least-recently-used pruning), or None: no
    such file, or not a gzip stream (then it is removed, and compressed again by the caller)."""
    try:
        body = path.read_bytes()
    except OSError:
        return None
    if len(body) < GZIP_MIN_BYTES or body[:2] != GZIP_MAGIC:
        with contextlib.suppress(OSError):
            os.remove(path)
        return None
    with contextlib.suppress(OSError):  # a read-only store still serves what it holds
        os.utime(path)
    return body


def _write_stored(path: Path, body: bytes) -> None:
    """Write ``body`` to ``path`` whole, then prune the store to ``DISK_BYTES``
    (``designer.disk_cache``); a failure only costs the next process its own compression."""
    disk_cache.write_whole(path, [body], suffix=SUFFIX, limit=DISK_BYTES)


def _prune(directory: Path, limit: int) -> None:
    """Remove the least recently used documents of ``directory`` until they fit in ``limit``
    bytes (the newest is always kept)."""
    disk_cache.prune(directory, SUFFIX, limit)


def _remember(key: tuple[int, int], body: bytes) -> None:
    with _cache_lock:
        _cache[key] = body
        total = sum(len(b) for b in _cache.values())
        while total > CACHE_BYTES and len(_cache) > 1:
            total -= len(_cache.popitem(last=False)[1])


def cache_clear() -> None:
    """Forget every compressed document of this process, not the disk store (tests measure a
    first open in a new web process with it)."""
    with _cache_lock:
        _cache.clear()


def document_response(request, topology_id: int, revision_id: int) -> HttpResponse:
    """The HTTP answer of ``GET …/editor/?document=<revision id>``: the JSON document, gzip-encoded
    for a client that accepts it. The caller has checked that the user may see the topology.

    Cacheable by the browser (``private``, immutable: the URL names one revision), so opening the
    editor on that revision again does not download it again.
    """
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        response = HttpResponse(document_gzip(topology_id, revision_id),
                                content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(document_text(topology_id, revision_id),
                                content_type="application/json")
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    patch_vary_headers(response, ("Accept-Encoding", "Cookie"))
    return response
