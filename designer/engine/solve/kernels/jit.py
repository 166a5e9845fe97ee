"""The kernels as numba compiles them just in time: every entry point of
:data:`~designer.engine.solve.kernels.loader.ENTRY_POINTS_BY_FILE`, taken from its owner module,
and the result codes they return. :func:`~designer.engine.solve.kernels.loader.kernels` gives this
module when the AOT module is not usable (or ``FABRICSCOPE_KERNELS=jit``), and the AOT entry
points fall back to it for arguments they were not compiled for.

Importing it imports numba (a noticeable start-up cost, which :mod:`.loader`'s AOT path avoids)
and loads or compiles every kernel on first call.
"""
from __future__ import annotations

from designer.engine.solve.kernels.constants import *  # noqa: F401,F403  (the SCAN_*/FLOWS_* codes)
from designer.engine.solve.kernels.constants import __all__ as _CONSTANTS
from designer.engine.solve.kernels.fill import maxmin_solve, maxmin_solve_until
from designer.engine.solve.kernels.hashing import group_identical, hashed_rows
from designer.engine.solve.kernels.id_table import find_joined, id_table_build
from designer.engine.solve.kernels.item_scan import scan_items
from designer.engine.solve.kernels.json_scan import scan_flows, scan_paths
from designer.engine.solve.kernels.json_write import write_object
from designer.engine.solve.kernels.paths import path_entries, path_lengths
from designer.engine.solve.kernels.timeline import tl_run, tl_start

__all__ = ["maxmin_solve", "maxmin_solve_until", "tl_start", "tl_run", "id_table_build", "find_joined",
           "scan_paths", "scan_flows", "scan_items", "write_object", "path_lengths", "path_entries", "group_identical",
           "hashed_rows", *_CONSTANTS]
