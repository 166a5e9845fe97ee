"""The compiled writer of the ``solve`` answer's objects (``ObjectWriter``, kernel ``write_object``):
``answer_json`` gives the bytes ``dumps(answer(...))`` gives, for any ids, indent 2 and 0,
with the kernel (numba's JIT of the source, and the AOT module when built) and without it."""
import numpy as np
import pytest

from designer.engine.solve.kernels import loader as loader
from designer.engine.solve.kernels import jit
from designer.engine.commands import _scenario_io as sio
from designer.engine.commands import solve
from designer.engine.solve.solver import maxmin
from tests.engine.test_cli_solve_fast_path import _random_answer

AOT = loader.load_aot()
needs_aot = pytest.mark.skipif(AOT is None,
                               reason="AOT kernels not built (python -m designer.engine.solve.kernels.build)")
KERNELS = [pytest.param("jit", id="jit"), pytest.param("aot", id="aot", marks=needs_aot)]


def _kernels(name):
    return jit if name == "jit" else loader._Kernels(AOT)


class _Counting:
    """``kernels`` recording each ``write_object`` answer (True: it wrote the object)."""

    def __init__(self, kernels):
        self.kernels, self.answers = kernels, []

    def write_object(self, *args):
        written = self.kernels.write_object(*args)
        self.answers.append(written >= 0)
        return written


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("nasty", [False, True])
def test_answer_json_with_the_kernel_is_the_dict_answer(monkeypatch, kernels, nasty):
    counting = _Counting(_kernels(kernels))
    monkeypatch.setattr(solve, "aot_kernels", lambda: counting)
    rng = np.random.default_rng(40 + nasty)
    compiled = 0
    for _ in range(300):
        link_ids, flow_ids, alloc, result = _random_answer(rng, nasty)
        for indent in (2, 0, None):
            expected = sio.dumps(solve.answer(link_ids, flow_ids, alloc, result), indent=indent)
            before = len(counting.answers)
            assert solve.answer_json(link_ids, flow_ids, alloc, result, indent=indent) == expected
            compiled += len(counting.answers) > before and all(counting.answers[before:])
    assert compiled > 300  # most answers were written by the kernel (plain ids: all of them)


@pytest.mark.parametrize("kernels", KERNELS)
def test_ids_the_writer_refuses_take_the_other_paths(monkeypatch, kernels):
    monkeypatch.setattr(solve, "aot_kernels", lambda: _kernels(kernels))
    alloc = maxmin([1.0, 2.0], [0, 1, 3], [0, 0, 1])
    for links, flows in [(['l",', "m"], ["f", "g"]), (["l\ud800", "m"], ["f", "g"]), (["l", "m"], ['f\\', "g"]),
                         (["l", "m"], ["f", 'g",']), (["\x00", "m"], ["", ","]), (["l", "m"], ['","', '"'])]:
        for indent in (2, 0, 3):
            try:
                expected = sio.dumps(solve.answer(links, flows, alloc), indent=indent)
            except ValueError:  # the stdlib (indent 3) refuses the infinite rates, as before
                continue
            assert solve.answer_json(links, flows, alloc, indent=indent) == expected


@pytest.mark.parametrize("kernels", KERNELS)
def test_write_object_checks_counts_picks_and_room(kernels):
    k = _kernels(kernels)
    layout = sio.OBJECT_LAYOUTS[0]
    writer = sio.ObjectWriter(k, ["a", "b"], layout)
    assert writer.numbers(np.array([1.0, 2.0])) == b'{"a":1.0,"b":2.0}'
    assert writer.numbers(np.array([1.0, 2.0, 3.0])) is None   # more values than keys
    assert writer.numbers(np.array([1.0])) is None              # fewer
    choices, ptr = b'"x"null', np.array([0, 3, 7], dtype=np.int64)
    assert writer.picked(choices, ptr, np.array([-1, 0])) == b'{"a":null,"b":"x"}'
    assert writer.picked(choices, ptr, np.array([2, 0])) is None   # out of range
    assert writer.picked(choices, ptr, np.array([-3, 0])) is None
    assert writer.picked(choices, ptr, np.array([0])) is None      # not one per key
    assert sio.ObjectWriter(k, [], layout).numbers(np.array([])) == b"{}"
    keys, values = np.frombuffer(b'a","b', dtype=np.uint8), np.frombuffer(b"1.0,2.0", dtype=np.uint8)
    for room in range(17):   # the object takes 17 bytes: a smaller text is refused, not overrun
        text = np.zeros(room + 8, dtype=np.uint8)
        assert k.write_object(keys, values, sio._NO_INDEX, sio._NO_INDEX, writer.layout, writer.layout_ptr,
                              text[:room]) == -1
        assert not text[room:].any()
    text = np.zeros(17, dtype=np.uint8)
    assert k.write_object(keys, values, sio._NO_INDEX, sio._NO_INDEX, writer.layout, writer.layout_ptr, text) == 17
    assert text.tobytes() == b'{"a":1.0,"b":2.0}'
    picks, choices = np.array([0, 1], dtype=np.int64), np.frombuffer(b'"x"null', dtype=np.uint8)
    for bad_ptr in ([0, 3, 8], [0, 4, 3], [-1, 3, 7], []):  # offsets that do not cut the choices
        assert k.write_object(keys, choices, np.array(bad_ptr, dtype=np.int64), picks, writer.layout,
                              writer.layout_ptr, np.zeros(64, dtype=np.uint8)) == -1
    for bad_layout in ([0, 2, 3, 4, 99], [0, 2, 1, 3, 4], [0, 1, 2, 3]):
        assert k.write_object(keys, values, sio._NO_INDEX, sio._NO_INDEX, writer.layout,
                              np.array(bad_layout, dtype=np.int64), np.zeros(64, dtype=np.uint8)) == -1


def test_without_aot_the_answer_is_the_same(monkeypatch):
    monkeypatch.setattr(solve, "aot_kernels", lambda: None)
    monkeypatch.setattr(sio.ObjectWriter, "__init__", lambda *a: pytest.fail("the writer ran without AOT"))
    link_ids, flow_ids, alloc, result = _random_answer(np.random.default_rng(3), False)
    for indent in (2, 0):
        assert (solve.answer_json(link_ids, flow_ids, alloc, result, indent=indent)
                == sio.dumps(solve.answer(link_ids, flow_ids, alloc, result), indent=indent))
