"""How every kernel function is compiled: :func:`kernel`, numba's ``njit`` with the options all of
them share. Importing this module imports numba; the kernel modules are the only importers.
"""
from __future__ import annotations

import numba

__all__ = ["kernel"]


def kernel(fn):
    """``fn`` compiled by numba in nopython mode, without the GIL, cached on disk.

    No ``fastmath`` and no ``boundscheck`` (numba's defaults): results are IEEE-exact (the AOT build
    compiles the same code, bit for bit), and an index is only as safe as its module's bounds
    contract makes it.
    """
    # cache=True needs a writable __pycache__ (or NUMBA_CACHE_DIR); numba raises at decoration time
    # when it finds none, and then compiling at every start is still correct, only slower.
    try:
        return numba.njit(cache=True, nogil=True)(fn)
    except RuntimeError:
        return numba.njit(nogil=True)(fn)
