"""Build ``designer/engine/solve/kernels/_maxmin_aot*.so``: every kernel entry point compiled ahead of
time with ``numba.pycc`` into one CPython extension, from its owner module (the same functions the
JIT compiles, no copy), so that a fresh process solves without importing numba (see
:mod:`designer.engine.solve.kernels.loader`). ``make setup`` runs it::

    python -m designer.engine.solve.kernels.build

The entry points are those of :data:`~designer.engine.solve.kernels.loader.ENTRY_POINTS_BY_FILE`,
file by file. Each is exported with the signature numba's JIT infers for the argument types the
loader lists (return type included), so both compile the same typed code. The target CPU is
numba's generic one (the module runs on any x86-64); no fast-math either way, so results are the
JIT's bit for bit (tests/engine/test_kernel_aot.py).
Needs a C compiler and setuptools; without them it fails and the JIT stays in use.
"""
from __future__ import annotations

import glob
import importlib
import inspect
import os
import shutil
import sys
import tempfile
import time
import warnings

from designer.engine.solve.kernels import loader as loader

__all__ = ["build"]


def _numba_type(kind: str):
    from numba import types

    if kind.endswith("[]"):
        return types.Array(getattr(types, {"f8": "float64", "i8": "int64", "u1": "uint8"}[kind[:-2]]),
                           1, "C")
    return getattr(types, kind)


def _signatures() -> dict:
    """name -> (python function, numba signature) of every entry point, file by file, each taken
    from its owner module, the return type as the JIT infers it."""
    out = {}
    for owner, points in loader.ENTRY_POINTS_BY_FILE.items():
        module = importlib.import_module(f"{__package__}.{owner}")
        for name, params in points.items():
            out[name] = _signature(module, name, [p.rstrip("!") for p in params.split()])
    return out


def _signature(module, name: str, names: list):
    dispatcher = getattr(module, name)
    actual = list(inspect.signature(dispatcher.py_func).parameters)
    if names != actual:
        raise RuntimeError(f"loader.ENTRY_POINTS_BY_FILE lists {names} for {module.__name__}.{name}, "
                           f"which takes {actual}")
    args = tuple(_numba_type(loader.PARAM_TYPES[p]) for p in names)
    dispatcher.compile(args)
    sig = next(s for s in dispatcher.nopython_signatures if tuple(s.args) == args)
    return dispatcher.py_func, sig


def _digest_function(value: int):
    # A constant-returning function for numba to compile: the digest lives inside the binary, so
    # a module and its digest cannot get out of step.
    namespace: dict = {}
    exec(f"def source_digest():\n    return {value}\n", namespace)
    return namespace["source_digest"]


def build(output_dir: str | None = None, *, verbose: bool = False) -> str:
    """Compile the AOT module into ``output_dir`` (default: next to the kernels); returns its path.

    The module is written to a scratch folder first and moved into place in one rename, so a
    process starting meanwhile sees the old module or the new one, never half of one.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc is deprecated (still shipped in numba 0.68)
        from numba.pycc import CC

    output_dir = output_dir or os.path.dirname(os.path.abspath(loader.__file__))
    basename = loader.AOT_MODULE.rsplit(".", 1)[1]
    cc = CC(basename)
    cc.verbose = verbose
    for name, (func, sig) in _signatures().items():
        cc.export(name, sig)(func)
    cc.export("source_digest", "int64()")(_digest_function(loader.source_digest()))
    with tempfile.TemporaryDirectory(prefix="fabricscope-aot-") as scratch:
        cc.output_dir = scratch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cc.compile()
        (built,) = glob.glob(os.path.join(scratch, basename + "*"))
        target = os.path.join(output_dir, os.path.basename(built))
        staged = target + ".tmp"
        shutil.copyfile(built, staged)
        os.chmod(staged, 0o755)
        os.replace(staged, target)
    return target


def main() -> int:
    started = time.monotonic()
    try:
        path = build(verbose="-v" in sys.argv[1:])
    except Exception as exc:  # no compiler, no setuptools, a kernel pycc cannot compile
        print(f"build_kernels: the AOT kernels were not built ({type(exc).__name__}: {exc}); "
              "the solver uses numba's JIT", file=sys.stderr)
        return 1
    print(f"build_kernels: {os.path.relpath(path)} ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
