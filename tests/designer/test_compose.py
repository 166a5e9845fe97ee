"""The docker compose files let the worker service scale to N, here and on other machines.

Read with PyYAML (no docker daemon needed): ``docker compose up --scale worker=N`` refuses a
service with a fixed ``container_name`` and cannot start two containers publishing one host port,
so the worker has neither; it shares the web's DATABASE_URL and REDIS_URL (the database and the
broker are all the workers share: no volume); concurrency and memory come from the environment.
"""
from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT

DOCKER = ROOT / "docker"


def _load(name: str) -> dict:
    return yaml.safe_load((DOCKER / name).read_text())


def _from_env(value, name: str) -> bool:
    """``value`` is ``${NAME...}``: docker compose substitutes the variable ``name``."""
    return re.fullmatch(r"\$\{" + name + r"(:[-?][^}]*)?\}", str(value)) is not None


def test_the_worker_service_can_be_scaled_and_shares_the_database_and_broker_with_web():
    services = _load("docker-compose.yml")["services"]
    web, worker = services["web"], services["worker"]
    for blocker in ("container_name", "ports", "hostname", "volumes"):
        assert blocker not in worker, f"worker.{blocker} prevents --scale worker=N"
    assert worker["environment"]["DATABASE_URL"] == web["environment"]["DATABASE_URL"]
    assert worker["environment"]["REDIS_URL"] == web["environment"]["REDIS_URL"]
    assert _from_env(worker["deploy"]["replicas"], "WORKER_REPLICAS")
    assert _from_env(worker["deploy"]["resources"]["limits"]["memory"], "WORKER_MEMORY_LIMIT")
    assert _from_env(worker["environment"]["WORKER_CONCURRENCY"], "WORKER_CONCURRENCY")
    assert _from_env(worker["environment"]["FABRICSCOPE_JOB_MEMORY_LIMIT_MB"],
                     "FABRICSCOPE_JOB_MEMORY_LIMIT_MB")
    # The entrypoint and the settings read what the service sets.
    assert '--concurrency "${WORKER_CONCURRENCY:-2}"' in (DOCKER / "entrypoint").read_text()
    assert 'env_float("FABRICSCOPE_JOB_MEMORY_LIMIT_MB"' in (
        ROOT / "designer" / "settings.py").read_text()


def test_workers_on_another_machine_need_the_database_and_broker_urls_only():
    compose = _load("docker-compose.worker.yml")
    assert set(compose["services"]) == {"worker"}  # never a second beat, web or database
    worker = compose["services"]["worker"]
    assert worker["command"] == ["worker"]
    for blocker in ("container_name", "ports", "hostname", "volumes", "depends_on"):
        assert blocker not in worker
    env = worker["environment"]
    for required in ("SECRET_KEY", "DATABASE_URL", "REDIS_URL"):
        assert re.fullmatch(r"\$\{" + required + r":\?[^}]+\}", env[required]), required
    assert env["DEBUG"] == "0"
    main_worker = _load("docker-compose.yml")["services"]["worker"]
    for name in ("WORKER_CONCURRENCY", "FABRICSCOPE_JOB_MEMORY_LIMIT_MB"):
        assert env[name] == main_worker["environment"][name]
    assert worker["deploy"] == main_worker["deploy"]


def test_the_expose_override_publishes_postgres_and_redis_on_a_given_address_with_passwords():
    override = _load("docker-compose.expose.yml")["services"]
    assert override["redis"]["ports"] == ["${EXPOSE_ADDR:?set EXPOSE_ADDR to a private address}:6379:6379"]
    assert override["postgres"]["ports"] == ["${EXPOSE_ADDR:?set EXPOSE_ADDR to a private address}:5432:5432"]
    command = override["redis"]["command"]
    assert command[command.index("--requirepass") + 1].startswith("${REDIS_PASSWORD:?")
    assert override["redis"]["environment"]["REDISCLI_AUTH"].startswith("${REDIS_PASSWORD:?")
    assert override["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    main = _load("docker-compose.yml")["services"]
    for role in ("web", "worker", "beat"):  # every app process must now send the password
        url = override[role]["environment"]["REDIS_URL"]
        assert url.startswith("redis://:${REDIS_PASSWORD:?") and url.endswith("@redis:6379/0")
        assert main[role]["environment"]["REDIS_URL"] == "redis://redis:6379/0"


def test_the_readme_says_how_to_run_workers_on_several_machines():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Workers on several machines"):]
    section = section[:section.index("\n## ")]
    for needed in ("docker-compose.worker.yml", "docker-compose.expose.yml", "5432", "6379",
                   "DATABASE_URL", "REDIS_URL", "SECRET_KEY", "--scale worker=", "WORKER_CONCURRENCY",
                   "shared filesystem"):
        assert needed in section, needed
