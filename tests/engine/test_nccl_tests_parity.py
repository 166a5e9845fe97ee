"""nccl-tests parity: every binary, nccl-tests' own size / count / busbw arithmetic (hand-derived
from its ``src/<op>.cu``), its options (``-i -o -r``, GPU / host subsets), NCCL environment
knobs, and its JSON result file read and written.

Clusters: one DGX H100 (8 GPUs, ``one_host``) and two (16 GPUs, rail-optimized, ``two_hosts``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from designer.engine.analysis.nccl_env import parse_env
from designer.engine.analysis.nccl_tests import OPS, compile_topology, predict_sweep, side_by_side
from designer.engine.analysis.nccl_tests_config import prediction_file, sweep_settings
from designer.engine.analysis.nccl_tests_ops import algbw_factor, busbw_factor, elements, sweep_sizes
from designer.engine.errors import ImportFormatError, InvalidScenario
from designer.engine.io.nccl_tests_json import parse_json, parse_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def one_host():
    return compile_topology({"build": {"template": "dgx-h100", "hosts": 1}})


@pytest.fixture(scope="module")
def two_hosts():
    return compile_topology({"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}})


# ------------------------------------------------------------------------ nccl-tests arithmetic
@pytest.mark.parametrize("op, bus, alg", [
    ("all_reduce", 2 * 7 / 8, 1), ("all_gather", 7 / 8, 1), ("reduce_scatter", 7 / 8, 1), ("alltoall", 7 / 8, 1),
    ("sendrecv", 1, 1), ("broadcast", 1, 1), ("reduce", 1, 1), ("gather", 7 / 8, 1), ("scatter", 7 / 8, 1),
    ("hypercube", 1, 7 / 8)])
def test_busbw_and_algbw_factors_per_binary(op, bus, alg):
    """src/<op>.cu GetBw at n = 8: hypercube counts (n−1) per-rank blocks as its algbw."""
    assert busbw_factor(op, 8) == pytest.approx(bus) and algbw_factor(op, 8) == pytest.approx(alg)


def test_sizes_round_to_nccl_tests_blocks():
    """float (4 B), n = 8, requested 1000 B = 250 elements: all_gather 31 per rank (992 B);
    scatter/gather whole 16 B blocks per rank: 31 → 28 elements (896 B); hypercube whole 4-element
    blocks: 28 (896 B); broadcast and reduce keep the whole 250 elements."""
    assert elements("all_gather", 1000, 8, 4) == (992, 31)
    assert elements("scatter", 1000, 8, 4) == elements("gather", 1000, 8, 4) == (896, 28)
    assert elements("hypercube", 1000, 8, 4) == (896, 28)
    assert elements("broadcast", 1000, 8, 4) == elements("reduce", 1000, 8, 4) == (1000, 250)


def test_stepbytes_is_additive_as_nccl_tests_i():
    assert sweep_sizes(1024, 4096, None, 1024) == [1024, 2048, 3072, 4096]
    assert sweep_sizes(1024, 4096, 2, 1024) == [1024, 2048, 4096]        # -f > 1 wins, as nccl-tests
    with pytest.raises(InvalidScenario) as err:
        sweep_sizes(1, 1 << 30, None, 1)
    assert err.value.problems[0].path == "step_bytes"


@pytest.mark.parametrize("op", list(OPS))
def test_every_op_predicts_with_nccl_tests_columns(one_host, op):
    row, = predict_sweep(one_host, op, min_bytes="64M", max_bytes="64M", root=3 if op in
                         ("broadcast", "reduce", "gather", "scatter") else 0, redop="max")
    n = 8
    assert row["time_us"] > 0
    assert row["algbw_gbs"] == pytest.approx(row["size_bytes"] / (row["time_us"] * 1e-6) / 1e9 * algbw_factor(op, n))
    assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"] * busbw_factor(op, n))
    assert row["root"] == (3 if op in ("broadcast", "reduce", "gather", "scatter") else -1)
    assert row["redop"] == ("max" if op in ("all_reduce", "reduce_scatter", "reduce") else "none")


def test_redop_does_not_change_the_time(one_host):
    times = {r: predict_sweep(one_host, "reduce", min_bytes="1M", max_bytes="1M", redop=r)[0]["time_us"]
             for r in ("sum", "prod", "min", "max", "avg")}
    assert len(set(times.values())) == 1


def test_root_and_redop_errors_are_located(one_host):
    for kwargs, path in (({"root": 8}, "root"), ({"redop": "xor"}, "redop")):
        with pytest.raises(InvalidScenario) as err:
            predict_sweep(one_host, "broadcast", min_bytes=8, max_bytes=8, **kwargs)
        assert err.value.problems[0].path == path
    # Like nccl-tests, an op without a root takes -r and prints -1.
    assert predict_sweep(one_host, "all_reduce", min_bytes=8, max_bytes=8, root=2)[0]["root"] == -1


def test_host_subset_takes_that_hosts_gpus(two_hosts):
    settings = sweep_settings(two_hosts, op="all_reduce", hosts="h1")
    out = side_by_side(two_hosts, "all_reduce", min_bytes="1M", max_bytes="1M", **{
        k: v for k, v in settings.items() if k != "env"})
    one = side_by_side(compile_topology({"build": {"template": "dgx-h100", "hosts": 1}}), "all_reduce",
                       min_bytes="1M", max_bytes="1M")
    assert out["ranks"] == 8 and out["rows"][0]["time_us"] == pytest.approx(one["rows"][0]["time_us"], rel=1e-6)
    with pytest.raises(InvalidScenario) as err:
        sweep_settings(two_hosts, op="all_reduce", hosts="h0,h7")
    assert err.value.problems[0].path == "hosts[1]"


# ------------------------------------------------------------------------------ NCCL knobs
def test_env_knobs_map_to_engine_settings():
    env = parse_env(["NCCL_ALGO=Ring", "NCCL_PROTO=simple", "NCCL_MIN_NCHANNELS=4", "NCCL_MAX_NCHANNELS=4",
                     "NCCL_PXN_DISABLE=0", "NCCL_NET_GDR_LEVEL=SYS", "# a comment", ""])
    assert (env["algorithm"], env["protocol"], env["channels"], env["nic_policy"]) == ("ring", "Simple", 4, "pxn")
    assert parse_env(["NCCL_ALGO=^NVLS,NVLSTree"])["algorithms"] == ("ring", "tree", "collnet", "pat")
    assert parse_env(["NCCL_ALGO=CollnetChain"])["algorithm"] == "collnet"
    assert parse_env(["NCCL_NVLS_ENABLE=0", "NCCL_ALGO=Ring,NVLS,Tree"])["algorithms"] == ("ring", "tree")
    assert parse_env(["NCCL_CROSS_NIC=1"])["nic_policy"] == "any"


@pytest.mark.parametrize("items, path, words", [
    (["NCCL_IB_HCA=mlx5_0"], "env[0]", "not modelled (modelled: NCCL_ALGO"),
    (["NCCL_PROTO=LL,Simple"], "env[0]", "give one of"),
    (["NCCL_ALGO=Ring", "NCCL_ALGO=Tree"], "env[1]", "given twice"),
    (["NCCL_ALGO=Ring;allreduce:tree"], "env[0]", "per-collective"),
    (["NCCL_NET_GDR_LEVEL=LOC"], "env[0]", "not modelled"),
    (["NCCL_IB_QPS_PER_CONNECTION=4"], "env[0]", "one path per connection"),
    (["NCCL_PXN_DISABLE=0", "NCCL_CROSS_NIC=1"], "env[1]", "another knob"),
    (["NCCL_MIN_NCHANNELS=2", "NCCL_MAX_NCHANNELS=8"], "env.NCCL_MIN_NCHANNELS", "one channel count"),
    (["NCCL_ALGO=NVLS", "NCCL_NVLS_ENABLE=0"], "env", "leave no algorithm"),
    (["NCCL_ALGO"], "env[0]", "not NAME=VALUE"),
])
def test_bad_knobs_are_located(items, path, words):
    with pytest.raises(InvalidScenario) as err:
        parse_env(items)
    assert any(p.path == path and words in p.message for p in err.value.problems), err.value.problems


def test_knob_and_option_must_agree(one_host):
    with pytest.raises(InvalidScenario) as err:
        sweep_settings(one_host, op="all_reduce", protocol="LL", env=["NCCL_PROTO=Simple"])
    assert err.value.problems[0].path == "protocol"
    with pytest.raises(InvalidScenario) as err:
        sweep_settings(one_host, op="alltoall", env=["NCCL_ALGO=Ring"])
    assert err.value.problems[0].path == "env.NCCL_ALGO"


def test_nvls_disabled_leaves_nccls_choice_among_the_others(one_host):
    """On one H100 host NVLS wins a large all-reduce; NCCL_NVLS_ENABLE=0 leaves NCCL's model to
    choose among the rest — on one host at 1 GiB that is the faster of ring and tree forced one by
    one (where NCCL's model and the engine's speed disagree: test_collectives_chooser.py)."""
    auto = predict_sweep(one_host, "all_reduce", min_bytes="1G", max_bytes="1G")[0]
    assert auto["algorithm"] in ("nvls", "nvlstree")
    env = parse_env(["NCCL_NVLS_ENABLE=0"])
    row = predict_sweep(one_host, "all_reduce", min_bytes="1G", max_bytes="1G", algorithms=env["algorithms"])[0]
    forced = [predict_sweep(one_host, "all_reduce", min_bytes="1G", max_bytes="1G", algorithm=a)[0]
              for a in ("ring", "tree")]
    best = min(forced, key=lambda r: r["time_us"])
    assert (row["algorithm"], row["time_us"]) == (best["algorithm"], pytest.approx(best["time_us"]))


# ---------------------------------------------------------------------------- JSON results
def _prediction(topo, op="broadcast"):
    out = side_by_side(topo, op, min_bytes="1M", max_bytes="16M", factor=4, root=2)
    out["env"] = ["NCCL_PROTO=Simple"]
    return out, prediction_file(topo, out, min_bytes=1 << 20, max_bytes=16 << 20, factor=4)


def test_json_round_trip_keeps_sizes_times_and_busbw(one_host):
    out, doc = _prediction(one_host)
    parsed = parse_run(json.dumps(doc))
    assert parsed.op == "broadcast" and parsed.ranks == 8
    assert [r["size_bytes"] for r in parsed.rows] == [r["size_bytes"] for r in out["rows"]]
    for got, want in zip(parsed.rows, out["rows"]):
        side = got["out_of_place"]
        assert (side["time_us"], side["algbw_gbs"], side["busbw_gbs"]) == (
            want["time_us"], want["algbw_gbs"], want["busbw_gbs"])
        assert (got["count"], got["type"], got["redop"], got["root"]) == (want["count"], "float", "none", 2)
    assert parsed.avg_busbw_gbs == pytest.approx(sum(r["busbw_gbs"] for r in out["rows"]) / len(out["rows"]))
    again = side_by_side(one_host, "all_reduce", min_bytes=8, max_bytes=8, log=json.dumps(doc), root=2)
    assert again["op"] == "broadcast" and all(r["error_pct"] == pytest.approx(0.0) for r in again["comparison"])


def test_json_reads_nccl_tests_own_spellings():
    """nccl-tests writes root as a padded string, NaN as "nan", cpu_time with -C 1, null sides."""
    doc = {"version": 2, "args": ["/opt/nccl-tests/build/all_gather_perf", "-b", "8"],
           "config": {"nthreads": 1, "ngpus": 8, "devices": [{"rank": 0}, {"rank": 8}]},
           "results": [{"size": 1024, "count": 16, "type": "float", "redop": "none", "root": "    -1",
                        "out_of_place": None,
                        "in_place": {"cpu_time": 12.5, "alg_bw": 0.08, "bus_bw": "nan", "nwrong": 0.0}}],
           "average_bus_bandwidth": {"bandwidth": 0.07, "okay": "unchecked"}}
    parsed = parse_json(json.dumps(doc))
    assert (parsed.op, parsed.ranks, parsed.avg_busbw_gbs) == ("all_gather", 16, 0.07)
    row = parsed.rows[0]
    assert row["root"] == -1 and row["out_of_place"] is None
    assert row["in_place"] == {"time_us": 12.5, "algbw_gbs": 0.08, "busbw_gbs": None, "wrong": 0.0}


@pytest.mark.parametrize("text, path, words", [
    ("{not json", "line 1", "not valid JSON"),
    ("[1, 2]", "input", "JSON object"),
    ('{"results": []}', "results", "non-empty list"),
    ('{"results": [{"size": "8", "count": 2, "type": "float", "out_of_place": {"time": "x", "alg_bw": 1, '
     '"bus_bw": 1}}]}', "results[0].out_of_place.time", "must be a number"),
    ('{"results": [{"size": 8.5, "count": 2, "type": "float", "out_of_place": null}]}', "results[0].size",
     "integer"),
    ('{"results": [{"size": 8, "count": 2, "type": "float"}]}', "results[0]", "neither out_of_place"),
    ('{"results": [{"size": 8, "count": 2, "type": 4, "in_place": {"time": 1, "alg_bw": 1, "bus_bw": 1}}]}',
     "results[0].type", "must be a string"),
    ('{"config": {"ngpus": 0, "devices": [{}]}, "results": [{"size": 8, "count": 2, "type": "float", '
     '"in_place": {"time": 1, "alg_bw": 1, "bus_bw": 1}}]}', "config.ngpus", ">= 1"),
])
def test_bad_json_is_located(text, path, words):
    with pytest.raises(ImportFormatError) as err:
        parse_json(text)
    assert any(p.path == path and words in p.message for p in err.value.problems), err.value.problems


# ------------------------------------------------------------------------------------ CLI
def cli(*args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "designer.engine", "nccl-tests", *args], cwd=ROOT, env=env,
                          capture_output=True, check=False, text=True, timeout=600)


def test_cli_every_op_json_round_trip_and_env_errors(tmp_path):
    ops = ",".join(OPS)
    for op in ops.split(","):
        proc = cli("--template", "dgx-h100", "--op", op, "-b", "1M", "-e", "2M", "-r", "1", "-o", "min")
        assert proc.returncode == 0, (op, proc.stderr)
        rows = [line.split() for line in proc.stdout.splitlines() if line and not line.startswith("#")]
        assert len(rows) == 2 and all(len(r) == 10 for r in rows)
    path = tmp_path / "pred.json"
    proc = cli("--template", "dgx-h100", "--op", "scatter", "-b", "1M", "-e", "3M", "-i", "1M", "-r", "2",
               "--env", "NCCL_PROTO=Simple", "--output-json", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    engine = json.loads(proc.stdout)
    written = json.loads(path.read_text())
    assert written["env"] == ["NCCL_PROTO=Simple"] and written["config"]["step_bytes"] == 1 << 20
    assert [r["size"] for r in written["results"]] == [r["size_bytes"] for r in engine["rows"]]
    assert [r["out_of_place"]["bus_bw"] for r in written["results"]] == [r["busbw_gbs"] for r in engine["rows"]]
    proc = cli("--template", "dgx-h100", "--op", "scatter", "-b", "1M", "-e", "3M", "-i", "1M", "-r", "2",
               "--env", "NCCL_PROTO=Simple", "--compare", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "# curve: 3 sizes, 3 within" in proc.stdout
    proc = cli("--template", "dgx-h100", "--env", "NCCL_SOCKET_IFNAME=eth0")
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[0].startswith("error: env[0]: NCCL_SOCKET_IFNAME is not modelled")
