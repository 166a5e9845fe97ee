"""Production settings: ``manage.py check --deploy`` is clean, cookies are secure, password
validators are on, API tokens are revocable from the profile page."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "DEBUG": "0",
    "SECRET_KEY": "t3st-Pr0duction-k3y-Zq8!xW2#vB7$nM4%cL9^hJ1&fD6*sG3(aE5)uI0-oP",
    "ALLOWED_HOSTS": "fabricscope.example.com",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "CSRF_TRUSTED_ORIGINS": "https://fabricscope.example.com",
}


def _manage(*args, tmp_path) -> subprocess.CompletedProcess:
    # DJANGO_ALLOW_ASYNC_UNSAFE is set by the browser fixtures while Playwright runs in this test
    # session; a deployment never has it, and check --deploy rightly warns about it.
    env = {k: v for k, v in os.environ.items()
           if k not in ("DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(PRODUCTION_ENV, FABRICSCOPE_VAR_DIR=str(tmp_path),
               DJANGO_SETTINGS_MODULE="designer.settings")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    done = _manage("check", "--deploy", "--fail-level", "WARNING", tmp_path=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_production_settings_values(tmp_path):
    code = ("from django.conf import settings as s; import json; print(json.dumps({k: getattr(s, k)"
            " for k in ['DEBUG', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
            "'SESSION_COOKIE_HTTPONLY', 'SECURE_HSTS_SECONDS', 'SECURE_SSL_REDIRECT', "
            "'SECURE_HSTS_PRELOAD', 'AUTHENTICATION_BACKENDS']}))")
    done = _manage("shell", "-c", code, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    values = json.loads(done.stdout.strip().splitlines()[-1])
    assert values == {"DEBUG": False, "SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True,
                      "SESSION_COOKIE_HTTPONLY": True, "SECURE_HSTS_SECONDS": 31536000,
                      "SECURE_SSL_REDIRECT": True, "SECURE_HSTS_PRELOAD": True,
                      "AUTHENTICATION_BACKENDS": ["designer.accounts.LockoutModelBackend"]}


def test_password_validators_are_on():
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    for weak in ("short", "password123", "12345678901"):
        with pytest.raises(ValidationError):
            validate_password(weak)


@pytest.mark.django_db
def test_api_token_is_revocable_from_the_profile_page(client, user):
    from rest_framework.test import APIClient

    client.force_login(user)
    import re

    created = client.post(reverse("token_create"), {"name": "api", "scope": "write", "days": "90"})
    key = re.search(r'id="new-token">([^<]+)<', created.content.decode()).group(1)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert api.get("/api/v1/topologies/").status_code == 200
    page = client.get(reverse("profile")).content.decode()
    assert reverse("token_revoke") in page
    client.post(reverse("token_revoke"))
    assert api.get("/api/v1/topologies/").status_code == 401
