"""nccl-tests side by side: the stdout parser on published logs and on garbage, predicted sweeps
(sizes, counts, nccl-tests' busbw factors), the comparison, and the CLI's table layout.

Fixtures (tests/engine/data/nccl_tests/, each header says which GitHub issue it comes from):

- ``all_reduce_2x_hgx_h100_nccl_tests_319.txt``: 13 columns, 10 rows 32 MiB … 16 GiB, an
  interleaved ``NCCL INFO`` line (``nranks 16``), the ``# Avg bus bandwidth`` trailer;
- ``all_gather_2gpu_bf16_nccl_1435.txt``: the binary named on a command line, bfloat16, 7 rows;
- ``all_reduce_mpi_prefixed_nccl_1453.txt``: ``[0]`` launcher tags glued inside every row;
- ``all_reduce_2x_h20_12col_nccl_1244.txt``: an older 12-column layout (no ``root``) with a
  floating-point ``error`` column.

Topology of the sweep tests: one DGX H100 (8 ranks) — every GPU has 18 NVLink 4 links, 4 to 5
to each of 4 NVSwitches::

    [gpu0] [gpu1] ... [gpu7]
       \\\\     ||         //
     [nvswitch0..nvswitch3]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.engine.errors import (
    EngineError,
    ImportFormatError,
    InvalidScenario,
    InvalidWorkload,
)
from designer.engine.analysis.nccl_tests import (
    busbw_factor,
    compare,
    curve_summary,
    compile_topology,
    parse_size,
    predict_sweep,
    side_by_side,
    sweep_sizes,
)
from designer.engine.io.nccl_tests_log import parse_log

DATA = Path(__file__).parent / "data" / "nccl_tests"
ROOT = Path(__file__).resolve().parents[2]


def fixture(name: str) -> str:
    return (DATA / name).read_text()


@pytest.fixture(scope="module")
def one_host():
    return compile_topology({"build": {"template": "dgx-h100", "hosts": 1}})


# ------------------------------------------------------------------------------------ parser
def test_parse_published_all_reduce_with_info_line_and_trailer():
    log = parse_log(fixture("all_reduce_2x_hgx_h100_nccl_tests_319.txt"), op="all_reduce")
    assert log.op == "all_reduce" and log.columns == 13
    assert log.ranks == 16                                  # "nranks 16" of the NCCL INFO line
    assert log.avg_busbw_gbs == pytest.approx(20.017)
    assert [r["size_bytes"] for r in log.rows] == [2 ** k for k in range(25, 35)]
    first, last = log.rows[0], log.rows[-1]
    assert (first["count"], first["type"], first["redop"], first["root"]) == (8388608, "float", "sum", -1)
    assert first["out_of_place"] == {"time_us": 1543.4, "algbw_gbs": 21.74, "busbw_gbs": 40.76, "wrong": 0}
    assert last["in_place"]["time_us"] == 729105.0 and last["line"] == 19
    for r in log.rows:   # the published numbers obey nccl-tests' definitions: algbw = S / t
        oop = r["out_of_place"]
        assert oop["algbw_gbs"] == pytest.approx(r["size_bytes"] / oop["time_us"] / 1e3, rel=0.01)
        assert oop["busbw_gbs"] == pytest.approx(oop["algbw_gbs"] * busbw_factor("all_reduce", 16), rel=0.01)


def test_parse_all_gather_names_its_binary_and_keeps_per_rank_counts():
    log = parse_log(fixture("all_gather_2gpu_bf16_nccl_1435.txt"), op="all_reduce")
    assert log.op == "all_gather"                          # the command line wins over the default
    assert len(log.rows) == 7 and {r["type"] for r in log.rows} == {"bfloat16"}
    assert all(r["redop"] == "none" for r in log.rows)
    for r in log.rows:   # 2 ranks: busbw = algbw × (2−1)/2; count per rank = size / 2 B / 2 ranks
        assert r["count"] * 2 * 2 == r["size_bytes"]
        assert r["out_of_place"]["busbw_gbs"] == pytest.approx(r["out_of_place"]["algbw_gbs"] / 2, abs=0.01)


def test_parse_launcher_tags_glued_inside_rows():
    log = parse_log(fixture("all_reduce_mpi_prefixed_nccl_1453.txt"), op="all_reduce")
    assert [r["size_bytes"] for r in log.rows] == [2 ** k for k in range(20, 30)]
    assert log.rows[0]["out_of_place"]["time_us"] == 1626.5 and log.rows[0]["in_place"]["busbw_gbs"] == 0.87


def test_parse_twelve_column_layout_with_float_error_column():
    log = parse_log(fixture("all_reduce_2x_h20_12col_nccl_1244.txt"), op="all_reduce")
    assert log.columns == 12 and len(log.rows) == 8
    assert all(r["root"] is None and r["redop"] == "sum" for r in log.rows)
    assert log.rows[0]["in_place"]["wrong"] == pytest.approx(4e-07)
    assert log.rows[0]["size_bytes"] == 4 and log.rows[0]["count"] == 1


def test_row_split_by_debug_output_is_joined():
    text = ("#  Rank  0 Group  0 Pid 1 on n0 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
            "#  Rank  1 Group  0 Pid 2 on n0 device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
            "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
            "[0]   8192   2048   float   sum   -1[0] w1:497888:497888 [0] NCCL INFO 8192 Bytes -> Algo 0 proto 0\n"
            "[0] w1:497888:497888 [0] NCCL INFO 8192 Bytes -> Algo 0 proto 0 time 26.549810\n"
            "[0]     75.38    0.11    0.11      0[0] w1:497888:497888 [0] NCCL INFO more\n"
            "[0]     74.12    0.11    0.11    N/A\n")
    log = parse_log(text, op="all_reduce")
    assert log.ranks == 2
    (row,) = log.rows
    assert row["size_bytes"] == 8192 and row["line"] == 4
    assert row["out_of_place"]["time_us"] == 75.38 and row["in_place"]["time_us"] == 74.12
    assert row["in_place"]["wrong"] is None                # N/A


@pytest.mark.parametrize("text, message", [
    ("hello\nworld\n", "log: no result rows found"),
    (("#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "8 2 float sum -1 1.0 0 0 0 1.0 0 0 0\n16 4 float sum\n32 8 float sum -1 1 0 0 0 1 0 0 0\n"),
     "line 3: expected 13 columns, got 4"),
    ("8 2 float sum -1 abc 0.00 0.00 0 1.0 0.00 0.00 0\n", "line 1: column time: expected a number, got 'abc'"),
    ("# size count type redop root algbw\n", "line 1: column header without time and busbw"),
])
def test_garbage_is_a_located_error(text, message):
    with pytest.raises(ImportFormatError) as exc:
        parse_log(text)
    assert any(line.startswith(message) for line in exc.value.lines()), exc.value.lines()


# ------------------------------------------------------------------------------------ sizes
def test_sizes_follow_nccl_tests_loop():
    assert parse_size("8G") == 8 * 2 ** 30 and parse_size("64K") == 65536 and parse_size(8) == 8
    sizes = sweep_sizes(8, parse_size("8G"), 2)
    assert len(sizes) == 31 and sizes[0] == 8 and sizes[-1] == 2 ** 33
    assert sweep_sizes(1000, 9000, 3) == [1000, 3000, 9000]
    with pytest.raises(InvalidScenario) as exc:
        parse_size("8X", "min_bytes")
    assert exc.value.lines() == ["min_bytes: bad size '8X' (like 8, 64K, 8M, 8G)"]
    with pytest.raises(InvalidScenario) as exc:
        sweep_sizes(64, 8, 1)
    assert {p.path for p in exc.value.problems} == {"factor", "max_bytes"}


# ------------------------------------------------------------------------------------ predictions
def test_all_reduce_sweep_rows_obey_nccl_tests_definitions(one_host):
    rows = predict_sweep(one_host, "all_reduce", min_bytes=8, max_bytes="8G")
    assert len(rows) == 31
    assert [r["size_bytes"] for r in rows] == [8 * 2 ** k for k in range(31)]
    for r in rows:
        assert r["count"] == r["size_bytes"] // 4 and (r["type"], r["redop"], r["root"]) == ("float", "sum", -1)
        assert r["time_us"] > 0
        assert r["algbw_gbs"] == pytest.approx(r["size_bytes"] / (r["time_us"] * 1e-6) / 1e9, rel=1e-9)
        assert r["busbw_gbs"] == pytest.approx(r["algbw_gbs"] * 2 * 7 / 8, rel=1e-9)   # 2(n−1)/n, n = 8
    busbw = [r["busbw_gbs"] for r in rows]
    assert busbw == sorted(busbw)                # latency amortizes: never worse with more bytes
    # 8 GiB is bandwidth-bound: no faster than NVLink 4's 450 GB/s per direction allows a ring
    # (busbw ≤ 450), unless the engine picked in-switch reduction (NVLS), which NCCL reports
    # above the wire rate (~480, NVIDIA/nccl-tests#212).
    assert busbw[-1] <= 450 or rows[-1]["algorithm"] == "nvls"


@pytest.mark.parametrize("op, factor", [("all_gather", 7 / 8), ("reduce_scatter", 7 / 8), ("alltoall", 7 / 8)])
def test_gathered_ops_round_sizes_to_whole_blocks_per_rank(one_host, op, factor):
    rows = predict_sweep(one_host, op, min_bytes=8, max_bytes="1M", factor=4)
    requested = [8 * 4 ** k for k in range(len(rows))]
    for r, asked in zip(rows, requested):
        per_rank = asked // 4 // 8                  # float elements per rank, 8 ranks
        assert (r["size_bytes"], r["count"]) == (per_rank * 8 * 4, per_rank)
        assert r["requested_bytes"] == asked
        if r["size_bytes"]:
            assert r["busbw_gbs"] == pytest.approx(r["algbw_gbs"] * factor, rel=1e-9)
        else:
            assert r["algbw_gbs"] == r["busbw_gbs"] == 0.0
    assert rows[0]["size_bytes"] == 0 and rows[-1]["size_bytes"] == 2 ** 19   # 8 B < one float per rank


def test_sendrecv_busbw_is_algbw(one_host):
    rows = predict_sweep(one_host, "sendrecv", min_bytes="1M", max_bytes="4M")
    assert [r["redop"] for r in rows] == ["none"] * 3
    assert all(r["busbw_gbs"] == pytest.approx(r["algbw_gbs"]) for r in rows)


def test_bad_arguments_are_located(one_host):
    with pytest.raises(InvalidScenario) as exc:
        predict_sweep(one_host, "bcast", min_bytes=8, max_bytes=64, dtype="float7")
    assert {p.path for p in exc.value.problems} == {"op", "dtype"}
    with pytest.raises(EngineError) as exc:
        predict_sweep(one_host, "all_reduce", min_bytes=8, max_bytes=64, algorithm="warp-drive")
    assert [p.path for p in exc.value.problems] == ["algorithm"]
    with pytest.raises(InvalidWorkload) as exc:
        predict_sweep(one_host, "all_reduce", min_bytes=8, max_bytes=64, participants={"ids": ["h0/gpu0"]})
    assert exc.value.lines() == ["participants: nccl-tests needs at least 2 ranks"]


def test_compare_per_size_error():
    measured = [{"size_bytes": 1024, "count": 256, "out_of_place": {"time_us": 10.0, "algbw_gbs": 0.1024,
                                                                    "busbw_gbs": 0.2}},
                {"size_bytes": 4096, "count": 1024, "out_of_place": {"time_us": 20.0, "algbw_gbs": 0.2,
                                                                     "busbw_gbs": None}},
                {"size_bytes": 99, "count": 1, "out_of_place": {"time_us": 1.0, "algbw_gbs": 0, "busbw_gbs": 0}}]
    predicted = [{"size_bytes": 1024, "time_us": 8.0, "algbw_gbs": 0.128, "busbw_gbs": 0.25, "algorithm": "ring"},
                 {"size_bytes": 4096, "time_us": 30.0, "algbw_gbs": 0.1, "busbw_gbs": 0.2, "algorithm": "ring"}]
    table = compare(measured, predicted)
    assert [c["size_bytes"] for c in table] == [1024, 4096]          # 99 B was not predicted
    assert table[0]["error_pct"] == pytest.approx(25.0) and table[0]["time_error_pct"] == pytest.approx(-20.0)
    assert table[1]["error_pct"] is None and table[1]["time_error_pct"] == pytest.approx(50.0)


def test_curve_summary_names_median_worst_and_within():
    # errors +25, -5, +8, None (no busbw), -40 %: 4 with an error; |e| sorted 5, 8, 25, 40
    # -> median (8 + 25) / 2 = 16.5; worst 40 at 4 KiB; within ±10 %: 5 and 8 -> 2.
    def row(size, err, terr):
        return {"size_bytes": size, "error_pct": err, "time_error_pct": terr}
    table = [row(1024, 25.0, -20.0), row(2048, -5.0, 5.0), row(3072, 8.0, -7.0), row(3584, None, 1.0),
             row(4096, -40.0, 66.0)]
    curve = curve_summary(table)
    assert (curve["sizes"], curve["within"], curve["tolerance_pct"]) == (4, 2, 10.0)
    assert curve["median_abs_error_pct"] == pytest.approx(16.5)
    assert (curve["worst_abs_error_pct"], curve["worst_size_bytes"]) == (40.0, 4096)
    assert curve["median_abs_time_error_pct"] == pytest.approx(7.0)     # 1, 5, 7, 20, 66
    empty = curve_summary([])
    assert empty["sizes"] == 0 and empty["median_abs_error_pct"] is None and empty["worst_size_bytes"] is None


def test_side_by_side_predicts_at_the_runs_sizes(one_host):
    out = side_by_side(one_host, "all_reduce", min_bytes="1M", max_bytes="2M",
                       log=fixture("all_gather_2gpu_bf16_nccl_1435.txt"))
    assert out["op"] == "all_gather" and out["ranks"] == 8 and len(out["rows"]) == 2
    assert [c["size_bytes"] for c in out["comparison"]] == [r["size_bytes"] for r in out["measured"]]
    for c in out["comparison"]:
        m, p = c["measured"]["busbw_gbs"], c["predicted"]["busbw_gbs"]
        assert c["error_pct"] == pytest.approx(100 * (p - m) / m)


# ------------------------------------------------------------------------------------ CLI
def cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "designer.engine", "nccl-tests", *args], cwd=ROOT, env=env,
                          capture_output=True, check=False, text=True, timeout=300)


def test_cli_prints_nccl_tests_layout():
    proc = cli("--template", "dgx-h100", "--hosts", "2", "--op", "all_reduce", "--min-bytes", "8",
               "--max-bytes", "8G", "--factor", "2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if line.startswith("#") and "size" in line)
    assert header.split()[1:] == ["size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                                  "algorithm", "protocol"]
    rows = [line.split() for line in lines if line and not line.startswith("#")]
    assert len(rows) == 31 and all(len(r) == 10 for r in rows)
    assert [int(r[0]) for r in rows] == [8 * 2 ** k for k in range(31)]
    assert rows[0][1:5] == ["2", "float", "sum", "-1"]
    assert lines[-1].startswith("# Avg bus bandwidth")


def test_cli_compare_and_json():
    log = str(DATA / "all_reduce_2x_hgx_h100_nccl_tests_319.txt")
    proc = cli("--template", "dgx-h100", "--hosts", "2", "--compare", log)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line and not line.startswith("#")]
    assert len(rows) == 10 and rows[0][:5] == ["33554432", "8388608", "1543.4", "21.74", "40.76"]
    predicted_busbw, error = float(rows[0][7]), float(rows[0][8])
    assert error == pytest.approx(100 * (predicted_busbw - 40.76) / 40.76, abs=0.1)
    errors = sorted(abs(float(r[8])) for r in rows)
    trailer = proc.stdout.splitlines()[-1]
    assert trailer.startswith("# curve: 10 sizes, ") and trailer.endswith(" at 17179869184 B")
    assert float(trailer.split("worst ")[1].split(" %")[0]) == pytest.approx(errors[-1], abs=0.1)
    median = float(trailer.split("median |error| ")[1].split(" %")[0])
    assert median == pytest.approx((errors[4] + errors[5]) / 2, abs=0.1)    # rows print 1 decimal
    proc = cli("--template", "dgx-h100", "--hosts", "2", "-b", "1M", "-e", "4M", "--json")
    out = json.loads(proc.stdout)
    assert out["ranks"] == 16 and [r["size_bytes"] for r in out["rows"]] == [2 ** 20, 2 ** 21, 2 ** 22]


def test_cli_errors_are_one_line():
    proc = cli("--template", "dgx-h100", "--min-bytes", "8X")
    assert proc.returncode == 1 and proc.stderr.strip() == "error: min_bytes: bad size '8X' (like 8, 64K, 8M, 8G)"
    proc = cli("--template", "dgx-h100", "--compare", str(DATA / "README-does-not-exist.txt"))
    assert proc.returncode == 1 and "no such file" in proc.stderr and "Traceback" not in proc.stderr


# ------------------------------------------------------------ protocol, channels, several runs
@pytest.fixture(scope="module")
def two_hosts():
    """Two DGX H100 on a rail-optimized fabric: 8 NICs of 400 Gb/s (50 GB/s) a host, one per rail.

        [h0: gpu0..7, nic0..7] ==rail c, 400G== [leaf c] ==400G== [h1: gpu0..7, nic0..7]
    """
    return compile_topology({"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}})


def test_protocol_is_forced_at_every_size(one_host):
    """Forcing a protocol (NCCL_PROTO) reaches every size: the engine's own choice is LL at 8 B
    and Simple at 8 MiB, so "auto" differs from both forced sweeps somewhere."""
    auto = predict_sweep(one_host, "all_reduce", min_bytes="8", max_bytes="8M", factor=1024)
    assert {r["protocol"] for r in auto} == {"LL", "Simple"}
    for protocol in ("LL", "Simple"):
        rows = predict_sweep(one_host, "all_reduce", min_bytes="8", max_bytes="8M", factor=1024, protocol=protocol)
        assert [r["protocol"] for r in rows] == [protocol] * 3
    ll = predict_sweep(one_host, "all_reduce", min_bytes="8M", max_bytes="8M", protocol="LL")[0]
    assert ll["busbw_gbs"] < auto[-1]["busbw_gbs"]       # LL's bandwidth is a fraction of Simple's


def test_one_channel_across_hosts_runs_at_one_nics_rate(two_hosts):
    """A ring all-reduce of 1 GiB pinned to 1 channel crosses the fabric on one rail: busbw is
    bounded by one NIC, 50 GB/s, and 2 channels (two rails) double it; the default count (one
    per rail and more) beats both."""
    def busbw(channels):
        return predict_sweep(two_hosts, "all_reduce", min_bytes="1G", max_bytes="1G", algorithm="ring",
                             channels=channels)[0]["busbw_gbs"]

    one, two, default = busbw(1), busbw(2), busbw(None)
    assert 40 < one <= 50
    assert two == pytest.approx(2 * one, rel=0.05)
    assert default > 4 * one


def test_knobs_an_op_does_not_take_are_located(one_host):
    with pytest.raises(InvalidScenario) as exc:
        predict_sweep(one_host, "alltoall", min_bytes="8", max_bytes="8", channels=4)
    assert [p.path for p in exc.value.problems] == ["channels"] and "alltoall" in exc.value.problems[0].message
    with pytest.raises(InvalidScenario) as exc:
        predict_sweep(one_host, "all_reduce", min_bytes="8", max_bytes="8", channels=33, protocol="LL64")
    assert sorted(p.path for p in exc.value.problems) == ["channels", "protocol"]
    with pytest.raises(InvalidScenario) as exc:
        predict_sweep(one_host, "sendrecv", min_bytes="8", max_bytes="8", protocol="LL")
    assert [p.path for p in exc.value.problems] == ["protocol"]


def test_several_runs_overlay_one_prediction(one_host):
    """Two runs of one all-reduce (the same 10 sizes, one of them cut to its first 4 rows): one
    run entry each, named, compared at its own sizes, and the top-level fields are the first's."""
    full = fixture("all_reduce_2x_hgx_h100_nccl_tests_319.txt")
    head = parse_log(full, op="all_reduce")
    short = type(head)(op=head.op, rows=head.rows[:4], ranks=head.ranks)
    out = side_by_side(one_host, "all_reduce", min_bytes="1G", max_bytes="1G",
                       logs=[("run-a.txt", full), ("run-b.txt", short)])
    assert [r["name"] for r in out["runs"]] == ["run-a.txt", "run-b.txt"]
    assert [len(r["comparison"]) for r in out["runs"]] == [10, 4]
    rows = {c["size_bytes"]: c["predicted"] for c in out["runs"][0]["comparison"]}
    for c in out["runs"][1]["comparison"]:          # one prediction, shared by both runs
        assert c["predicted"] == rows[c["size_bytes"]]
    assert out["comparison"] == out["runs"][0]["comparison"] and out["curve"]["sizes"] == 10


def test_runs_of_different_collectives_are_refused(one_host):
    with pytest.raises(InvalidScenario) as exc:
        side_by_side(one_host, "all_reduce", min_bytes="1M", max_bytes="1M",
                     logs=[("ar.txt", fixture("all_reduce_2x_hgx_h100_nccl_tests_319.txt")),
                           ("ag.txt", fixture("all_gather_2gpu_bf16_nccl_1435.txt"))])
    problem = exc.value.problems[0]
    assert problem.path == "log" and "ag.txt" in problem.message and "ar.txt" in problem.message


def test_cli_takes_protocol_channels_and_several_logs():
    log = str(DATA / "all_reduce_2x_hgx_h100_nccl_tests_319.txt")
    proc = cli("--template", "dgx-h100", "--hosts", "2", "--protocol", "Simple", "--channels", "8",
               "--compare", log, log)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("# measured: ") == 2 and proc.stdout.count("# curve: 10 sizes") == 2
    assert "protocol Simple, 8 channels" in proc.stdout
    proc = cli("--template", "dgx-h100", "-b", "8", "-e", "64", "--protocol", "LL", "--json")
    assert {r["protocol"] for r in json.loads(proc.stdout)["rows"]} == {"LL"}
