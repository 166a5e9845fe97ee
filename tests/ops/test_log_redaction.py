"""No secret reaches the logs: share-link tokens and API keys are redacted by every handler.

The tests configure logging from the real ``settings.LOGGING`` (each handler's stream swapped for
a buffer, both ``LOG_FORMAT`` formatters), run the requests whose 4xx warnings and access lines
used to carry the secrets (Django's ``Not Found: /s/<token>/...``, its ``request=<WSGIRequest:
GET '/api/...?share=<token>'>`` extra, a 401 for a bad bearer key, 403s), log what a careless
``logger.warning("%s", request.META)`` or an exception message would carry, and then search the
captured text for every secret.
"""
from __future__ import annotations

import copy
import io
import logging
import logging.config
import secrets
import sys

import pytest
from django.conf import settings
from django.test import Client

pytestmark = pytest.mark.django_db

API = "/api/v1"


@pytest.fixture
def captured_logs():
    """``captured_logs(fmt)``: settings.LOGGING with every handler writing to one buffer."""
    buffer = io.StringIO()

    def configure(fmt: str) -> io.StringIO:
        config = copy.deepcopy(settings.LOGGING)
        for handler in config["handlers"].values():
            handler["stream"] = buffer
            handler["formatter"] = fmt
        logging.config.dictConfig(config)
        return buffer

    yield configure
    logging.config.dictConfig(settings.LOGGING)


@pytest.fixture
def secrets_in_play(small_topology, user):
    """Real secrets: a share link's token, an API key; plus well-formed keys nobody holds."""
    from designer import services

    _, share = services.share_link_create(topology=small_topology, actor=user)
    api_key = services.api_token_rotate(user=user).key
    return {"share": share, "api": api_key,
            "stranger_share": secrets.token_urlsafe(32),
            "stranger_api": "fsk_" + secrets.token_urlsafe(32),
            "legacy_api": secrets.token_hex(20)}


def _requests(s: dict, topology_pk: int) -> None:
    client = Client()
    # Share links: page 404s (job that does not exist, unknown token) carry the token in the path.
    assert client.get(f"/s/{s['share']}/results/999999/").status_code == 404
    assert client.get(f"/s/{s['stranger_share']}/hosts/").status_code == 404
    # API 404 with ?share= (another topology), 401 for an unknown ?share=, 403 for a link
    # holder on an account endpoint (header form).
    assert client.get(f"{API}/topologies/999999/?share={s['share']}").status_code == 404
    assert client.get(f"{API}/topologies/{topology_pk}/?share={s['stranger_share']}"
                      f"&token={s['stranger_api']}&key={s['legacy_api']}").status_code == 401
    assert client.get(f"{API}/auth/token/", HTTP_X_SHARE_TOKEN=s["share"]).status_code == 403
    # 401s for bearer keys nobody holds, a 404 for the owner of a real one.
    for key in ("stranger_api", "legacy_api"):
        response = client.get(f"{API}/topologies/", HTTP_AUTHORIZATION=f"Bearer {s[key]}")
        assert response.status_code == 401
    response = client.get(f"{API}/jobs/999999/", HTTP_AUTHORIZATION=f"Token {s['api']}")
    assert response.status_code == 404


def _careless_logging(s: dict) -> None:
    log = logging.getLogger("designer.tests.careless")
    meta = {"HTTP_AUTHORIZATION": f"Bearer {s['api']}", "HTTP_X_SHARE_TOKEN": s["share"]}
    log.warning("request headers: %s", meta)
    log.warning("Authorization: Token %s", s["legacy_api"])
    log.warning("client %s", "called", extra={"url": f"https://x.example/s/{s['share']}/"})
    try:
        raise ValueError(f"no such key {s['api']} for link {s['share']}")
    except ValueError:
        log.exception("lookup failed")
    log.warning("here", stack_info=True, extra={"token_seen": s["stranger_api"]})


@pytest.mark.parametrize("fmt", ["kv", "json", "plain"])
def test_no_secret_in_any_handler_output(captured_logs, secrets_in_play, small_topology, fmt):
    buffer = captured_logs(fmt)
    _requests(secrets_in_play, small_topology.pk)
    _careless_logging(secrets_in_play)
    text = buffer.getvalue()
    # The run did log (nothing vacuous): Django's 4xx warnings, the access lines, our lines.
    assert text.count("Not Found") >= 3 and "Unauthorized" in text and "Forbidden" in text
    assert "lookup failed" in text and "ValueError" in text and "request headers" in text
    assert "/s/<redacted>/" in text
    assert "share=<redacted>" in text or fmt == "plain"  # (only in Django's request= extra)
    for name, secret in secrets_in_play.items():
        assert secret not in text, f"the {name} secret is in the {fmt} logs"
        assert secret[:-1] not in text and secret[1:] not in text, name  # nor most of it


def test_every_configured_handler_redacts():
    """A handler added to settings.LOGGING later must get the filter too."""
    for name, handler in settings.LOGGING["handlers"].items():
        assert "redact_secrets" in handler.get("filters", []), name
    assert settings.LOGGING["filters"]["redact_secrets"]["()"] == \
        "designer.ops.logs.RedactSecretsFilter"


@pytest.mark.parametrize("text, kept", [
    ("GET /s/abc/hosts/ 404", "GET /s/<redacted>/hosts/ 404"),
    ("/api/v1/topologies/3/?share=abc&format=json", "/api/v1/topologies/3/?share=<redacted>&format=json"),
    ("?token=abc;key=def", "?token=<redacted>;key=<redacted>"),
    ("{'HTTP_AUTHORIZATION': 'Bearer abc', 'HTTP_HOST': 'x'}",
     "{'HTTP_AUTHORIZATION': '<redacted>', 'HTTP_HOST': 'x'}"),
    ('"x-share-token": "abc"', '"x-share-token": "<redacted>"'),
    ("Authorization: Token abc\nnext", "Authorization: <redacted>\nnext"),
    # Not secrets: rates, prose, a key's public prefix as the tokens list shows it.
    ("50 GB/s per GPU", "50 GB/s per GPU"),
    ("Token expired for alice", "Token expired for alice"),
    ("token fsk_Ab12Cd34 revoked", "token fsk_Ab12Cd34 revoked"),
])
def test_redaction_rules(text, kept):
    from designer.ops.logs import redact

    assert redact(text) == kept


def test_a_failing_log_call_still_redacts_and_does_not_raise(captured_logs):
    """Bad ``%`` arguments must not turn a log call into an exception in the caller, nor
    let the raw arguments through."""
    buffer = captured_logs("kv")
    secret = "fsk_" + secrets.token_urlsafe(32)
    logging.getLogger("designer.tests").warning("two %s %s", f"/s/{secret}/")
    assert secret not in buffer.getvalue() and "<redacted>" in buffer.getvalue()


def test_gunicorn_access_and_error_logs_are_redacted(tmp_path):
    """``--logger-class designer.ops.gunicorn_logging.RedactingLogger`` (docker, ``up``)."""
    from gunicorn.config import Config

    from designer.ops.gunicorn_logging import RedactingLogger

    access = tmp_path / "access.log"
    cfg = Config()
    cfg.set("accesslog", str(access))
    cfg.set("errorlog", str(tmp_path / "error.log"))
    cfg.set("access_log_format", '%(r)s %(s)s "%({authorization}i)s" "%({x-share-token}i)s"')
    logger = RedactingLogger(cfg)
    share, key = secrets.token_urlsafe(32), "fsk_" + secrets.token_urlsafe(32)
    request = _Request([("AUTHORIZATION", f"Bearer {key}"), ("X-SHARE-TOKEN", share)])
    logger.access(_Response(), request, {
        "REQUEST_METHOD": "GET", "RAW_URI": f"/s/{share}/hosts/?share={share}",
        "PATH_INFO": f"/s/{share}/hosts/", "QUERY_STRING": f"share={share}",
        "SERVER_PROTOCOL": "HTTP/1.1", "HTTP_AUTHORIZATION": f"Bearer {key}",
        "HTTP_X_SHARE_TOKEN": share}, _Elapsed())
    logger.error("Error handling request /s/%s/?token=%s", share, key)
    for handler in logger.access_log.handlers + logger.error_log.handlers:
        handler.flush()
    text = access.read_text() + (tmp_path / "error.log").read_text()
    assert "GET /s/<redacted>/hosts/?share=<redacted> HTTP/1.1 404" in text
    assert share not in text and key not in text, text


class _Response:
    status = "404 Not Found"
    status_code = 404
    headers = [("Content-Type", "text/html")]
    sent = 0
    response_length = 0


class _Request:
    def __init__(self, headers):
        self.headers = headers


class _Elapsed:
    seconds, microseconds = 0, 1500

    def total_seconds(self):
        return 0.0015


if sys.platform == "win32":  # gunicorn does not run there
    test_gunicorn_access_and_error_logs_are_redacted = pytest.mark.skip(
        test_gunicorn_access_and_error_logs_are_redacted)


@pytest.mark.parametrize("text, kept", [
    # Bare secrets: an exception quoting a share token or a legacy (40-hex) key.
    ("no such link Yrm-0hnJEHbbC0lvch3IlaTmtsVLXEpXPWhGliAAySA!", "no such link <redacted>!"),
    ("key 45cecb643b87cc64fce1b4cb0c2372dc13a40165 unknown", "key <redacted> unknown"),
    # Not secrets: request ids, uuids, sha256 checksums, long identifiers.
    ("request 0c19156419114c5e9b0a6e58d0f1c2b3", "request 0c19156419114c5e9b0a6e58d0f1c2b3"),
    ("id 8a1c2e4f-0b6d-4e8a-9c3f-2d7b5e1a9f00", "id 8a1c2e4f-0b6d-4e8a-9c3f-2d7b5e1a9f00"),
    ("sum " + "ab12" * 16, "sum " + "ab12" * 16),
    ("in test_no_secret_in_any_handler_output", "in test_no_secret_in_any_handler_output"),
])
def test_bare_secret_shapes(text, kept):
    from designer.ops.logs import redact

    assert redact(text) == kept
