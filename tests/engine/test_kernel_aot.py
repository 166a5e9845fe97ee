"""The ahead-of-time compiled kernels (``make setup`` builds them) against numba's JIT of the same
source: exactly equal results on random instances, and the loader's guards (a stale module or an
argument the module was not compiled for goes to the JIT). The AOT halves skip when the module is
not built; the guard tests use a stand-in module and always run."""
import inspect
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from designer.engine.solve.kernels import loader as loader
from designer.engine.solve.kernels import jit
from designer.engine.solve import timeline as timeline_module

AOT = loader.load_aot()
needs_aot = pytest.mark.skipif(AOT is None,
                               reason="AOT kernels not built (python -m designer.engine.solve.kernels.build)")
ROOT = Path(__file__).resolve().parents[2]


def _instance(seed: int):
    """A random problem with what the kernels branch on: weights, finite and infinite demands
    (some 0), zero and infinite capacities, a flow crossing a link twice, flows on no link."""
    rng = np.random.default_rng(seed)
    n_res, n_flows = int(rng.integers(1, 40)), int(rng.integers(1, 300))
    cap = rng.choice([0.0, np.inf, 1.0, 10.0, 100.0], n_res, p=[.05, .05, .2, .4, .3])
    cap *= 0.5 + rng.random(n_res)
    lens = rng.integers(0, 6, n_flows)
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    res = rng.integers(0, n_res, int(ptr[-1])).astype(np.int64)
    dem = np.where(rng.random(n_flows) < .4, rng.choice([0.0, 0.5, 3.0, 30.0], n_flows), np.inf)
    dem[lens == 0] = 1.0
    w = np.ones(n_flows) if seed % 2 else rng.choice([0.5, 1.0, 3.0], n_flows)
    size = rng.choice([0.0, 1e9, 5e9, 2.5e10], n_flows)
    return cap, ptr, res, dem, w, size


def _assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    else:
        assert a == b


@needs_aot
@pytest.mark.parametrize("seed", range(40))
def test_aot_maxmin_equals_jit(seed):
    cap, ptr, res, dem, w, _ = _instance(seed)
    _assert_same(AOT.maxmin_solve(cap, ptr, res, dem, w), jit.maxmin_solve(cap, ptr, res, dem, w))


@needs_aot
@pytest.mark.parametrize("seed", range(20))
def test_aot_stopped_fill_equals_jit(seed):
    cap, ptr, res, dem, w, _ = _instance(seed)
    stop = np.where(np.random.default_rng(seed).random(len(w)) < 0.2, 5.0, -np.inf)
    _assert_same(AOT.maxmin_solve_until(cap, ptr, res, dem, w, stop), jit.maxmin_solve_until(cap, ptr, res, dem, w, stop))


@needs_aot
def test_aot_maxmin_equals_jit_on_a_benchmark_instance():
    from designer.engine.benchmarks.solver import random_instance

    cap, ptr, res, dem = random_instance(20_000, 2_000, seed=7)
    w = np.random.default_rng(7).choice([1.0, 2.0, 0.25], len(ptr) - 1)
    for weights in (np.ones(len(ptr) - 1), w):
        _assert_same(AOT.maxmin_solve(cap, ptr, res, dem, weights),
                     jit.maxmin_solve(cap, ptr, res, dem, weights))


@needs_aot
@pytest.mark.parametrize("seed", range(40))
def test_aot_timeline_equals_jit(seed, monkeypatch):
    cap, ptr, res, dem, w, size = _instance(seed)
    results = []
    for kernels in (loader._Kernels(AOT), jit):
        monkeypatch.undo()
        monkeypatch.setattr(loader, "_loaded", [kernels])
        if kernels is not jit:  # no call of the AOT half may fall back to the JIT
            monkeypatch.setattr(loader, "_jit_module", lambda: pytest.fail("fell back to the JIT"))
        events = []
        result = timeline_module.timeline(cap, ptr, res, size, dem, weights=w,
                                          on_event=lambda t, active, rates, load: events.append(
                                              (t, active.copy(), rates.copy(), load.copy())))
        results.append((result, events))
    (aot, aot_events), (ref, ref_events) = results
    for field in ("completion_s", "events_s"):
        assert np.array_equal(getattr(aot, field), getattr(ref, field), equal_nan=True)
    assert (aot.levels, aot.flows_resolved, aot.truncated) == (ref.levels, ref.flows_resolved, ref.truncated)
    assert len(aot_events) == len(ref_events)
    for a, b in zip(aot_events, ref_events):
        _assert_same(a, b)


@needs_aot
def test_the_default_kernels_are_the_aot_module(monkeypatch):
    monkeypatch.setattr(loader, "_loaded", [])
    monkeypatch.delenv("FABRICSCOPE_KERNELS", raising=False)
    assert isinstance(loader.kernels(), loader._Kernels)
    monkeypatch.setattr(loader, "_loaded", [])
    monkeypatch.setenv("FABRICSCOPE_KERNELS", "jit")
    assert loader.kernels() is jit


@needs_aot
def test_solve_cli_does_not_import_numba(tmp_path):
    problem = tmp_path / "in.json"
    problem.write_text('{"links": [{"id": "l0", "capacity_gbps": 10}],'
                       ' "flows": [{"id": "f0", "links": ["l0"]}, {"id": "f1", "links": ["l0"]}]}')
    code = ("import sys; from designer.engine.cli import main;"
            "main(['solve', sys.argv[1], '-o', sys.argv[2]]);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite', 'scipy')))")
    out = subprocess.run([sys.executable, "-c", code, str(problem), str(tmp_path / "out.json")], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert '"f0": 5.0' in (tmp_path / "out.json").read_text()


def test_a_module_built_from_other_sources_is_refused(monkeypatch):
    """The staleness check: a module whose digest is not the sources' is never used."""
    digest = loader.source_digest()
    stale = types.SimpleNamespace(source_digest=lambda: digest ^ 1)
    current = types.SimpleNamespace(source_digest=lambda: digest)
    monkeypatch.setattr(loader.importlib, "import_module", lambda name: stale)
    assert loader.load_aot() is None
    monkeypatch.setattr(loader.importlib, "import_module", lambda name: current)
    assert loader.load_aot() is current
    assert loader.load_aot(expected_digest=digest + 1) is None
    if AOT is not None:
        monkeypatch.undo()
        assert loader.load_aot(expected_digest=AOT.source_digest() ^ 1) is None


def test_the_digest_covers_every_source_of_a_build(monkeypatch, tmp_path):
    for name in loader._DIGEST_FILES:
        (tmp_path / name).write_bytes((Path(loader.__file__).parent / name).read_bytes())
    monkeypatch.setattr(loader, "_HERE", str(tmp_path))
    assert loader.source_digest() == loader.source_digest()
    seen = {loader.source_digest()}
    for name in loader._DIGEST_FILES:
        (tmp_path / name).write_bytes((tmp_path / name).read_bytes() + b"# edited\n")
        seen.add(loader.source_digest())
    assert len(seen) == 1 + len(loader._DIGEST_FILES)
    assert all(0 <= d < 2 ** 63 for d in seen)  # fits the int64 the module returns


def _recording_module(calls):
    def entry(name):
        def call(*args):
            calls.append(name)
            return "compiled"
        return call
    return types.SimpleNamespace(**{name: entry(name) for name in loader.ENTRY_POINTS})


def test_only_arguments_of_the_compiled_types_reach_the_module():
    """Compiled entry points do not check types: anything else must go to the JIT."""
    calls = []
    kernels = loader._Kernels(_recording_module(calls))
    cap, ptr, res, dem, w, _ = _instance(3)
    assert kernels.maxmin_solve(cap, ptr, res, dem, w) == "compiled"
    readonly = cap.copy()
    readonly.flags.writeable = False
    assert kernels.maxmin_solve(readonly, ptr, res, dem, w) == "compiled"  # cap is only read
    assert calls == ["maxmin_solve"] * 2
    calls.clear()
    expected = jit.maxmin_solve(cap, ptr, res, dem, w)
    for bad_cap in (cap.astype(np.float32), np.repeat(cap, 2)[::2]):
        _assert_same(kernels.maxmin_solve(bad_cap, ptr, res, dem, w),
                     jit.maxmin_solve(bad_cap, ptr, res, dem, w))
    for bad_ptr in (ptr.astype(np.int32), ptr.astype(np.uint64)):
        _assert_same(kernels.maxmin_solve(cap, bad_ptr, res, dem, w)[1:], expected[1:])
    assert calls == []
    frozen = np.zeros(len(ptr) - 1, dtype=np.uint8)
    frozen.flags.writeable = False  # tl_start writes it: a read-only one must not reach compiled code
    with pytest.raises(Exception):
        kernels.tl_start(cap, ptr, res, dem, w, frozen, dem.copy(), 0.0)
    assert calls == []


@pytest.mark.parametrize("value, ok", [(3, True), (2 ** 63 - 1, True), (2 ** 63, False), (True, False),
                                       (np.int64(3), False), (3.0, False)])
def test_int64_scalars_must_be_python_ints_in_range(value, ok):
    assert loader._param_check("max_steps")(value) is ok


def test_entry_points_list_the_kernel_parameters():
    for name, params in loader.ENTRY_POINTS.items():
        names = [p.rstrip("!") for p in params.split()]
        assert names == list(inspect.signature(getattr(jit, name).py_func).parameters)
        assert all(p in loader.PARAM_TYPES for p in names)


def test_every_entry_point_comes_from_its_owner_module():
    """The JIT namespace holds each entry point of its owner file (no copy), and every kernel
    module's entry points are all listed for the AOT build."""
    import importlib

    for owner, names in loader.ENTRY_POINTS_BY_FILE.items():
        module = importlib.import_module(f"designer.engine.solve.kernels.{owner}")
        assert sorted(module.__all__) == sorted(names), owner
        for name in names:
            assert getattr(jit, name) is getattr(module, name)
            assert loader.OWNERS[name] == module.__name__
    assert len(loader.ENTRY_POINTS) == sum(len(names) for names in loader.ENTRY_POINTS_BY_FILE.values())


def test_the_shared_constants_import_no_numba():
    code = ("import sys, designer.engine.solve.kernels.constants, designer.engine.solve.kernels.loader;"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
