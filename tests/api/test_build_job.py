"""``POST /api/v1/topologies/build-job/``: a cluster built as a job of kind ``build`` (202), its
progress read through ``/jobs/{id}/``, its result the topology; the spec refused (located, nothing
written) before any job is queued; a failed build saves nothing.

The cluster is 3 DGX-H100 hosts (24 GPUs) on a rail-optimized fabric, small enough to run the job
in this process as a worker would (``services.job_run``)::

    [h0..h2: 8 gpu + 8 nic each]==400G==[8 rail leaves]==[spines]

Its expected counts are those of the same spec built inline (``POST /topologies/`` with ``build``).
"""
from __future__ import annotations

import pytest

from designer import services
from designer.choices import JobState, TokenScope
from designer.models import SimulationJob, Topology, TopologyRevision
from tests.api.conftest import API, assert_error, paths_of

URL = f"{API}/topologies/build-job/"
SPEC = {"template": "dgx-h100", "hosts": 3, "fabric": "rail-optimized"}


def _body(name: str = "pod-3", **spec) -> dict:
    return {"name": name, "build": {**SPEC, **spec}}


def _run(job_id: int, published) -> None:
    """Run the queued job in this process, as the worker given its message would."""
    task_id = next(m[2] for m in published if m[1] == [job_id])
    services.job_run(job_id=job_id, hostname="w@test", task_id=task_id)


@pytest.mark.django_db(transaction=True)
def test_submit_poll_and_fetch_the_built_topology(api, published, settings, monkeypatch):
    settings.FABRICSCOPE_JOB_PROGRESS_INTERVAL = 0  # every stage's progress is written
    response = api.post(URL, _body(), format="json")
    assert response.status_code == 202, response.content
    job = response.json()
    assert (job["kind"], job["state"], job["progress"], job["revision"]) == ("build", "queued", 0, None)
    assert job["url"] == f"{API}/jobs/{job['id']}/" == response["Location"]
    assert job["result_url"] is None and job["topology_name"] == "pod-3"
    topology = Topology.objects.get(pk=job["topology"])
    assert topology.owner.username == "alice" and topology.revision_number == 0
    assert [m[1] for m in published] == [[job["id"]]]

    # What a poller sees while the worker builds: the job running, with a stage's progress.
    seen = []
    from designer import bridge

    real_build = bridge.build_cluster_lean

    def build_and_poll(**kwargs):
        report = kwargs.pop("progress")

        def progress(fraction, message=""):
            report(fraction, message)
            seen.append(api.get(job["url"]).json())
        return real_build(progress=progress, **kwargs)

    monkeypatch.setattr(bridge, "build_cluster_lean", build_and_poll)
    _run(job["id"], published)
    assert seen and all(s["state"] == "running" and 0 < s["progress"] < 100 for s in seen)
    assert seen[0]["message"] == "building 3 hosts of dgx-h100" and seen[0]["result_url"] is None

    done = api.get(job["url"]).json()
    assert (done["state"], done["progress"], done["revision"]) == ("succeeded", 100, 1), done
    assert done["result_url"] == f"{API}/topologies/{topology.pk}/"
    built = api.get(done["result_url"]).json()
    inline = api.post(f"{API}/topologies/", _body("pod-3-inline"), format="json").json()
    assert (built["host_count"], built["gpu_count"], built["revision_number"]) == (3, 24, 1)
    assert (built["node_count"], built["link_count"]) == (inline["node_count"], inline["link_count"])
    assert built["node_count"] > 3 * 16  # hosts' GPUs and NICs, plus the fabric's switches
    result = api.get(f"{API}/jobs/{job['id']}/result/").json()
    assert result == {"topology": topology.pk, "url": done["result_url"], "revision": 1,
                      "host_count": 3, "gpu_count": 24, "node_count": built["node_count"],
                      "link_count": built["link_count"]}


@pytest.mark.django_db(transaction=True)
def test_a_build_failing_on_the_worker_ends_failed_and_saves_nothing(api, published, monkeypatch):
    from designer import bridge

    def build_then_fail(**kwargs):
        raise RuntimeError("the worker ran out of scratch space")

    monkeypatch.setattr(bridge, "build_cluster_lean", build_then_fail)
    job = api.post(URL, _body(), format="json").json()
    _run(job["id"], published)
    failed = api.get(job["url"]).json()
    assert failed["state"] == "failed" and "out of scratch space" in failed["error"], failed
    assert failed["result_url"] is None and failed["revision"] is None
    topology = Topology.objects.get(pk=job["topology"])
    assert topology.revision_number == 0 and topology.current_revision_id is None
    assert not TopologyRevision.objects.filter(topology=topology).exists()
    error = assert_error(api.get(f"{API}/jobs/{job['id']}/result/"), 409, "no_result")
    assert "out of scratch space" in error["details"]["error"]


@pytest.mark.django_db
@pytest.mark.parametrize("body, path", [
    (_body(template="dgx-h999"), "build.template"),
    (_body(hosts=0), "build.hosts"),
    (_body(hosts=10 ** 6), "build.hosts"),
    (_body(spine=4), "build.spine"),             # misspelt: refused, not dropped
    (_body(spines=0), "spines"),                  # the engine's own check, located as inline
    (_body(params={"gpus": 4}), "params.gpus"),
    ({"build": SPEC}, "name"),
    ({"name": "pod-3"}, "build"),
])
def test_a_bad_spec_is_a_located_400_before_anything_is_written(api, published, body, path):
    error = assert_error(api.post(URL, body, format="json"), 400)
    assert path in paths_of(error), error
    assert not Topology.objects.exists() and not SimulationJob.objects.exists() and not published


@pytest.mark.django_db
@pytest.mark.parametrize("setting, value", [("FABRICSCOPE_BUILD_JOB_MAX_HOSTS", 2),
                                            ("FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS", 100)])
def test_over_a_job_limit_is_a_400_naming_it(api, published, settings, setting, value):
    setattr(settings, setting, value)
    error = assert_error(api.post(URL, _body(), format="json"), 400, "build_too_large")
    assert setting in error["message"]
    assert not Topology.objects.exists() and not SimulationJob.objects.exists()


@pytest.mark.django_db
def test_the_inline_path_builds_small_clusters_and_names_the_job_path_above_its_limit(api, settings):
    settings.FABRICSCOPE_API_MAX_BUILD_HOSTS = 2
    assert api.post(f"{API}/topologies/", _body(hosts=2), format="json").status_code == 201
    for hosts in (3, 5000):  # over the setting, and over MAX_BUILD_HOSTS itself
        error = assert_error(api.post(f"{API}/topologies/", _body("big", hosts=hosts),
                                      format="json"), 400)
        assert paths_of(error) == {"build.hosts"}
        assert "POST /api/v1/topologies/build-job/" in error["details"][0]["message"], error
    assert Topology.objects.count() == 1


@pytest.mark.django_db
def test_over_the_inline_element_limit_names_the_job_path_which_builds_it(api, settings, published):
    settings.FABRICSCOPE_BUILD_MAX_ELEMENTS = 100  # 3 DGX-H100 hosts make more
    error = assert_error(api.post(f"{API}/topologies/", _body(), format="json"), 400,
                         "build_too_large")
    assert "FABRICSCOPE_BUILD_MAX_ELEMENTS" in error["message"]
    assert "POST /api/v1/topologies/build-job/" in error["message"], error
    assert not Topology.objects.exists()
    assert api.post(URL, _body(), format="json").status_code == 202


@pytest.mark.django_db
def test_who_may_submit(api, anon, bob, user, published):
    """As creating a topology inline: any signed-in user, for themself; not anonymously, not with
    a read-only token. A stranger's build is theirs, unseen by others."""
    from rest_framework.test import APIClient

    assert_error(anon.post(URL, _body(), format="json"), 401)
    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION="Bearer " + services.api_token_create(
        user=user, name="ci", scope=TokenScope.READ).key)
    assert_error(reader.post(URL, _body(), format="json"), 403, "insufficient_scope")
    assert not Topology.objects.exists()

    response = bob.post(URL, _body("bobs-pod"), format="json")
    assert response.status_code == 202, response.content
    job = response.json()
    assert Topology.objects.get(pk=job["topology"]).owner.username == "bob"
    assert_error(api.get(job["url"]), 404, "not_found")
    assert_error(api.get(f"{API}/topologies/{job['topology']}/"), 404, "not_found")


@pytest.mark.django_db
def test_the_job_caps_and_rate_apply_and_a_refused_job_leaves_no_topology(api, settings, published):
    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 1
    assert api.post(URL, _body("first"), format="json").status_code == 202
    assert_error(api.post(URL, _body("second"), format="json"), 429, "too_many_jobs")
    assert list(Topology.objects.values_list("name", flat=True)) == ["first"]

    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 0
    settings.FABRICSCOPE_API_THROTTLE_RATES = {**settings.FABRICSCOPE_API_THROTTLE_RATES,
                                               "job_submit": "1/min"}
    from django.core.cache import cache

    cache.clear()
    assert api.post(URL, _body("third"), format="json").status_code == 202
    assert_error(api.post(URL, _body("fourth"), format="json"), 429, "throttled")
    assert not Topology.objects.filter(name="fourth").exists()


@pytest.mark.django_db
def test_a_build_that_cannot_fit_the_storage_quota_is_refused_before_it_is_queued(api, settings, published):
    """12,500 DGX-H100 make ~2.1 M nodes and links: at 100 bytes each (below every template's),
    more than a 100 MB quota; refused at once, not after a worker's minutes of building."""
    settings.FABRICSCOPE_QUOTA_STORED_BYTES = 100_000_000
    error = assert_error(api.post(URL, _body("huge", hosts=12_500), format="json"), 403, "quota_exceeded")
    assert error["details"]["quota"] == "stored_bytes" and error["details"]["size_bytes"] > 100_000_000
    assert "this build (at least 100 bytes a node or link)" in error["message"]
    assert not Topology.objects.filter(name="huge").exists() and not published
    assert api.post(URL, _body("small"), format="json").status_code == 202   # 3 hosts fit


@pytest.mark.django_db
def test_a_build_is_not_a_scenario_job_kind(api, scenario):
    error = assert_error(api.post(f"{API}/jobs/", {"scenario": scenario.pk, "kind": "build"},
                                  format="json"), 400)
    assert paths_of(error) == {"kind"}
