"""Compiled kernels: numba functions, built ahead of time into one CPython extension.

Modules
-------
- :mod:`.loader`: :func:`~.loader.kernels` gives the AOT module when it was built from the current
  sources, else numba's JIT of the same functions; :func:`~.loader.aot_kernels` never imports numba;
- :mod:`.build`: ``python -m designer.engine.solve.kernels.build`` compiles the entry points with
  ``numba.pycc`` into ``_maxmin_aot*.so`` beside this file;
- :mod:`.compiled`: the kernel source (the one copy both the JIT and the AOT build compile).

The AOT build has no bounds checks: every kernel validates or is handed validated indices (see each
kernel's docstring for its contract).
"""
