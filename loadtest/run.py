"""Run the load test end to end on loopback and write a summary.

    .venv/bin/python loadtest/run.py --users 50 --duration 120 [--out DIR]

1. A fresh var directory (SQLite database + embedded Redis of its own, never the developer's),
   migrated, with ``--users`` accounts (API token, a 2-host DGX-H100 topology and a ring
   all-reduce scenario each).
2. ``manage.py up --server gunicorn`` on 127.0.0.1 (gunicorn web, a Celery worker + reaper,
   embedded Redis), DEBUG off, static files collected.
3. ``locust --headless`` against it for ``--duration`` seconds.
4. After locust stops: waits for the job queue to drain, counts jobs by state in the database,
   scrapes /metrics, and writes ``summary.json`` and ``summary.md`` to ``--out``.

Only loopback addresses are used; every loop is bounded in time.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

SETUP = """
import json, sys
from django.contrib.auth import get_user_model
from designer import services
users = []
for i in range({n}):
    name = f"load{{i}}"
    user = get_user_model().objects.create_user(name, password="load-password-1")
    token = services.api_token_rotate(user=user)
    topology = services.topology_build(owner=user, name=f"pod-{{i}}", template="dgx-h100", hosts=2)
    scenario = services.scenario_create(topology=topology, user=user, name="ring", workload=[
        {{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {{"kind": "gpu"}},
          "bytes": 1e9}}])
    users.append({{"username": name, "password": "load-password-1", "token": token.key,
                  "topology": topology.pk, "scenario": scenario.pk}})
json.dump(users, open({path!r}, "w"))
"""

COUNT = """
import json
from django.db.models import Count
from designer.models import SimulationJob
print(json.dumps(dict(SimulationJob.objects.order_by().values_list("state").annotate(n=Count("pk")))))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env: dict, *args: str, timeout: float = 600) -> str:
    out = subprocess.run([PY, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env, text=True,
                         capture_output=True, timeout=timeout)
    if out.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout


def wait_http(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"{url} not ready within {timeout} s")


def job_counts(env: dict) -> dict:
    return json.loads(manage(env, "shell", "-c", COUNT).strip().splitlines()[-1])


def drain(env: dict, timeout: float) -> dict:
    """Wait until no job is queued or running (bounded); return the final counts."""
    deadline = time.monotonic() + timeout
    counts = job_counts(env)
    while time.monotonic() < deadline and (counts.get("queued") or counts.get("running")):
        time.sleep(2)
        counts = job_counts(env)
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--spawn-rate", type=float, default=10)
    parser.add_argument("--duration", type=int, default=120, help="seconds of load")
    parser.add_argument("--workers", type=int, default=2, help="Celery pool processes")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    var = Path(tempfile.mkdtemp(prefix="fsload-", dir="/tmp"))  # short: unix socket path limit
    out = (args.out or ROOT / "var" / "loadtest" / time.strftime("%Y%m%d-%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({
        "FABRICSCOPE_VAR_DIR": str(var), "DEBUG": "0", "SECRET_KEY": "loadtest-" + os.urandom(8).hex(),
        "ALLOWED_HOSTS": "127.0.0.1,localhost", "SECURE_COOKIES": "0",
        "STATIC_ROOT": str(var / "static"), "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "WARNING",
        # Each simulated user is its own account: rates are per account, and generous.
        "FABRICSCOPE_API_RATE_USER": "100000/min", "FABRICSCOPE_API_RATE_JOB_SUBMIT": "10000/min",
    })
    print(f"var {var}; results {out}; app {base}", flush=True)
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput")
    users_file = var / "users.json"
    manage(env, "shell", "-c", SETUP.format(n=args.users, path=str(users_file)))
    app_log = (out / "app.log").open("w")
    app = subprocess.Popen([PY, str(ROOT / "manage.py"), "up", "--server", "gunicorn",
                            "--no-seed", "--host", "127.0.0.1", "--port", str(port),
                            "--workers", str(args.workers)],
                           cwd=ROOT, env=env, stdout=app_log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    summary = {}
    try:
        wait_http(base + "/healthz", 120)
        wait_http(base + "/readyz", 60)
        summary_file = out / "locust.json"
        started = time.time()
        locust = subprocess.run(
            [PY, "-m", "locust", "-f", str(ROOT / "loadtest" / "locustfile.py"), "--headless",
             "--host", base, "-u", str(args.users), "-r", str(args.spawn_rate),
             "-t", f"{args.duration}s", "--stop-timeout", "30", "--csv", str(out / "locust"),
             "--only-summary"],
            cwd=ROOT, env={**env, "FABRICSCOPE_LOAD_USERS": str(users_file),
                           "FABRICSCOPE_LOAD_SUMMARY": str(summary_file)},
            capture_output=True, text=True, timeout=args.duration + 300)
        (out / "locust.log").write_text(locust.stdout + locust.stderr)
        jobs = drain(env, 180)
        with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
            (out / "metrics.txt").write_bytes(response.read())
        summary = json.loads(summary_file.read_text())
        summary.update({"users": args.users, "duration_s": args.duration,
                        "wall_s": round(time.time() - started, 1), "jobs_in_database": jobs,
                        "locust_exit_code": locust.returncode})
    finally:
        os.killpg(app.pid, signal.SIGINT)  # `up` stops web, worker, then Redis
        try:
            app.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(app.pid, signal.SIGKILL)
        app_log.close()
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "summary.md").write_text(markdown(summary))
    print(markdown(summary))
    return 0 if summary.get("total", {}).get("failures") == 0 else 1


def markdown(s: dict) -> str:
    if not s:
        return "no summary (the run failed before locust finished)\n"
    rows = ["| category | requests | failures | p50 ms | p95 ms | max ms |", "|---|---|---|---|---|---|"]
    for name in ("page", "api read", "api edit", "api submit", "api poll", "total"):
        f = s[name]
        rows.append(f"| {name} | {f['requests']} | {f['failures']} | {f['p50_ms']} | "
                    f"{f['p95_ms']} | {f['max_ms']} |")
    jobs = s["jobs_in_database"]
    seen = s["jobs_seen_by_users"]
    return "\n".join([
        f"{s['users']} users, {s['duration_s']} s of load ({s['wall_s']} s wall)", "", *rows, "",
        f"jobs submitted (201) {seen['submitted']}, refused {seen['refused']}; in the database "
        f"after draining: {jobs}; seen finished by their users: succeeded {seen['succeeded']}, "
        f"failed {seen['failed']}, still polling at the end {seen['unfinished']}",
        f"errors: {s['errors'] or 'none'}", ""])


if __name__ == "__main__":
    sys.exit(main())
