"""Fixtures for the sharing tests: one topology seen by every kind of requester.

``world`` gives every test (fresh instances, the same starting rows; built once per module)::

    alice (owner) ── pod-2: 2 DGX-H100 hosts, rail-optimized, 1 storage (r1)
      ├─ eve      user grant   editor
      ├─ victor   user grant   viewer
      ├─ team "readers" (gina)  group grant viewer
      ├─ team "builders" (ted)  group grant editor
      ├─ scenario "ring" · job 1 succeeded (result) · job 2 queued (both by alice)
      └─ links: topology link, result link (job 1), revoked link, expired link
    bob (stranger) ── his own "bob-secret" topology with a scenario and a job

Principals: the users above, ``anon`` (no credentials), and share-link holders without an
account (``link``, ``result_link``, ``revoked_link``, ``expired_link``).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tests.conftest import RING_ALLREDUCE

PRINCIPALS = ("owner", "editor", "viewer", "team_viewer", "team_editor", "stranger", "anon",
              "link", "result_link", "revoked_link", "expired_link")
USERS = {"owner": "alice", "editor": "eve", "viewer": "victor", "team_viewer": "gina",
         "team_editor": "ted", "stranger": "bob"}
LINKS = ("link", "result_link", "revoked_link", "expired_link")

RESULT = {"format": "fabricscope.result/1",
          "summary": {"patterns": {"ar": {"completion_s": 0.01, "throughput_gbps": 3200.0,
                                          "slowest_flow": "ar#0", "flows": 1, "unroutable": 0}},
                      "max_utilization": 1.0, "bottlenecks": ["h0/nic0-leaf0:a>b"]},
          "flows": [{"id": "ar#0", "pattern": "ar", "src": "h0/gpu0", "dst": "h1/gpu0",
                     "bytes": 1e9, "path": ["h0/gpu0", "h0/pcie0", "h0/nic0", "leaf0",
                                            "h1/nic0", "h1/pcie0", "h1/gpu0"], "class": "NET",
                     "rate_gbps": 400.0, "bottleneck": "h0/nic0-leaf0:a>b", "status": "ok"}],
          "resources": [{"id": "h0/nic0-leaf0:a>b", "link": "h0/nic0-leaf0", "dir": "a>b",
                         "capacity_gbps": 400.0, "load_gbps": 400.0, "utilization": 1.0}],
          "diff": None}


def expect(owner, editor, viewer, team_viewer, team_editor, stranger, anon, link, result_link,
           revoked_link, expired_link) -> dict[str, int]:
    """One row of the permission matrix: principal -> expected HTTP status."""
    values = locals()
    return {p: values[p] for p in PRINCIPALS}


def finish(job, data: dict = RESULT):
    from designer.choices import JobState
    from designer.models import SimulationJob, SimulationResult

    SimulationResult.objects.create(job=job, data=data)
    now = timezone.now()
    SimulationJob.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED, progress=100,
                                                   started_at=now, finished_at=now)
    job.refresh_from_db()
    return job


@dataclass
class World:
    users: dict
    topology: object
    scenario: object
    job: object            # succeeded, has a result
    queued_job: object
    secret: object         # bob's own topology
    secret_job: object
    tokens: dict = field(default_factory=dict)
    shares: dict = field(default_factory=dict)
    links: dict = field(default_factory=dict)


def build_world(django_user_model) -> World:
    """Create the rows drawn in the module docstring; returns them as a ``World``."""
    from django.contrib.auth.models import Group

    from designer import services
    from designer.models import ShareLink

    users = {role: django_user_model.objects.create_user(name, password=f"{name}-password-1")
             for role, name in USERS.items()}
    zed = django_user_model.objects.create_user("zed", password="zed-password-1")
    users["zed"] = zed
    readers, builders = Group.objects.create(name="readers"), Group.objects.create(name="builders")
    users["team_viewer"].groups.add(readers)
    users["team_editor"].groups.add(builders)
    alice = users["owner"]
    topology = services.topology_build(owner=alice, name="pod-2", template="dgx-h100", hosts=2,
                                       options={"storage": 1}, description="alice's pod")
    scenario = services.scenario_create(topology=topology, user=alice, name="ring",
                                        workload=RING_ALLREDUCE)
    job = finish(services.job_submit_simulate(scenario=scenario, user=alice))
    queued = services.job_submit_simulate(scenario=scenario, user=alice)
    secret = services.topology_build(owner=users["stranger"], name="bob-secret",
                                     template="dgx-h100", hosts=1, description="bob only")
    secret_scenario = services.scenario_create(topology=secret, user=users["stranger"],
                                               name="bob-ring", workload=RING_ALLREDUCE)
    secret_job = finish(services.job_submit_simulate(scenario=secret_scenario,
                                                     user=users["stranger"]))
    w = World(users=users, topology=topology, scenario=scenario, job=job, queued_job=queued,
              secret=secret, secret_job=secret_job)
    w.shares["editor"] = services.share_grant(topology=topology, actor=alice, role="editor",
                                              user=users["editor"])
    w.shares["viewer"] = services.share_grant(topology=topology, actor=alice, role="viewer",
                                              user=users["viewer"])
    w.shares["readers"] = services.share_grant(topology=topology, actor=alice, role="viewer",
                                               group=readers)
    w.shares["builders"] = services.share_grant(topology=topology, actor=alice, role="editor",
                                                group=builders)
    for name, kwargs in {"link": {}, "result_link": {"job": job}, "revoked_link": {},
                         "expired_link": {}}.items():
        w.links[name], w.tokens[name] = services.share_link_create(topology=topology, actor=alice,
                                                                   **kwargs)
    services.share_link_revoke(link=w.links["revoked_link"], actor=alice)
    ShareLink.objects.filter(pk=w.links["expired_link"].pk).update(
        expires_at=timezone.now() - timedelta(minutes=1))
    return w


def _fresh(obj):
    """The row of ``obj`` as the database has it now (a new instance: tests may mutate theirs)."""
    return type(obj).objects.get(pk=obj.pk)


def reload_world(w: World) -> World:
    """A ``World`` of new instances of ``w``'s rows, read from the database."""
    return World(users={k: _fresh(u) for k, u in w.users.items()}, topology=_fresh(w.topology),
                 scenario=_fresh(w.scenario), job=_fresh(w.job),
                 queued_job=_fresh(w.queued_job), secret=_fresh(w.secret),
                 secret_job=_fresh(w.secret_job), tokens=dict(w.tokens),
                 shares={k: _fresh(v) for k, v in w.shares.items()},
                 links={k: _fresh(v) for k, v in w.links.items()})


@pytest.fixture(scope="module")
def _world_rows(django_db_setup, django_db_blocker) -> World:
    """The world, built once per test module inside a transaction that is rolled back after the
    module's last test (Django's ``TestCase.setUpTestData`` pattern). Each test runs in a savepoint
    inside it (pytest-django's ``db``), so every test starts from exactly these rows and its writes
    vanish with its savepoint. Building it per test cost ~30 % of ``make test-fast``."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            with pytest.MonkeyPatch.context() as mp:
                # as ``published`` does: no message may leave (none does: on_commit never runs here)
                mp.setattr("designer.services.queue._send", lambda *args, **kwargs: None)
                built = build_world(get_user_model())
        except BaseException:
            outer.__exit__(*sys.exc_info())
            raise
    try:
        yield built
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture
def world(request, _world_rows, django_user_model, published) -> World:
    """The world of the module docstring, as fresh instances for this test (see ``_world_rows``)."""
    marker = request.node.get_closest_marker("django_db")
    if (marker and marker.kwargs.get("transaction")) or {"transactional_db", "live_server"} & set(
            request.fixturenames):
        pytest.fail("world is rolled back with savepoints: it cannot serve a transactional test")
    return reload_world(_world_rows)


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """Seven accounts per test: a fast hasher keeps the matrix quick (not a security test)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_cache():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def api_as(world):
    """``api_as(principal)``: an APIClient for a principal of the matrix."""
    from designer import services

    def make(principal: str) -> APIClient:
        client = APIClient()
        if principal in USERS:
            token = services.api_token_rotate(user=world.users[principal])
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {token.key}")
        elif principal in LINKS:
            client.credentials(HTTP_X_SHARE_TOKEN=world.tokens[principal])
        return client
    return make


@pytest.fixture
def page_as(world):
    """``page_as(principal)``: a Django test client; link holders have no account, so on the
    normal pages they are anonymous visitors."""
    from django.test import Client

    def make(principal: str) -> Client:
        client = Client()
        if principal in USERS:
            client.force_login(world.users[principal])
        return client
    return make
