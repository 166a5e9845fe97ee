"""The topology page's figures of a revision, kept in each web process by document checksum.

The page shows a revision's first host group, its BOM and its rack/tray/server counts, all read
from the revision's digest (:func:`designer.pages.selectors.revision_digest`, one query and a JSON
decode that grows with the design). A digest is a pure function of the document and
``DIGEST_VERSION``, so figures kept under ``(DIGEST_VERSION, checksum)`` are never stale: an edit
has a new checksum and gets figures of its own; undoing it finds the old ones, right again.
Nothing is invalidated and nothing is written (a page never writes). The key is the content, not
the revision id: test databases reuse ids after a rollback, and two revisions with one document
share one entry.

Not a permission: callers look figures up only for the current revision of a topology they
fetched through :mod:`designer.selectors` with the requesting user (a 404 before this for anyone
else), and an entry holds no user's data. Per process, not in Redis: an entry is small, a hit is
a dict lookup (no round trip, no unpickling), and each web process computes it at most once.
"""
from __future__ import annotations

import threading
from collections import OrderedDict

from designer.bridge import digest
from designer.models import TopologyRevision
from designer.pages import selectors as pages

__all__ = ["PAGE_DIGESTS", "MAX_ENTRIES", "page_digest"]

#: Documents whose figures one process keeps (least recently used out first); an entry is the
#: first host group, the BOM (a few rows per part) and three counts: a few kB at most.
MAX_ENTRIES = 512
#: ``(DIGEST_VERSION, checksum) -> {"hosts", "bom", "units"}``, read only once stored.
PAGE_DIGESTS: OrderedDict[tuple[int, str], dict] = OrderedDict()
_lock = threading.Lock()

_EMPTY_UNITS = {"racks": 0, "trays": 0, "servers": 0}


def page_digest(revision: TopologyRevision | None) -> dict:
    """``{"hosts": [first host group] or [], "bom": dict or None, "units": {racks, trays,
    servers}}`` of ``revision`` (None: a topology without a revision yet).

    The dicts returned are shared between requests: read them, never change them.
    """
    if revision is None:
        return {"hosts": [], "bom": None, "units": dict(_EMPTY_UNITS)}
    if not revision.checksum:  # never without one when saved by services; not cached if it is
        return _figures(revision)
    key = (digest.DIGEST_VERSION, revision.checksum)
    with _lock:
        figures = PAGE_DIGESTS.get(key)
        if figures is not None:
            PAGE_DIGESTS.move_to_end(key)
            return figures
    figures = _figures(revision)  # outside the lock: a miss on a big design takes a while
    with _lock:
        PAGE_DIGESTS[key] = figures
        while len(PAGE_DIGESTS) > MAX_ENTRIES:
            PAGE_DIGESTS.popitem(last=False)
    return figures


def _figures(revision: TopologyRevision) -> dict:
    summary = pages.revision_digest(revision)[0]
    return {"hosts": summary["hosts"][:1], "bom": summary["bom"],
            "units": pages.units_of(summary)}
