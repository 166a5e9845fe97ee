"""Compiled kernels: numba functions, built ahead of time into one CPython extension.

Kernels, by owner (entry points in parentheses; each module's docstring states its bounds contract)
------------------------------------------------------------------------------------------------
- :mod:`.fill`: the weighted max-min water-filling (``maxmin_solve``, ``maxmin_solve_until``);
- :mod:`.timeline`: the fluid timeline, warm-started from the fill's state (``tl_start``, ``tl_run``);
- :mod:`.id_table`: id → index tables over UTF-8 bytes (``id_table_build``, ``find_joined``);
- :mod:`.json_scan`: the ``solve`` reader's scanners (``scan_paths``, ``scan_flows``);
- :mod:`.item_scan`: a topology file's "nodes" and "links" arrays read into columns (``scan_items``);
- :mod:`.json_write`: the ``solve`` answer's object writer (``write_object``);
- :mod:`.paths`: routing's path assembly (``path_lengths``, ``path_entries``);
- :mod:`.hashing`: splitmix64 hashing (``group_identical``, ``hashed_rows``);
- :mod:`.heap`: the indexed min-heap of the fill and the timeline (no entry point);
- :mod:`.constants`: the numbers kernels share with their callers (numba-free);
- :mod:`.compiler`: the ``@kernel`` decorator (numba's ``njit``, cached).

Loading and building
--------------------
- :mod:`.loader`: :func:`~.loader.kernels` gives the AOT module when it was built from the current
  sources, else numba's JIT of the same functions; :func:`~.loader.aot_kernels` never imports numba.
  It lists the entry points per file (``ENTRY_POINTS_BY_FILE``);
- :mod:`.jit`: every entry point as numba's JIT compiles it (imports numba);
- :mod:`.build`: ``python -m designer.engine.solve.kernels.build`` compiles the entry points with
  ``numba.pycc`` into ``_maxmin_aot*.so`` beside this file.

The AOT build has no bounds checks: every kernel validates or is handed validated indices.
"""
