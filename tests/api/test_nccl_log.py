"""``POST /api/v1/topologies/<id>/nccl-log/`` × roles, a published log checked, located errors.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs), rail-optimized, 8 compute NICs each::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "engine" / "data" / "nccl_debug"
IB2 = (DATA / "ib_2node_16rank_nccl_1412.log").read_text()
A100 = (DATA / "a100_8gpu_shm_nccl_tests_228.log").read_text()


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/nccl-log/"


def test_owner_gets_summary_and_mismatches(api, small_topology):
    r = api.post(url(small_topology), {"log": IB2}, format="json")
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["format"] == "fabricscope.nccl-log-check/1"
    assert body["summary"]["nranks"] == 16 and body["summary"]["nodes"] == 2
    assert body["design"]["gpus"] == 16
    assert [m["kind"] for m in body["mismatches"]] == ["gdr"]      # IB without GDRDMA, nothing else


def test_per_rank_files_and_nic_mismatch(api, small_topology):
    r = api.post(url(small_topology), {"logs": [{"name": "user.log", "text": A100}]}, format="json")
    assert r.status_code == 200, r.content
    messages = [m["message"] for m in r.json()["mismatches"]]
    assert "NCCL runs 8 ranks, the design has 16 GPUs" in messages
    assert "NCCL sees 2 NICs on host user (mlx5_0, mlx5_2), the design has 8 on h0" in messages
    assert any("via SHM/direct/direct where the design has NVLink (NV18)" in m for m in messages)


def test_viewer_may_check_stranger_is_404_and_anonymous_401(client_for, bob, anon, small_topology, user,
                                                            other_user):
    assert_error(bob.post(url(small_topology), {"log": IB2}, format="json"), 404, "not_found")
    assert_error(anon.post(url(small_topology), {"log": IB2}, format="json"), 401)
    from designer import services

    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    assert client_for(other_user).post(url(small_topology), {"log": IB2}, format="json").status_code == 200


def test_bad_text_is_a_located_400(api, small_topology):
    cut = IB2.replace("6[6] -> 3[3] via P2P/direct pointer/read\nswat1-04:2017630:2017697 [7] NCCL INFO Channel 03/0",
                      "6[6] -> 3[3] via P2P/dir\nswat1-04:2017630:2017697 [7] NCCL INFO Channel 03/0")
    error = assert_error(api.post(url(small_topology), {"logs": [{"name": "a.log", "text": cut},
                                                                 {"name": "b.log", "text": IB2}]},
                                  format="json"), 400)
    line = next(i for i, t in enumerate(cut.splitlines(), 1) if t.endswith("via P2P/dir"))
    assert paths_of(error) == {f"logs.a.log: line {line}"}           # b.log is fine: only a.log is named
    assert error["details"][0]["message"].startswith("a connection line cut short")
    error = assert_error(api.post(url(small_topology), {"log": "nothing from nccl\n"}, format="json"), 400)
    assert paths_of(error) == {"logs.log"} and "no NCCL debug line" in error["details"][0]["message"]
    error = assert_error(api.post(url(small_topology), {}, format="json"), 400)
    assert paths_of(error) == {"logs"}
    # one form per request (the schema's oneOf), and strings only (found by schemathesis)
    error = assert_error(api.post(url(small_topology), {"log": IB2, "logs": [{"name": "a", "text": IB2}]},
                                  format="json"), 400)
    assert paths_of(error) == {"logs"} and "not both" in error["details"][0]["message"]
    error = assert_error(api.post(url(small_topology), {"logs": [{"name": "0", "text": 0}]}, format="json"), 400)
    assert paths_of(error) == {"logs[0].text"}


def test_schema_says_one_of_log_or_logs(api):
    body = api.get(f"{API}/schema/", HTTP_ACCEPT="application/json").json()
    request = body["components"]["schemas"]["NcclLogRequestRequest"]
    assert request["oneOf"] == [{"required": ["log"]}, {"required": ["logs"]}]


def test_graph_dump_is_read_and_bad_xml_located(api, small_topology):
    dump = ('<graphs version="1"><graph id="0" pattern="4" crossnic="0" nchannels="1" speedintra="40" '
            'speedinter="40" latencyinter="0" typeintra="LOC" typeinter="PIX" samechannels="1">'
            '<channel><net dev="0"/><gpu dev="0"/><net dev="9"/></channel></graph></graphs>')
    r = api.post(url(small_topology), {"log": IB2, "graph_dump": dump}, format="json")
    assert r.status_code == 200, r.content
    graph = [m["message"] for m in r.json()["mismatches"] if m["kind"] == "graph"]
    assert graph == ["graph 0 (ring) channel 0 uses NIC 9; the design's host h0 has 8 compute NICs"]
    error = assert_error(api.post(url(small_topology), {"log": IB2, "graph_dump": "<graphs"}, format="json"), 400)
    assert paths_of(error) == {"graph_dump.line 1, column 1"}
