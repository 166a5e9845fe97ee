"""The compiled path scanner of the ``solve`` reader (``IdIndex.path_positions``, kernels ``id_table_build``
and ``scan_paths``): on any document it gives exactly the arrays of the dict path, or declines and
leaves the chunk to it; it runs only with the AOT module. The kernel logic is checked with numba's
JIT of the same source and with the AOT module when it is built."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest

from designer.engine.solve.kernels import loader as loader
from designer.engine.solve.kernels import jit
from designer.engine.commands import _scenario_io as sio
from designer.engine.commands import solve
from designer.engine.errors import InvalidWorkload
from designer.engine.solve.id_index import IdIndex
from tests.engine.test_cli_solve_fast_path import _assert_same_parse

AOT = loader.load_aot()
needs_aot = pytest.mark.skipif(AOT is None,
                               reason="AOT kernels not built (python -m designer.engine.solve.kernels.build)")
ROOT = Path(__file__).resolve().parents[2]
KERNELS = [pytest.param("jit", id="jit"), pytest.param("aot", id="aot", marks=needs_aot)]


def _kernels(name):
    return jit if name == "jit" else loader._Kernels(AOT)


# --------------------------------------------------------------------------- random documents

class _Pairs(list):
    """A JSON object written as its (key, value) pairs, in order: duplicate keys allowed."""


_WS = [" ", "\t", "\n", "\r", "  ", "\n    "]
# Ids with what the scanner must not confuse: prefixes of one another, non-ASCII, JSON syntax.
_LINK_IDS = ["l1", "l10", "l100", "l", "links", "é", "éé", "💡", "a b", "{x}", "[y]", "a:b", "c,d",
             "\u2028", "id", "l1 ", " l1"]


def _dump(value, rng, spacey: bool, indent: int, level: int = 0) -> str:
    """JSON text of ``value`` (no backslash: the ids above need no escape), with random JSON
    whitespace between tokens when ``spacey``, else orjson-like indentation (0 = compact)."""
    def gap():
        if spacey:
            return "".join(rng.choice(_WS, int(rng.integers(0, 3))))
        return "\n" + " " * (indent * (level + 1)) if indent else ""

    def close():
        if spacey:
            return gap()
        return "\n" + " " * (indent * level) if indent else ""

    colon = (gap() + ":" + gap()) if spacey else (": " if indent else ":")
    if isinstance(value, _Pairs):
        if not value:
            return "{" + gap() + "}"
        items = [gap() + json.dumps(k, ensure_ascii=False) + colon + _dump(v, rng, spacey, indent, level + 1)
                 for k, v in value]
        return "{" + ",".join(items) + close() + "}"
    if isinstance(value, list):
        if not value:
            return "[" + gap() + "]"
        items = [gap() + _dump(v, rng, spacey, indent, level + 1) for v in value]
        return "[" + ",".join(items) + close() + "]"
    return json.dumps(value, ensure_ascii=False)


def _extra(rng, link_ids):
    """A value to hide among a flow's keys: nested objects and arrays holding "links" keys (no
    array ends with an object: array_chunks would refuse to cut at such a '}]')."""
    choices = [
        _Pairs([("links", ["nope"])]),
        [_Pairs(), _Pairs([("links", [link_ids[0]]), ("id", "links")]), [["links"]]],
        _Pairs([("a", _Pairs([("links", [])])), ("b", [1, 2.5, None, True])]),
        "links", 3, None, [],
    ]
    return choices[int(rng.integers(0, len(choices)))]


def _random_flow(rng, i, link_ids, *, duplicate_links: bool):
    path = list(rng.choice(link_ids, int(rng.integers(0, 5))))
    fid = "links" if i == 3 else f"f{i}" + rng.choice(["", "é", "💡", ":"])
    pairs = [("id", fid), ("links", path)]
    if not path or rng.random() < .4:
        pairs.append(("demand_gbps", float(rng.choice([0.5, 2.0, 10.0]))))
    elif rng.random() < .3:
        pairs.append(("demand_gbps", None))
    if rng.random() < .4:
        pairs.append(("bytes", 1e9))
    for _ in range(int(rng.integers(0, 3))):
        pairs.append((rng.choice(["x", "links2", "xlinks", "meta", "inks"]), _extra(rng, link_ids)))
    if duplicate_links and rng.random() < .3:  # orjson keeps the last: the scanner must decline
        pairs.insert(int(rng.integers(0, len(pairs) + 1)), ("links", list(rng.choice(link_ids, 2))))
    rng.shuffle(pairs)
    return _Pairs(pairs)


def _random_text(seed: int, *, duplicate_links=False, unknown: str | None = None) -> bytes:
    """A random valid document; with ``unknown``, that id ends the path of its last flow."""
    rng = np.random.default_rng(seed)
    link_ids = [str(x) for x in rng.permutation(_LINK_IDS)[:int(rng.integers(3, len(_LINK_IDS)))]]
    links = [_Pairs([("id", lid), ("capacity_gbps", float(rng.choice([1.0, 10.0, 40.0])))])
             for lid in link_ids]
    flows = [_random_flow(rng, i, link_ids, duplicate_links=duplicate_links)
             for i in range(int(rng.integers(1, 40)))]
    if unknown is not None:
        last = flows[-1]
        at = next(k for k, (key, _) in enumerate(last) if key == "links")
        last[at] = ("links", [*last[at][1], unknown])
    top = [("links", links), ("flows", flows)]
    if rng.random() < .5:
        top.reverse()
    style = int(rng.integers(0, 3))
    return _dump(_Pairs(top), rng, spacey=style == 2, indent=(0, 2)[style % 2]).encode()


def _read(text: bytes, monkeypatch, kernels, chunk_bytes: int):
    """read_problem of ``text`` in chunks, with ``kernels`` as the scanner's (None: the dict path);
    the arrays, or the error as (type, message, problems)."""
    monkeypatch.setattr(solve, "_CHUNKED_MIN_BYTES", 0)
    monkeypatch.setattr(solve, "array_chunks",
                        lambda data, key: sio.array_chunks(data, key, chunk_bytes=chunk_bytes))
    monkeypatch.setattr(solve, "read_bytes", lambda path: text)
    monkeypatch.setattr("designer.engine.solve.id_index.aot_kernels", lambda: kernels)
    try:
        return solve.read_problem("-")
    except InvalidWorkload as exc:
        return type(exc), str(exc), [(p.path, p.message) for p in exc.problems]


_assert_same = _assert_same_parse   # arrays by dtype and value, the rest by ==


def _counting_scans(monkeypatch):
    """Record each scan's answer: True where the scanner vouched for a chunk."""
    answers = []
    scan = IdIndex.path_positions

    def recording(self, piece, lens):
        out = scan(self, piece, lens)
        answers.append(out is not None)
        return out

    monkeypatch.setattr(IdIndex, "path_positions", recording)
    return answers


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("duplicate_links", [False, True])
def test_scanner_gives_the_dict_path_arrays(monkeypatch, kernels, duplicate_links):
    answers = _counting_scans(monkeypatch)
    cut = 0
    for seed in range(150):
        text = _random_text(seed, duplicate_links=duplicate_links)
        orjson.loads(text)  # the writer makes valid JSON
        chunk_bytes = (60, 97, 400, 1 << 19)[seed % 4]
        cut += sio.array_chunks(text, "flows", chunk_bytes=chunk_bytes) is not None
        expected = _read(text, monkeypatch, None, chunk_bytes)
        assert isinstance(expected, tuple) and len(expected) == 7  # these documents are valid
        _assert_same(_read(text, monkeypatch, _kernels(kernels), chunk_bytes), expected)
        _assert_same(solve.parse_problem(solve._document(text, "-")), expected)
    assert cut > 120  # most were cut (a cut inside a nested value is refused: then read whole)
    if duplicate_links:  # a flow with two "links" keys: the scanner declines its chunk
        assert answers.count(False) > 20
    else:
        assert answers and all(answers)  # the scanner vouched for every chunk


@pytest.mark.parametrize("kernels", KERNELS)
def test_an_unknown_id_gives_the_same_located_error(monkeypatch, kernels):
    answers = _counting_scans(monkeypatch)
    declined = 0
    for seed in range(10):
        text = _random_text(seed, unknown="l1000")
        for chunk_bytes in (97, 1 << 19):  # one chunk: the scanner reads the unknown id
            answers.clear()
            whole = _read(text, monkeypatch, None, chunk_bytes)
            assert whole[0] is InvalidWorkload and any("unknown link id 'l1000'" in m for _, m in whole[2])
            assert _read(text, monkeypatch, _kernels(kernels), chunk_bytes) == whole
        declined += answers == [False]  # it found the unknown id and declined
    assert declined >= 5


def _table(kernels, ids):
    encoded = [s.encode("utf-8") for s in ids]
    key_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    key_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=key_ptr[1:])
    table = np.full(1 << (2 * len(ids)).bit_length(), -1, dtype=np.int64)
    return key_bytes, key_ptr, table, kernels.id_table_build(key_bytes, key_ptr, table)


def _scan(kernels, piece: bytes, ids):
    key_bytes, key_ptr, table, _ = _table(kernels, ids)
    flows = orjson.loads(b"[" + piece + b"]")
    lens = np.array([len(f["links"]) if isinstance(f, dict) and isinstance(f.get("links"), list) else 0
                     for f in flows], dtype=np.int64)
    out = np.full(int(lens.sum()), -7, dtype=np.int64)
    return kernels.scan_paths(np.frombuffer(piece, dtype=np.uint8), key_bytes, key_ptr, table, lens, out), out


IDS = ["l1", "l10", "é", "links"]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("piece, status, indices", [
    (b'{"links":["l10","l1","\xc3\xa9"]}', jit.SCAN_OK, [1, 0, 2]),
    (b' {"id" : "links" , "links" :\n[ "links" ] , "x":{"links":["zz"]}} ,\t{"links":[]}\n', jit.SCAN_OK, [3]),
    (b'{"x":[{"links":[1]}],"links":["l1"],"y":"links"}', jit.SCAN_OK, [0]),
    (b'{"links":["l1"],"links":["l10"]}', jit.SCAN_LINKS_KEYS, None),  # orjson keeps the last
    (b'{"id":"f"}', jit.SCAN_LINKS_KEYS, None),
    (b'{"links":["l1",3]}', jit.SCAN_NOT_STRINGS, None),
    (b'{"links":[["l1"]]}', jit.SCAN_NOT_STRINGS, None),
    (b'{"links":"l1"}', jit.SCAN_NOT_STRINGS, None),
    (b'{"links":["l100"]}', jit.SCAN_UNKNOWN_ID, None),
    (b'{"links":["l"]}', jit.SCAN_UNKNOWN_ID, None),  # a prefix of known ids
    (b'{"links":["l1"]},3', jit.SCAN_NOT_AN_OBJECT, None),
    (b'{"links":["l1"]},"x"', jit.SCAN_NOT_AN_OBJECT, None),
    (b'[],{"links":["l1"]}', jit.SCAN_NOT_AN_OBJECT, None),
])
def test_scan_statuses(kernels, piece, status, indices):
    got, out = _scan(_kernels(kernels), piece, IDS)
    assert got == status
    if indices is not None:
        assert out.tolist() == indices


@pytest.mark.parametrize("kernels", KERNELS)
def test_scan_checks_orjson_counts(kernels):
    k = _kernels(kernels)
    key_bytes, key_ptr, table, n = _table(k, IDS)
    assert n == len(IDS)
    piece = np.frombuffer(b'{"links":["l1","l10"]},{"links":["l1"]}', dtype=np.uint8)

    def scan(lens):
        lens = np.array(lens, dtype=np.int64)
        return k.scan_paths(piece, key_bytes, key_ptr, table, lens, np.empty(int(lens.sum()), dtype=np.int64))

    assert scan([2, 1]) == jit.SCAN_OK
    for lens in ([2], [2, 1, 0], [1, 2], [2, 0], [3, 1]):
        assert scan(lens) == jit.SCAN_COUNTS
    truncated = np.frombuffer(b'{"links":["l1"', dtype=np.uint8)
    assert k.scan_paths(truncated, key_bytes, key_ptr, table, np.array([1]), np.empty(1, dtype=np.int64)) != 0


@pytest.mark.parametrize("kernels", KERNELS)
def test_id_table_refuses_what_it_cannot_hold(kernels):
    k = _kernels(kernels)
    assert _table(k, [])[3] == 0
    assert _table(k, ["a", "b", "a"])[3] == -1  # a duplicate
    key_bytes, key_ptr, _, _ = _table(k, ["a", "b", "c"])
    for size in (3, 6, 0):  # not above the key count, or not a power of two
        assert k.id_table_build(key_bytes, key_ptr, np.full(size, -1, dtype=np.int64)) == -1
    for bad_ptr in ([0, 1, 2, 4], [1, 1, 2, 3], [0, 2, 1, 3]):  # offsets that do not cut the bytes
        table = np.full(8, -1, dtype=np.int64)
        assert k.id_table_build(key_bytes, np.array(bad_ptr, dtype=np.int64), table) == -1


# --------------------------------------------------------------------------- when it runs

def large_solve_document(tmp_path, min_bytes: int, option: int = 0):
    """A 15,000-flow ``solve`` input (orjson ``option``) of more than ``min_bytes`` bytes."""
    from designer.engine.benchmarks.solver import solve_document

    problem = tmp_path / "in.json"
    problem.write_bytes(orjson.dumps(solve_document(15_000, 1_500, seed=4), option=option))
    assert problem.stat().st_size > min_bytes
    return problem


def _large_text(tmp_path):
    return large_solve_document(tmp_path, solve._CHUNKED_MIN_BYTES, orjson.OPT_INDENT_2)


def read_with_kernels(monkeypatch, problem, *, aot: bool, forbidden):
    """(``read_problem`` of ``problem``, what ``parse_problem`` makes of the whole document), read
    with the AOT kernels (``aot``) or with the JIT only, ``forbidden`` = (owner, name) made to fail
    the test if the read calls it."""
    expected = solve.parse_problem(solve._document(problem.read_bytes(), str(problem)))
    monkeypatch.setattr(loader, "_loaded", [])
    if aot:
        monkeypatch.delenv("FABRICSCOPE_KERNELS", raising=False)
    else:
        monkeypatch.setenv("FABRICSCOPE_KERNELS", "jit")
        assert loader.aot_kernels() is None and loader._loaded == []
    owner, name = forbidden
    monkeypatch.setattr(owner, name, lambda *a: pytest.fail(f"called {name}"))
    return solve.read_problem(str(problem)), expected


@needs_aot
def test_a_large_document_is_read_by_the_scanner(tmp_path, monkeypatch):
    _assert_same(*read_with_kernels(monkeypatch, _large_text(tmp_path), aot=True,
                                    forbidden=(solve, "_indices_by_dict")))


def test_without_aot_the_dict_path_runs(tmp_path, monkeypatch):
    problem = _large_text(tmp_path)
    got, expected = read_with_kernels(monkeypatch, problem, aot=False, forbidden=(IdIndex, "path_positions"))
    _assert_same(got, expected)
    monkeypatch.setattr(loader, "_loaded", [jit])  # the JIT chosen already: still no scanner
    assert loader.aot_kernels() is None
    _assert_same(solve.read_problem(str(problem)), expected)


@needs_aot
def test_the_scanner_imports_no_numba(tmp_path):
    problem = _large_text(tmp_path)
    code = ("import sys; from designer.engine.commands import solve;"
            "solve._indices_by_dict = None;"  # the dict path would raise: the scanner read it
            "solve.read_problem(sys.argv[1]);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))")
    env = {k: v for k, v in os.environ.items() if k != "FABRICSCOPE_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code, str(problem)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
