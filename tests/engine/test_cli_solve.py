"""``python -m designer.engine solve``: subprocess runs, output shape and error exit codes."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from designer.engine.errors import InvalidWorkload

ROOT = Path(__file__).resolve().parents[2]

# [h0]--l1 100G--[sw]--l2 30G--[h1]; a: l1 only, b: l1 then l2, c: l1 with a 10G demand.
PROBLEM = {
    "links": [{"id": "l1", "capacity_gbps": 100.0}, {"id": "l2", "capacity_gbps": 30.0}],
    "flows": [{"id": "a", "links": ["l1"], "demand_gbps": None, "bytes": 1e9},
              {"id": "b", "links": ["l1", "l2"], "bytes": 3e9},
              {"id": "c", "links": ["l1"], "demand_gbps": 10, "bytes": 1e9}],
}


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "designer.engine", "solve", *args], cwd=ROOT,
                          input=stdin, capture_output=True, text=True, timeout=120)


def test_solve_file(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PROBLEM))
    proc = run_cli(str(path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # b is held to 30 by l2, c to its demand 10; a takes the rest of l1: 60.
    assert out["rates_gbps"] == {"a": 60.0, "b": 30.0, "c": 10.0}
    assert out["bottleneck"] == {"a": "l1", "b": "l2", "c": None}
    assert out["utilization"] == {"l1": 1.0, "l2": 1.0}
    assert "completion_s" not in out


def test_solve_stdin_timeline():
    """a: 8 Gb at 60G -> 0.1333 s; then b (24 Gb at 30G) and c (8 Gb at 10G) both end at 0.8 s."""
    proc = run_cli("-", "--timeline", stdin=json.dumps(PROBLEM))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["completion_s"]["a"] == pytest.approx(8 / 60)
    assert out["completion_s"]["b"] == pytest.approx(0.8)
    assert out["completion_s"]["c"] == pytest.approx(0.8)


def test_unknown_link_is_located():
    bad = json.loads(json.dumps(PROBLEM))
    bad["flows"][1]["links"] = ["l1", "l9"]
    bad["links"][0]["capacity_gbps"] = -5
    proc = run_cli("-", stdin=json.dumps(bad))
    assert proc.returncode == 1
    assert "flows[1].links[1]: unknown link id 'l9'" in proc.stderr
    assert "links[0].capacity_gbps" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("doc, where", [
    ({"links": [{"id": "l1", "capacity_gbps": "fast"}], "flows": []}, "links[0].capacity_gbps"),
    ({"links": [{"id": "l1", "capacity_gbps": True}], "flows": []}, "links[0].capacity_gbps"),
    ({"links": [], "flows": [{"id": "f", "links": []}]}, "flows[0].links"),
    ({"links": [], "flows": [{"id": "f", "links": [], "demand_gbps": -1}]}, "flows[0].demand_gbps"),
    ({"flows": []}, "links"),
])
def test_bad_values_exit_1(doc, where):
    proc = run_cli("-", stdin=json.dumps(doc))
    assert proc.returncode == 1 and f"error: {where}" in proc.stderr and "Traceback" not in proc.stderr


def test_timeline_needs_bytes_and_bad_json():
    doc = {"links": [{"id": "l1", "capacity_gbps": 1.0}], "flows": [{"id": "f", "links": ["l1"]}]}
    proc = run_cli("-", "--timeline", stdin=json.dumps(doc))
    assert proc.returncode == 1 and "flows[0].bytes" in proc.stderr
    proc = run_cli("-", stdin="{not json")
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr


def test_missing_file_and_help(tmp_path):
    proc = run_cli(str(tmp_path / "absent.json"))
    assert proc.returncode == 1 and "no such file" in proc.stderr
    proc = run_cli("--help")
    assert proc.returncode == 0 and "--timeline" in proc.stdout


# --------------------------------------------------------------------------- fast JSON path

def _strict_loads(text: str):
    """json.loads that fails on NaN/Infinity tokens: the output must be strict JSON."""
    def reject(token):
        raise AssertionError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=reject)


def _keys(doc) -> list:
    return [(k, _keys(v)) for k, v in doc.items()] if isinstance(doc, dict) else []


def _ring_problem(n: int = 40) -> dict:
    """n flows round a ring of n 10G links: flow i crosses links i, i+1, i+2 (mod n); every third
    one is capped at a demand with an awkward float (1/3, 1e-7, ...). Ids are not in sorted order
    ("f10" after "f9"), so key order is tested, not rebuilt by sorting."""
    links = [{"id": f"l{k}", "capacity_gbps": 10.0 + k / 7} for k in range(n)]
    demands = [1 / 3, 1e-7, 2.5e16, None]
    flows = [{"id": f"f{n - i}", "links": [f"l{(i + d) % n}" for d in range(3)],
              "demand_gbps": demands[i % 4], "bytes": 1e9 + i} for i in range(n)]
    return {"links": links, "flows": flows}


def test_orjson_answer_equals_stdlib_answer(tmp_path):
    """The default (orjson, indent 2) and --indent 3 (stdlib) answers parse to the same values,
    in the same key order (input order), with no NaN/Infinity token; -o writes the same bytes as
    standard output."""
    problem = tmp_path / "ring.json"
    problem.write_text(json.dumps(_ring_problem()))
    fast, slow = run_cli(str(problem), "--timeline"), run_cli(str(problem), "--timeline", "--indent", "3")
    assert fast.returncode == 0 and slow.returncode == 0, fast.stderr + slow.stderr
    out_fast, out_slow = _strict_loads(fast.stdout), _strict_loads(slow.stdout)
    assert out_fast == out_slow and _keys(out_fast) == _keys(out_slow)
    assert list(out_fast["rates_gbps"]) == [f["id"] for f in _ring_problem()["flows"]]
    assert list(out_fast["utilization"]) == [f"l{k}" for k in range(40)]
    # every link carries three flows and every flow is demand-capped or held by a link
    assert all(v is None or isinstance(v, str) for v in out_fast["bottleneck"].values())
    assert out_fast["rates_gbps"]["f40"] == 1 / 3  # i = 0: demand-limited, float kept exactly
    written = tmp_path / "answer.json"
    assert run_cli(str(problem), "--timeline", "-o", str(written)).returncode == 0
    assert written.read_text() == fast.stdout


def test_scenario_io_codec_matches_stdlib():
    """dumps/loads give the stdlib's values and key order; NaN and inf become null (as the web
    app's json_safe), where the stdlib with allow_nan=False refuses them."""
    from designer.engine.commands import _scenario_io as sio

    doc = {"z": 0.1 + 0.2, "a": [1e-7, 1e16, 5e-324, -0.0, 2 ** 63 - 1, "gpu·é"], "m": {"b": None, "a": True}}
    text = sio.dumps(doc).decode()
    assert json.loads(text) == doc and _keys(json.loads(text)) == _keys(doc)
    assert sio.loads(json.dumps(doc).encode()) == doc
    assert sio.dumps(doc, indent=None) == sio.dumps(doc, indent=0)  # compact
    assert _strict_loads(sio.dumps({"x": float("nan"), "y": [float("inf")]}).decode()) == {"x": None, "y": [None]}
    # orjson refuses these; the stdlib fallback keeps what the engine accepted before
    assert sio.dumps({1: 2 ** 70}) == json.dumps({1: 2 ** 70}, indent=2).encode()
    assert sio.loads(b'{"d": NaN, "n": 123456789012345678901234567890}')["n"] == 123456789012345678901234567890
    with pytest.raises(json.JSONDecodeError, match="line 2 column 3"):
        sio.loads(b'{"a": 1,\n  oops}')


def test_bulk_parse_equals_located_parse():
    """The column-wise parser and the flow-by-flow one build identical arrays on a valid document
    (with and without --timeline); on an invalid one the located errors come out as before."""
    from designer.engine.commands import solve

    doc = _ring_problem(25)
    doc["flows"].append({"id": "capped-only", "links": [], "demand_gbps": 4, "bytes": 8})  # no link
    for timeline in (False, True):
        bulk = solve._parse_bulk(doc, timeline)
        slow = solve._parse_located(doc, timeline)
        assert bulk is not None and bulk[:2] == slow[:2]
        for a, b in zip(bulk[2:], slow[2:]):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert list(bulk[3][-2:]) == [75, 75]  # the last flow crosses no link: an empty CSR row
    bad = json.loads(json.dumps(doc))
    bad["flows"][3]["links"][2] = "l99"
    bad["flows"][5]["demand_gbps"] = True
    assert solve._parse_bulk(bad, False) is None
    with pytest.raises(InvalidWorkload) as err:
        solve.parse_problem(bad)
    assert [p.path for p in err.value.problems] == ["flows[3].links[2]", "flows[5].demand_gbps"]


def test_json_safe_fast_path_equals_walk():
    """designer.bridge.json_safe (orjson round trip) == the Python walk it replaced, value for
    value and key for key, on numpy arrays and scalars with NaN/inf, nested tuples, objects with
    as_dict, and on what only the walk handles (int keys, big ints, datetimes, sets)."""
    import datetime

    from designer.bridge import common as bridge

    class Row:
        def as_dict(self):
            return {"rate": np.float32(0.1), "nan": np.float64("nan")}

    cases = [
        {"rates": np.array([1.5, np.nan, np.inf]), "n": np.int64(7), "ok": np.bool_(True),
         "path": ("a", ("b", 2)), "row": Row(), "z": -0.0, "tiny": 5e-324},
        {"b": 1, "a": [{"y": None, "x": float("-inf")}]},
        {3: "int key"}, {"big": 2 ** 80}, {"t": datetime.datetime(2026, 1, 2, 3, 4)}, {"s": {1}},
    ]
    for value in cases:
        fast, walk = bridge.json_safe(value), bridge._json_safe_walk(value)
        assert fast == walk and _keys(fast) == _keys(walk)
        assert json.dumps(fast, allow_nan=False) == json.dumps(walk, allow_nan=False)
