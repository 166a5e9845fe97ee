"""Share-link tokens are bearer secrets stored only as a sha256 (``selectors.share_link_hash``),
yet the access log (``designer.ops.access``, INFO, one line per request) wrote every
``/s/<token>/...`` path in clear: whoever reads the logs (a log shipper, an ops dashboard) could
open every shared topology. The logged path now has the token redacted.
"""
from __future__ import annotations

import logging

import pytest

pytestmark = pytest.mark.django_db


def test_access_log_does_not_contain_share_tokens(world, caplog):
    from django.test import Client

    caplog.set_level(logging.INFO, logger="designer.ops.access")
    token = world.tokens["link"]
    client = Client()
    assert client.get(f"/s/{token}/").status_code == 200
    assert client.get(f"/s/{token}/hosts/").status_code == 200
    lines = [r for r in caplog.records if r.name == "designer.ops.access"]
    assert len(lines) == 2
    for record in lines:
        assert token not in record.getMessage()
        assert token not in str(record.path)
        assert record.path.startswith("/s/") and record.status == 200
