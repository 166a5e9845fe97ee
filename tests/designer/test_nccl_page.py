"""The nccl-tests page (``/topologies/<pk>/nccl-tests/``) without a browser: who may open it, the
upload limit and parser errors next to the field, the inline host limit, and the links to it
from the topology page and from the result page of a collective.

Topology (``small_topology``): 2 DGX H100 hosts, rail-optimized, 1 storage server (16 ranks).
"""
from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

pytestmark = pytest.mark.django_db

FORM = {"op": "all_reduce", "algorithm": "auto", "min_bytes": "1M", "max_bytes": "4M", "factor": 2}


def page(topology) -> str:
    return f"/topologies/{topology.pk}/nccl-tests/"


def field_errors(response, field: str) -> list[str]:
    html = response.content.decode()
    block = re.search(rf'<ul class="errorlist" id="id_{field}_error">(.*?)</ul>', html, re.DOTALL)
    return [html_lib.unescape(m) for m in re.findall(r"<li>(.*?)</li>", block.group(1))] if block else []


def test_owner_and_viewer_see_the_prediction_stranger_404_anonymous_signs_in(
        client, user, other_user, django_user_model, small_topology):
    from designer import services

    client.force_login(user)
    r = client.get(page(small_topology) + "?op=all_gather")
    assert r.status_code == 200 and r.context["out"]["op"] == "all_gather"
    assert len(r.context["out"]["rows"]) == 31                   # 8 B … 8 GiB by default
    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    client.force_login(other_user)
    assert client.get(page(small_topology)).status_code == 200
    client.force_login(django_user_model.objects.create_user("carol", password="carol-password-1"))
    assert client.get(page(small_topology)).status_code == 404
    client.logout()
    r = client.get(page(small_topology))
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]


def test_upload_limit_and_parser_errors_sit_next_to_the_field(client, user, small_topology):
    client.force_login(user)
    big = SimpleUploadedFile("run.log", b"#" * (1024 * 1024 + 1))
    r = client.post(page(small_topology), {**FORM, "log": big})
    assert r.status_code == 400
    assert field_errors(r, "log") == ["run.log is 1024 KiB; the limit is 1024 KiB (keep only the nccl-tests output)"]
    junk = SimpleUploadedFile("run.log", b"mpirun: starting\n8 2 float sum -1 x\n")
    r = client.post(page(small_topology), {**FORM, "log": junk})
    assert r.status_code == 400 and field_errors(r, "log") == ["line 2: expected 13 columns, got 6"]
    r = client.post(page(small_topology), {**FORM, "max_bytes": "4Q"})
    assert r.status_code == 400 and field_errors(r, "max_bytes") == ["bad size '4Q' (like 8, 64K, 8M, 8G)"]


def test_more_hosts_than_inline_is_refused_with_a_message(client, user):
    from designer import services

    big = services.topology_build(owner=user, name="pod-17", template="pcie-commodity", hosts=17, options={})
    client.force_login(user)
    r = client.get(page(big))   # opening the page is not a bad request: 200 with the message
    assert r.status_code == 200 and r.context["out"] is None
    assert "up to 16 hosts; this topology has 17" in r.content.decode()
    submitted = client.post(page(big), {"op": "all_reduce", "min_bytes": "8", "max_bytes": "1M",
                                        "factor": "2", "algorithm": "auto", "protocol": "auto"})
    assert submitted.status_code == 400 and "up to 16 hosts" in submitted.content.decode()


def test_linked_from_topology_and_collective_result(client, user, scenario):
    from designer import services
    from designer.engine.analysis.simulate import simulate
    from tests.sharing.conftest import finish

    client.force_login(user)
    detail = client.get(f"/topologies/{scenario.topology_id}/").content.decode()
    assert f'href="{page(scenario.topology)}" id="nccl-tests-link"' in detail
    result = simulate({"topology": {"build": {"template": "dgx-h100", "hosts": 2}}, "options": {"max_flows_listed": 20},
                       "workload": [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9}]})
    job = finish(services.job_submit_simulate(scenario=scenario, user=user), json.loads(json.dumps(result)))
    html = client.get(f"/jobs/{job.pk}/result/").content.decode()
    assert f'href="{page(scenario.topology)}?op=all_reduce"' in html and "nccl-tests: ar" in html


def test_a_run_reports_the_whole_curve_median_worst_and_within(client, user, small_topology):
    """With a log, the page's headline states how the whole curve fits: the median and the worst
    |busbw error| (and at which size), and how many sizes are within ±10 %, from the same rows the
    table shows."""
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "engine" / "data" / "nccl_tests" / "all_reduce_2x_hgx_h100_nccl_tests_319.txt"
    client.force_login(user)
    r = client.post(page(small_topology), {**FORM, "log": SimpleUploadedFile("run.log", log.read_bytes())})
    assert r.status_code == 200, r.content[:500]
    rows = r.context["out"]["comparison"]
    errors = sorted(abs(c["error_pct"]) for c in rows)
    worst = max(rows, key=lambda c: abs(c["error_pct"]))
    summary = r.context["summary"]
    assert summary["worst_error"] == f"{errors[-1]:.1f}"
    assert summary["within"] == f"{sum(e <= 10 for e in errors)} of {len(errors)}"
    html = r.content.decode()
    assert 'id="nccl-worst"' in html and summary["worst_size"] in html and summary["worst_size"].endswith("iB")
    assert worst["size_bytes"] == r.context["out"]["curve"]["worst_size_bytes"]


LOG = (Path(__file__).resolve().parents[1] / "engine" / "data" / "nccl_tests"
       / "all_reduce_2x_hgx_h100_nccl_tests_319.txt")


def _upload(name: str, data: bytes | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, LOG.read_bytes() if data is None else data)


def test_several_runs_are_overlaid_each_named_by_its_file(client, user, small_topology):
    """Two uploads of one all-reduce: one marker trace each (named by the file) on both the busbw
    and the time figure, over one predicted line; the comparison table has a run column and the
    fits table a row per run."""
    client.force_login(user)
    r = client.post(page(small_topology), {**FORM, "log": [_upload("node-a.log"), _upload("node-b.log")]})
    assert r.status_code == 200, r.content[:800]
    for key in ("nccl_busbw", "nccl_time"):
        names = [t["name"] for t in r.context["figures"][key]["data"]]
        assert names == ["predicted", "node-a.log", "node-b.log"]
    assert r.context["figures"]["nccl_time"]["layout"]["yaxis"]["type"] == "log"
    assert [f["name"] for f in r.context["fits"]] == ["node-a.log", "node-b.log"]
    assert {c["run"] for c in r.context["comparison"]} == {"node-a.log", "node-b.log"}
    html = r.content.decode()
    assert 'id="nccl-fits"' in html and "<th>run</th>" in html


def test_more_runs_than_the_cap_are_refused(client, user, small_topology):
    from designer.selectors import MAX_NCCL_LOGS

    client.force_login(user)
    uploads = [_upload(f"run{k}.log") for k in range(MAX_NCCL_LOGS + 1)]
    r = client.post(page(small_topology), {**FORM, "log": uploads})
    assert r.status_code == 400
    assert field_errors(r, "log") == [f"{MAX_NCCL_LOGS + 1} files; at most {MAX_NCCL_LOGS} runs are overlaid at once"]


def test_a_bad_second_log_is_named(client, user, small_topology):
    client.force_login(user)
    junk = _upload("junk.log", b"8 2 float sum -1 x\n")
    r = client.post(page(small_topology), {**FORM, "log": [_upload("good.log"), junk]})
    assert r.status_code == 400 and field_errors(r, "log") == ["junk.log: line 1: expected 13 columns, got 6"]


def test_protocol_and_channels_reach_the_prediction(client, user, small_topology):
    client.force_login(user)
    r = client.post(page(small_topology), {**FORM, "protocol": "LL", "channels": 4})
    assert r.status_code == 200 and {row["protocol"] for row in r.context["out"]["rows"]} == {"LL"}
    assert r.context["out"]["channels"] == 4
    r = client.post(page(small_topology), {**FORM, "op": "alltoall", "channels": 4})
    assert r.status_code == 400 and "alltoall takes no channel count" in field_errors(r, "channels")[0]
    r = client.post(page(small_topology), {**FORM, "channels": 33})
    assert r.status_code == 400 and field_errors(r, "channels")


def test_axes_log10_sizes_and_log_busbw(client, user, small_topology):
    """?size_axis=log10&busbw_axis=log: decade ticks from 1 MB below 1 MiB up to 10 MB above
    4 MiB, a log busbw axis; both tick sets ride along for the page's in-place switch."""
    client.force_login(user)
    r = client.get(page(small_topology) + "?min_bytes=1M&max_bytes=4M&size_axis=log10&busbw_axis=log")
    busbw = r.context["figures"]["nccl_busbw"]
    assert busbw["layout"]["yaxis"]["type"] == "log"
    assert busbw["layout"]["xaxis"]["tickvals"] == [10 ** 6, 10 ** 7]
    assert busbw["layout"]["xaxis"]["ticktext"] == ["1 MB", "10 MB"]
    assert busbw["fabricscope"]["axes"]["size"]["log2"]["tickvals"] == [2 ** 20, 2 ** 22]
    html = r.content.decode()
    assert 'id="id_size_axis"' in html and "nccl_axes.js" in html
