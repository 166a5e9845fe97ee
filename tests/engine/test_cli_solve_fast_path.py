"""The fast ``solve`` answer writer (``answer_json``) writes the bytes the dict answer
gave through ``dumps``, for any ids; and the cheaper column checks of the parser accept and refuse
what they did."""
import gc
import json

import numpy as np
import pytest

from designer.engine.cli import main
from designer.engine.commands import solve
from designer.engine.commands import _scenario_io as sio
from designer.engine.commands._scenario_io import OBJECT_LAYOUTS, dumps, object_heads
from designer.engine.solve.solver import maxmin
from designer.engine.solve.timeline import timeline

# Characters that JSON escapes or that look like JSON syntax: they must come out as orjson writes them.
NASTY = ['a', '"', ',', '\\', '\x00', '\n', '\x1f', '\t', 'é', '\u2028', '💡', '/', ' ', '","', '{', ':', ']']


def _random_answer(rng, nasty: bool):
    n_links, n_flows = int(rng.integers(1, 7)), int(rng.integers(0, 9))

    def ident(prefix, i):
        tail = "".join(rng.choice(NASTY, int(rng.integers(0, 4)))) if nasty else ""
        return f"{prefix}{i}{tail}"

    link_ids = list(dict.fromkeys(ident("l", i) for i in range(n_links)))
    flow_ids = list(dict.fromkeys(ident("f", i) for i in range(n_flows)))
    lens = rng.integers(0, 3, len(flow_ids))
    ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    res = rng.integers(0, len(link_ids), int(ptr[-1])).astype(np.int64)
    cap = rng.choice([0.0, 1.0, 1 / 3, 100.0, 1e300, np.inf], len(link_ids))
    dem = np.where(rng.random(len(flow_ids)) < .5, 2.0, np.inf)
    dem[lens == 0] = 0.5
    alloc = maxmin(cap, ptr, res, dem)
    sizes = rng.choice([0.0, 1e9], len(flow_ids))
    result = timeline(cap, ptr, res, sizes, dem) if rng.random() < .5 else None
    return link_ids, flow_ids, alloc, result


@pytest.mark.parametrize("nasty", [False, True])
def test_answer_json_is_the_bytes_of_the_dict_answer(nasty):
    rng = np.random.default_rng(20 + nasty)
    fast = 0
    for _ in range(300):
        link_ids, flow_ids, alloc, result = _random_answer(rng, nasty)
        fast += object_heads(flow_ids, OBJECT_LAYOUTS[2]) is not None
        for indent in (2, 0, None, 3):
            try:
                expected = dumps(solve.answer(link_ids, flow_ids, alloc, result), indent=indent)
            except ValueError:  # the stdlib (indent 3) refuses an unbounded (inf) rate, as before
                with pytest.raises(ValueError):
                    solve.answer_json(link_ids, flow_ids, alloc, result, indent=indent)
                continue
            assert solve.answer_json(link_ids, flow_ids, alloc, result, indent=indent) == expected
    assert fast > 100  # most cases took the fast path (plain ids: all of them)


def test_ids_that_cannot_be_cut_back_take_the_dict_path():
    layout = OBJECT_LAYOUTS[0]
    assert object_heads(['a",', 'b'], layout) is None  # '",' inside an id
    assert object_heads(['a\\', 'b'], layout) is None  # a trailing backslash: refused, to be safe
    assert object_heads(['a', ',', ',', 'b'], layout) == [b'{"a":', b',",":', b',",":', b',"b":']
    assert object_heads(['\x00'], layout) == [b'{"\\u0000":']
    assert object_heads([], layout) == []
    alloc = maxmin([1.0], [0, 1], [0])
    for link in ["l\ud800", 'l",']:  # a lone surrogate (orjson refuses it): the stdlib writes it
        assert solve.answer_json([link], ["f"], alloc) == dumps(solve.answer([link], ["f"], alloc))


def test_cli_answer_bytes_equal_the_dict_answer(tmp_path):
    from designer.engine.benchmarks.solver import solve_document

    doc = solve_document(15_000, 1_500, seed=4)
    problem, out = tmp_path / "in.json", tmp_path / "out.json"
    problem.write_text(json.dumps(doc))
    assert problem.stat().st_size > solve._CHUNKED_MIN_BYTES  # read in chunks
    for extra in ([], ["--indent", "0"]):
        assert main(["solve", str(problem), "-o", str(out), *extra]) == 0
        link_ids, flow_ids, cap, ptr, res, dem, _ = solve.parse_problem(doc)
        indent = 0 if extra else 2
        expected = dumps(solve.answer(link_ids, flow_ids, maxmin(cap, ptr, res, dem)), indent=indent) + b"\n"
        assert out.read_bytes() == expected
    assert gc.isenabled()  # run() pauses the collector and gives it back


def test_numbers_tell_null_from_nan():
    assert solve._numbers([None, 1, 2.5], allow_none=True).tolist() == [np.inf, 1.0, 2.5]
    assert solve._numbers([float("nan"), None], allow_none=True) is None  # a NaN literal is no number
    assert solve._numbers([None, float("nan"), None], allow_none=True) is None
    assert solve._numbers([None], allow_none=False) is None
    assert solve._numbers([1, True], allow_none=True) is None


def test_sizes_and_ids_checks():
    assert solve._sizes_if_any([None, None]).tolist() == [0.0, 0.0]
    assert solve._sizes_if_any([None, 5, float("inf"), "x"]).tolist() == [0.0, 5.0, 0.0, 0.0]
    assert solve._ids_ok(["a", "b"])
    assert not solve._ids_ok(["a", "a"]) and not solve._ids_ok(["a", ""]) and not solve._ids_ok(["a", 1])
    assert not solve._ids_ok(["a", None])


# --------------------------------------------------------------------------- reading in chunks

def _small_problem(n_flows=60):
    from designer.engine.benchmarks.solver import solve_document

    return solve_document(n_flows, 12, seed=5)


def _texts(doc):
    """One document written the ways people write JSON: orjson compact, the stdlib's default
    separators, indented, and with the flows before the links."""
    reordered = {"flows": doc["flows"], "links": doc["links"]}
    return [sio.dumps(doc, indent=0), json.dumps(doc).encode(), json.dumps(doc, indent=2).encode(),
            json.dumps(reordered, indent="\t").encode(), sio.dumps(reordered, indent=0)]


def _adversarial(doc):
    """Documents a careless cut would get wrong: cut points inside strings and nested values,
    a second "flows" array, text after the flows array, escapes, and invalid JSON."""
    text = sio.dumps(doc, indent=0).decode()
    flows = json.dumps(doc["flows"])
    return [
        text.replace('"f3"', '"f3},{x"'),  # a '},{' inside a string
        text.replace('"id":"f5"', '"id":"f5","extra":[{"a":1},{"b":2}]'),  # '},{' one level down
        text[:-1] + ',"x":["]"]}',  # a ']' after the flows array
        text[:-1] + ',"flows":[]}',  # a second "flows" key: the last one wins
        text.replace('"f7"', '"flows"'),  # a flow named "flows"
        text.replace('"l7"', '"flows"'),  # a link named "flows" (before the key)
        text.replace('"id":"f4"', '"id":"f4","flows":[{"id":"x","links":[]}]'),  # a key "flows" in a flow
        text.replace('"f2"', '"f\\u0032"'),  # an escape: the cut is refused (same flows)
        text.replace('"f2"', '"f\\u0033"'),  # an escape making a duplicate id
        text.replace('},{"id":"f9"', '},,{"id":"f9"'),  # invalid JSON in a chunk
        text.replace('"demand_gbps":null', '"demand_gbps":NaN', 1),  # the stdlib reads it; invalid
        text.replace('"l1"]', '"l999"]', 1),  # an unknown link: a located error
        '{"links": [], "flows": [ ]}', '{"links": [], "flows": []}', '{"flows": [{}], "links": []}',
        '[' + flows + ']', '{"links": ' + json.dumps(doc["links"]) + ', "flows": ' + flows,
    ]


def _whole(text: bytes, timeline=False):
    """What the solve command read before: the whole document, then parse_problem."""
    try:
        return solve.parse_problem(solve._document(text, "-"), timeline=timeline)
    except Exception as exc:  # noqa: BLE001 - compared as (type, message, problems)
        return type(exc), str(exc), [(p.path, p.message) for p in getattr(exc, "problems", [])]


def _chunked(text: bytes, monkeypatch, timeline=False):
    monkeypatch.setattr(solve, "_CHUNKED_MIN_BYTES", 0)
    monkeypatch.setattr(solve, "array_chunks", lambda data, key: sio.array_chunks(data, key, chunk_bytes=97))
    monkeypatch.setattr(solve, "read_bytes", lambda path: text)
    try:
        return solve.read_problem("-", timeline=timeline)
    except Exception as exc:  # noqa: BLE001
        return type(exc), str(exc), [(p.path, p.message) for p in getattr(exc, "problems", [])]


def _assert_same_parse(a, b):
    assert type(a) is type(b) and len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y)
        else:
            assert x == y


@pytest.mark.parametrize("timeline", [False, True])
def test_chunked_reading_equals_whole_reading(monkeypatch, timeline):
    doc = _small_problem()
    if timeline:
        for i, flow in enumerate(doc["flows"]):
            flow["bytes"] = 1e9 + i
    texts = _texts(doc) + [t.encode() if isinstance(t, str) else t for t in _adversarial(doc)]
    cut = 0
    for text in texts:
        cut += sio.array_chunks(text, "flows", chunk_bytes=97) is not None
        _assert_same_parse(_chunked(text, monkeypatch, timeline), _whole(text, timeline))
    assert cut >= len(_texts(doc))  # the plain documents were read in chunks


def test_array_chunks_gives_the_array_in_order():
    doc = _small_problem(200)
    for text in _texts(doc):
        frame, chunks = sio.array_chunks(text, "flows", chunk_bytes=500)
        parts = list(chunks)
        assert len(parts) > 5 and frame == {**json.loads(text), "flows": []}
        assert [flow for part in parts for flow in part] == doc["flows"]


def test_array_chunks_refuses_what_it_cannot_cut_exactly():
    doc = _small_problem()
    text = sio.dumps(doc, indent=0)
    assert sio.array_chunks(text.replace(b'"f2"', b'"f\\u0032"'), "flows") is None  # an escape
    assert sio.array_chunks(text.replace(b'"l7"', b'"flows"'), "flows") is None  # a link "flows" first
    assert sio.array_chunks(text[:-1] + b',"flows":[]}', "flows") is None  # a second "flows" key
    assert sio.array_chunks(text.replace(b'"f7"', b'"flows"'), "flows") is not None  # a flow "flows"
    assert sio.array_chunks(b'{"links": [], "flows": 3}', "flows") is None
    assert sio.array_chunks(b'{"links": [], "flows": [1]', "flows") is None  # not JSON
    frame, chunks = sio.array_chunks(text.replace(b'},{"id":"f9"', b'},,{"id":"f9"'), "flows", chunk_bytes=97)
    assert list(chunks)[-1] is None  # the chunk orjson refuses: the caller reads the whole document
    assert sio.array_chunks(text.replace(b'"demand_gbps":null}]', b'"demand_gbps":null}]]'), "flows") is None
