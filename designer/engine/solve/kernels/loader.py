"""Where the kernels come from: the ahead-of-time compiled extension ``_maxmin_aot`` when it was
built from the current kernel sources, else numba's JIT (:mod:`designer.engine.solve.kernels.jit`:
each entry point from its owner module, the one source of its code).

Why: a fresh ``solve`` process spent a large share of its CPU time importing numba and loading
the cached JIT kernels from disk (numba's registries; docs/PERFORMANCE.md). The AOT module
(``python -m designer.engine.solve.kernels.build``, run by ``make setup``) is plain machine code
behind a CPython extension: importing it imports no numba. Neither does this module.

Two guards keep the AOT path exactly the JIT path:

- *stale module*: the extension exports ``source_digest()``, a hash of every source file of this
  package (the kernels, this loader, the build script) taken when it was built; a module whose
  digest differs from the files now on disk is never used (the JIT is).
- *argument types*: compiled entry points do not check their arguments (a float32 array where a
  float64 one is expected reads garbage or crashes), so every call is checked against
  :data:`ENTRY_POINTS` first; any other dtype, layout or a read-only array the kernel writes goes to
  the JIT, which handles it as it always did.
"""
from __future__ import annotations

import importlib
import os
from importlib.util import source_hash

import numpy as np

__all__ = ["kernels", "aot_kernels", "source_digest", "ENTRY_POINTS", "ENTRY_POINTS_BY_FILE", "OWNERS",
           "PARAM_TYPES", "AOT_MODULE"]

AOT_MODULE = "designer.engine.solve.kernels._maxmin_aot"
_PACKAGE = AOT_MODULE.rsplit(".", 1)[0]
_HERE = os.path.dirname(os.path.abspath(__file__))
# Every source file of the package: an edit to any of them makes a built module stale.
_DIGEST_FILES = tuple(sorted(name for name in os.listdir(_HERE) if name.endswith(".py") and name[0] != "."))

# The exported kernels of each kernel module (designer/engine/solve/kernels/<file>.py), with their
# parameters in order (build.py checks them against the kernel signatures). A trailing "!" marks
# an array the kernel writes: it must be writable.
ENTRY_POINTS_BY_FILE = {
    "fill": {
        "maxmin_solve": "cap ptr res dem w",
        "maxmin_solve_until": "cap ptr res dem w thr",
    },
    "timeline": {
        "tl_start": "cap ptr res dem w frozen! left t0",
        "tl_run": "max_steps ptr res col_ptr col dem w rates! lev! bneck! frozen! active! rem! cnt! "
                  "wsum! load! heap! pos! key! order! mark! touched! left! t_upd! ckey! cheap! cpos! "
                  "completion! events! batch! unfrozen! prev! ints!",
    },
    "id_table": {
        "id_table_build": "key_bytes key_ptr table!",
        "find_joined": "joined key_bytes key_ptr table out!",
    },
    "json_scan": {
        "scan_paths": "piece key_bytes key_ptr table lens out!",
        "scan_flows": "piece key_bytes key_ptr table lens! out! ids! id_ptr! dem_nums! size_nums! flags! counts!",
    },
    "item_scan": {
        "scan_items": "piece names name_ptr classes key_bytes key_ptr table fields! field_size field_used! "
                      "refs! present! counts!",
    },
    "json_write": {
        "write_object": "keys values value_ptr pick layout layout_ptr text!",
    },
    "paths": {
        "path_lengths": "pieces firsts hosts choices owner n_flows tab_ptr tab_data flow_ptr!",
        "path_entries": "pieces firsts hosts choices owner n_flows tab_ptr tab_data host_base host_flat "
                        "flow_ptr flow_res!",
    },
    "hashing": {
        "group_identical": "ptr res dem_bits w_bits table! group! firsts! max_groups",
        "hashed_rows": "src dst pattern index seed salt first count rows!",
    },
}
# Every entry point, and the module that defines it.
ENTRY_POINTS = {name: params for points in ENTRY_POINTS_BY_FILE.values() for name, params in points.items()}
OWNERS = {name: f"{_PACKAGE}.{file}" for file, points in ENTRY_POINTS_BY_FILE.items() for name in points}
# The type of each parameter name: a 1-d C-contiguous array of that dtype, or a scalar
# ("int64": a Python int in range, "float64": a Python float), as the callers pass them.
PARAM_TYPES = {
    "cap": "f8[]", "thr": "f8[]", "ptr": "i8[]", "res": "i8[]", "dem": "f8[]", "w": "f8[]", "frozen": "u1[]",
    "left": "f8[]", "t0": "float64", "max_steps": "int64", "col_ptr": "i8[]", "col": "i8[]",
    "rates": "f8[]", "lev": "f8[]", "bneck": "i8[]", "active": "u1[]", "rem": "f8[]", "cnt": "i8[]",
    "wsum": "f8[]", "load": "f8[]", "heap": "i8[]", "pos": "i8[]", "key": "f8[]", "order": "i8[]",
    "mark": "i8[]", "touched": "i8[]", "t_upd": "f8[]", "ckey": "f8[]", "cheap": "i8[]",
    "cpos": "i8[]", "completion": "f8[]", "events": "f8[]", "batch": "i8[]", "unfrozen": "i8[]",
    "prev": "f8[]", "ints": "i8[]", "key_bytes": "u1[]", "key_ptr": "i8[]", "table": "i8[]",
    "piece": "u1[]", "lens": "i8[]", "out": "i8[]", "joined": "u1[]", "ids": "u1[]", "id_ptr": "i8[]",
    "dem_nums": "u1[]", "size_nums": "u1[]", "flags": "u1[]", "counts": "i8[]", "keys": "u1[]",
    "values": "u1[]", "value_ptr": "i8[]", "pick": "i8[]", "layout": "u1[]", "layout_ptr": "i8[]",
    "text": "u1[]", "dem_bits": "i8[]", "w_bits": "i8[]", "group": "i8[]", "firsts": "i8[]",
    "max_groups": "int64", "pieces": "i8[]", "hosts": "i8[]", "choices": "i8[]",
    "owner": "i8[]", "n_flows": "int64", "tab_ptr": "i8[]", "tab_data": "i8[]", "host_base": "i8[]",
    "host_flat": "i8[]", "flow_ptr": "i8[]", "flow_res": "i8[]", "src": "i8[]", "dst": "i8[]",
    "pattern": "i8[]", "index": "i8[]", "seed": "int64", "salt": "int64", "first": "i8[]", "count": "i8[]",
    "rows": "i8[]", "names": "u1[]", "name_ptr": "i8[]", "classes": "i8[]", "fields": "u1[]",
    "field_size": "int64", "field_used": "i8[]", "refs": "i8[]", "present": "i8[]",
}
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def source_digest() -> int:
    """A 60-bit hash of every source file of the package (the kernels, their constants, this
    loader, the build script: what an AOT build is made of), as the int the extension's
    ``source_digest()`` returns. The hash is the one Python checks hash-based .pyc files with
    (SipHash, already imported: hashlib would be one more import for a fresh ``solve``)."""
    parts = []
    for name in _DIGEST_FILES:
        with open(os.path.join(_HERE, name), "rb") as fh:
            parts += [name.encode(), b"\0", fh.read(), b"\0"]
    return int.from_bytes(source_hash(b"".join(parts)), "little") >> 4


def _param_check(spec: str):
    """A predicate: does one argument match the compiled type ``spec`` exactly?"""
    name, writes = spec.rstrip("!"), spec.endswith("!")
    kind = PARAM_TYPES[name]
    if kind == "int64":
        return lambda v: type(v) is int and _INT64_MIN <= v <= _INT64_MAX
    if kind == "float64":
        return lambda v: type(v) is float
    dtype = np.dtype(kind[:-2])

    def array_ok(v):
        return (type(v) is np.ndarray and v.dtype == dtype and v.ndim == 1
                and v.flags.c_contiguous and v.flags.aligned and (v.flags.writeable or not writes))

    return array_ok


def _guarded(name: str, compiled):
    """``compiled`` when every argument matches its signature, else the JIT kernel."""
    checks = [_param_check(spec) for spec in ENTRY_POINTS[name].split()]

    def call(*args):
        if len(args) == len(checks) and all(check(a) for check, a in zip(checks, args)):
            return compiled(*args)
        return getattr(_jit_module(), name)(*args)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"AOT ``{name}`` (numba JIT for arguments it was not compiled for)."
    return call


class _Kernels:
    """The AOT entry points, with the argument checks of :func:`_guarded`."""

    def __init__(self, module):
        self.module = module
        for name in ENTRY_POINTS:
            setattr(self, name, _guarded(name, getattr(module, name)))


def _jit_module():
    from designer.engine.solve.kernels import jit  # imports numba

    return jit


def load_aot(expected_digest: int | None = None):
    """The AOT extension if it is built and its digest is ``expected_digest`` (default: the
    current sources'), else None."""
    try:
        module = importlib.import_module(AOT_MODULE)
    except (ImportError, OSError):  # not built, or built for another Python/numpy
        return None
    digest = source_digest() if expected_digest is None else expected_digest
    built_from = getattr(module, "source_digest", None)
    if built_from is None or built_from() != digest:
        return None  # stale: built from other sources than those on disk
    return module


_loaded: list = []


def kernels():
    """The kernel namespace (every entry point of :data:`ENTRY_POINTS`): AOT when usable, else
    the numba JIT module (:mod:`.jit`). ``FABRICSCOPE_KERNELS=jit`` forces the JIT (to compare, or to debug)."""
    if not _loaded:
        module = _wanted_aot()
        _loaded.append(_Kernels(module) if module is not None else _jit_module())
    return _loaded[0]


def _wanted_aot():
    """The AOT module unless ``FABRICSCOPE_KERNELS=jit`` asks for the JIT (None then, or when
    it is not usable)."""
    return None if os.environ.get("FABRICSCOPE_KERNELS") == "jit" else load_aot()


def aot_kernels():
    """The namespace :func:`kernels` gives when it is the AOT module's, else None; never imports
    numba. For a kernel that only pays off compiled ahead of time: the ``solve`` reader's path
    scanner saves less than importing numba for its JIT would cost."""
    if not _loaded:
        module = _wanted_aot()
        if module is None:
            return None  # not cached: kernels() may still choose (and import) the JIT
        _loaded.append(_Kernels(module))
    return _loaded[0] if isinstance(_loaded[0], _Kernels) else None
