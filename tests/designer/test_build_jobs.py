"""Large builds from the New page as jobs of kind ``build`` (designer/services/builds.py).

The inline limit (``facts.MAX_BUILD_HOSTS``, 2,048 hosts) is lowered to 2 here so that a
4-host DGX-H100 cluster (32 GPUs) takes the job path:

    [h0..h3: 8 gpu + 8 nic each]==400G==[8 rail leaves]==[spines]

The job's document must equal the one the inline build saves for the same spec (same checksum).
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from designer import services
from designer.choices import JobKind, JobState
from designer.models import SimulationJob, Topology, TopologyRevision
from designer.ops.errors import BuildTooLarge

SPEC = {"source": "cluster", "template": "dgx-h100", "hosts": 4, "fabric": "rail-optimized",
        "storage": 0}


@pytest.fixture
def small_inline_limit(monkeypatch):
    monkeypatch.setattr("designer.bridge.facts.MAX_BUILD_HOSTS", 2)


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def _submit(alice, name: str = "pod-4"):
    response = alice.post(reverse("topology_new"), {"name": name, **SPEC})
    topology = Topology.objects.get(name=name)
    job = SimulationJob.objects.get(topology=topology)
    return response, topology, job


@pytest.mark.django_db(transaction=True)
def test_build_job_runs_end_to_end(small_inline_limit, alice, user, published):
    response, topology, job = _submit(alice)
    # The page follows the job; nothing is built yet: the topology has no revision.
    assert response.status_code == 302 and response["Location"] == reverse("job_detail", args=[job.pk])
    assert (job.kind, job.state, job.revision_id) == (JobKind.BUILD, JobState.QUEUED, None)
    assert topology.revision_number == 0 and not TopologyRevision.objects.filter(topology=topology)
    assert [m[1] for m in published] == [[job.pk]]
    assert "Build of" in alice.get(reverse("job_detail", args=[job.pk])).content.decode()

    services.job_run(job_id=job.pk, hostname="w@test", task_id=published[0][2])
    job.refresh_from_db()
    topology.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    assert job.progress == 100 and job.revision_id == topology.current_revision_id
    assert "built 4 hosts (32 GPUs" in job.message
    assert (topology.host_count, topology.gpu_count, topology.revision_number) == (4, 32, 1)
    status = alice.get(reverse("job_status", args=[job.pk])).json()
    assert status["result_url"] == reverse("topology_detail", args=[topology.pk])
    page = alice.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "Open topology" in page and "r1" in page

    # The same document as the inline build of the same spec (the name aside: it is stored in it).
    inline = services.topology_build(owner=user, name="pod-4-inline", template="dgx-h100", hosts=4)
    # both read back from the database (PostgreSQL's jsonb keeps its own key order)
    built = TopologyRevision.objects.get(pk=topology.current_revision_id).document
    expected = TopologyRevision.objects.get(pk=inline.current_revision_id).document
    assert built.pop("name") == "pod-4" and expected.pop("name") == "pod-4-inline"
    assert built == expected and list(built) == list(expected)

    # A redelivered message is harmless: the job is no longer queued, nothing more is saved.
    services.job_run(job_id=job.pk, hostname="w@test", task_id="again")
    assert TopologyRevision.objects.filter(topology=topology).count() == 1


@pytest.mark.django_db
def test_over_the_job_limit_is_a_form_error_naming_it(small_inline_limit, alice, settings, published):
    settings.FABRICSCOPE_BUILD_JOB_MAX_HOSTS = 3
    response = alice.post(reverse("topology_new"), {"name": "too-big", **SPEC})
    assert response.status_code == 400
    assert "FABRICSCOPE_BUILD_JOB_MAX_HOSTS" in response.content.decode()
    assert not Topology.objects.filter(name="too-big").exists() and not published


@pytest.mark.django_db
def test_over_the_element_limit_is_refused_naming_it(small_inline_limit, user, settings, published):
    settings.FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS = 100
    with pytest.raises(BuildTooLarge, match="FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS"):
        services.topology_build_submit(owner=user, name="too-many", template="dgx-h100", hosts=4)
    assert not Topology.objects.filter(name="too-many").exists() and not published


@pytest.mark.django_db(transaction=True)
def test_a_heavy_template_under_the_host_limit_goes_to_a_job(alice, settings, published):
    """200 GB200 NVL72 racks: far under MAX_BUILD_HOSTS (2,048) but about 360,000 nodes + links
    (1,800 a rack, limits.build_elements) over the inline 300,000: a queued build job, not a 400."""
    settings.FABRICSCOPE_BUILD_MAX_ELEMENTS = 300_000
    spec = {"name": "nvl72-200", "source": "cluster", "template": "gb200-nvl72", "hosts": 200,
            "fabric": "rail-optimized", "storage": 0}
    response = alice.post(reverse("topology_new"), spec)
    topology = Topology.objects.get(name="nvl72-200")
    job = SimulationJob.objects.get(topology=topology)
    assert response.status_code == 302 and response["Location"] == reverse("job_detail", args=[job.pk])
    assert (job.kind, job.state, job.inputs["hosts"]) == (JobKind.BUILD, JobState.QUEUED, 200)
    assert topology.revision_number == 0 and [m[1] for m in published] == [[job.pk]]


@pytest.mark.django_db
def test_the_element_limit_routes_by_the_setting_and_under_both_builds_inline(alice, settings, published):
    """4 DGX-H100 hosts (127 nodes + links each, 508 in all): inline under both limits; a job
    when FABRICSCOPE_BUILD_MAX_ELEMENTS is below 508; 0 (no element limit) builds inline."""
    for limit, name in ((300_000, "inline"), (500, "by-job"), (0, "no-limit")):
        settings.FABRICSCOPE_BUILD_MAX_ELEMENTS = limit
        response = alice.post(reverse("topology_new"), {"name": name, **SPEC})
        topology = Topology.objects.get(name=name)
        job = SimulationJob.objects.filter(topology=topology).first()
        if name == "by-job":
            assert job is not None and job.kind == JobKind.BUILD and topology.revision_number == 0
            assert response["Location"] == reverse("job_detail", args=[job.pk])
        else:
            assert job is None and (topology.revision_number, topology.host_count) == (1, 4)
            assert response["Location"] == reverse("topology_detail", args=[topology.pk])


def test_the_new_page_says_when_a_build_runs_as_a_job(alice, db):
    page = alice.get(reverse("topology_new")).content.decode()
    assert "Over 2,048 hosts" in page and "nodes + links" in page and "built by a job" in page


@pytest.mark.django_db
def test_a_bad_spec_is_located_before_anything_is_written(small_inline_limit, user, published):
    from designer.exceptions import EngineValidationError

    with pytest.raises(EngineValidationError) as caught:
        services.topology_build_submit(owner=user, name="bad", template="dgx-h100", hosts=4,
                                       options={"spines": 0})
    assert caught.value.details and not Topology.objects.filter(name="bad").exists() and not published


@pytest.mark.django_db(transaction=True)
def test_a_failed_save_leaves_no_revision_and_a_failed_job(small_inline_limit, alice, monkeypatch,
                                                         published):
    """The revision is written, then the save fails: the transaction drops it, the topology stays
    empty and the job says why (the explicit marker)."""
    from designer.services import builds

    real_append = builds.revision_append

    def append_then_fail(*args, **kwargs):
        real_append(*args, **kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(builds, "revision_append", append_then_fail)
    _, topology, job = _submit(alice)
    services.job_run(job_id=job.pk, hostname="w@test", task_id="t")
    job.refresh_from_db()
    topology.refresh_from_db()
    assert job.state == JobState.FAILED and "disk full" in job.error and job.revision_id is None
    assert topology.revision_number == 0 and topology.current_revision_id is None
    assert not TopologyRevision.objects.filter(topology=topology).exists()
    assert alice.get(reverse("job_status", args=[job.pk])).json()["result_url"] is None


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_build_saves_nothing(small_inline_limit, alice, published):
    _, topology, job = _submit(alice)
    SimulationJob.objects.filter(pk=job.pk).update(cancel_requested=True)
    services.job_run(job_id=job.pk, hostname="w@test", task_id="t")
    job.refresh_from_db()
    topology.refresh_from_db()
    assert job.state == JobState.CANCELLED
    assert topology.revision_number == 0 and not TopologyRevision.objects.filter(topology=topology)



@pytest.mark.django_db(transaction=True)
def test_a_queued_build_job_reads_through_the_api_with_no_revision_yet(small_inline_limit, alice,
                                                                       published):
    """While a build job waits, its topology has no revision: the job API says ``revision: null``
    (not a 500, not a missing key), and the job list reads too."""
    _, _, job = _submit(alice, "pod-q")
    body = alice.get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["kind"] == "build" and body["revision"] is None and body["state"] == "queued"
    listed = alice.get("/api/v1/jobs/").json()
    assert any(j["id"] == job.pk and j["revision"] is None for j in listed["results"])
