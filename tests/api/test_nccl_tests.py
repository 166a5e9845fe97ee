"""``POST /api/v1/topologies/<id>/nccl-tests/`` × roles, the comparison with a published run,
and located errors (sizes, a log that is not nccl-tests output, topologies over the inline limit).

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs = 16 ranks), rail-optimized, 1 storage::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db

LOG = (Path(__file__).resolve().parents[1] / "engine" / "data" / "nccl_tests"
       / "all_reduce_2x_hgx_h100_nccl_tests_319.txt").read_text()
BODY = {"op": "all_reduce", "min_bytes": "1M", "max_bytes": "8M", "factor": 2}


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/nccl-tests/"


def test_owner_gets_rows_in_nccl_tests_terms(api, small_topology):
    r = api.post(url(small_topology), BODY, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["op"] == "all_reduce" and body["ranks"] == 16 and body["comparison"] == []
    rows = body["rows"]
    assert [row["size_bytes"] for row in rows] == [2 ** 20, 2 ** 21, 2 ** 22, 2 ** 23]
    for row in rows:   # nccl-tests' definitions: algbw = S / t, busbw = algbw × 2(n−1)/n
        assert row["count"] == row["size_bytes"] // 4
        assert row["algbw_gbs"] == pytest.approx(row["size_bytes"] / row["time_us"] / 1e3, rel=1e-6)
        assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"] * 2 * 15 / 16, rel=1e-6)


def test_viewer_compares_with_a_published_run(client_for, small_topology, user, other_user):
    from designer import services

    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    r = client_for(other_user).post(url(small_topology), {**BODY, "log": LOG}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["measured_ranks"] == 16 and len(body["measured"]) == 10
    table = body["comparison"]
    assert [c["size_bytes"] for c in table] == [2 ** k for k in range(25, 35)]   # the run's sizes
    first = table[0]
    assert first["measured"]["busbw_gbs"] == 40.76
    assert first["error_pct"] == pytest.approx(
        100 * (first["predicted"]["busbw_gbs"] - 40.76) / 40.76)


def test_stranger_is_404_and_anonymous_401(bob, anon, small_topology):
    assert_error(bob.post(url(small_topology), BODY, format="json"), 404, "not_found")
    assert_error(anon.post(url(small_topology), BODY, format="json"), 401)


def test_bad_sizes_and_log_are_located(api, small_topology):
    error = assert_error(api.post(url(small_topology), {**BODY, "min_bytes": "8X"}, format="json"), 400)
    assert paths_of(error) == {"min_bytes"}
    error = assert_error(api.post(url(small_topology), {**BODY, "factor": 1}, format="json"), 400)
    assert paths_of(error) == {"factor"}
    garbage = "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n8 2 float sum\n"
    error = assert_error(api.post(url(small_topology), {**BODY, "log": garbage}, format="json"), 400)
    assert error["details"] == [{"path": "log", "message": "line 2: expected 13 columns, got 4"}]


def test_more_than_sixteen_hosts_is_refused(api, user):
    from designer import services

    big = services.topology_build(owner=user, name="pod-17", template="pcie-commodity", hosts=17, options={})
    error = assert_error(api.post(url(big), BODY, format="json"), 400)
    assert "up to 16 hosts" in error["details"][0]["message"]


def test_several_runs_protocol_and_channels(api, small_topology):
    """Two runs in ``logs``: one ``runs[]`` entry each, by name, against one prediction; the
    forced protocol is in every row and the channel count is echoed."""
    body = {**BODY, "protocol": "Simple", "channels": 8,
            "logs": [{"name": "a.log", "text": LOG}, {"name": "b.log", "text": LOG}]}
    r = api.post(url(small_topology), body, format="json")
    assert r.status_code == 200, r.content
    out = r.json()
    assert [run["name"] for run in out["runs"]] == ["a.log", "b.log"]
    assert out["runs"][0]["comparison"] == out["runs"][1]["comparison"] == out["comparison"]
    assert {row["protocol"] for row in out["rows"]} == {"Simple"} and out["channels"] == 8


def test_knobs_and_log_count_are_located(api, small_topology):
    from designer.selectors import MAX_NCCL_LOGS

    error = assert_error(api.post(url(small_topology), {**BODY, "op": "alltoall", "channels": 4}, format="json"), 400)
    assert paths_of(error) == {"channels"}
    error = assert_error(api.post(url(small_topology), {**BODY, "protocol": "LL64"}, format="json"), 400)
    assert paths_of(error) == {"protocol"}
    logs = [{"name": f"r{k}.log", "text": LOG} for k in range(MAX_NCCL_LOGS + 1)]
    error = assert_error(api.post(url(small_topology), {**BODY, "logs": logs}, format="json"), 400)
    assert paths_of(error) == {"logs"}
    error = assert_error(api.post(url(small_topology), {**BODY, "log": LOG, "logs": logs[:MAX_NCCL_LOGS]},
                                  format="json"), 400)
    assert paths_of(error) == {"log"} and f"at most {MAX_NCCL_LOGS}" in error["details"][0]["message"]


def test_rooted_op_host_subset_and_nccl_knobs(api, small_topology):
    """broadcast_perf -r 2 on h1's 8 GPUs with NCCL_PROTO=LL: busbw = algbw (factor 1), root 2,
    LL at every size, the knob echoed; an unmodelled knob is located at env[k]."""
    body = {**BODY, "op": "broadcast", "root": 2, "hosts_subset": "h1", "env": ["NCCL_PROTO=LL"], "redop": "max"}
    r = api.post(url(small_topology), body, format="json")
    assert r.status_code == 200, r.content
    out = r.json()
    assert (out["ranks"], out["root"], out["env"]) == (8, 2, ["NCCL_PROTO=LL"])
    for row in out["rows"]:
        assert (row["root"], row["redop"], row["protocol"]) == (2, "none", "LL")
        assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"])
    error = assert_error(api.post(url(small_topology), {**body, "env": ["NCCL_PROTO=LL", "NCCL_BUFFSIZE=8M"]},
                                  format="json"), 400)
    assert paths_of(error) == {"env[1]"} and "not modelled" in error["details"][0]["message"]
    error = assert_error(api.post(url(small_topology), {**body, "hosts_subset": "h9"}, format="json"), 400)
    assert paths_of(error) == {"hosts[0]"}
