"""Settings from the environment, package hygiene, selectors, docker files and ``manage.py up``."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from django.http import Http404

from designer import selectors, services

ROOT = Path(__file__).resolve().parents[2]


def _settings_in_subprocess(env: dict, expression: str) -> subprocess.CompletedProcess:
    """Evaluate ``expression`` over freshly loaded settings under exactly ``env``."""
    code = ("import json, designer.settings as s; "
            f"print(json.dumps({expression}, default=str))")
    base = {k: v for k, v in os.environ.items()
            if k not in ("DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


def test_production_requires_secret_key():
    done = _settings_in_subprocess({"DEBUG": "0"}, "s.SECRET_KEY")
    assert done.returncode != 0 and "SECRET_KEY must be set" in done.stderr


def test_production_settings_are_safe(tmp_path):
    done = _settings_in_subprocess(
        {"DEBUG": "0", "SECRET_KEY": "x" * 50, "ALLOWED_HOSTS": "fabricscope.example.com",
         "DATABASE_URL": "postgres://u:p@db:5432/fs", "REDIS_URL": "redis://cache:6379/2"},
        "[s.DEBUG, s.ALLOWED_HOSTS, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'], "
        "s.CELERY_BROKER_URL, s.REDIS_EMBEDDED]")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        False, ["fabricscope.example.com"], True, True, "django.db.backends.postgresql", "fs",
        "redis://cache:6379/2", False]


def test_defaults_are_sqlite_and_embedded_redis_under_var(tmp_path):
    done = _settings_in_subprocess(
        {"DEBUG": "1", "FABRICSCOPE_VAR_DIR": str(tmp_path)},
        "[s.DATABASES['default']['NAME'], s.CELERY_BROKER_URL, s.REDIS_EMBEDDED, "
        "s.SESSION_COOKIE_SECURE]")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        str(tmp_path / "db.sqlite3"), f"redis+socket://{tmp_path}/redis/redis.socket", True,
        False]


def test_designer_package_is_empty_and_engine_loads_no_django_or_celery():
    assert (ROOT / "designer" / "__init__.py").read_text().strip() == ""
    code = ("import sys, designer.engine, designer.engine.errors; "
            "print([m for m in ('django', 'celery', 'plotly') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


# --- selectors ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_selectors_show_owners_their_objects_and_404_to_others(scenario, user, other_user,
                                                               published):
    from django.contrib.auth.models import AnonymousUser

    topology = scenario.topology
    job = services.job_submit_simulate(scenario=scenario, user=user)
    assert list(selectors.topology_list(user=user)) == [topology]
    assert selectors.topology_get(user=user, pk=topology.pk) == topology
    assert selectors.job_get(user=user, pk=job.pk) == job
    assert list(selectors.revision_list(user=user, topology_pk=topology.pk))[0].number == 1
    for stranger in (other_user, AnonymousUser()):
        assert not selectors.topology_list(user=stranger).exists()
        assert not selectors.job_list(user=stranger).exists()
        with pytest.raises(Http404):
            selectors.topology_get(user=stranger, pk=topology.pk)
        with pytest.raises(Http404):
            selectors.scenario_get(user=stranger, pk=scenario.pk)
        with pytest.raises(Http404):
            selectors.job_get(user=stranger, pk=job.pk)
        with pytest.raises(Http404):
            selectors.revision_get(user=stranger, topology_pk=topology.pk, number=1)


@pytest.mark.django_db
def test_job_list_loads_no_json_and_no_extra_queries(scenario, user, published,
                                                     django_assert_num_queries):
    for _ in range(3):
        services.job_submit_simulate(scenario=scenario, user=user)
    with django_assert_num_queries(1):
        jobs = list(selectors.job_list(user=user))
        names = [(j.topology.name, j.scenario.name, j.revision.number, j.state) for j in jobs]
    assert len(names) == 3
    assert {"inputs", "parameters", "error"} <= jobs[0].get_deferred_fields()


# --- docker ------------------------------------------------------------------------------------

def test_compose_file_names_the_services_and_their_commands():
    compose = yaml.safe_load((ROOT / "docker" / "docker-compose.yml").read_text())
    services_ = compose["services"]
    assert {"web", "worker", "redis", "postgres"} <= set(services_)
    assert services_["web"]["command"] == ["web"]
    assert services_["worker"]["command"] == ["worker"]
    assert services_["beat"]["command"] == ["beat"]
    app_env = services_["web"]["environment"]
    assert "@postgres:5432/" in app_env["DATABASE_URL"]
    assert app_env["REDIS_URL"].startswith("redis://redis:6379")
    assert app_env["DEBUG"] == "0" and "SECRET_KEY" in app_env
    build = services_["worker"]["build"]
    assert (ROOT / "docker" / build["context"] / build["dockerfile"]).resolve() == (
        ROOT / "docker" / "Dockerfile")
    entrypoint = (ROOT / "docker" / "entrypoint").read_text()
    for role in ("web)", "worker)", "beat)", "manage)"):
        assert role in entrypoint
    assert "gunicorn designer.wsgi:application" in entrypoint
    assert "celery -A designer.celery:app worker" in entrypoint
    assert 'ENTRYPOINT ["/app/docker/entrypoint"]' in (ROOT / "docker" / "Dockerfile").read_text()


# --- manage.py up ------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.worker
@pytest.mark.slow
def test_up_serves_pages_and_stops_everything_on_ctrl_c(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY")}
    env.update(FABRICSCOPE_VAR_DIR=str(tmp_path / "var"), FABRICSCOPE_QUEUE="up-test")
    log = tmp_path / "up.log"
    with log.open("wb") as out:
        up = subprocess.Popen([sys.executable, "manage.py", "up", "--port", str(port)],
                              cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while "Press Ctrl-C to stop." not in log.read_text():
            assert up.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        text = log.read_text()
        assert f"http://127.0.0.1:{port}/" in text and "login     demo / fabricscope-demo" in text
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10)
        assert page.status == 200
        socket_file = tmp_path / "var" / "redis" / "redis.socket"
        assert socket_file.exists()
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(60)
    assert up.returncode == 0, log.read_text()
    assert "stopped." in log.read_text()
    assert not socket_file.exists()  # embedded Redis stopped
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1)
    leftover = subprocess.run(["pgrep", "-f", f"fabricscope-{up.pid}@"], capture_output=True)
    assert leftover.stdout == b""  # the worker (named after up's pid) is gone


# --- admin -------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_admin_pages_render(client, django_user_model, scenario, user, published):
    from designer.models import SimulationJob, SweepChunk

    job = services.job_submit_simulate(scenario=scenario, user=user)
    SweepChunk.objects.create(job=job, index=0, failures=[{"target": "h0/nic0"}])
    admin = django_user_model.objects.create_superuser("root", "r@example.com", "root-pw-123")
    client.force_login(admin)
    for model in ("topology", "topologyrevision", "scenario", "simulationjob",
                  "simulationresult", "sweepchunk"):
        assert client.get(f"/admin/designer/{model}/").status_code == 200, model
    assert client.get(f"/admin/designer/simulationjob/{job.pk}/change/").status_code == 200
    revision = scenario.revision
    assert client.get(f"/admin/designer/topologyrevision/{revision.pk}/change/").status_code == 200
    assert SimulationJob.objects.count() == 1
