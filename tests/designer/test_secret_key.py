"""SECRET_KEY on a fresh checkout: management commands work without one; serving refuses.

Each case runs in a subprocess with a clean environment (no DEBUG, no SECRET_KEY, nothing of the
test session's) and a var directory of its own, as on a machine that just cloned the repository.
"""
from __future__ import annotations

import os
import stat
import subprocess
import sys

from tests.conftest import ROOT


def _run(args: list[str], tmp_path, **env) -> subprocess.CompletedProcess:
    clean = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
             "FABRICSCOPE_VAR_DIR": str(tmp_path / "var"), **env}
    return subprocess.run([sys.executable, *args], check=False, cwd=ROOT, env=clean,
                          capture_output=True, text=True, timeout=120)


def test_shell_works_on_a_fresh_checkout_with_a_kept_development_key(tmp_path):
    show = "from django.conf import settings as s; print(s.SECRET_KEY, s.DEBUG)"
    first = _run(["manage.py", "shell", "-c", show], tmp_path)
    assert first.returncode == 0, first.stderr
    key, debug = first.stdout.split()[-2:]
    assert debug == "False" and key.startswith("django-insecure-") and len(key) > 60
    key_file = tmp_path / "var" / "secret_key"
    assert key_file.read_text() == key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    again = _run(["manage.py", "shell", "-c", show], tmp_path)
    assert again.stdout.split()[-2] == key  # one key per checkout: sessions survive restarts
    assert _run(["manage.py", "shell", "-c", "print(1)"], tmp_path).stdout.split()[-1] == "1"


def test_wsgi_refuses_to_load_without_secret_key_when_debug_is_off(tmp_path):
    done = _run(["-c", "import designer.wsgi"], tmp_path, DEBUG="0")
    assert done.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set" in done.stderr


def test_wsgi_refuses_the_development_key_even_from_a_management_command(tmp_path):
    done = _run(["manage.py", "shell", "-c", "import designer.wsgi"], tmp_path)
    assert done.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set to serve with DEBUG off" in done.stderr


def test_wsgi_loads_with_debug_or_a_real_key(tmp_path):
    assert _run(["-c", "import designer.wsgi"], tmp_path, DEBUG="1").returncode == 0
    real = _run(["-c", "import designer.wsgi"], tmp_path, DEBUG="0", SECRET_KEY="k" * 60)
    assert real.returncode == 0, real.stderr


def test_check_deploy_and_production_servers_refuse_a_missing_key(tmp_path):
    # Not `up`: it hands its children the checkout's random key and serves with DEBUG off out of
    # the box (tests/ops/test_up_children.py::test_debug_is_off_and_pages_and_static_files_are_served).
    for args in (["manage.py", "check", "--deploy"], ["manage.py", "runserver", "--noreload"]):
        done = _run(args, tmp_path, DEBUG="0")
        assert done.returncode != 0, args
        assert "SECRET_KEY must be set" in done.stderr, args
