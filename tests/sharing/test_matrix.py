"""The permission matrix: every page and every API endpoint × every kind of requester.

Rows are endpoints, columns the principals of ``tests/sharing/conftest.py``::

    owner  editor  viewer  team_viewer  team_editor  stranger  anon  link  result_link
    revoked_link  expired_link

Rules under test (designer.selectors.ROLE_ACTIONS): unseen objects are 404 (ids do not leak),
seen-but-not-allowed is 403 in the standard error shape, anonymous API calls are 401 and
anonymous pages redirect to sign-in (302). A share link reads its topology (or one result) and
nothing else; revoked, expired and unknown tokens are a 401 ``invalid_share_link`` on the API (a
bad credential, whatever else the request carries) and a 404 on the ``/s/<token>/`` pages.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.api.conftest import assert_error
from tests.conftest import RING_ALLREDUCE
from tests.sharing.conftest import PRINCIPALS, expect

pytestmark = pytest.mark.django_db

API = "/api/v1"

# --- API reads: the state does not change, so one test walks all principals -------------------

SEEN = dict(owner=200, editor=200, viewer=200, team_viewer=200, team_editor=200, stranger=404,
            anon=401, revoked_link=401, expired_link=401)
TOPOLOGY_READ = expect(**SEEN, link=200, result_link=404)
RESULT_READ = expect(**SEEN, link=200, result_link=200)
ACCOUNT_ONLY = expect(owner=200, editor=200, viewer=200, team_viewer=200, team_editor=200,
                      stranger=200, anon=401, link=403, result_link=403, revoked_link=401,
                      expired_link=401)

API_READS = {
    "topology list": ("topologies/", expect(**{**SEEN, "stranger": 200}, link=200,
                                               result_link=200)),
    "shared=me list": ("topologies/?shared=me", expect(**{**SEEN, "stranger": 200}, link=200,
                                                         result_link=200)),
    "topology": ("topologies/{t}/", TOPOLOGY_READ),
    "revisions": ("topologies/{t}/revisions/", TOPOLOGY_READ),
    # a result link may read the revision its result was computed on (its figures draw it)
    "revision": ("topologies/{t}/revisions/1/", RESULT_READ),
    "export json": ("topologies/{t}/export/", TOPOLOGY_READ),
    "export graphml": ("topologies/{t}/export/?format=graphml", TOPOLOGY_READ),
    "scenario list": ("scenarios/", expect(**{**SEEN, "stranger": 200}, link=200,
                                           result_link=200)),
    "scenario": ("scenarios/{s}/", TOPOLOGY_READ),
    "job list": ("jobs/", expect(**{**SEEN, "stranger": 200}, link=200, result_link=200)),
    "job": ("jobs/{j}/", RESULT_READ),
    "result": ("jobs/{j}/result/", RESULT_READ),
    "figures": ("jobs/{j}/figures/", RESULT_READ),
    "other job (same topology)": ("jobs/{q}/", expect(**SEEN, link=200, result_link=404)),
    "stranger's topology": ("topologies/{x}/", expect(
        owner=404, editor=404, viewer=404, team_viewer=404, team_editor=404, stranger=200,
        anon=401, link=404, result_link=404, revoked_link=401, expired_link=401)),
    "shares": ("topologies/{t}/shares/", expect(
        owner=200, editor=200, viewer=403, team_viewer=403, team_editor=200, stranger=404,
        anon=401, link=403, result_link=403, revoked_link=401, expired_link=401)),
    "links": ("topologies/{t}/links/", expect(
        owner=200, editor=403, viewer=403, team_viewer=403, team_editor=403, stranger=404,
        anon=401, link=403, result_link=403, revoked_link=401, expired_link=401)),
    "audit": ("topologies/{t}/audit/", expect(
        owner=200, editor=200, viewer=403, team_viewer=403, team_editor=200, stranger=404,
        anon=401, link=403, result_link=404, revoked_link=401, expired_link=401)),
    "catalog": ("catalog/", ACCOUNT_ONLY),
    "templates": ("templates/", ACCOUNT_ONLY),
    "own token": ("auth/token/", ACCOUNT_ONLY),
}


def _url(world, template: str) -> str:
    return f"{API}/" + template.format(t=world.topology.pk, s=world.scenario.pk, j=world.job.pk,
                                       q=world.queued_job.pk, x=world.secret.pk)


@pytest.mark.parametrize("name", list(API_READS))
def test_api_read_matrix(world, api_as, name):
    template, expected = API_READS[name]
    got = {p: api_as(p).get(_url(world, template)).status_code for p in PRINCIPALS}
    assert got == expected


def test_api_denials_use_the_error_shape(world, api_as):
    assert_error(api_as("viewer").patch(_url(world, "topologies/{t}/"), {"name": "x"}), 403,
                 "permission_denied")
    assert_error(api_as("stranger").get(_url(world, "topologies/{t}/")), 404, "not_found")
    assert_error(api_as("revoked_link").get(_url(world, "topologies/{t}/")), 401,
                 "invalid_share_link")
    assert_error(api_as("link").post(_url(world, "topologies/{t}/fork/"), {}), 403)
    # the query-string form of a token works like the header, for the shared object only
    from rest_framework.test import APIClient
    anon = APIClient()
    token = world.tokens["link"]
    assert anon.get(_url(world, "topologies/{t}/") + f"?share={token}").status_code == 200
    assert anon.get(_url(world, "topologies/{x}/") + f"?share={token}").status_code == 404


# --- API writes: each cell runs on a fresh world ------------------------------------------------

EDIT = expect(owner=200, editor=200, viewer=403, team_viewer=403, team_editor=200, stranger=404,
              anon=401, link=403, result_link=403, revoked_link=401, expired_link=401)
OWNER_ONLY = expect(owner=200, editor=403, viewer=403, team_viewer=403, team_editor=403,
                    stranger=404, anon=401, link=403, result_link=403, revoked_link=401,
                    expired_link=401)


def _with(row: dict, **changes) -> dict:
    return {**row, **changes}


def _document(world) -> dict:
    return world.topology.current_revision.document


# Creating a topology needs an account, no role on any topology: inline or as a build job alike.
CREATE = expect(owner=201, editor=201, viewer=201, team_viewer=201, team_editor=201, stranger=201,
                anon=401, link=403, result_link=403, revoked_link=401, expired_link=401)
_BUILD = {"name": "new-pod", "build": {"template": "dgx-h100", "hosts": 2}}

# name -> (method, url template, body factory, expected row)
API_WRITES = {
    "build topology inline": ("post", "topologies/", lambda w: _BUILD, CREATE),
    "build topology as a job": ("post", "topologies/build-job/", lambda w: _BUILD,
                                {p: 202 if code == 201 else code for p, code in CREATE.items()}),
    "rename topology": ("patch", "topologies/{t}/", lambda w: {"description": "changed"}, EDIT),
    "delete topology": ("delete", "topologies/{t}/", None, _with(OWNER_ONLY, owner=204)),
    "save revision": ("post", "topologies/{t}/revisions/",
                      lambda w: {"document": _document(w), "base_revision": 1},
                      _with(EDIT, owner=201, editor=201, team_editor=201)),
    # an invisible object named in a body is a located 400 (api.views._body_ref), never a 404
    "create scenario": ("post", "scenarios/",
                        lambda w: {"topology": w.topology.pk, "name": "new",
                                   "workload": RING_ALLREDUCE},
                        _with(EDIT, owner=201, editor=201, team_editor=201, stranger=400)),
    "edit scenario": ("patch", "scenarios/{s}/", lambda w: {"description": "x"}, EDIT),
    "delete scenario": ("delete", "scenarios/{s}/", None,
                        _with(EDIT, owner=204, editor=204, team_editor=204)),
    "submit job": ("post", "jobs/", lambda w: {"scenario": w.scenario.pk, "kind": "simulate"},
                   _with(EDIT, owner=201, editor=201, viewer=201, team_viewer=201,
                         team_editor=201, stranger=400)),
    "cancel alice's job": ("post", "jobs/{q}/cancel/", lambda w: {}, EDIT),
    "fork": ("post", "topologies/{t}/fork/", lambda w: {},
             _with(EDIT, owner=201, editor=201, viewer=201, team_viewer=201, team_editor=201)),
    "transfer": ("post", "topologies/{t}/transfer/", lambda w: {"username": "zed"}, OWNER_ONLY),
    "grant": ("post", "topologies/{t}/shares/", lambda w: {"username": "zed", "role": "viewer"},
              _with(OWNER_ONLY, owner=201)),
    "change role": ("patch", "topologies/{t}/shares/{v}/", lambda w: {"role": "editor"},
                    OWNER_ONLY),
    "revoke grant": ("delete", "topologies/{t}/shares/{v}/", None,
                     _with(OWNER_ONLY, owner=204)),
    "create link": ("post", "topologies/{t}/links/", lambda w: {"job": w.job.pk},
                    _with(OWNER_ONLY, owner=201)),
    "revoke link": ("delete", "topologies/{t}/links/{l}/", None, _with(OWNER_ONLY, owner=204)),
}


@pytest.mark.parametrize("principal", PRINCIPALS)
@pytest.mark.parametrize("name", list(API_WRITES))
def test_api_write_matrix(world, api_as, name, principal):
    method, template, body, expected = API_WRITES[name]
    url = f"{API}/" + template.format(t=world.topology.pk, s=world.scenario.pk,
                                      q=world.queued_job.pk, v=world.shares["viewer"].pk,
                                      l=world.links["link"].pk)
    args = (url, body(world)) if body else (url,)
    response = getattr(api_as(principal), method)(*args)
    assert response.status_code == expected[principal], response.content[:500]
    if response.status_code >= 400:
        assert_error(response, response.status_code)


# --- Pages --------------------------------------------------------------------------------------

PAGE_SEEN = dict(owner=200, editor=200, viewer=200, team_viewer=200, team_editor=200,
                 stranger=404, anon=302, link=302, result_link=302, revoked_link=302,
                 expired_link=302)
PAGE_EDIT = expect(**{**PAGE_SEEN, "viewer": 403, "team_viewer": 403})

PAGE_READS = {
    "topology list": (lambda w: reverse("topology_list"), expect(**{**PAGE_SEEN,
                                                                    "stranger": 200})),
    "shared tab": (lambda w: reverse("topology_list") + "?tab=shared",
                   expect(**{**PAGE_SEEN, "stranger": 200})),
    "topology": (lambda w: reverse("topology_detail", args=[w.topology.pk]), expect(**PAGE_SEEN)),
    "diff": (lambda w: reverse("revision_diff", args=[w.topology.pk]) + "?a=1&b=1",
             expect(**PAGE_SEEN)),
    "editor": (lambda w: reverse("editor", args=[w.topology.pk]), expect(**PAGE_SEEN)),
    "host matrix": (lambda w: reverse("host_matrix", args=[w.topology.pk]), expect(**PAGE_SEEN)),
    "new scenario": (lambda w: reverse("scenario_new", args=[w.topology.pk]), PAGE_EDIT),
    "scenario": (lambda w: reverse("scenario_edit", args=[w.scenario.pk]), expect(**PAGE_SEEN)),
    "job": (lambda w: reverse("job_detail", args=[w.job.pk]), expect(**PAGE_SEEN)),
    "job status": (lambda w: reverse("job_status", args=[w.job.pk]), expect(**PAGE_SEEN)),
    "result": (lambda w: reverse("job_result", args=[w.job.pk]), expect(**PAGE_SEEN)),
    "compare": (lambda w: reverse("compare") + f"?a={w.job.pk}&b={w.job.pk}",
                expect(**PAGE_SEEN)),
    "sharing": (lambda w: reverse("sharing", args=[w.topology.pk]), PAGE_EDIT),
    "stranger's topology": (lambda w: reverse("topology_detail", args=[w.secret.pk]), expect(
        owner=404, editor=404, viewer=404, team_viewer=404, team_editor=404, stranger=200,
        anon=302, link=302, result_link=302, revoked_link=302, expired_link=302)),
}


@pytest.mark.parametrize("name", list(PAGE_READS))
def test_page_read_matrix(world, page_as, name):
    url, expected = PAGE_READS[name]
    got = {p: page_as(p).get(url(world)).status_code for p in PRINCIPALS}
    assert got == expected


PAGE_POST_OK = dict(owner=302, editor=302, viewer=302, team_viewer=302, team_editor=302,
                    stranger=404, anon=302, link=302, result_link=302, revoked_link=302,
                    expired_link=302)
PAGE_OWNER_ONLY = expect(**{**PAGE_POST_OK, "editor": 403, "viewer": 403, "team_viewer": 403,
                            "team_editor": 403})

PAGE_WRITES = {
    "fork": ("topology_fork", {}, expect(**PAGE_POST_OK)),
    "grant": ("share_grant", {"kind": "user", "name": "zed", "role": "viewer"}, PAGE_OWNER_ONLY),
    "create link": ("link_create", {"expires_in_days": "7"}, PAGE_OWNER_ONLY),
    "transfer": ("topology_transfer", {"username": "zed"}, PAGE_OWNER_ONLY),
    "delete": ("topology_delete", {"confirm": "pod-2"}, PAGE_OWNER_ONLY),
}


@pytest.mark.parametrize("principal", PRINCIPALS)
@pytest.mark.parametrize("name", list(PAGE_WRITES))
def test_page_write_matrix(world, page_as, name, principal):
    url_name, data, expected = PAGE_WRITES[name]
    response = page_as(principal).post(reverse(url_name, args=[world.topology.pk]), data)
    assert response.status_code == expected[principal]
    if principal not in ("owner", "editor", "viewer", "team_viewer", "team_editor", "stranger"):
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("principal", PRINCIPALS)
def test_page_job_cancel_matrix(world, page_as, principal):
    expected = expect(**{**PAGE_POST_OK, "viewer": 403, "team_viewer": 403})
    response = page_as(principal).post(reverse("job_cancel", args=[world.queued_job.pk]))
    assert response.status_code == expected[principal]


# --- Share-link pages: usable without an account ------------------------------------------------

def test_share_link_pages(world, client):
    t, r = world.tokens["link"], world.tokens["result_link"]
    job, queued, secret_job = world.job.pk, world.queued_job.pk, world.secret_job.pk
    expected = {
        f"/s/{t}/": 200, f"/s/{t}/editor/": 200, f"/s/{t}/hosts/": 200,
        f"/s/{t}/results/{job}/": 200, f"/s/{t}/results/{secret_job}/": 404,
        f"/s/{t}/results/{queued}/": 404,  # no result yet
        f"/s/{r}/results/{job}/": 200, f"/s/{r}/": 302, f"/s/{r}/editor/": 404,
        f"/s/{r}/hosts/": 404, f"/s/{r}/results/{queued}/": 404,
        f"/s/{r}/results/{secret_job}/": 404,
    }
    for bad in ("revoked_link", "expired_link"):
        tok = world.tokens[bad]
        expected.update({f"/s/{tok}/": 404, f"/s/{tok}/editor/": 404, f"/s/{tok}/hosts/": 404,
                         f"/s/{tok}/results/{job}/": 404})
    expected.update({"/s/not-a-real-token/": 404, f"/s/{t[:-1]}/": 404})
    got = {url: client.get(url).status_code for url in expected}
    assert got == expected
    assert client.get(f"/s/{r}/")["Location"] == f"/s/{r}/results/{job}/"


def test_share_link_pages_show_no_edit_controls(world, client):
    import json
    import re

    t = world.tokens["link"]
    home = client.get(f"/s/{t}/")
    body = home.content.decode()
    assert "Read-only shared view" in body and "pod-2" in body
    for forbidden in ("Open editor", "New scenario", "Share…", "Fork", 'method="post"',
                      "csrfmiddlewaretoken", "href=\"/topologies/"):
        assert forbidden not in body, forbidden
    assert home["Referrer-Policy"] == "no-referrer"
    assert "no-cache" in home["Cache-Control"] or "max-age=0" in home["Cache-Control"]
    editor = client.get(f"/s/{t}/editor/").content.decode()
    config = json.loads(re.search(r'id="editor-config"[^>]*>(.*?)</script>', editor, re.S)[1])
    assert config["readonly"] is True
    assert set(config["urls"]) == {"topology"}  # no save / build / validate endpoints
    result = client.get(f"/s/{world.tokens['result_link']}/results/{world.job.pk}/")
    text = result.content.decode()
    assert "Simulation result" in text and 'id="fs-figures"' in text
    assert "csrfmiddlewaretoken" not in text and "Share result" not in text


def test_share_link_editor_fetches_the_current_document_only(world, client):
    """The link's editor page carried the whole document inline (2.2 s of CPU at 2,048 hosts):
    it now names a document URL beside it, as the signed-in editor does. That URL answers the
    current revision of the link's topology, and nothing else: another topology's revision and
    a result link's token are 404."""
    import json
    import re

    t, r = world.tokens["link"], world.tokens["result_link"]
    editor = client.get(f"/s/{t}/editor/").content.decode()
    config = json.loads(re.search(r'id="editor-config"[^>]*>(.*?)</script>', editor, re.S)[1])
    current = world.topology.current_revision_id
    assert config["document"] is None and config["document_url"] == f"/s/{t}/editor/?document={current}"
    answer = client.get(config["document_url"])
    assert answer.status_code == 200 and answer["Referrer-Policy"] == "no-referrer"
    assert json.loads(answer.content) == world.topology.current_revision.document
    other = world.secret_job.revision_id
    for url in (f"/s/{t}/editor/?document={other}", f"/s/{r}/editor/?document={current}"):
        assert client.get(url).status_code == 404, url
    assert client.get(f"/s/{t}/editor/?document=x").status_code == 400   # as the editor's own


# --- No data of unshared objects in any list, count, search, export or figure -------------------

def _count(client, url):
    body = client.get(url).json()
    return body["count"], [row.get("name") or row.get("topology_name") for row in body["results"]]


def test_lists_counts_and_searches_never_leak(world, api_as, page_as):
    stranger, viewer = api_as("stranger"), api_as("viewer")
    assert _count(stranger, f"{API}/topologies/") == (1, ["bob-secret"])
    assert _count(stranger, f"{API}/topologies/?search=pod") == (0, [])
    assert _count(stranger, f"{API}/topologies/?shared=me") == (0, [])
    assert _count(stranger, f"{API}/scenarios/")[0] == 1
    assert _count(stranger, f"{API}/jobs/")[0] == 1
    assert _count(stranger, f"{API}/jobs/?topology={world.topology.pk}")[0] == 0
    assert _count(viewer, f"{API}/topologies/") == (1, ["pod-2"])
    assert _count(viewer, f"{API}/topologies/?search=secret") == (0, [])
    assert _count(viewer, f"{API}/topologies/?shared=me&role=viewer") == (1, ["pod-2"])
    assert _count(viewer, f"{API}/topologies/?shared=me&role=editor")[0] == 0
    assert _count(viewer, f"{API}/topologies/?owner=bob")[0] == 0
    assert _count(viewer, f"{API}/jobs/")[0] == 2
    assert _count(api_as("link"), f"{API}/topologies/") == (1, ["pod-2"])
    assert _count(api_as("link"), f"{API}/jobs/")[0] == 2
    assert _count(api_as("result_link"), f"{API}/topologies/")[0] == 0
    assert _count(api_as("result_link"), f"{API}/scenarios/")[0] == 0
    assert _count(api_as("result_link"), f"{API}/jobs/")[0] == 1
    pages = page_as("stranger")
    for url in (reverse("topology_list"), reverse("topology_list") + "?tab=shared",
                reverse("topology_list") + "?tab=shared&q=pod"):
        assert "pod-2" not in pages.get(url).content.decode()
    shared = page_as("viewer").get(reverse("topology_list") + "?tab=shared").content.decode()
    assert "pod-2" in shared and "bob-secret" not in shared
    assert page_as("stranger").get(reverse("compare") + f"?a={world.secret_job.pk}"
                                   f"&b={world.job.pk}").status_code == 404
    # the stranger's figures and export never open through someone else's link
    link = api_as("link")
    assert link.get(f"{API}/jobs/{world.secret_job.pk}/figures/").status_code == 404
    assert link.get(f"{API}/topologies/{world.secret.pk}/export/").status_code == 404


def test_a_user_in_two_granted_groups_counts_each_topology_once(world, api_as):
    from django.contrib.auth.models import Group

    ted = world.users["team_editor"]
    ted.groups.add(Group.objects.get(name="readers"))  # viewer via one team, editor via another
    from designer import services
    services.share_grant(topology=world.topology, actor=world.users["owner"], role="viewer",
                         user=ted)
    body = api_as("team_editor").get(f"{API}/topologies/").json()
    assert body["count"] == 1
    assert body["results"][0]["role"] == "editor"  # the strongest role wins
