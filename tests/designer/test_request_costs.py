"""What the load test's requests cost in queries, and the page digest cache's rules.

The pages and API reads of ``loadtest/locustfile.py`` each run a fixed number of SQL queries,
whatever the number of rows listed (no N+1): a change that adds one fails here, with the queries
printed. The topology page's figures (first host group, BOM, rack/tray/server counts) come from
a per-process cache keyed by the revision's document checksum (content-addressed: an edit is a new
checksum, so nothing is ever invalidated), looked up only after the visibility check. The load
test's ``--presigned`` sessions sign their user in as the form would.

Data: ``small_topology`` = 2 DGX-H100 hosts, rail-optimized, 1 storage server (r1);
``scenario`` = ring all-reduce of 1 GB over all 16 GPUs.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from designer import services
from designer.pages import digest_cache
from designer.selectors import revision_get
from tests.conftest import RING_ALLREDUCE, ROOT

pytestmark = pytest.mark.django_db

API = "/api/v1"

# Queries per request, after a warm-up request (the API token's last_used_at write is once a
# minute; the page digest is computed on the first view of a document). Each line says why.
PAGE_QUERIES = {
    "topology_list": 3,    # session, user, the page of topologies (role as a subquery)
    "job_detail": 3,       # session, user, the job (with topology, scenario, revision)
    "job_status": 3,       # session, user, the job
}
API_QUERIES = {
    "topologies": 3,       # token (+user), count, page
    "topology": 2,         # token, the topology (by key; the owner is checked in memory)
    "revisions": 4,        # token, the topology (as above), count, page
    "revision": 3,         # token, the revision with its topology (as above), its document as text
    "jobs": 3,             # token, count, page
    "job": 2,              # token, the job with its topology (as above)
}


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


@pytest.fixture
def api(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {services.api_token_rotate(user=user).key}")
    return client


@pytest.fixture
def job(scenario, user, published):
    return services.job_submit_simulate(scenario=scenario, user=user)


def _more_rows(user, published, n: int = 2) -> None:
    """``n`` more topologies, each with a scenario and a job (lists grow; counts must not)."""
    for i in range(n):
        topology = services.topology_build(owner=user, name=f"extra-{i}", template="dgx-h100",
                                           hosts=2)
        scenario = services.scenario_create(topology=topology, user=user, name="ring",
                                            workload=RING_ALLREDUCE)
        services.job_submit_simulate(scenario=scenario, user=user)


def _count(client, url, django_assert_num_queries, expected, **headers):
    client.get(url, **headers)  # warm-up: token touch, digest cache
    with django_assert_num_queries(expected):
        response = client.get(url, **headers)
    assert response.status_code == 200, (url, response.status_code)
    return response


def test_page_queries_do_not_grow_with_rows(alice, user, small_topology, job, published,
                                            django_assert_num_queries):
    urls = {"topology_list": reverse("topology_list"),
            "job_detail": reverse("job_detail", args=[job.pk]),
            "job_status": reverse("job_status", args=[job.pk])}
    for name, url in urls.items():
        _count(alice, url, django_assert_num_queries, PAGE_QUERIES[name])
    _more_rows(user, published)
    for name, url in urls.items():
        _count(alice, url, django_assert_num_queries, PAGE_QUERIES[name])


def test_topology_page_queries(alice, user, small_topology, scenario, job,
                               django_assert_num_queries):
    """The owner's topology page: session, user, the topology (read by key, checked once in
    memory: the owner needs no grants query), its grants and audit trail, revisions, scenarios,
    recent jobs, the revision head. It was 12 while each of grants, audit trail and revisions
    fetched and checked the topology again. The digest (the document's figures) is read once on
    a cold cache, never on a warm one."""
    url = reverse("topology_detail", args=[small_topology.pk])
    digest_cache.PAGE_DIGESTS.clear()
    with django_assert_num_queries(TOPOLOGY_PAGE_QUERIES + 1):
        assert alice.get(url).status_code == 200
    with django_assert_num_queries(TOPOLOGY_PAGE_QUERIES):
        assert alice.get(url).status_code == 200


TOPOLOGY_PAGE_QUERIES = 9


def test_topology_page_queries_for_a_viewer(client, user, other_user, small_topology, scenario,
                                            django_assert_num_queries):
    """A viewer's page: session, user, the topology, the viewer's grants (the role: asked once,
    the page's later checks read it from the checked topology), revisions, scenarios, recent
    jobs, the revision head; no grant list or audit trail (owner and editors only). It was 9:
    the revisions list fetched and checked the topology again."""
    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    client.force_login(other_user)
    url = reverse("topology_detail", args=[small_topology.pk])
    client.get(url)
    with django_assert_num_queries(8):
        response = client.get(url)
    assert response.status_code == 200 and response.context["role"] == "viewer"
    assert response.context["shares"] == [] and response.context["audit"] == []


def test_api_reads_do_not_grow_with_rows(api, user, small_topology, job, published,
                                         django_assert_num_queries):
    pk = small_topology.pk
    urls = {"topologies": f"{API}/topologies/", "topology": f"{API}/topologies/{pk}/",
            "revisions": f"{API}/topologies/{pk}/revisions/",
            "revision": f"{API}/topologies/{pk}/revisions/1/",
            "jobs": f"{API}/jobs/?page_size=20", "job": f"{API}/jobs/{job.pk}/"}
    for name, url in urls.items():
        _count(api, url, django_assert_num_queries, API_QUERIES[name])
    _more_rows(user, published)
    for name, url in urls.items():
        _count(api, url, django_assert_num_queries, API_QUERIES[name])


def test_an_edit_shows_its_own_figures(alice, user, small_topology):
    """Cache invalidation by content: removing host h1 (its group, nodes and links) is a new
    checksum, and the page counts one server fewer, read from the new digest, not the cached one;
    undoing it shows the first figures again."""
    url = reverse("topology_detail", args=[small_topology.pk])
    before = alice.get(url).context["units"]
    first = revision_get(user=user, topology_pk=small_topology.pk, number=1).document
    gone = {n["id"] for n in first["nodes"] if n.get("group") == "h1"}
    assert gone, "the 2-host design has a host group h1"
    document = {**first, "groups": [g for g in first["groups"] if g["id"] != "h1"],
                "nodes": [n for n in first["nodes"] if n["id"] not in gone],
                "links": [li for li in first["links"] if li["a"] not in gone and li["b"] not in gone]}
    services.revision_save(topology=small_topology, user=user, document=document,
                           base_revision=1, message="one host fewer")
    after = alice.get(url).context["units"]
    assert after["servers"] == before["servers"] - 1, (before, after)
    services.revision_save(topology=small_topology, user=user, document=first, base_revision=2,
                           message="undo")
    assert alice.get(url).context["units"] == before


def test_a_warm_cache_is_no_way_in(client, user, other_user, small_topology):
    """Alice's view fills the cache with her revision's figures; Bob (no grant) still gets a 404,
    and a viewer sees the page without the owner's grant list and audit trail."""
    client.force_login(user)
    url = reverse("topology_detail", args=[small_topology.pk])
    assert client.get(url).status_code == 200
    assert digest_cache.PAGE_DIGESTS  # warm
    client.force_login(other_user)
    response = client.get(url)
    assert response.status_code == 404
    assert b"dgx-h100" not in response.content.lower()
    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    response = client.get(url)
    assert response.status_code == 200
    assert response.context["role"] == "viewer" and response.context["audit"] == []


def test_load_test_presigned_session_signs_its_user_in(client, tmp_path):
    """``loadtest/run.py --presigned`` makes each account's session in setup: with only that
    cookie, the page answers that user's list (not the sign-in redirect) and the user's own
    topology; a made-up session key is still sent to sign in."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("loadtest_run", ROOT / "loadtest" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    users_file = tmp_path / "users.json"
    exec(run.SETUP.format(n=1, path=str(users_file), presigned=True), {})  # noqa: S102 (our file)
    account = json.loads(users_file.read_text())[0]
    client.cookies[account["session_cookie"]] = account["session"]
    response = client.get(reverse("topology_list"))
    assert response.status_code == 200 and response.context["user"].username == "load0"
    assert client.get(reverse("topology_detail", args=[account["topology"]])).status_code == 200
    client.cookies[account["session_cookie"]] = "0" * 32
    assert client.get(reverse("topology_list")).status_code == 302


def test_load_test_request_rates_and_wait():
    """``run.py``'s rates by hand: 10 users for 100 s, 10 started a second (a 1 s ramp: 995
    user-seconds active), 95 s spent waiting on answers, 1,800 requests: sent 1,800 / 100 = 18.0
    a second; offered 1,800 / ((995 - 95) / 10) = 20.0 a second. ``--wait`` takes MIN,MAX."""
    import argparse
    import importlib.util

    spec = importlib.util.spec_from_file_location("loadtest_run", ROOT / "loadtest" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    rates = run.request_rates({"requests": 1800, "response_time_s": 95.0}, users=10,
                              duration_s=100, spawn_rate=10)
    assert rates == {"sent_rps": 18.0, "offered_rps": 20.0}
    assert run.wait_arg("0.1, 0.4") == "0.1,0.4"
    for bad in ("2,1", "1", "a,b", "-1,2"):
        with pytest.raises(argparse.ArgumentTypeError):
            run.wait_arg(bad)


def test_sharing_page_queries(alice, small_topology, job, django_assert_num_queries):
    """The owner's sharing page: session, user, the topology (checked once, passed on), its
    grants, links, succeeded jobs and audit trail. It was 10 while each list fetched and checked
    the topology again by its pk."""
    url = reverse("sharing", args=[small_topology.pk])
    alice.get(url)
    with django_assert_num_queries(7):
        assert alice.get(url).status_code == 200
