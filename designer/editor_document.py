"""The editor's document, sent beside its page, so that a 32k-GPU design opens within 2 s.

The editor page no longer inlines the revision it edits (a 32,768-GPU design is ~85 MB of JSON):
the page names ``?document=<revision id>`` and the browser fetches it while the editor's modules
load. Revisions are immutable, so the answer is the revision's stored JSON text as the database
holds it — never decoded into Python objects and encoded again (on the 32k design that was most
of the page's server time) — gzip-compressed once and kept in a small per-process cache keyed
by the revision id. See docs/PERFORMANCE.md, "Editor: open a 32k-GPU design collapsed".
"""
from __future__ import annotations

import threading
import zlib
from collections import OrderedDict

from django.db.models import TextField
from django.db.models.functions import Cast
from django.http import Http404, HttpResponse
from django.utils.cache import patch_vary_headers

from designer.models import TopologyRevision

__all__ = ["document_text", "document_gzip", "document_response", "cache_clear", "CACHE_BYTES"]

# Compressed documents kept per process: a 32k-GPU design compresses to a few MB, so this holds
# the designs being edited right now without growing with the number of revisions.
CACHE_BYTES = 64 * 1024 * 1024
# zlib level 1: a fraction of level 6's CPU for a slightly larger result (docs/PERFORMANCE.md);
# the compressed form is made once per revision and process.
GZIP_LEVEL = 1

_cache: OrderedDict[tuple[int, int], bytes] = OrderedDict()
_cache_lock = threading.Lock()


def document_text(topology_id: int, revision_id: int) -> bytes:
    """The stored JSON text of revision ``revision_id`` of topology ``topology_id``, UTF-8, as
    the database holds it.

    Read as text (``CAST(document AS text)``): SQLite stores a ``JSONField`` as the text Django
    wrote, PostgreSQL prints its ``jsonb``; both are the document's JSON, and neither is parsed
    here.

    Raises
    ------
    Http404
        No such revision of this topology.
    """
    rows = (TopologyRevision.objects.filter(pk=revision_id, topology_id=topology_id)
            .annotate(text=Cast("document", output_field=TextField()))
            .values_list("text", flat=True))
    text = next(iter(rows), None)
    if text is None:
        raise Http404("no such revision")
    return text.encode()


def document_gzip(topology_id: int, revision_id: int) -> bytes:
    """The JSON text of :func:`document_text`, gzip-compressed (bytes), from the per-process
    cache or read and compressed once (a revision never changes: its id is the cache key)."""
    key = (topology_id, revision_id)
    with _cache_lock:
        body = _cache.get(key)
        if body is not None:
            _cache.move_to_end(key)
            return body
    compressor = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # gzip wrapper
    body = compressor.compress(document_text(topology_id, revision_id)) + compressor.flush()
    with _cache_lock:
        _cache[key] = body
        total = sum(len(b) for b in _cache.values())
        while total > CACHE_BYTES and len(_cache) > 1:
            total -= len(_cache.popitem(last=False)[1])
    return body


def cache_clear() -> None:
    """Forget every compressed document of this process (tests measure a first open with it)."""
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
