"""Security headers on every response: pages, API answers (errors included), share links.

The fault: no Content-Security-Policy, so any markup injection could run script. The templates
have no inline ``<script>`` and no inline event handler (checked below, so a new one fails
here rather than silently breaking under the policy), which lets the policy allow scripts from
this origin only.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def assert_headers(response) -> None:
    csp = response["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";") if d.strip())
    assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["default-src"] == "'self'"
    assert response["X-Content-Type-Options"] == "nosniff"
    # share-link pages send no referrer at all (their URL is the secret)
    assert response["Referrer-Policy"] in ("same-origin", "no-referrer")
    assert response["X-Frame-Options"] == "DENY"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_pages_carry_the_headers(world, page_as):
    owner = page_as("owner")
    for url in ("/topologies/", f"/topologies/{world.topology.pk}/editor/",
                f"/jobs/{world.job.pk}/result/"):
        response = owner.get(url)
        assert response.status_code == 200, url
        assert_headers(response)
    assert_headers(page_as("anon").get("/accounts/login/"))
    assert_headers(page_as("anon").get(f"/s/{world.tokens['link']}/"))


def test_api_answers_carry_the_headers(world, api_as):
    assert_headers(api_as("owner").get("/api/v1/topologies/"))
    assert_headers(api_as("anon").get("/api/v1/topologies/"))  # a 401
    assert_headers(api_as("owner").get("/api/v1/nowhere/"))   # a 404


def test_the_413_carries_them_too(world, api_as, settings):
    settings.FABRICSCOPE_MAX_BODY_BYTES = 10
    response = api_as("anon").post("/api/v1/validate/", data='{"document": {}}',
                                   content_type="application/json")
    assert response.status_code == 413
    assert_headers(response)


def test_api_docs_pages_get_only_inline_scripts_relaxed(world, page_as):
    """drf-spectacular's Swagger UI starts from an inline script: that page alone may run one."""
    response = page_as("anon").get("/api/v1/docs/")
    assert response.status_code == 200
    csp = response["Content-Security-Policy"]
    assert "script-src 'self' 'unsafe-inline'" in csp and "frame-ancestors 'none'" in csp


def test_templates_have_no_inline_script_or_handler():
    """What lets ``script-src 'self'`` stand: scripts come from files; data for them comes in
    ``json_script`` blocks (``type="application/json"``, never executed)."""
    inline_script = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
    handler = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
    offenders = []
    for path in TEMPLATES.rglob("*.html"):
        text = path.read_text()
        offenders += [f"{path.name}: {m.group()}" for m in inline_script.finditer(text)]
        offenders += [f"{path.name}: {m.group()[:60]}" for m in handler.finditer(text)]
    assert offenders == []
    assert any(TEMPLATES.rglob("*.html"))
