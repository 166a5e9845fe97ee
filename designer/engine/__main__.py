"""``python -m designer.engine COMMAND ...``: run one command, then leave without the teardown.

Why the hard exit: after a large ``simulate`` the interpreter would free, one by one, the
millions of objects its module-level caches still hold (topology, routing context) before the
process ends anyway (figures in docs/PERFORMANCE.md). Once
the command has returned, its output is written and closed, so flushing the standard streams and
calling :func:`os._exit` loses nothing (no command starts threads or keeps a file open past
its return). An exception still takes the normal path (traceback,
cleanup, status 1).
"""
import os
import sys

# No transparent huge pages for numpy's large arrays in a CLI process (NumPy's documented
# switch; set NUMPY_MADVISE_HUGEPAGE=1 to keep them): with the kernel's THP defrag on
# ``madvise``, faulting in the routing arrays of a 1M-flow all-to-all compacts memory in the
# kernel, in system time (docs/PERFORMANCE.md). numpy reads it when first imported.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
# One OpenBLAS thread: the engine does no linear algebra, yet importing numpy starts a pool of
# OpenBLAS threads (one per core) that spin while they start, CPU every command pays
# (docs/PERFORMANCE.md). Read by OpenBLAS when numpy loads it; set the variable to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _keep_freed_arrays() -> None:
    """glibc: serve arrays up to 32 MB (its largest mmap threshold) from the heap and keep freed
    memory there, so a numpy temporary reuses pages already faulted in instead of mapping fresh
    ones (the 1,024-GPU all-to-all makes hundreds of 8 MB ones): less system time for a little more
    peak memory (as MALLOC_MMAP_THRESHOLD_,
    MALLOC_TRIM_THRESHOLD_ and MALLOC_TOP_PAD_ would set it). Larger blocks too (below: as
    MALLOC_MMAP_MAX_=0). Nothing on another C library."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    trim, top_pad, mmap_threshold, mmap_max = -1, -2, -3, -4   # M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_*
    mallopt(mmap_threshold, 32 << 20)
    mallopt(trim, 1 << 30)   # C int arguments: below 2**31
    mallopt(top_pad, 64 << 20)
    # Arrays above 32 MB (the threshold's ceiling) were still mapped fresh and unmapped when
    # freed, so each of their temporaries faulted its pages in again: the 4,096-GPU all-to-all
    # (134 MB per int64 array of its 16.8M flows) made millions of page faults, mostly system
    # time. Served from the heap too (no mmap for any block), a third as many faults and less
    # CPU for a slightly higher peak (docs/PERFORMANCE.md).
    mallopt(mmap_max, 0)


_keep_freed_arrays()

from designer.engine.cli import main  # noqa: E402  (after the settings above)


def _exit_now(status: int) -> None:
    """Flush stdout/stderr and end the process with ``status`` without freeing its heap."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # closed pipe or stream: let the normal exit report it
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":  # importing the module (the engine guard test does) runs nothing
    _exit_now(main())
