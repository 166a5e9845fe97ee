"""Calibration and validation splits of the fidelity cases (docs/FIDELITY.md, "Calibration and
validation"): the split rule by source, the validation cases' provenance, curve cases, and the
bench reporting each split on its own. Cheap: the runner is exercised with stand-in
simulate / sweep functions, and one real two-size sweep on one DGX A100."""
import json
from pathlib import Path

import pytest

from designer.engine.benchmarks import fidelity

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "FIDELITY.md"
RECORDS = ROOT / "docs" / "fidelity-validation-figures.json"


def _between(text: str, name: str) -> str:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    assert start in text and end in text, f"docs/FIDELITY.md lost its {name} markers"
    return text.split(start, 1)[1].split(end, 1)[0]


def _table(name: str) -> dict[str, list[str]]:
    rows = {}
    for line in _between(DOC.read_text(encoding="utf-8"), name).strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    return rows


def _records() -> dict[str, dict]:
    return {r["id"]: r for r in json.loads(RECORDS.read_text(encoding="utf-8"))["records"]}


# ------------------------------------------------------------------ the split rule
def test_case_file_keeps_the_split_rule():
    """Every case has a split, and no source (url without fragment) feeds both splits."""
    assert fidelity.split_problems(fidelity.load_cases()) == []


def test_split_rule_is_by_source_url_without_fragment():
    cal = {"id": "a", "split": "calibration", "source": "X#1", "url": "https://x/issues/1#issuecomment-9"}
    val = {"id": "b", "split": "validation", "source": "X#1 again", "url": "https://x/issues/1"}
    problems = fidelity.split_problems({"cases": [cal, val]})
    assert len(problems) == 1 and "https://x/issues/1" in problems[0] and "a" in problems[0] and "b" in problems[0]
    # different urls: fine; no url: the source string is the key
    assert fidelity.split_problems({"cases": [cal, {**val, "url": "https://x/issues/2"}]}) == []
    no_url = [{"id": "c", "split": "calibration", "source": "paper"},
              {"id": "d", "split": "validation", "source": "paper"}]
    assert len(fidelity.split_problems({"cases": no_url})) == 1
    assert fidelity.source_key({"source": "paper"}) == "paper"


def test_a_case_without_a_split_breaks_the_rule():
    problems = fidelity.split_problems({"cases": [{"id": "a", "source": "s", "url": "https://s"},
                                                  {"id": "b", "split": "holdout", "source": "t"}]})
    assert len(problems) == 2 and problems[0].startswith("a:") and problems[1].startswith("b:")


def test_the_original_cases_are_calibration():
    """The 19 cases the catalog was fitted on (the results table of docs/FIDELITY.md),
    NVIDIA/nccl-tests#123 (the source of ``hop_latency.SERIAL_LAUNCH_NS``) and the six Blackwell
    NVLink-domain runs (the source of ``catalog.NVLS_BUS_GBYTES``), each added as calibration when
    its constant was taken from it, are all calibration, and they are the only calibration cases;
    no validation source gave one of them."""
    data = fidelity.load_cases()
    calibration = {c["id"] for c in data["cases"] if c["split"] == "calibration"}
    assert len(calibration) == 26 and "a100x8-allreduce-8b-ring-1ch-g8" in calibration
    assert {c for c in calibration if c.startswith(("gcp-a4x-gb200-nvl72-", "oci-gb300-nvl72-"))} == {
        "gcp-a4x-gb200-nvl72-4gpu-ar", "gcp-a4x-gb200-nvl72-8gpu-ar", "gcp-a4x-gb200-nvl72-16gpu-ar",
        "gcp-a4x-gb200-nvl72-72gpu-ar", "oci-gb300-nvl72-8gpu-ar", "oci-gb300-nvl72-64gpu-ar"}
    validation_sources = {fidelity.source_key(c) for c in data["cases"] if c["split"] == "validation"}
    assert not {fidelity.source_key(c) for c in data["cases"] if c["id"] in calibration} & validation_sources
    assert {"h100x8-allreduce-ring", "dgx-a100x2-allreduce-8b-ring", "h100-gin-put-round-trip",
            "mi300x-2x8-allreduce-8g", "a100-h2d-pcie4"} <= calibration
    assert all("curve" not in c for c in data["cases"] if c["split"] == "calibration")


# ------------------------------------------------------------------ validation provenance
def test_every_validation_case_has_url_quote_and_its_published_record():
    """Each validation case names its record in docs/fidelity-validation-figures.json, keeps the
    record's source, url and quote, says why its template matches (``mapping``), and every
    published figure is the record's own (out-of-place column, or in-place when the record has
    only that)."""
    records = _records()
    validation = [c for c in fidelity.load_cases()["cases"] if c["split"] == "validation"]
    assert validation
    for case in validation:
        rec = records[case["record"]]
        assert case["url"].startswith("https://") and case["url"] == rec["url"], case["id"]
        assert case["quote"] and case["quote"] == rec["quote"] and case["source"] == rec["source"], case["id"]
        assert case["platform"] == rec["platform"] and case["mapping"], case["id"]
        if "curve" in case:
            by_size = {r["bytes"]: r for r in rec["rows"]}
            for row in case["curve"]:
                prefix = "" if row["column"] == "out_of_place" else "ip_"
                assert by_size[row["bytes"]][prefix + row["metric"]] == row["published"], (case["id"], row)
        elif "value" in rec:
            assert rec["value"]["published"] == case["published"], case["id"]
        else:
            assert [r["busbw_gbs"] for r in rec["rows"]] == [case["published"]], case["id"]


def test_curve_rows_are_well_formed():
    for case in fidelity.load_cases()["cases"]:
        if "curve" not in case:
            continue
        sizes = [r["bytes"] for r in case["curve"]]
        assert sizes == sorted(set(sizes)), case["id"]
        assert case["pattern"]["kind"] in ("allreduce", "allgather", "reducescatter", "alltoall", "p2p")
        for row in case["curve"]:
            assert row["metric"] in ("busbw_gbs", "time_us") and row["published"] > 0, (case["id"], row)
            assert row["column"] in ("out_of_place", "in_place") and isinstance(row["bytes"], int) and row["bytes"] > 0


def test_every_record_is_a_case_or_listed_as_not_yet_modelled():
    """docs/FIDELITY.md lists (by record id) every published record that is not a validation
    case, with its reason; none is both."""
    cases = {c["record"] for c in fidelity.load_cases()["cases"] if c["split"] == "validation"}
    listed = set()
    for item in ("\n" + _between(DOC.read_text(encoding="utf-8"), "not-modelled")).split("\n- ")[1:]:
        listed |= set(item.split("—", 1)[0].split("`")[1::2])  # "- `record`, `record` (platform) — reason"
    assert not cases & listed
    assert cases | listed == set(_records())


# ------------------------------------------------------------------ the runner
def _fake_sweep(calls):
    def sweep(topo, op, *, sizes, participants=None, algorithm="auto", gpus_per_thread=1):
        calls.append((op, list(sizes), participants, algorithm))
        # busbw = bytes / 1e7 GB/s, time = 10 µs for every size
        return [{"size_bytes": s, "requested_bytes": s, "busbw_gbs": s / 1e7, "time_us": 10.0,
                 "algorithm": "ring", "protocol": "Simple"} for s in sizes]
    return sweep


def _mini_data():
    single = {"id": "cal-one", "split": "calibration", "class": "bandwidth", "metric": "busbw_gbs", "published": 14.0,
              "source": "s1", "url": "https://s1", "quote": "q", "topology": {"template": "dgx-h100", "hosts": 1},
              "pattern": {"kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 8e9}}
    curve = {"id": "val-curve", "split": "validation", "platform": "P", "source": "s2", "url": "https://s2",
             "quote": "q", "topology": {"template": "dgx-h100", "hosts": 1},
             "pattern": {"kind": "allreduce", "participants": {"kind": "gpu"}, "algorithm": "ring"},
             "curve": [{"bytes": 1000, "metric": "time_us", "published": 8.0, "column": "out_of_place"},
                       {"bytes": 10**9, "metric": "busbw_gbs", "published": 100.0, "column": "out_of_place"},
                       {"bytes": 2 * 10**9, "metric": "busbw_gbs", "published": 250.0, "column": "in_place"}]}
    marked = {**single, "id": "val-marked", "split": "validation", "platform": "Q", "url": "https://s3",
              "published": 7.0, "marks": ["anomalous: degraded run"]}
    return {"tolerances": {"bandwidth": 0.10, "latency": 0.25}, "cases": [single, curve, marked]}


def _fake_simulate(scenario):
    return {"summary": {"patterns": {"case": {"completion_s": 1.0}}}, "flows": []}


def test_run_reports_each_split_on_its_own():
    """8 GPUs, 8e9 B all-reduce in 1 s: busbw 14 (calibration passes; the marked validation
    figure of 7 reads +100 %). The curve: 1000 B in 10 µs against 8 (+25 %, latency: passes at the
    edge), 1e9 B at 100 GB/s (0 %), 2e9 B at 200 against 250 (−20 %)."""
    calls = []
    data = _mini_data()
    figures = fidelity.run(data, simulate_fn=_fake_simulate, sweep_fn=_fake_sweep(calls))
    assert calls == [("all_reduce", [1000, 10**9, 2 * 10**9], {"kind": "gpu"}, "ring")]  # one sweep per curve
    cal, val = figures["splits"]["calibration"], figures["splits"]["validation"]
    assert (cal["figures"], cal["passed"]) == (1, 1) and cal["median_abs_error_bandwidth"] == pytest.approx(0.0)
    assert (val["figures"], val["passed"]) == (4, 2)
    assert [r["split"] for r in figures["cases"]] == ["calibration"] + ["validation"] * 4
    # bandwidth figures of validation: 0, 0.2, 1.0 -> median 0.2; latency 0.25
    assert val["median_abs_error_bandwidth"] == pytest.approx(0.2)
    assert val["median_abs_error_latency"] == pytest.approx(0.25)
    assert val["unmarked"]["figures"] == 3 and val["unmarked"]["median_abs_error_bandwidth"] == pytest.approx(0.1)
    curve = next(c for c in val["per_case"] if c["case"] == "val-curve")
    assert curve["figures"] == 3 and curve["passed"] == 2
    assert curve["median_abs_error"] == pytest.approx(0.2) and curve["worst_abs_error"] == pytest.approx(0.25)
    assert curve["worst_bytes"] == 1000
    assert val["by_platform"]["P"]["figures"] == 3 and val["by_platform"]["Q"]["passed"] == 0
    assert figures["split_problems"] == []
    json.dumps(figures)  # the bench JSON


def test_render_splits_prints_two_tables_with_their_own_counts():
    data = _mini_data()
    figures = fidelity.run(data, simulate_fn=_fake_simulate, sweep_fn=_fake_sweep([]))
    text = fidelity.render_splits(figures)
    cal_part, val_part = text.split("== validation", 1)
    assert "== calibration" in cal_part and "cal-one" in cal_part and "val-curve" not in cal_part
    assert "calibration: 1 of 1 figures within tolerance" in cal_part
    assert "val-curve" in val_part and "cal-one" not in val_part
    assert "validation: 2 of 4 figures within tolerance; median |error| bandwidth 20.0%" in val_part
    assert "without marked figures 2 of 3" in val_part
    assert "SPLIT RULE BROKEN" not in text
    data["cases"][2]["url"] = "https://s1"  # the marked case now shares the calibration case's source
    assert "SPLIT RULE BROKEN" in fidelity.render_splits(fidelity.run(data, simulate_fn=_fake_simulate,
                                                                      sweep_fn=_fake_sweep([])))


def test_a_curve_that_cannot_run_fails_every_row_without_a_number():
    from designer.engine.errors import InvalidWorkload, Problem

    def broken(*args, **kwargs):
        raise InvalidWorkload("collective does not complete", [Problem("topology", "2 flows disconnected")])

    case = _mini_data()["cases"][1]
    rows = fidelity.evaluate_curve(case, fidelity.predict_curve(case, topo=object(), sweep_fn=broken),
                                   {"bandwidth": 0.1, "latency": 0.25})
    assert len(rows) == 3 and all(r["predicted"] is None and r["pass"] is False for r in rows)


def test_a_real_curve_goes_through_predict_sweep():
    """ndmv4-1n8g-all_reduce (one DGX A100, 1 KiB and 1 GiB): the runner's figures are
    predict_sweep's time and busbw at those sizes."""
    from designer.engine.analysis.nccl_tests import predict_sweep

    data = fidelity.load_cases()
    case = next(c for c in data["cases"] if c["id"] == "ndmv4-1n8g-all_reduce")
    figures = fidelity.run(data, only=["ndmv4-1n8g-all_reduce"])
    direct = predict_sweep(fidelity.build_topology(case["topology"]), "all_reduce", sizes=[1024, 1 << 30])
    got = {r["bytes"]: r for r in figures["cases"]}
    assert got[1024]["metric"] == "time_us" and got[1024]["predicted"] == pytest.approx(direct[0]["time_us"])
    assert got[1 << 30]["predicted"] == pytest.approx(direct[1]["busbw_gbs"])
    assert figures["splits"]["validation"]["figures"] == 2 and figures["splits"]["calibration"]["figures"] == 0


# ------------------------------------------------------------------ docs/FIDELITY.md
def test_doc_validation_table_lists_exactly_the_validation_cases():
    data = fidelity.load_cases()
    rows = _table("validation-table")
    validation = [c for c in data["cases"] if c["split"] == "validation"]
    assert set(rows) == {c["id"] for c in validation}
    for case in validation:
        assert rows[case["id"]][:5] == fidelity.validation_doc_columns(case), case["id"]


def test_doc_platform_table_counts_the_case_file_figures():
    data = fidelity.load_cases()
    counts = {}
    for case in data["cases"]:
        if case["split"] == "validation":
            counts[case["platform"]] = counts.get(case["platform"], 0) + fidelity.figure_count(case)
    rows = _table("validation-platforms")
    assert {name: int(cells[1]) for name, cells in rows.items()} == counts
