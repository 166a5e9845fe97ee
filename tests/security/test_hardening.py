"""Small hardening checks: no secrets in public probes or logs, throttles not fooled by headers."""
from __future__ import annotations

import logging

import pytest


def test_share_tokens_are_redacted_from_any_log_line():
    from designer.ops.logs import RedactSecretsFilter

    token = "Zk3v9-abcdefghijklmnopqrstuvwx_0123456789"
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1,
                               "Not Found: %s", (f"/s/{token}/results/4/",), None)
    RedactSecretsFilter().filter(record)
    assert token not in record.getMessage()
    assert "/s/<redacted>/results/4/" in record.getMessage()
    query = logging.LogRecord("x", logging.INFO, __file__, 1, f"GET /api/v1/jobs/1/?share={token}", None, None)
    RedactSecretsFilter().filter(query)
    assert token not in query.getMessage()


@pytest.mark.django_db
def test_anonymous_throttle_ignores_forwarded_for():
    from django.core.cache import cache

    from designer.ops.throttling import AnonThrottle

    cache.clear()
    throttle = AnonThrottle()
    from django.test import RequestFactory

    request = RequestFactory().get("/api/v1/catalog/", REMOTE_ADDR="127.0.0.9",
                                   HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert throttle.get_ident(request) == "127.0.0.9"
