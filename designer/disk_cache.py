"""Files kept on this machine's disk as caches of immutable revisions — the editor's compressed
documents (``designer/editor_document.py``) and the item stores (``designer/item_store.py``).

Written whole (a temporary file, flushed to disk, then renamed: a reader in another process
never sees half a file), and each directory kept under its byte budget by removing the least
recently used files (readers touch what they read). Losing any of them loses nothing: each is
made again from the database.
"""
from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Iterable

__all__ = ["write_whole", "prune", "remove", "PART_STALE_S"]

log = logging.getLogger(__name__)

# A temporary ".part" file older than this was left by a process killed while writing it.
PART_STALE_S = 3600


def write_whole(path: Path, chunks: Iterable[bytes], *, suffix: str, limit: int) -> bool:
    """Write ``chunks`` to ``path`` whole, then prune its directory's ``suffix`` files to
    ``limit`` bytes; False (logged, nothing left behind) when the disk refused."""
    part = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as part:
            for chunk in chunks:
                part.write(chunk)
            part.flush()
            os.fsync(part.fileno())  # on disk before its name is: a crash leaves no cut file named
        os.replace(part.name, path)
        prune(path.parent, suffix, limit)
        return True
    except OSError:
        log.warning("%s not stored on disk", path.name, exc_info=True)
        if part is not None:
            with contextlib.suppress(OSError):
                os.remove(part.name)
        return False


def prune(directory: Path, suffix: str, limit: int) -> None:
    """Remove the least recently used ``suffix`` files of ``directory`` until they fit in
    ``limit`` bytes (the newest is always kept), and stale temporary files."""
    files, stale = [], time.time() - PART_STALE_S
    for entry in os.scandir(directory):
        if entry.name.endswith(suffix):
            stat = entry.stat()
            files.append((stat.st_mtime, stat.st_size, entry.path))
        elif entry.name.endswith(".part") and entry.stat().st_mtime < stale:
            with contextlib.suppress(FileNotFoundError):  # left by a process killed mid-write
                os.remove(entry.path)
    files.sort(reverse=True)
    total = 0
    for index, (_, size, file) in enumerate(files):
        total += size
        if total > limit and index > 0:
            with contextlib.suppress(FileNotFoundError):  # another process pruned it first
                os.remove(file)


def remove(paths: Iterable[Path]) -> None:
    """Remove these files if they exist (a deleted topology's revisions: their text must not
    outlive it on disk)."""
    for path in paths:
        with contextlib.suppress(OSError):
            os.remove(path)
