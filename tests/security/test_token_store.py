"""API tokens are stored as SHA-256 digests only, found by a public prefix and compared in
constant time; the DRF authtoken keys of earlier versions (stored in clear) are converted by a
data migration and keep working until they expire."""
from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

API = "/api/v1"


def _database_text() -> str:
    """Every row of every table, as text: where a stored key would show."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            chunks.append(repr(cursor.fetchall()))
    return "\n".join(chunks)


def _bearer(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.mark.django_db
def test_the_database_holds_a_digest_never_the_key(user):
    from designer import services
    from designer.models import ApiToken

    token = services.api_token_create(user=user, name="ci", scope="read", days=30)
    key = token.key
    assert key.startswith("fsk_") and len(key) >= 40
    row = ApiToken.objects.get(pk=token.pk)
    assert row.digest == hashlib.sha256(key.encode()).hexdigest()
    assert row.prefix == key[:12] and not hasattr(row, "key")
    assert _bearer(key).get(f"{API}/topologies/").status_code == 200  # also sets last_used_at
    text = _database_text()
    assert key not in text and key[12:] not in text
    assert row.digest in text  # the scan does see the token's row


@pytest.mark.django_db
def test_the_key_in_the_api_answer_is_shown_once(user):
    client = APIClient()
    client.force_login(user)
    created = client.post(f"{API}/auth/token/", {"name": "laptop"}, format="json")
    assert created.status_code == 201, created.content
    key = created.json()["token"]
    listed = client.get(f"{API}/auth/token/")
    assert listed.status_code == 200
    assert key not in listed.content.decode()
    assert [t["prefix"] for t in listed.json()] == [key[:12]]


@pytest.mark.django_db
def test_digests_are_compared_in_constant_time_and_a_shared_prefix_is_refused(user,
                                                                               monkeypatch):
    """The lookup finds candidates by the 12-character prefix; the secret part is checked with
    hmac.compare_digest, never by ``==`` or a database equality on the key."""
    import hmac

    from designer import services
    from designer.services import tokens

    calls, real = [], hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", spy)
    key = services.api_token_create(user=user, name="ci").key
    assert _bearer(key).get(f"{API}/topologies/").status_code == 200
    digest = hashlib.sha256(key.encode()).hexdigest()
    assert calls and all(digest in pair for pair in calls)
    calls.clear()
    forged = key[:12] + secrets.token_urlsafe(32)  # right prefix, wrong secret
    response = _bearer(forged).get(f"{API}/topologies/")
    assert response.status_code == 401 and response.json()["error"]["code"] == \
        "authentication_failed"
    assert len(calls) == 1  # the one candidate with that prefix was compared, and refused


@pytest.mark.django_db
@pytest.mark.parametrize("bad", ["", "x", "fsk_", "fsk_" + "A" * 300, "ключ-" * 10])
def test_malformed_keys_are_a_plain_401(user, bad):
    from designer import services

    services.api_token_create(user=user, name="ci")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bad}".encode("utf-8").decode("latin-1"))
    assert client.get(f"{API}/topologies/").status_code == 401


LEGACY_TABLE = """CREATE TABLE authtoken_token ("key" varchar(40) NOT NULL PRIMARY KEY,
                  "created" timestamp NOT NULL, "user_id" integer NOT NULL)"""


@pytest.mark.django_db(transaction=True)
def test_the_migration_converts_legacy_drf_keys(user):
    """An installation upgraded with DRF authtoken rows: each becomes a hashed write token that
    expires FABRICSCOPE_API_TOKEN_DAYS after the upgrade, and the clear keys are deleted."""
    from django.db.migrations.executor import MigrationExecutor

    from designer.models import ApiToken

    legacy = secrets.token_hex(20)
    created = timezone.now() - timedelta(days=400)
    executor = MigrationExecutor(connection)
    leaves = executor.loader.graph.leaf_nodes()
    executor.migrate([("designer", "0004_result_columns")])
    try:
        with connection.cursor() as cursor:
            cursor.execute(LEGACY_TABLE)
            cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)",
                           [legacy, created.replace(tzinfo=None), user.pk])
        executor = MigrationExecutor(connection)
        executor.migrate([("designer", "0005_api_tokens_hashed")])
        with connection.cursor() as cursor:
            cursor.execute("SELECT COUNT(*) FROM authtoken_token")
            assert cursor.fetchone()[0] == 0  # no key left in clear
    finally:
        MigrationExecutor(connection).migrate(leaves)
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS authtoken_token")
    token = ApiToken.objects.get(user=user)
    assert token.digest == hashlib.sha256(legacy.encode()).hexdigest()
    assert token.prefix == legacy[:12] and token.scope == "write"
    assert abs((token.expires_at - timezone.now()) - timedelta(days=90)) < timedelta(minutes=5)
    assert abs(token.created_at - created) < timedelta(seconds=1)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {legacy}")  # the old client, unchanged
    assert client.get(f"{API}/topologies/").status_code == 200
    assert legacy not in _database_text()


@pytest.mark.django_db
def test_drf_create_token_still_prints_a_working_key(user):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("drf_create_token", "alice", stdout=out)
    key = out.getvalue().split()[2]
    assert key.startswith("fsk_") and _bearer(key).get(f"{API}/catalog/").status_code == 200
    assert key not in _database_text()
