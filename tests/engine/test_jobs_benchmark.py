"""The jobs target: one step of a Llama-3-70B-class job, TP 8 × PP 4 × DP 32 on the 1,024
GPUs of 128 DGX-H100 (rail-optimized, 4 leaves per rail), simulates in ≤ 30 s on this machine,
with a step whose time, compute and exposed communication add up.

The benchmark itself is ``python -m designer.engine bench --only simulate.llama3_70b_step_1024``
(docs/PERFORMANCE.md: 2.3 s); this test runs the same function once and bounds its CPU time, so a
regression that makes the step loop quadratic fails here, not only in a benchmark nobody reran.
"""
import pytest

from designer.engine.benchmarks.simulate import bench_llama3_70b_step

pytestmark = pytest.mark.slow        # ~6 s: builds and routes the 1,024-GPU cluster


@pytest.fixture(scope="module")
def bench():
    return bench_llama3_70b_step()


def test_llama3_70b_step_on_1024_gpus_within_30_s(bench):
    assert bench["cpu_s"] <= 30.0, bench
    # GPipe, 8 micro-batches × 4 stages: forward, comm and send phases per (micro-batch, stage),
    # the same backward, 4 DP phases and the step: 8·4·3·2 + 4 + 1 = 197.
    assert bench["phases"] == 197
    assert bench["flows"] > 0 and bench["events"] > bench["phases"]
    assert bench["step_time_s"] > bench["compute_s"] > 0
    # Every instant of the step computes or communicates (no idle gap in this schedule), so the
    # step is the compute time plus the communication that compute does not hide.
    assert bench["step_time_s"] == pytest.approx(bench["compute_s"] + bench["exposed_communication_s"], rel=1e-9)
