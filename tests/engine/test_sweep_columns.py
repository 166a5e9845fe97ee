"""Sweeps stored columnar (``fabricscope.sweep-columns/1``): expanding gives back the row form
exactly, chunks merge in either form, damage is located.

Clusters as in tests/engine/test_sweep.py: DGX-H100 hosts on a rail-optimized fabric, a ring
all-reduce on every GPU; the job sweep is tp 8 × dp 2 on 2 hosts (``impact.job`` in every record).
"""
import copy
import json
import pathlib

import pytest

from designer.engine.analysis.result_columns import DamagedResult
from designer.engine.analysis.sweep_columns import COLUMNS_FORMAT, SWEEP_FORMAT, pack, ranked, rows
from designer.engine.analysis.whatif import merge_sweeps, sweep
from designer.engine.errors import InvalidScenario

from tests.engine.test_sweep import scenario

ROW_FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "sweep_rows_v1.json"
JOB = {"job": {"layout": {"tp": 8, "dp": 2}, "phases": [
    {"id": "fwd", "compute_s": 0.001},
    {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e8,
                                                 "groups": {"layout": "dp"}}]}]}}


def _plain(doc: dict) -> dict:
    """The document as JSON gives it back (what is stored): plain floats, lists, no numpy."""
    return json.loads(json.dumps(doc))


def _same(a: dict, b: dict) -> None:
    """Equal values, and the same key order everywhere (the JSON texts are equal)."""
    assert a == b
    assert json.dumps(a) == json.dumps(b)


@pytest.fixture(scope="module")
def sweeps() -> dict:
    ring = scenario(hosts=2, lpr=2)
    return {
        "ring": _plain(sweep(ring, over="nic,pcie_switch,leaf-spine,spine",
                             failures=[{"target": "h1/nic3", "mode": "degrade", "factor": 0.5}])),
        "degrade": _plain(sweep(ring, over="nic-leaf", degrade=0.25)),
        "job": _plain(sweep({**scenario(hosts=2), "workload": JOB}, over="nic,pcie_switch")),
    }


@pytest.mark.parametrize("name", ["ring", "degrade", "job"])
def test_expanded_columns_equal_the_rows_for_every_case_and_key(sweeps, name):
    doc = sweeps[name]
    packed = _plain(pack(doc))            # through JSON, as the database keeps it
    assert packed["format"] == COLUMNS_FORMAT and "ranking" not in packed
    assert ranked(packed) == ranked(doc) == len(doc["ranking"]) > 0
    back = rows(packed)
    assert back["format"] == SWEEP_FORMAT and list(back) == list(doc)
    for got, want in zip(back["ranking"], doc["ranking"], strict=True):
        _same(got, want)
    _same(back, doc)
    # one array per field, far smaller than a dict per case
    assert len(json.dumps(packed)) < 0.5 * len(json.dumps(doc))


def test_the_job_sweep_keeps_every_records_step(sweeps):
    table = pack(sweeps["job"])["ranking_columns"]
    fields = [tuple(f) for f in table["fields"]]
    assert ("impact", "job", "step_time_s", "after") in fields and ("failure", "target") in fields
    assert table["rows"] == len(sweeps["job"]["ranking"])


def test_records_of_different_shapes_and_look_alike_values():
    records = [
        {"index": 0, "impact": {"slowdown": 1, "empty": {}, "list": [{"a": 1}], "none": None}},
        {"index": 1, "impact": {"slowdown": 1.0, "empty": {}, "list": [{"a": 1}], "none": None}},
        {"index": 2, "impact": {"slowdown": True, "extra": {"deep": {"x": "y"}}}, "label": "odd"},
        {},
        {"index": 4, "impact": {"slowdown": 1, "empty": {}, "list": [{"a": 1}], "none": None}},
    ]
    doc = {"format": SWEEP_FORMAT, "candidates": 5, "ranking": records, "stats": {"solved": 5}}
    packed = _plain(pack(doc))
    back = rows(packed)
    _same(back, doc)
    # 1, 1.0 and True are equal in Python, not in JSON: the column is not folded into one value
    assert [type(r["impact"]["slowdown"]) for r in back["ranking"] if r] == [int, float, bool, int]
    # a value written once for every record is a separate object in each, as rows read from JSON
    back["ranking"][0]["impact"]["list"].append("changed")
    assert back["ranking"][4]["impact"]["list"] == [{"a": 1}]


def test_an_empty_ranking_and_the_row_form_pass_through():
    doc = {"format": SWEEP_FORMAT, "candidates": 0, "evaluated": 0, "ranking": []}
    _same(rows(_plain(pack(doc))), doc)
    assert rows(doc) is doc and pack(pack(doc)) == pack(doc)
    with pytest.raises(ValueError, match="fabricscope.sweep/1"):
        pack({"format": "fabricscope.result/1", "flows": []})


def test_the_stored_row_form_fixture_reads_as_it_is_and_packs_back_to_it():
    """tests/fixtures/sweep_rows_v1.json: a sweep as stored before columns (the bridge's
    ``json_safe(sweep(...))`` at commit 5edd251: a 2-host DGX-H100 pod, rail-optimized, ring
    all-reduce, every PCIe switch down and h1/nic3 at half capacity)."""
    old = json.loads(ROW_FIXTURE.read_text())
    assert old["format"] == SWEEP_FORMAT and len(old["ranking"]) == 17
    assert rows(old) is old and ranked(old) == 17
    _same(rows(_plain(pack(old))), old)


def test_chunks_merge_in_either_form(sweeps):
    sc = scenario(hosts=2, lpr=2)
    whole = _plain(sweep(sc, over="nic,pcie_switch"))
    parts = [_plain(sweep(sc, over="nic,pcie_switch", chunk=(i, 3))) for i in range(3)]
    packed = [_plain(pack(p)) for p in parts]
    _same(_plain(merge_sweeps(packed)), whole)
    _same(_plain(merge_sweeps([packed[2], parts[0], packed[1]])), whole)  # mixed forms, any order


def _damaged(doc: dict, change) -> dict:
    packed = copy.deepcopy(_plain(pack(doc)))
    change(packed["ranking_columns"])
    return packed


@pytest.mark.parametrize("change, where", [
    (lambda t: t["columns"][0].pop(), "ranking_columns.columns[0]: "),
    (lambda t: t.__setitem__("shape", [0] * (t["rows"] - 1) + [7]), "ranking_columns.shape["),
    (lambda t: t["shapes"][0].append(999), "ranking_columns.shapes[0]: 999"),
    (lambda t: t.pop("fields"), "ranking_columns: damaged (KeyError"),
    (lambda t: t["columns"].pop(), "ranking_columns.columns: "),
])
def test_damaged_columns_are_located(sweeps, change, where):
    bad = _damaged(sweeps["ring"], change)
    with pytest.raises(DamagedResult, match=r"^" + where.replace("[", r"\[").replace("(", r"\(")):
        rows(bad)


def test_a_damaged_part_is_located_in_the_merge(sweeps):
    sc = scenario(hosts=2, lpr=2)
    parts = [_plain(pack(sweep(sc, over="nic", chunk=(i, 2)))) for i in range(2)]
    parts[1]["ranking_columns"]["columns"][0] = []
    with pytest.raises(InvalidScenario) as err:
        merge_sweeps(parts)
    assert err.value.problems[0].path == "parts[1]"
    assert "ranking_columns.columns[0]: 0 values" in err.value.problems[0].message
