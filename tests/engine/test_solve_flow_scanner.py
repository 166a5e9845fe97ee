"""The one-pass flow scanner of the ``solve`` reader (``IdIndex.scan_flows``, kernel ``scan_flows``):
on any document ``read_problem`` gives exactly what ``parse_problem`` of the whole parsed
document gives (arrays bit for bit, the same ids), or the same located errors, because the scanner
either reads the flows exactly or declines and leaves the document to the orjson path. The kernel
logic runs under numba's JIT of the same source and under the AOT module when it is built."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from designer.engine.solve.kernels import loader as loader
from designer.engine.solve.kernels import jit
from designer.engine.solve import id_index
from designer.engine.commands import solve

AOT = loader.load_aot()
needs_aot = pytest.mark.skipif(AOT is None,
                               reason="AOT kernels not built (python -m designer.engine.solve.kernels.build)")
ROOT = Path(__file__).resolve().parents[2]
KERNELS = [pytest.param("jit", id="jit"), pytest.param("aot", id="aot", marks=needs_aot)]


def _kernels(name):
    return jit if name == "jit" else loader._Kernels(AOT)


# --------------------------------------------------------------------------- documents

_WS = ["", " ", "\t", "\n", "\r", "  ", "\n    ", "\r\n\t"]
# ('}]' inside an id: among the crafted documents below; in a random one it could end the flows
# array where array_region cuts it, and the scanner would decline, rightly)
_LINK_IDS = ["l1", "l10", "l100", "l", "links", "id", "é", "💡", "a b", "{x}", "[y]", "a:b", "c,d",
             "\u2028", "null", "1e3"]
_FLOW_TAILS = ["", "é", "💡", ":", " ", "\u2028", "中文", ",", "\x7f"]
# Number tokens as JSON writes them; each one's float is what orjson makes of it (ints as ints)
_DEMANDS = ["0", "-0", "-0.0", "1", "2.5", "1e3", "1E+3", "2.5e-3", "0.1", "123456789012345678",
            "9007199254740993", "18446744073709551615", "18446744073709551616", "1.7976931348623157e308",
            "5e-324", "1e-400", "100000000000000000000000000000"]
_SIZES = _DEMANDS + ["-5", "-1.5e9"]   # without --timeline a size is informative only: kept as is


def _gap(rng):
    return "".join(rng.choice(_WS, int(rng.integers(0, 3))))


def _string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)   # none of these ids needs an escape


def _obj(rng, pairs) -> str:
    """``{pairs}`` with random whitespace around every token (pairs: (key, JSON text))."""
    if not pairs:
        return "{" + _gap(rng) + "}"
    members = [_gap(rng) + _string(k) + _gap(rng) + ":" + _gap(rng) + v + _gap(rng) for k, v in pairs]
    return "{" + ",".join(members) + "}"


def _array(rng, items) -> str:
    return "[" + (",".join(_gap(rng) + item + _gap(rng) for item in items) or _gap(rng)) + "]"


def _flow_pairs(rng, i, link_ids, timeline):
    path = [str(x) for x in rng.choice(link_ids, int(rng.integers(0, 6)))]
    pairs = [("id", _string(f"f{i}" + str(rng.choice(_FLOW_TAILS)))), ("links", _array(rng, map(_string, path)))]
    if not path or rng.random() < .4:
        pairs.append(("demand_gbps", str(rng.choice(_DEMANDS))))
    elif rng.random() < .4:
        pairs.append(("demand_gbps", "null"))
    if timeline or rng.random() < .4:
        pairs.append(("bytes", str(rng.choice(_DEMANDS if timeline else _SIZES))))
    elif rng.random() < .3:
        pairs.append(("bytes", "null"))
    rng.shuffle(pairs)
    return pairs


def _document(seed: int, *, timeline=False, n_flows=None, edit=None) -> bytes:
    """A random valid ``solve`` document; ``edit(pairs)`` may change the flows' (key, JSON
    text) pairs first (a list per flow)."""
    rng = np.random.default_rng(seed)
    link_ids = [str(x) for x in rng.permutation(_LINK_IDS)[:int(rng.integers(3, len(_LINK_IDS)))]]
    links = [_obj(rng, [("id", _string(lid)), ("capacity_gbps", str(rng.choice(["1.0", "10", "40.5"])))])
             for lid in link_ids]
    n = int(rng.integers(0, 40)) if n_flows is None else n_flows
    flows = [_flow_pairs(rng, i, link_ids, timeline) for i in range(n)]
    if edit is not None:
        edit(flows)
    top = [("links", _array(rng, links)), ("flows", _array(rng, [_obj(rng, f) for f in flows]))]
    if rng.random() < .3:
        top.reverse()
    if rng.random() < .2:
        top.insert(int(rng.integers(0, 3)), ("meta", '{"note": ["x", {"y": null}, 1], "n": 3}'))
    return (_gap(rng) + _obj(rng, top) + _gap(rng)).encode()


# --------------------------------------------------------------------------- reading

def _outcome(call):
    """The call's answer, or its exception as (type, message, located problems): any exception,
    as the reader before raised it (a 400-digit demand still raises OverflowError there)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - compared as (type, message, problems)
        return type(exc), str(exc), [(p.path, p.message) for p in getattr(exc, "problems", [])]


def _whole(text: bytes, timeline=False):
    """What the solve command read before: the whole document, then parse_problem."""
    return _outcome(lambda: solve.parse_problem(solve._document(text, "-"), timeline=timeline))


class _Reader:
    """read_problem of a text with the scanner on (any size) and ``kernels`` as its kernels;
    ``accepted`` counts the documents the scanner read itself."""

    def __init__(self, monkeypatch, kernels):
        self.accepted = self.declined = 0
        scanned = solve._scanned_problem

        def counting(data, timeline):
            out = scanned(data, timeline)
            if out is None:
                self.declined += 1
            else:
                self.accepted += 1
            return out

        monkeypatch.setattr(solve, "_scanned_problem", counting)
        monkeypatch.setattr(solve, "_SCANNED_MIN_BYTES", 0)
        monkeypatch.setattr(id_index, "aot_kernels", lambda: kernels)
        self._monkeypatch = monkeypatch

    def __call__(self, text: bytes, timeline=False):
        self._monkeypatch.setattr(solve, "read_bytes", lambda path: text)
        return _outcome(lambda: solve.read_problem("-", timeline=timeline))


def _assert_identical(got, expected):
    """Arrays by dtype and bytes (bit for bit: -0.0, the last bit of a rounded integer), the id
    lists element by element with their types; errors by (type, message, problems)."""
    assert type(got) is type(expected) and len(got) == len(expected)
    for x, y in zip(got, expected):
        if isinstance(y, np.ndarray):
            assert isinstance(x, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
            assert x.tobytes() == y.tobytes()
        elif isinstance(y, list):
            assert x == y and [type(v) for v in x] == [type(v) for v in y]
        else:
            assert x == y


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("timeline", [False, True])
def test_valid_documents_are_read_exactly_by_the_scanner(monkeypatch, kernels, timeline):
    read = _Reader(monkeypatch, _kernels(kernels))
    uncut = 0
    for seed in range(200):
        text = _document(seed, timeline=timeline, n_flows=0 if seed % 25 == 0 else None)
        expected = _whole(text, timeline)
        assert len(expected) == 7, expected  # these documents are valid
        _assert_identical(read(text, timeline), expected)
        # the flows first, and a '}' and ']' apart at their end: the region is not found (as
        # array_chunks does not cut them) and the document is parsed whole, as before
        uncut += solve._flows_region(text) is None
    assert uncut < 20 and read.declined == uncut and read.accepted == 200 - uncut


@pytest.mark.parametrize("kernels", KERNELS)
def test_a_plain_compact_and_indented_document_is_scanned(monkeypatch, kernels):
    from designer.engine.benchmarks.solver import solve_document

    doc = solve_document(300, 40, seed=3)
    read = _Reader(monkeypatch, _kernels(kernels))
    for text in (orjson.dumps(doc), orjson.dumps(doc, option=orjson.OPT_INDENT_2), json.dumps(doc).encode()):
        _assert_identical(read(text), _whole(text))
    assert read.accepted == 3


def _flow_edit(kind):
    """A change of the first flows' members that takes a document outside the scanner's subset
    (or makes it invalid)."""
    def edit(flows):
        if not flows:
            return
        first = flows[0]
        keys = [k for k, _ in first]
        at = keys.index("links")
        if kind == "extra key":
            first.append(("meta", '"x"'))
        elif kind == "nested value":
            first.append(("meta", '{"links": ["l1"], "a": [1, {"b": []}]}'))
        elif kind == "duplicate links":
            first.insert(0, ("links", "[]"))
        elif kind == "duplicate id key":
            first.append(("id", '"other"'))
        elif kind == "duplicate demand":
            first.append(("demand_gbps", "1"))
            first.append(("demand_gbps", "null"))
        elif kind == "no id":
            del first[keys.index("id")]
        elif kind == "no links":
            first[at] = ("lonks", first[at][1])
        elif kind == "empty id":
            first[keys.index("id")] = ("id", '""')
        elif kind == "numeric id":
            first[keys.index("id")] = ("id", "7")
        elif kind == "links not a list":
            first[at] = ("links", '"l1"')
        elif kind == "a number in links":
            first[at] = ("links", '[3]')
        elif kind == "nested links":
            first[at] = ("links", '[["l1"]]')
        elif kind == "unknown link":
            first[at] = ("links", '["l1", "l9999"]' if '"l1"' in first[at][1] else '["l9999"]')
        elif kind in _BAD_DEMANDS:
            _set(first, "demand_gbps", kind)
        elif kind == "no link no demand":
            first[at] = ("links", "[]")
            _set(first, "demand_gbps", None)
        elif kind == "null demand no link":
            first[at] = ("links", "[]")
            _set(first, "demand_gbps", "null")
        elif kind == "duplicate flow id":
            flows.append(list(first))
        elif kind.startswith("bytes "):
            _set(first, "bytes", kind.split(" ", 1)[1])
        elif kind == "no bytes":
            _set(first, "bytes", None)
        else:
            raise AssertionError(kind)
    return edit


def _set(pairs, key, value):
    """Give ``key`` the JSON text ``value`` (None: remove it), at the end."""
    pairs[:] = [(k, v) for k, v in pairs if k != key] + ([(key, value)] if value is not None else [])


_BAD_DEMANDS = ["1e999", "-0.5", "NaN", "Infinity", "true", "false", "01", "+1", ".5", "1.", "-", '"3"', "[1]",
                "1e", "99999999999999999999999999999999999999e999", "--1", "1e5e5", "0x10"]


_EDITS = ["extra key", "nested value", "duplicate links", "duplicate id key", "duplicate demand", "no id",
          "no links", "empty id", "numeric id", "links not a list", "a number in links", "nested links",
          "unknown link", *_BAD_DEMANDS, "no link no demand", "null demand no link", "duplicate flow id",
          'bytes "lots"', "bytes true", "bytes 1e999", "bytes -3", "bytes null", "bytes NaN", "no bytes"]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("kind", _EDITS)
def test_documents_outside_the_subset_give_the_same_result(monkeypatch, kernels, kind):
    read = _Reader(monkeypatch, _kernels(kernels))
    invalid = 0
    for seed in range(12):
        for timeline in (False, True):
            text = _document(seed, timeline=timeline, n_flows=int(seed) % 7 + 1, edit=_flow_edit(kind))
            expected = _whole(text, timeline)
            invalid += len(expected) == 3
            _assert_identical(read(text, timeline), expected)
    if kind in ("no id", "empty id", "unknown link", "-0.5", "NaN", "no link no demand", "duplicate flow id"):
        assert invalid == 24   # located errors, the same ones
    if kind in ("extra key", "nested value", "duplicate links", "duplicate flow id", "1e999", "NaN",
                "99999999999999999999999999999999999999e999", 'bytes "lots"', "no bytes"):
        assert read.declined >= 12   # outside the subset, or invalid: left to the orjson path


_BASE = (b'{"links": [{"id": "l1", "capacity_gbps": 10}, {"id": "l2", "capacity_gbps": 5}],\n'
         b' "flows": [{"id": "f1", "links": ["l1", "l2"], "demand_gbps": null},\n'
         b'           {"id": "f2", "links": ["l2"], "demand_gbps": 2.5, "bytes": 1e9}]}\n')


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("text", [
    _BASE,
    _BASE.replace(b'"f2"', b'"f}]"'),                                       # '}]' inside an id
    _BASE.replace(b'"f2"', b'"f\tx"'),                                      # a control byte: not JSON
    _BASE.replace(b'"f2"', b'"f\x7fx"'),                                    # DEL is allowed in JSON
    _BASE.replace(b'"f2"', b'"f\xc3x"'),                                    # not UTF-8
    _BASE.replace(b'"f2"', b'"f\xed\xa0\x80"'),                             # a UTF-8 surrogate
    _BASE.replace(b'"f2"', b'"f\\u0032"'),                                  # an escape: not scanned
    _BASE.replace(b'"f2"', b'"f1"'),                                        # a duplicate id
    _BASE.replace(b'"l2"]', b'"l2" , ]'),                                   # a trailing comma
    _BASE.replace(b'null}', b'null},'),                                     # a trailing comma
    _BASE.replace(b"1e9}]", b"1e9}"),                                       # truncated
    _BASE[:-20], _BASE[:60], _BASE[:-3],                                    # truncated
    _BASE.replace(b"null}", b"nul}"), _BASE.replace(b"2.5,", b"2.5x,"),
    _BASE.replace(b"2.5", b"2.5e-3"), _BASE.replace(b"2.5", b"25E+1"), _BASE.replace(b"2.5", b"-0"),
    _BASE.replace(b"2.5", b"1e999"), _BASE.replace(b"2.5", b"-0.5"), _BASE.replace(b"2.5", b"NaN"),
    _BASE.replace(b"2.5", b"18446744073709551616"), _BASE.replace(b"2.5", b"1" * 400),
    _BASE.replace(b"2.5", b"true"), _BASE.replace(b"1e9", b"false"), _BASE.replace(b"1e9", b"-1e9"),
    _BASE.replace(b'"links": ["l1"', b'"links" : [ "l1"'),
    _BASE.replace(b'"flows": [', b'"flows": [ ]  , "x": ['),                # an empty flows array
    _BASE.replace(b'"flows": [', b'"x": [1], "flows": [').replace(b']}\n', b'], "y": []}'),
    _BASE.replace(b'"l1", "l2"', b'"l1", "l1", "l1"'),                      # a link crossed twice
    _BASE + b"x", b" " + _BASE, _BASE.replace(b"}]}", b"}]}}"), _BASE.replace(b"\n", b"\r\n"),
    _BASE.replace(b'{"id": "l1"', b'{"id": "flows"').replace(b'"l1"]', b'"flows"]'),
    _BASE[:-2] + b', "flows": []}',                                          # a second "flows" key
    _BASE.replace(b" ", b"\x0c"),                                           # not JSON whitespace
    _BASE.replace(b'"demand_gbps": null', b'"Demand_gbps": null'),
    _BASE.replace(b'"demand_gbps": null', b'"demand_gbp": null'),
    _BASE.replace(b'"demand_gbps": null', b'"demand_gbpss": null'),
])
def test_crafted_documents_give_the_same_result(monkeypatch, kernels, text):
    for timeline in (False, True):
        expected = _whole(text, timeline)
        _assert_identical(_Reader(monkeypatch, _kernels(kernels))(text, timeline), expected)


@needs_aot
@settings(max_examples=300, deadline=None)
@given(demand=st.one_of(st.floats(allow_nan=False, allow_infinity=False).map(repr),
                        st.integers(min_value=-10, max_value=2 ** 70).map(str),
                        st.from_regex(r"\A-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?\Z"),
                        st.from_regex(r"\A[0-9+\-.eE]{1,12}\Z")),
       size=st.from_regex(r"\A-?(0|[1-9][0-9]{0,22})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z"))
def test_any_number_token_is_read_as_orjson_reads_it(demand, size):
    text = (b'{"links": [{"id": "l1", "capacity_gbps": 10}], "flows": [{"id": "f", "links": ["l1"], '
            b'"demand_gbps": ' + demand.encode() + b', "bytes": ' + size.encode() + b'}, '
            b'{"id": "g", "links": [], "demand_gbps": 1}]}')
    kernels = loader._Kernels(AOT)
    original = id_index.aot_kernels
    id_index.aot_kernels = lambda: kernels
    try:
        for timeline in (False, True):
            scanned = _outcome(lambda: solve._scanned_problem(text, timeline))
            expected = _whole(text, timeline)
            if scanned is not None:   # when it reads a number, it reads what orjson does
                _assert_identical(scanned, expected)
    finally:
        id_index.aot_kernels = original


# --------------------------------------------------------------------------- the kernel

IDS = ["l1", "l10", "é", "links"]


def _scan(kernels, piece: bytes, ids=IDS, room: int | None = None):
    """scan_flows of ``piece`` (the content of a "flows" array) with outputs of ``room`` entries
    (default: enough); (status, counts, lens, hops, ids bytes, demand tokens, size tokens, flags)."""
    encoded = [s.encode("utf-8") for s in ids]
    key_bytes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    key_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=key_ptr[1:])
    table = np.full(1 << (2 * len(ids)).bit_length(), -1, dtype=np.int64)
    assert kernels.id_table_build(key_bytes, key_ptr, table) == len(ids)
    n = len(piece) + 1 if room is None else room
    lens, out, id_buf = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint8)
    id_ptr, dem, size, flags = np.zeros(n + 1, np.int64), np.zeros(n, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.uint8)
    counts = np.zeros(4, np.int64)
    status = kernels.scan_flows(np.frombuffer(piece, dtype=np.uint8), key_bytes, key_ptr, table, lens, out, id_buf,
                                id_ptr, dem, size, flags, counts)
    f, h, d, s = counts.tolist()
    return (status, counts.tolist(), lens[:f].tolist(), out[:h].tolist(), id_buf[:id_ptr[f]].tobytes(),
            dem[:d].tobytes(), size[:s].tobytes(), flags[:f].tolist())


@pytest.mark.parametrize("kernels", KERNELS)
def test_scan_flows_outputs(kernels):
    piece = (' {"links" :\t["l10", "é"],"id":"f1","bytes":null, "demand_gbps":-1e3}\n, '
             '{"demand_gbps":null,"bytes":5,"id":"links","links":["links"]},{"id":"x","links":[],"demand_gbps":0} ')
    status, counts, lens, hops, ids, dem, size, flags = _scan(_kernels(kernels), piece.encode())
    assert status == jit.FLOWS_OK
    assert (counts, lens, hops) == ([3, 3, 7, 2], [2, 1, 0], [1, 2, 3])
    assert (ids, dem, size) == (b"f1\0links\0x\0", b"-1e3,0,", b"5,")
    assert flags == [jit.FLOW_DEMAND, jit.FLOW_BYTES, jit.FLOW_DEMAND]
    assert (id_index._FLOW_DEMAND, id_index._FLOW_BYTES) == (jit.FLOW_DEMAND, jit.FLOW_BYTES)
    assert _scan(_kernels(kernels), b"")[:2] == (jit.FLOWS_OK, [0, 0, 0, 0])
    assert _scan(_kernels(kernels), b" \n\t\r ")[:2] == (jit.FLOWS_OK, [0, 0, 0, 0])


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("piece, status", [
    (b'{"id":"f","links":["l1"]},', jit.FLOWS_OUTSIDE),            # a trailing comma
    (b',{"id":"f","links":["l1"]}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"]}{"id":"g","links":["l1"]}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"]', jit.FLOWS_OUTSIDE),              # truncated
    (b'{"id":"f","links":["l1"', jit.SCAN_NOT_STRINGS),
    (b'{"id":"f","links":["l1', jit.SCAN_TRUNCATED),
    (b'{"id":"f","links":["l1"],"demand_gbps":', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"demand_gbps":1', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"demand_gbps":nul}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"demand_gbps":nullx}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"demand_gbps":true}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"demand_gbps":"1"}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"bytes":[1]}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"],"x":1}', jit.FLOWS_OUTSIDE),       # a key it does not read
    (b'{"id":"f","links":["l1"],"id":"g"}', jit.FLOWS_OUTSIDE),    # a key twice
    (b'{"id":"f","links":["l1"],"links":[]}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f"}', jit.FLOWS_OUTSIDE),                            # no links
    (b'{"links":["l1"]}', jit.FLOWS_OUTSIDE),                      # no id
    (b'{}', jit.FLOWS_OUTSIDE),
    (b'{"id":"","links":["l1"]}', jit.FLOWS_OUTSIDE),              # an empty id
    (b'{"id":"a\\"b","links":["l1"]}', jit.FLOWS_OUTSIDE),         # an escape
    (b'{"id":"a\nb","links":["l1"]}', jit.FLOWS_OUTSIDE),          # a control byte
    (b'{"id":3,"links":["l1"]}', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":["l1"]\x0c}', jit.FLOWS_OUTSIDE),         # not JSON whitespace
    (b'{"id":"f","links":["l2"]}', jit.SCAN_UNKNOWN_ID),
    (b'{"id":"f","links":["l"]}', jit.SCAN_UNKNOWN_ID),            # a prefix of known ids
    (b'{"id":"f","links":[3]}', jit.SCAN_NOT_STRINGS),
    (b'{"id":"f","links":"l1"}', jit.SCAN_NOT_STRINGS),
    (b'{"id":"f","links":[]}', jit.FLOWS_NO_CAP),                  # no link, no demand
    (b'{"id":"f","links":[],"demand_gbps":null}', jit.FLOWS_NO_CAP),
    (b'[]', jit.FLOWS_OUTSIDE), (b'3', jit.FLOWS_OUTSIDE), (b'"f"', jit.FLOWS_OUTSIDE),
    (b'{"id":"f","links":[],"demand_gbps":1}', jit.FLOWS_OK),
    (b'{"id":"f","links":[],"demand_gbps":1e}', jit.FLOWS_OK),    # orjson refuses it afterwards
])
def test_scan_flows_statuses(kernels, piece, status):
    assert _scan(_kernels(kernels), piece)[0] == status


@pytest.mark.parametrize("kernels", KERNELS)
def test_scan_flows_stays_in_its_buffers(kernels):
    piece = b'{"id":"flow-one","links":["l1","l10","l1"],"demand_gbps":12.5},{"id":"f2","links":["l1"]}'
    assert _scan(_kernels(kernels), piece)[0] == jit.FLOWS_OK
    for room in range(0, 12):   # an output smaller than needed (the ids take 12 bytes): declined
        assert _scan(_kernels(kernels), piece, room=room)[0] in (jit.FLOWS_FULL, jit.SCAN_COUNTS)
    assert _scan(_kernels(kernels), piece, room=12)[0] == jit.FLOWS_OK


# --------------------------------------------------------------------------- when it runs

def _large_text(tmp_path):
    from tests.engine.test_cli_solve_scanner import large_solve_document

    return large_solve_document(tmp_path, solve._SCANNED_MIN_BYTES)


@needs_aot
def test_a_large_document_is_read_by_the_scanner(tmp_path, monkeypatch):
    from tests.engine.test_cli_solve_scanner import read_with_kernels

    _assert_identical(*read_with_kernels(monkeypatch, _large_text(tmp_path), aot=True,
                                         forbidden=(solve, "array_chunks")))


def test_without_aot_the_orjson_path_runs(tmp_path, monkeypatch):
    from tests.engine.test_cli_solve_scanner import read_with_kernels

    _assert_identical(*read_with_kernels(monkeypatch, _large_text(tmp_path), aot=False,
                                         forbidden=(id_index.IdIndex, "scan_flows")))


@needs_aot
def test_the_flow_scanner_imports_no_numba(tmp_path):
    problem = _large_text(tmp_path)
    code = ("import sys; from designer.engine.commands import solve;"
            "solve.array_chunks = None;"  # the orjson path would raise: the scanner read it
            "solve.read_problem(sys.argv[1]);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))")
    env = {k: v for k, v in os.environ.items() if k != "FABRICSCOPE_KERNELS"}
    out = subprocess.run([sys.executable, "-c", code, str(problem)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
