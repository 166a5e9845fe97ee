"""One host thread issuing a collective on several GPUs (nccl-tests ``-g N``): the loop's time per
operation is at least N × ``SERIAL_LAUNCH_NS`` (:mod:`designer.engine.traffic.collectives.launch`),
with hand-derived numbers.

Topology: one DGX A100 — ``[gpu0..gpu7] ==12 × NVLink 3== [6 NVSwitches]``.

Without the floor, an 8-byte ring LL all-reduce on 8 ranks is NCCL's tuner latency:
``baseLat 6.6 + 2(n−1) × hwLat 0.6 = 6.6 + 14 × 0.6 = 15.0 µs`` (src/graph/tuning.cc, NVLink
ring LL). One thread issuing it on 8 GPUs: ``8 × 4.2 = 33.6 µs`` (NVIDIA/nccl-tests#123: 33.7 µs
measured on a DGX A100 with ``-g 8``). On 4 of the GPUs: ``max(6.6 + 6 × 0.6, 4 × 4.2) = 16.8 µs``
(measured 16.88). At 1 GiB the GPUs' time (milliseconds) is far above either floor.
"""
import pytest

from designer.engine.analysis.nccl_tests import predict_sweep
from designer.engine.analysis.simulate import simulate
from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.errors import InvalidScenario, InvalidWorkload
from designer.engine.model.hop_latency import SERIAL_LAUNCH_NS, serial_issue_s

GIB = 2**30


@pytest.fixture(scope="module")
def a100():
    return build_topology({"template": "dgx-a100", "hosts": 1})


def _time_us(topo, size, gpus=None, **extra):
    pattern = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "bytes": size,
               "participants": {"ids": gpus} if gpus else {"kind": "gpu"}, **extra}
    entry = simulate({"topology": topo, "workload": [pattern]})["summary"]["patterns"]["ar"]
    return entry["completion_s"] * 1e6, entry["protocol"]


def test_issue_time_per_gpu_is_the_measured_step():
    assert SERIAL_LAUNCH_NS == 4200.0
    assert serial_issue_s(1) == 0.0          # one GPU a thread: NCCL's own launch latency covers it
    assert serial_issue_s(8) == pytest.approx(33.6e-6)


def test_eight_gpus_on_one_thread_take_eight_issues(a100):
    alone, protocol = _time_us(a100, 8)
    assert protocol == "LL" and alone == pytest.approx(15.0, abs=0.05)
    one_thread, _ = _time_us(a100, 8, gpus_per_thread=8)
    assert one_thread == pytest.approx(33.6, abs=1e-6)


def test_four_gpus_floor_above_the_gpu_time(a100):
    four = [f"h0/gpu{i}" for i in range(4)]
    alone, _ = _time_us(a100, 8, four)
    assert alone == pytest.approx(6.6 + 6 * 0.6, abs=0.05)
    one_thread, _ = _time_us(a100, 8, four, gpus_per_thread=4)
    assert one_thread == pytest.approx(16.8, abs=1e-6)


def test_large_messages_are_gpu_bound(a100):
    alone, _ = _time_us(a100, GIB)
    one_thread, _ = _time_us(a100, GIB, gpus_per_thread=8)
    assert alone > 1000 and one_thread == pytest.approx(alone, rel=1e-12)


@pytest.mark.parametrize("value, message", [
    (0, "must be an integer >= 1"), (1.5, "must be an integer >= 1"), (True, "must be an integer >= 1"),
    (9, "9 GPUs per thread, but the pattern has 8 participants"),
])
def test_bad_gpus_per_thread_is_a_located_error(a100, value, message):
    with pytest.raises(InvalidWorkload) as exc:
        _time_us(a100, 8, gpus_per_thread=value)
    problem = next(p for p in exc.value.problems if p.path.endswith("gpus_per_thread"))
    assert problem.path == "workload[0].gpus_per_thread" and message in problem.message


def test_not_a_field_of_point_to_point_patterns(a100):
    with pytest.raises(InvalidWorkload):
        simulate({"topology": a100, "workload": [{"kind": "p2p", "src": {"ids": ["h0/gpu0"]},
                                                  "dst": {"ids": ["h0/gpu1"]}, "bytes": 8, "gpus_per_thread": 2}]})


def test_nccl_tests_sweep_takes_g(a100):
    rows = predict_sweep(a100, "all_reduce", sizes=[8, GIB], algorithm="ring", channels=1, gpus_per_thread=8)
    assert rows[0]["time_us"] == pytest.approx(33.6, abs=1e-6)
    plain = predict_sweep(a100, "all_reduce", sizes=[GIB], algorithm="ring", channels=1)
    assert rows[1]["time_us"] == pytest.approx(plain[0]["time_us"], rel=1e-12)
    with pytest.raises(InvalidScenario) as exc:
        predict_sweep(a100, "sendrecv", sizes=[8], gpus_per_thread=2)
    assert exc.value.problems[0].path == "gpus_per_thread"


def test_cli_takes_g_like_nccl_tests():
    """``nccl-tests -g 8`` on one DGX A100: the 8-byte row reads 8 × 4.2 = 33.6 µs and the title says -g."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "designer.engine", "nccl-tests", "--template", "dgx-a100",
                           "-b", "8", "-e", "8", "-g", "8"], cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                          capture_output=True, check=False, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    title = proc.stdout.splitlines()[0]
    row = next(line.split() for line in proc.stdout.splitlines() if line and not line.startswith("#"))
    assert title.endswith(", -g 8") and float(row[5]) == pytest.approx(33.6)
