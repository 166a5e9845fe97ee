"""What an API token may do: its scope (read = GET/HEAD/OPTIONS only), its expiry, revocation,
the token endpoint (password or session in, a key out once), the ``api_token`` command."""
from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from tests.api.conftest import assert_error

pytestmark = pytest.mark.django_db

API = "/api/v1"
TOKENS = f"{API}/auth/token/"


@pytest.fixture(autouse=True)
def _fresh_cache():
    from django.core.cache import cache

    cache.clear()  # throttle and lockout counters
    yield
    cache.clear()


def _bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


def _token(user, **kwargs):
    from designer import services

    return services.api_token_create(user=user, **{"name": "t", **kwargs})


# --- Scopes -----------------------------------------------------------------------------------------

def test_a_read_token_reads_and_cannot_write(user, small_topology, scenario):
    from designer.models import ApiToken, Scenario, Topology

    client = _bearer(_token(user, scope="read").key)
    assert client.get(f"{API}/topologies/").status_code == 200
    assert client.get(f"{API}/topologies/{small_topology.pk}/").status_code == 200
    assert client.head(f"{API}/topologies/").status_code == 200
    before = (Topology.objects.count(), Scenario.objects.count(), ApiToken.objects.count())
    writes = [("post", f"{API}/topologies/", {"name": "x", "build": {"template": "dgx-h100",
                                                                     "hosts": 1}}),
              ("put", f"{API}/topologies/{small_topology.pk}/", {"name": "renamed"}),
              ("patch", f"{API}/topologies/{small_topology.pk}/", {"name": "renamed"}),
              ("delete", f"{API}/topologies/{small_topology.pk}/", None),
              ("delete", f"{API}/scenarios/{scenario.pk}/", None),
              ("post", f"{API}/validate/", {"document": {}}),
              ("post", TOKENS, {"name": "escalate", "scope": "write"}),
              ("delete", TOKENS, None)]
    for method, url, body in writes:
        error = assert_error(getattr(client, method)(url, body, format="json"), 403,
                             "insufficient_scope")
        assert "read scope" in error["message"] and method.upper() in error["message"]
    assert (Topology.objects.count(), Scenario.objects.count(), ApiToken.objects.count()) == before
    small_topology.refresh_from_db()
    assert small_topology.name != "renamed"


def test_a_write_token_writes(user, small_topology):
    client = _bearer(_token(user, scope="write").key)
    response = client.patch(f"{API}/topologies/{small_topology.pk}/", {"name": "renamed"},
                            format="json")
    assert response.status_code == 200 and response.json()["name"] == "renamed"


# --- Expiry and revocation --------------------------------------------------------------------------

def test_an_expired_token_is_a_401_token_expired(user):
    from designer.models import ApiToken

    token = _token(user)
    client = _bearer(token.key)
    assert client.get(f"{API}/topologies/").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(f"{API}/topologies/")
    error = assert_error(response, 401, "token_expired")
    assert error["message"].startswith("token expired")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_default_and_chosen_lifetimes(user, settings):
    settings.FABRICSCOPE_API_TOKEN_DAYS = 7
    assert abs(_token(user).expires_at - timezone.now() - timedelta(days=7)) < timedelta(minutes=1)
    made = _token(user, name="month", days=30)
    assert abs(made.expires_at - timezone.now() - timedelta(days=30)) < timedelta(minutes=1)


def test_revoked_tokens_stop_at_once_and_others_keep_working(user, other_user):
    first, second = _token(user, name="a"), _token(user, name="b")
    bobs = _token(other_user, name="a")
    session = APIClient()
    session.force_login(user)
    # Bob's token id is not alice's to revoke: a 404, and it keeps working.
    assert_error(session.delete(f"{TOKENS}{bobs.pk}/"), 404, "not_found")
    assert _bearer(bobs.key).get(f"{API}/catalog/").status_code == 200
    assert session.delete(f"{TOKENS}{first.pk}/").status_code == 204
    assert_error(_bearer(first.key).get(f"{API}/catalog/"), 401, "authentication_failed")
    assert _bearer(second.key).get(f"{API}/catalog/").status_code == 200
    assert session.delete(TOKENS).status_code == 204  # all of alice's
    assert _bearer(second.key).get(f"{API}/catalog/").status_code == 401
    assert _bearer(bobs.key).get(f"{API}/catalog/").status_code == 200


def test_the_same_name_rotates(user):
    old = _token(user, name="ci")
    new = _token(user, name="ci")
    assert _bearer(old.key).get(f"{API}/catalog/").status_code == 401
    assert _bearer(new.key).get(f"{API}/catalog/").status_code == 200


def test_an_inactive_account_is_refused(user):
    key = _token(user).key
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert_error(_bearer(key).get(f"{API}/catalog/"), 401, "authentication_failed")


def test_last_used_is_recorded(user):
    from designer.models import ApiToken

    token = _token(user)
    assert token.last_used_at is None
    _bearer(token.key).get(f"{API}/catalog/")
    used = ApiToken.objects.get(pk=token.pk).last_used_at
    assert used is not None and timezone.now() - used < timedelta(minutes=1)


# --- The token endpoint -----------------------------------------------------------------------------

def test_username_and_password_get_a_new_token_once(user):
    anon = APIClient()
    response = anon.post(TOKENS, {"username": "alice", "password": "alice-password-1",
                                  "name": "notebook", "scope": "read", "days": 30},
                         format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "notebook" and body["scope"] == "read"
    assert body["prefix"] == body["token"][:12]
    assert _bearer(body["token"]).get(f"{API}/catalog/").status_code == 200
    assert body["token"] not in _bearer(body["token"]).get(TOKENS).content.decode()


def test_a_wrong_password_creates_nothing_and_locks_out(user, settings):
    from designer.models import ApiToken

    settings.FABRICSCOPE_LOCKOUT_FAILURES = 3
    anon = APIClient()
    messages = [assert_error(anon.post(TOKENS, {"username": "alice", "password": "guess"},
                                       format="json"), 401, "authentication_failed")["message"]
                for _ in range(3)]
    assert messages[:2] == ["invalid username or password"] * 2  # the third one locks
    error = assert_error(anon.post(TOKENS, {"username": "alice", "password": "alice-password-1"},
                                   format="json"), 401, "authentication_failed")
    assert "locked" in error["message"]
    assert not ApiToken.objects.exists()
    assert_error(anon.post(TOKENS, {}, format="json"), 401, "not_authenticated")


@pytest.mark.parametrize("body, field", [
    ({"days": 0}, "days"), ({"days": 100000}, "days"), ({"days": "soon"}, "days"),
    ({"scope": "admin"}, "scope"), ({"name": ""}, "name"), ({"name": "x" * 101}, "name"),
])
def test_bad_input_is_a_located_400_and_creates_nothing(user, body, field):
    from designer.models import ApiToken

    session = APIClient()
    session.force_login(user)
    error = assert_error(session.post(TOKENS, body, format="json"), 400, "invalid")
    assert [d["path"] for d in error["details"]] == [field]
    assert not ApiToken.objects.exists()


def test_a_token_cannot_mint_a_longer_lived_one(user):
    parent = _token(user, name="short", days=2)
    response = _bearer(parent.key).post(TOKENS, {"name": "child", "days": 300}, format="json")
    assert response.status_code == 201
    child_expires = response.json()["expires"]
    from django.utils.dateparse import parse_datetime

    assert parse_datetime(child_expires) <= parent.expires_at


def test_the_number_of_tokens_per_user_is_bounded(user, settings):
    settings.FABRICSCOPE_API_TOKEN_MAX_PER_USER = 2
    session = APIClient()
    session.force_login(user)
    assert session.post(TOKENS, {"name": "a"}, format="json").status_code == 201
    assert session.post(TOKENS, {"name": "b"}, format="json").status_code == 201
    assert session.post(TOKENS, {"name": "a"}, format="json").status_code == 201  # a rotation
    error = assert_error(session.post(TOKENS, {"name": "c"}, format="json"), 400, "invalid")
    assert "2 API tokens" in error["details"][0]["message"]


# --- The command ------------------------------------------------------------------------------------

def _command(*args) -> str:
    out = io.StringIO()
    call_command("api_token", *args, stdout=out)
    return out.getvalue()


def test_api_token_command_create_list_revoke(user):
    from designer.models import ApiToken

    out = _command("create", "alice", "--scope", "read", "--days", "30", "--name", "ci")
    key = next(word for word in out.split() if word.startswith("fsk_"))
    client = _bearer(key)
    assert client.get(f"{API}/catalog/").status_code == 200
    assert_error(client.post(f"{API}/validate/", {"document": {}}, format="json"), 403,
                 "insufficient_scope")
    token = ApiToken.objects.get(user=user)
    assert token.scope == "read"
    assert abs(token.expires_at - timezone.now() - timedelta(days=30)) < timedelta(minutes=1)
    listing = _command("list", "alice")
    assert "ci" in listing and key[:12] in listing and key not in listing
    assert "revoked 1" in _command("revoke", "alice", "ci")
    assert client.get(f"{API}/catalog/").status_code == 401


@pytest.mark.parametrize("args, message", [
    (("create", "nobody"), "no user named 'nobody'"),
    (("create", "alice", "--days", "0"), "days"),
    (("create", "alice", "--scope", "root"), "invalid choice"),
    (("revoke", "alice", "ghost"), "alice has no API token named 'ghost'"),
])
def test_api_token_command_errors(user, args, message):
    from designer.models import ApiToken

    with pytest.raises(CommandError, match=message):
        _command(*args)
    assert not ApiToken.objects.exists()


# --- The profile page -------------------------------------------------------------------------------

def _shown_key(html: str) -> str:
    import re

    match = re.search(r'id="new-token">([^<]+)<', html)
    assert match, "no key shown"
    return match.group(1)


def test_the_profile_page_shows_a_new_key_once_and_stores_it_nowhere(client, user):
    from django.urls import reverse
    from tests.security.test_token_store import _database_text

    client.force_login(user)
    response = client.post(reverse("token_create"), {"name": "laptop", "scope": "read",
                                                     "days": "7"})
    assert response.status_code == 201
    key = _shown_key(response.content.decode())
    assert _bearer(key).get(f"{API}/catalog/").status_code == 200
    page = client.get(reverse("profile")).content.decode()
    assert key not in page and key[:12] in page and "laptop" in page
    assert key not in _database_text()  # not in the sessions table either


def test_the_profile_page_refuses_bad_input_and_revokes_only_ones_own(client, user, other_user):
    from django.urls import reverse

    from designer.models import ApiToken

    client.force_login(user)
    for bad in ({"name": "", "scope": "read", "days": "7"},
                {"name": "x", "scope": "root", "days": "7"},
                {"name": "x", "scope": "read", "days": "100000"}):
        assert client.post(reverse("token_create"), bad).status_code == 400
    assert not ApiToken.objects.exists()
    mine, bobs = _token(user, name="mine"), _token(other_user, name="bobs")
    for token_id in (str(bobs.pk), "x", str(2 ** 70), "-1"):
        client.post(reverse("token_revoke"), {"token_id": token_id})
    assert ApiToken.objects.count() == 2
    client.post(reverse("token_revoke"), {"token_id": str(mine.pk)})
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["bobs"]
