"""A whole revision's items indexed on disk, so that a patch on it reads only what it touches.

One file per revision stored whole (``VAR_DIR/item-stores/<revision id>-<checksum>.items``):
the document's canonical JSON (the text its checksum is the sha256 of), each item's byte range
in it, and sorted 64-bit keys of the ids (and of the links' ends, the nodes' groups) with the
positions they belong to. Opened with ``mmap``: a lookup is a binary search and the parse of
one item; the checksum of a patched document streams the kept items' bytes straight from the
file (``Delta.canonical_pieces``). It is :class:`designer.engine.document.delta.BaseItems` for
:mod:`designer.services.topologies`' patch save (docs/PERFORMANCE.md, "One-node save at
100,000 GPUs").

A derived cache, never the source of truth: written after a build job or a slow patch save,
removed least recently used over ``DISK_BYTES``; missing or unreadable, the save reads the base
from the database instead (slower, same answer). Keys are the crc32 of the id's UTF-8: a
collision only costs a second candidate, as every candidate's id is checked.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import zlib
from functools import partial
from operator import methodcaller
from pathlib import Path

import numpy as np
import orjson
from django.conf import settings

from designer import disk_cache
from designer.bridge.common import _orjson_may_differ, canonical_json_bytes

__all__ = ["ItemStore", "store_open", "store_path", "store_write", "store_ready", "store_dir", "json_size", "DISK_BYTES",
           "MIN_ITEMS", "worth_storing"]

log = logging.getLogger(__name__)

MAGIC = b"FSITEMS1"
SUFFIX = ".items"
#: Stores kept on disk: a 100,000-GPU design's is ~330 MB (its 259 MB text + ~70 MB of keys).
DISK_BYTES = 4 * 1024 * 1024 * 1024
#: Documents with fewer nodes + links than this are patched from the database: fast enough
#: (a 1,024-host design, ~146k items, saves a one-node patch that way in ~0.8 s).
MIN_ITEMS = 100_000
_COLLECTIONS = ("groups", "nodes", "links")
# (array name, collection, field of the items keyed): the multimaps of BaseItems.naming
_NAMING = (("links.a", "links", "a"), ("links.b", "links", "b"), ("nodes.group", "nodes", "group"))


def store_dir() -> Path:
    return Path(settings.VAR_DIR) / "item-stores"


def _path(revision_id: int, checksum: str) -> Path:
    return store_dir() / f"{int(revision_id)}-{checksum}{SUFFIX}"


def _key(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def _keys(items: list, field: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted keys of the items' ``field`` and the positions they came from; mapped in C (5
    million keys at 100,000 GPUs), a value that is not a plain string in Python."""
    values = map(methodcaller("get", field, ""), items)
    try:
        keys = np.fromiter(map(zlib.crc32, map(str.encode, values)), dtype=np.uint64, count=len(items))
    except (TypeError, UnicodeEncodeError):   # a missing id, a lone surrogate
        keys = np.fromiter((_key(item.get(field)) if isinstance(item.get(field), str) else 0
                            for item in items), dtype=np.uint64, count=len(items))
    order = np.argsort(keys, kind="stable").astype(np.int32)
    return keys[order], order


def store_write(revision_id: int, checksum: str, document: dict, text: bytes | None = None) -> bool:
    """Write the store of a whole revision (``document`` normalized, as stored); False when it
    was not written (a document whose pieces do not rebuild its checksum, a disk error)."""
    parts, ranges, offset = [b"{"], {}, 1
    for n, key in enumerate(sorted(document)):
        head = (b"," if n else b"") + canonical_json_bytes(key) + b":"
        value = document[key]
        if key in _COLLECTIONS and isinstance(value, list):
            body, starts, ends = _items_text(value, offset + len(head) + 1)
            parts.append(head + b"[" + body + b"]")
            ranges[key] = (starts, ends)
        else:
            parts.append(head + canonical_json_bytes(value))
        offset += len(parts[-1])
    parts.append(b"}")
    whole = b"".join(parts)
    del parts
    if (text is not None and whole != text) or _sha256(whole) != checksum:
        log.warning("item store of revision %s not written: its pieces do not give its checksum",
                    revision_id)
        return False
    arrays = {}
    for key, (starts, ends) in ranges.items():
        arrays[f"{key}.start"], arrays[f"{key}.end"] = starts, ends
        arrays[f"{key}.key"], arrays[f"{key}.pos"] = _keys(document[key], "id")
    for name, key, field in _NAMING:
        items = document.get(key) if isinstance(document.get(key), list) else []
        arrays[f"{name}.key"], arrays[f"{name}.pos"] = _keys(items, field)
    fields = {k: v for k, v in document.items() if k not in _COLLECTIONS}
    return _write_file(_path(revision_id, checksum), whole, arrays, fields,
                       {k: len(v) for k, v in document.items() if k in ranges})


def _items_text(items: list, first: int) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The canonical JSON of ``items`` joined by commas, and each one's byte range (``first``:
    where the first begins). orjson writes them; where its text may not be canonical
    (``bridge.common.canonical_json_bytes``: small floats) every item is written by that
    instead."""
    try:
        body, lengths = _joined(items, partial(orjson.dumps, option=orjson.OPT_SORT_KEYS))
    except TypeError:   # what orjson refuses (an integer beyond 64 bits)
        body = None
    if body is None or _orjson_may_differ(body):
        body, lengths = _joined(items, canonical_json_bytes)
    lengths = np.array(lengths, dtype=np.int64)
    starts = first + np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    return bytes(body), starts, starts + lengths


def _joined(items: list, dumps) -> tuple[bytearray, list[int]]:
    """Appended one by one, each piece freed at once: keeping 1.9 million of orjson's bytes alive
    for a ``join`` cost 4x the CPU in page faults (docs/PERFORMANCE.md)."""
    body, lengths = bytearray(), []
    for item in items:
        piece = dumps(item)
        if lengths:
            body += b","
        body += piece
        lengths.append(len(piece))
    return body, lengths


def _sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _write_file(path: Path, body: bytes, arrays: dict, fields: dict, counts: dict) -> bool:
    """The file: magic, header length, header (JSON: each array's offset, dtype and length, the
    fields, the counts), padding to 8 bytes, the arrays, the text."""
    layout, offset = {}, 0
    for name, array in arrays.items():
        layout[name] = [offset, str(array.dtype), len(array)]
        offset += array.nbytes
    arrays_sha256 = hashlib.sha256()
    for array in arrays.values():
        arrays_sha256.update(array.tobytes())
    header = orjson.dumps({"arrays": layout, "fields": fields, "counts": counts, "text_offset": offset,
                           "text_bytes": len(body), "arrays_sha256": arrays_sha256.hexdigest()})
    head = MAGIC + len(header).to_bytes(8, "little") + header
    chunks = [head, b"\0" * ((-len(head)) % 8), *(a.tobytes() for a in arrays.values()), body]
    return disk_cache.write_whole(path, chunks, suffix=SUFFIX, limit=DISK_BYTES)


def store_path(revision_id: int, checksum: str) -> Path:
    """Where the store of a whole revision is kept on this machine."""
    return _path(revision_id, checksum)


def store_open(revision_id: int, checksum: str) -> "ItemStore | None":
    """The store of a whole revision, or None (none on this machine, or unreadable)."""
    path = _path(revision_id, checksum)
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        store = ItemStore(mapped, checksum)
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        log.warning("item store %s unreadable or damaged: removed", path.name, exc_info=True)
        mapped.close()
        with contextlib.suppress(OSError):
            os.remove(path)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)
    return store


class ItemStore:
    """:class:`~designer.engine.document.delta.BaseItems` of one stored file."""

    def __init__(self, mapped: mmap.mmap, checksum: str):
        """Raises ValueError unless every byte is as written: the text must hash to the
        revision's ``checksum``, the arrays to the header's (0.16 s at 100,000 GPUs: a damaged
        file must not give a save a wrong checksum)."""
        if mapped[:8] != MAGIC:
            raise ValueError("not an item store")
        size = int.from_bytes(mapped[8:16], "little")
        header = orjson.loads(mapped[16:16 + size])
        start = 16 + size + (-(16 + size)) % 8
        self._text = start + header["text_offset"]
        if self._text + header["text_bytes"] != len(mapped):
            raise ValueError("item store cut short")
        with memoryview(mapped) as view:
            if (hashlib.sha256(view[start:self._text]).hexdigest() != header["arrays_sha256"]
                    or hashlib.sha256(view[self._text:]).hexdigest() != checksum):
                raise ValueError("item store damaged: its bytes do not hash as written")
        self._mapped, self._view = mapped, memoryview(mapped)
        self.fields, self._counts = header["fields"], header["counts"]
        self._arrays = {name: np.frombuffer(mapped, dtype=dtype, count=count, offset=start + offset)
                        for name, (offset, dtype, count) in header["arrays"].items()}
        self._parsed: dict = {}

    def close(self) -> None:
        self._arrays.clear()
        self._view.release()
        self._mapped.close()

    def has(self, key):
        return key in self._counts

    def count(self, key):
        return self._counts.get(key, 0)

    def span(self, key: str, first: int, stop: int) -> memoryview:
        """The canonical bytes of the base's items ``first`` … ``stop - 1`` with the commas
        between them (a view of the file: a checksum reads it without copying)."""
        start = self._text + int(self._arrays[f"{key}.start"][first])
        end = self._text + int(self._arrays[f"{key}.end"][stop - 1])
        return self._view[start:end]

    def item(self, key, position):
        cached = self._parsed.get((key, position))
        if cached is None:
            cached = self._parsed[(key, position)] = orjson.loads(self.span(key, position, position + 1))
        return cached

    def items(self, key):
        count = self.count(key)
        return orjson.loads(b"[" + self.span(key, 0, count).tobytes() + b"]") if count else []

    def _candidates(self, name: str, ident: str) -> np.ndarray:
        keys = self._arrays.get(f"{name}.key")
        if keys is None or not isinstance(ident, str):
            return np.empty(0, dtype=np.int32)
        key = np.uint64(_key(ident))
        lo, hi = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
        return self._arrays[f"{name}.pos"][lo:hi]

    def position(self, key, ident):
        for w in self._candidates(key, ident):
            if self.item(key, int(w)).get("id") == ident:
                return int(w)
        return None

    def naming(self, key, field, ident):
        return [int(w) for w in self._candidates(f"{key}.{field}", ident)]


def worth_storing(document: dict) -> bool:
    """Whether a whole revision of this document gets a store (a big one)."""
    return sum(len(document.get(k) or []) for k in ("nodes", "links")) >= MIN_ITEMS


def store_ready(revision_id: int, checksum: str) -> bool:
    return _path(revision_id, checksum).exists()


def json_size(value) -> int:
    """Bytes of ``value``'s stored JSON (a patch's share of the storage quota)."""
    try:
        return len(orjson.dumps(value))
    except TypeError:
        return len(json.dumps(value))
