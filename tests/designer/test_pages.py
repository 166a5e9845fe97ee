"""HTML pages with Django's test client: each renders for its owner, is a 404 for another user,
redirects anonymous visitors to sign-in, and shows form errors next to their fields.

Data: ``small_topology`` = 2 DGX-H100 hosts, rail-optimized, 1 storage server (r1);
``scenario`` = ring all-reduce of 1 GB over all 16 GPUs.
"""
from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.urls import reverse

from designer import services
from designer.models import Scenario, SimulationJob, Topology

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def bob(client, other_user):
    client.force_login(other_user)
    return client


@pytest.fixture
def job(scenario, user, published):
    return services.job_submit_simulate(scenario=scenario, user=user)


def page_urls(topology, scenario, job) -> list[str]:
    return [
        reverse("topology_detail", args=[topology.pk]),
        reverse("revision_diff", args=[topology.pk]) + "?a=1&b=1",
        reverse("editor", args=[topology.pk]),
        reverse("host_matrix", args=[topology.pk]),
        reverse("scenario_new", args=[topology.pk]),
        reverse("scenario_edit", args=[scenario.pk]),
        reverse("job_detail", args=[job.pk]),
        reverse("job_status", args=[job.pk]),
    ]


def test_every_page_renders_for_its_owner(alice, small_topology, scenario, job):
    for url in [reverse("topology_list"), reverse("topology_new"), reverse("profile"),
                *page_urls(small_topology, scenario, job)]:
        response = alice.get(url)
        assert response.status_code == 200, url


def test_another_users_objects_are_404(bob, small_topology, scenario, job):
    for url in page_urls(small_topology, scenario, job):
        assert bob.get(url).status_code == 404, url
    assert bob.post(reverse("job_cancel", args=[job.pk])).status_code == 404


def test_anonymous_is_sent_to_sign_in(client, small_topology, scenario, job):
    for url in [reverse("home"), reverse("topology_list"), reverse("topology_new"),
                reverse("profile"), *page_urls(small_topology, scenario, job)]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url
    assert client.get(reverse("login")).status_code == 200


def test_sign_in_shows_a_clear_error_then_succeeds(client, user):
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert "did not match" in response.content.decode()
    response = client.post(reverse("login"), {"username": "alice", "password": "alice-password-1"})
    assert response.status_code == 302
    assert client.get(reverse("topology_list")).status_code == 200


def test_list_search_sort_and_tabs(alice, user, small_topology):
    services.topology_create(owner=user, name="zeta-empty", description="scratch area")
    body = alice.get(reverse("topology_list") + "?sort=name").content.decode()
    assert body.index("pod-2") < body.index("zeta-empty")
    assert "16</b> GPUs" in body  # size column: 2 DGX-H100 hosts
    body = alice.get(reverse("topology_list") + "?q=scratch").content.decode()
    assert "zeta-empty" in body and "pod-2" not in body
    body = alice.get(reverse("topology_list") + "?q=nothing-like-this").content.decode()
    assert "No topology matches" in body
    body = alice.get(reverse("topology_list") + "?tab=shared").content.decode()
    assert "Nothing shared with you yet" in body


def test_new_cluster_from_a_template(alice, user):
    response = alice.post(reverse("topology_new"), {
        "name": "pod-4", "source": "cluster", "template": "dgx-h100", "hosts": 4,
        "fabric": "rail-optimized", "storage": 0})
    topology = Topology.objects.get(owner=user, name="pod-4")
    assert response.status_code == 302
    assert response["Location"] == reverse("topology_detail", args=[topology.pk])
    assert (topology.host_count, topology.gpu_count, topology.revision_number) == (4, 32, 1)


def test_new_host_and_blank(alice, user):
    alice.post(reverse("topology_new"), {"name": "one", "source": "host", "template": "aws-p5",
                                         "hosts": 1, "fabric": "rail-optimized"})
    alice.post(reverse("topology_new"), {"name": "blank", "source": "blank", "template": "dgx-h100",
                                         "hosts": 1, "fabric": "rail-optimized"})
    one, blank = Topology.objects.get(name="one"), Topology.objects.get(name="blank")
    assert (one.host_count, one.gpu_count) == (1, 8)
    assert blank.revision_number == 0
    # A blank topology: the page offers the editor, the editor starts from an empty document.
    assert "Open editor" in alice.get(reverse("topology_detail", args=[blank.pk])).content.decode()
    config = alice.get(reverse("editor", args=[blank.pk])).context["editor_config"]
    assert config["revision"] is None and config["document"]["nodes"] == []


def test_new_topology_errors_are_shown_next_to_fields(alice, small_topology):
    response = alice.post(reverse("topology_new"), {
        "name": "", "source": "cluster", "template": "dgx-h100", "hosts": 0,
        "fabric": "rail-optimized"})
    assert response.status_code == 400
    form = response.context["form"]
    assert "name" in form.errors and "hosts" in form.errors
    # The same name twice is refused by the service, shown on the form.
    response = alice.post(reverse("topology_new"), {
        "name": "pod-2", "source": "blank", "template": "dgx-h100", "hosts": 1,
        "fabric": "rail-optimized"})
    assert response.status_code == 400
    assert "already exists" in response.content.decode()


def test_topology_page_shows_revisions_scenarios_jobs(alice, small_topology, scenario, job):
    body = alice.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    for text in ("r1", "generated: 2 x dgx-h100", "ring", f"#{job.pk}", "Open editor",
                 "New scenario", "Host matrix"):
        assert text in body, text


def test_revision_diff(alice, user, small_topology):
    """r1 → r2: one NIC-leaf link removed, one node renamed... kept simple: a node added."""
    doc = small_topology.current_revision.document
    doc2 = dict(doc, nodes=[*doc["nodes"], {"id": "extra0", "kind": "switch",
                                            "attrs": {"role": "leaf"}}],
                links=[lk for lk in doc["links"] if lk["id"] != "h0/nic0-leaf0"])
    services.revision_save(topology=small_topology, user=user, document=doc2, base_revision=1,
                           message="add extra0")
    response = alice.get(reverse("revision_diff", args=[small_topology.pk]))
    diff = response.context["diff"]
    assert (response.context["a"], response.context["b"]) == (1, 2)
    assert diff["nodes"]["added"] == ["extra0"]
    assert diff["links"]["removed"] == ["h0/nic0-leaf0"]
    assert "extra0" in response.content.decode()
    assert alice.get(reverse("revision_diff", args=[small_topology.pk]) + "?a=1&b=9"
                     ).status_code == 404


def test_host_matrix(alice, small_topology):
    response = alice.get(reverse("host_matrix", args=[small_topology.pk]) + "?host=h1")
    body = response.content.decode()
    matrix = response.context["matrix"]
    assert matrix["host"] == "h1" and matrix["labels"][:2] == ["GPU0", "GPU1"]
    assert matrix["rows"][0]["cells"][1]["code"] == "NV18"  # DGX H100: NV18 between GPUs
    assert 'class="pc-nv"' in body and "Legend" in body
    assert alice.get(reverse("host_matrix", args=[small_topology.pk]) + "?host=h9"
                     ).status_code == 404


def test_editor_config(alice, small_topology):
    response = alice.get(reverse("editor", args=[small_topology.pk]))
    config = response.context["editor_config"]
    assert config["topology_id"] == small_topology.pk and config["revision"] == 1
    assert config["readonly"] is False and "techs" in config["catalog"]
    assert config["urls"]["save"] == f"/api/v1/topologies/{small_topology.pk}/revisions/"
    assert '<script id="editor-config" type="application/json">' in response.content.decode()


def scenario_post(**overrides) -> dict:
    data = {"name": "ring-1g", "description": "", "mode": "steady", "nic_policy": "affinity",
            "multipath": "hash", "seed": "1", "failures_degrade": "",
            "pattern-TOTAL_FORMS": "1", "pattern-INITIAL_FORMS": "0",
            "pattern-MIN_NUM_FORMS": "1", "pattern-MAX_NUM_FORMS": "32",
            "pattern-0-pid": "ar", "pattern-0-kind": "allreduce", "pattern-0-select": "gpu",
            "pattern-0-group": "", "pattern-0-ids": "", "pattern-0-bytes_value": "2",
            "pattern-0-bytes_unit": "GB", "pattern-0-algorithm": "ring", "pattern-0-src": "",
            "pattern-0-dst": "", "pattern-0-demand_gbps": "", "action": "save"}
    data.update(overrides)
    return data


def test_scenario_save_then_run(alice, small_topology, published):
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, scenario_post(failures_down=["h0/nic0"]))
    scenario = Scenario.objects.get(name="ring-1g")
    assert response["Location"] == reverse("scenario_edit", args=[scenario.pk])
    assert scenario.workload == [{"id": "ar", "kind": "allreduce", "bytes": 2e9,
                                  "participants": {"kind": "gpu"}, "algorithm": "ring"}]
    assert scenario.failures == [{"target": "h0/nic0", "mode": "down"}]
    # The edit page shows what was saved; "Run simulation" queues a job and opens its page.
    body = alice.get(response["Location"]).content.decode()
    assert 'value="ring-1g"' in body and "h0/nic0" in body
    response = alice.post(reverse("scenario_edit", args=[scenario.pk]),
                          scenario_post(action="simulate"))
    job = SimulationJob.objects.get(scenario=scenario)
    assert response["Location"] == reverse("job_detail", args=[job.pk])
    assert job.kind == "simulate" and job.state == "queued"


def test_scenario_sweep_and_compare_buttons(alice, scenario, published):
    url = reverse("scenario_edit", args=[scenario.pk])
    alice.post(url, scenario_post(action="sweep", sweep_over=["nic"]))
    alice.post(url, scenario_post(action="compare", policies=["affinity", "any"]))
    kinds = sorted(SimulationJob.objects.values_list("kind", flat=True))
    assert kinds == ["compare", "sweep"]
    response = alice.post(url, scenario_post(action="sweep"))  # nothing ticked
    assert response.status_code == 400
    assert "tick at least one failure class" in response.content.decode()


def test_scenario_engine_errors_are_located(alice, small_topology):
    """A selector naming an unknown device: the engine's error appears on that pattern's field."""
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, scenario_post(**{"pattern-0-select": "ids",
                                                "pattern-0-ids": "h0/gpu0, h7/gpu99"}))
    assert response.status_code == 400
    pattern_form = response.context["formset"].forms[0]
    assert "ids" in pattern_form.errors
    assert "h7/gpu99" in " ".join(pattern_form.errors["ids"])
    body = response.content.decode()
    assert re.search(r'data-field="pattern-0-ids".*?errorlist', body, re.S)
    assert not Scenario.objects.exists()


def test_scenario_form_errors(alice, small_topology):
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, scenario_post(**{"pattern-0-bytes_value": "-1",
                                                "failures_degrade": "h0/nic0 two"}))
    assert response.status_code == 400
    assert "bytes_value" in response.context["formset"].forms[0].errors
    assert "failures_degrade" in response.context["form"].errors


def test_job_status_json_and_cancel(alice, job):
    status = json.loads(alice.get(reverse("job_status", args=[job.pk])).content)
    assert status["state"] == "queued" and status["progress"] == 0 and not status["terminal"]
    response = alice.post(reverse("job_cancel", args=[job.pk]), follow=True)
    assert "Cancellation of job" in response.content.decode()
    job.refresh_from_db()
    assert job.state == "cancelled"
    response = alice.post(reverse("job_cancel", args=[job.pk]), follow=True)
    assert "already finished" in response.content.decode()


def test_profile_token_is_shown_once_then_revoked(alice, user):
    import re

    from designer.models import ApiToken

    response = alice.post(reverse("token_create"), {"name": "api", "scope": "write",
                                                    "days": "90"}, follow=True)
    key = re.search(r'id="new-token">([^<]+)<', response.content.decode()).group(1)
    assert ApiToken.objects.get(user=user).prefix == key[:12]
    assert key not in alice.get(reverse("profile")).content.decode()
    alice.post(reverse("token_revoke"))
    assert not ApiToken.objects.filter(user=user).exists()


def test_base_layout_has_no_cdn_and_navigation(alice):
    body = alice.get(reverse("topology_list")).content.decode()
    for text in ("Topologies", "New", "/api/v1/docs/", "Sign out", reverse("profile")):
        assert text in body
    assert not re.search(r'(src|href)="https?://', body)


def _finished(job, data: dict):
    from django.utils import timezone

    from designer.models import SimulationResult

    SimulationResult.objects.create(job=job, data=data)
    SimulationJob.objects.filter(pk=job.pk).update(state="succeeded", progress=100,
                                                   finished_at=timezone.now())
    return job


RESULT = {"format": "fabricscope.result/1",
          "summary": {"patterns": {"ar": {"completion_s": 0.01, "throughput_gbps": 3200.0,
                                          "slowest_flow": "ar#0", "flows": 1, "unroutable": 0}},
                      "max_utilization": 1.0, "bottlenecks": ["h0/nic0-leaf0:a>b"]},
          "flows": [{"id": "ar#0", "pattern": "ar", "src": "h0/gpu0", "dst": "h1/gpu0",
                     "bytes": 1e9, "path": ["h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0", "h1/nic0",
                                            "h1/pcie0", "h1/gpu0"], "class": "NET",
                     "rate_gbps": 400.0, "bottleneck": "h0/nic0-leaf0:a>b", "status": "ok"}],
          "resources": [{"id": "h0/nic0-leaf0:a>b", "link": "h0/nic0-leaf0", "dir": "a>b",
                         "capacity_gbps": 400.0, "load_gbps": 400.0, "utilization": 1.0}],
          "diff": None}


def test_result_and_compare_pages(alice, job, scenario, user, published):
    """A finished job: its status JSON links the result page, which renders (figures by
    designer.figures); two results compare side by side."""
    _finished(job, RESULT)
    status = json.loads(alice.get(reverse("job_status", args=[job.pk])).content)
    assert status["terminal"] and status["result_url"] == reverse("job_result", args=[job.pk])
    assert alice.get(status["result_url"]).status_code == 200
    other = _finished(services.job_submit_simulate(scenario=scenario, user=user), RESULT)
    response = alice.get(reverse("compare") + f"?a={job.pk}&b={other.pk}")
    assert response.status_code == 200
    assert alice.get(reverse("compare") + f"?a={job.pk}&b=999").status_code == 404


def test_scenario_builder_sweep_classes_are_engine_classes():
    from designer.engine.analysis.whatif import SWEEP_CLASSES as ENGINE_CLASSES
    from designer.pages.forms.scenarios import SWEEP_CLASSES

    assert {name for name, _ in SWEEP_CLASSES} <= set(ENGINE_CLASSES)


def test_result_page_and_api_name_the_fabric_link_that_sets_the_job_time(alice, scenario, user, published):
    """A storage read through the storage leaf's uplinks is the slowest pattern; the
    result page's verdict and the API name that fabric link as the critical bottleneck, though
    NVLink links also run at 100 %."""
    from designer.engine.analysis.simulate import simulate

    sc = {"topology": {"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized", "storage": 1}},
          "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
                        "bytes": 1e9},
                       {"id": "load", "kind": "storage_read", "source": {"kind": "storage"},
                        "participants": {"kind": "gpu"}, "bytes": 2e10, "via": "gpudirect"}]}
    data = json.loads(json.dumps(simulate(sc), allow_nan=False))
    crit = data["summary"]["critical_bottleneck"]
    assert crit["pattern"] == "load" and crit["tier"] not in ("nvlink", "pcie")
    job = _finished(services.job_submit_simulate(scenario=scenario, user=user), data)
    html = alice.get(reverse("job_result", args=[job.pk])).content.decode()
    verdict = unescape(re.search(r'id="result-verdict"[^>]*>([^<]+)<', html).group(1))
    assert verdict.startswith("Completes in ") and f"limited by {crit['id']}" in verdict
    assert "critical bottleneck (load)" in html and crit["id"] in unescape(html)
    api = alice.get(f"/api/v1/jobs/{job.pk}/result/").json()
    assert api["summary"]["critical_bottleneck"]["id"] == crit["id"]
    assert api["summary"]["bottlenecks"][0] == crit["id"]


def test_result_page_says_a_broken_job_does_not_complete(alice, scenario, user, published):
    """The demo's what-if: h0/nic0 down under affinity — the ring loses gpu0's flows."""
    from designer.engine.analysis.simulate import simulate

    sc = {"topology": {"build": {"template": "dgx-h100", "hosts": 2, "fabric": "rail-optimized"}},
          "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
                        "bytes": 1e9}],
          "failures": [{"target": "h0/nic0", "mode": "down"}]}
    data = json.loads(json.dumps(simulate(sc), allow_nan=False))
    job = _finished(services.job_submit_simulate(scenario=scenario, user=user), data)
    html = alice.get(reverse("job_result", args=[job.pk])).content.decode()
    verdict = unescape(re.search(r'id="result-verdict"[^>]*>([^<]+)<', html).group(1))
    assert verdict == "Does not complete — 2 flows of ar lost when h0/nic0 is down"
    assert "1.28 s" not in html and "ar broken" in html


def test_result_page_and_api_name_the_chosen_collective_algorithm(alice, scenario, user, published):
    """``algorithm`` defaults to ``auto``; on one DGX-H100 (NVSwitch gen 3) an 8 GB
    all-reduce picks NVLS, as NCCL does. The result page's collectives line and the API say so,
    with the predicted time of the alternatives."""
    from designer.engine.analysis.simulate import simulate

    sc = {"topology": {"build": {"template": "dgx-h100", "hosts": 1}},
          "workload": [{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 8e9}]}
    data = json.loads(json.dumps(simulate(sc), allow_nan=False))
    chosen = data["summary"]["patterns"]["ar"]
    assert chosen["algorithm"] == "nvls"
    assert chosen["alternatives"]["ring"]["time_s"] > chosen["completion_s"]
    job = _finished(services.job_submit_simulate(scenario=scenario, user=user), data)
    html = alice.get(reverse("job_result", args=[job.pk])).content.decode()
    line = unescape(re.search(r'id="result-collectives"[^>]*>(.*?)</p>', html, re.S).group(1))
    assert re.search(r"<code>ar</code> runs <b>nvls</b>", line) and "ring" in line
    assert "(chosen by NCCL's cost model)" in line
    api = alice.get(f"/api/v1/jobs/{job.pk}/result/").json()
    assert api["summary"]["patterns"]["ar"]["algorithm"] == "nvls"
    assert api["summary"]["patterns"]["ar"]["chosen_by"] == "nccl"


def test_pages_describe_a_job_workload(alice, small_topology, user, published):
    """A scenario whose workload is a job reads as "job · N phases" in the scenario
    table and as the job's name on the job page — not as an empty pattern list."""
    from designer.models import workload_items, workload_size

    job_workload = {"job": {"name": "two-phase", "phases": [
        {"id": "fwd", "compute_s": 0.01},
        {"id": "ar", "after": ["fwd"], "patterns": [
            {"id": "dp", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e6}]}]}}
    assert workload_items(job_workload) == [{"id": "two-phase", "kind": "job · 2 phases"}]
    assert workload_size(job_workload) == "job · 2 phases"
    assert workload_size([{"id": "a", "kind": "allreduce"}, {"id": "b", "kind": "p2p"}]) == "2"
    sc = Scenario.objects.create(topology=small_topology, revision=small_topology.current_revision,
                                 name="job scenario", workload=job_workload)
    html = alice.get(reverse("topology_detail", args=[small_topology.pk])).content.decode()
    assert "job · 2 phases" in unescape(html)
    job = services.job_submit_simulate(scenario=sc, user=user)
    html = unescape(alice.get(reverse("job_detail", args=[job.pk])).content.decode())
    assert "<code>two-phase</code> job · 2 phases" in html


def test_scenario_form_asks_for_the_latency_view(alice, small_topology, published):
    """The builder stores the latency request (the CLI's ``latency`` field), shows it again, and
    a run's result page draws one way and round trip."""
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, scenario_post(latency_on="on", latency_value="8", latency_unit="B",
                                             latency_initiators=["cpu_proxy", "gpu_initiated"],
                                             latency_flows="ar#0"))
    assert response.status_code == 302, response.content.decode()[:3000]
    scenario = Scenario.objects.get(name="ring-1g")
    assert scenario.latency == {"message_bytes": 8, "initiators": ["cpu_proxy", "gpu_initiated"],
                                "flows": ["ar#0"]}
    form = alice.get(response["Location"]).context["form"]
    assert (form.initial["latency_on"], form.initial["latency_value"], form.initial["latency_unit"]) == (True, 8, "B")
    # Unticked: no latency view asked (the saved request is cleared).
    alice.post(reverse("scenario_edit", args=[scenario.pk]), scenario_post())
    scenario.refresh_from_db()
    assert scenario.latency is None


def test_scenario_form_latency_errors_are_next_to_their_fields(alice, small_topology):
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, scenario_post(latency_on="on", latency_value="0", latency_initiators=[]))
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert {"latency_value", "latency_initiators"} <= set(errors), errors
    assert not Scenario.objects.exists()


def test_result_page_shows_the_latency_view(alice, small_topology, user, published):
    """A simulation of a scenario with a latency request: its result page has the latency
    section, with one way and round trip named."""
    from tests.conftest import RING_ALLREDUCE

    scenario = services.scenario_create(topology=small_topology, user=user, name="lat",
                                        workload=RING_ALLREDUCE,
                                        latency={"message_bytes": 8, "initiators": ["cpu_proxy", "gpu_initiated"]})
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk)
    body = alice.get(reverse("job_result", args=[job.pk])).content.decode()
    assert 'id="sec-latency"' in body and "round trip" in body and "one way" in body
