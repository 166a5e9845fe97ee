"""Run the load test end to end on loopback and write a summary.

    .venv/bin/python loadtest/run.py --users 50 --duration 120 [--out DIR]
    .venv/bin/python loadtest/run.py --users 200 --database-url postgres://postgres@127.0.0.1:5432/fsload \
        --redis-url redis://127.0.0.1:6379/12      # an empty database and Redis database of your own

1. A fresh var directory (SQLite database + embedded Redis of its own, never the developer's),
   migrated, with ``--users`` accounts (API token, a 2-host DGX-H100 topology and a ring
   all-reduce scenario each).
2. ``manage.py up --server gunicorn`` on 127.0.0.1 (gunicorn web, a Celery worker + reaper,
   embedded Redis), DEBUG off; static files straight from the source tree, as ``up`` serves them
   (no collectstatic: its compression took minutes, and no simulated user fetches them).
3. ``locust --headless`` against it for ``--duration`` seconds.
4. After locust stops: waits for the job queue to drain, counts jobs by state in the database,
   scrapes /metrics, and writes ``summary.json`` and ``summary.md`` to ``--out``.

The summary also says where the machine's CPU went during the load (``cpu_s``): the app's process
group (web, worker, beat, embedded Redis, each by name), locust, and everything else on the
machine (``/proc/stat`` busy time minus both), with the load average before and after. The
machine is shared: a p95 is only comparable next to these figures. ``--locust-cpus`` pins locust
(``taskset -c``) apart from the app (``--app-cpus``) when that makes the figure more honest.

``--wait MIN,MAX`` sets locust's think time between a user's tasks (default 0.5,2.0 s). The
summary gives two request rates: ``sent_rps``, what locust sent (requests / seconds of load), and
``offered_rps``, what the same users would have sent had every answer been instant: requests /
(the users' active time minus the time they spent waiting on answers, per user). The first falls
as the app saturates; the second is the load it was offered, the x axis of a p95 table.

Only loopback addresses are used; every loop is bounded in time.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable

SETUP = """
import json, sys
from django.contrib.auth import get_user_model
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.hashers import make_password
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
from designer import bridge, services
# One password hash and one generated document for every account: PBKDF2 takes ~0.25 s a call
# and the build is the same each time; each account still gets its own rows.
password = make_password("load-password-1")
document = bridge.build_cluster_document(name="pod", template="dgx-h100", hosts=2,
                                         fabric="rail-optimized", options=None)
users = []
for i in range({n}):
    name = f"load{{i}}"
    user = get_user_model().objects.create(username=name, password=password)
    token = services.api_token_rotate(user=user)
    topology = services.topology_create(owner=user, name=f"pod-{{i}}", document=document,
                                        message="generated: 2 x dgx-h100, rail-optimized fabric")
    scenario = services.scenario_create(topology=topology, user=user, name="ring", workload=[
        {{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {{"kind": "gpu"}},
          "bytes": 1e9}}])
    session = None
    if {presigned}:  # a signed-in session made as django.contrib.auth.login makes one
        store = SessionStore()
        store.update({{SESSION_KEY: str(user.pk), BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0],
                      HASH_SESSION_KEY: user.get_session_auth_hash()}})
        store.create()
        session = store.session_key
    users.append({{"username": name, "password": "load-password-1", "token": token.key,
                  "topology": topology.pk, "scenario": scenario.pk, "session": session,
                  "session_cookie": settings.SESSION_COOKIE_NAME}})
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


def loopback_url(url: str) -> str:
    """``url`` unchanged when its host is a loopback address (this script never loads anything
    else), else a SystemExit that names it."""
    host = urllib.parse.urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"{url!r}: the load test only runs against loopback, not host {host!r}")
    return url


def _ticks(pid: str) -> tuple[str, int, float] | None:
    """(role, parent pid, CPU seconds incl. reaped children) of one process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    cpu = sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")  # u+s time, + children
    return _role(b" ".join(args).decode(errors="replace")), int(fields[1]), cpu


def _role(command: str) -> str:
    for role, marker in (("up", "manage.py up"), ("web", "gunicorn"), ("worker", " worker "),
                         ("beat", " beat "), ("redis", "redis-server")):
        if marker in command:
            return role
    return "other"


def app_cpu(root: int) -> dict[str, float]:
    """CPU seconds so far of ``root`` and every live descendant (``up`` starts its children in
    sessions of their own), summed by role."""
    rows = {int(pid): row for pid in os.listdir("/proc") if pid.isdigit()
            if (row := _ticks(pid)) is not None}
    tree, total = {root}, {}
    for _ in range(8):  # up -> gunicorn master -> workers; celery -> pool processes
        tree |= {pid for pid, row in rows.items() if row[1] in tree}
    for pid in tree & rows.keys():
        role, _, cpu = rows[pid]
        total[role] = total.get(role, 0.0) + cpu
    return total


def machine_busy_s() -> float:
    """Busy CPU seconds of the whole machine since boot (all cores, /proc/stat)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_report(before: dict, after: dict, locust_s: float, busy_s: float, wall_s: float,
               loads: tuple) -> dict:
    app = {k: round(after.get(k, 0.0) - before.get(k, 0.0), 1) for k in sorted(after)}
    app_total = sum(app.values())
    return {"wall_s": round(wall_s, 1), "cores": os.cpu_count(), "app": app,
            "app_total": round(app_total, 1), "locust": round(locust_s, 1),
            "rest_of_machine": round(busy_s - app_total - locust_s, 1),
            "machine_busy": round(busy_s, 1), "loadavg_before": loads[0],
            "loadavg_after": loads[1]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--spawn-rate", type=float, default=10)
    parser.add_argument("--duration", type=int, default=120, help="seconds of load")
    parser.add_argument("--workers", type=int, default=2, help="Celery pool processes")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--database-url", default=None,
                        help="an EMPTY loopback database (e.g. PostgreSQL) instead of a fresh SQLite file")
    parser.add_argument("--redis-url", default=None,
                        help="a loopback Redis database of the run's own instead of the embedded one")
    parser.add_argument("--web-workers", type=int, default=None, help="gunicorn processes (up's default)")
    parser.add_argument("--web-threads", type=int, default=None, help="threads per gunicorn process")
    parser.add_argument("--presigned", action="store_true",
                        help="give each simulated user a signed-in session made in setup instead "
                             "of signing in through the form (PBKDF2, ~0.25 s of CPU each, all "
                             "within the ramp-up): measures browsing, not 200 sign-ins at once")
    parser.add_argument("--wait", type=wait_arg, default="0.5,2.0", metavar="MIN,MAX",
                        help="think time between a user's tasks, seconds (locust's between())")
    parser.add_argument("--locust-cpus", default=None, help="taskset -c list for locust, e.g. 1")
    parser.add_argument("--app-cpus", default=None, help="taskset -c list for the app, e.g. 0")
    args = parser.parse_args(argv)

    var = Path(tempfile.mkdtemp(prefix="fsload-", dir="/tmp"))  # short: unix socket path limit
    out = (args.out or ROOT / "var" / "loadtest" / time.strftime("%Y%m%d-%H%M%S")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    if args.database_url:
        env["DATABASE_URL"] = loopback_url(args.database_url)
    if args.redis_url:
        env["REDIS_URL"] = loopback_url(args.redis_url)
        env["FABRICSCOPE_CACHE_KEY_PREFIX"] = "fsload-" + os.urandom(4).hex()
    env.update({
        "FABRICSCOPE_VAR_DIR": str(var), "DEBUG": "0", "SECRET_KEY": "loadtest-" + os.urandom(8).hex(),
        "ALLOWED_HOSTS": "127.0.0.1,localhost", "SECURE_COOKIES": "0",
        "STATIC_ROOT": str(var / "static"), "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "WARNING",
        # Each simulated user is its own account: rates are per account, and generous. All of
        # them sign in from 127.0.0.1, which the per-address sign-in limit (60/min) would read as
        # one office guessing passwords; the per-account limit and the lockout stay as they are.
        "FABRICSCOPE_API_RATE_USER": "100000/min", "FABRICSCOPE_API_RATE_JOB_SUBMIT": "10000/min",
        "FABRICSCOPE_API_RATE_SIGNIN_IP": "100000/min",
    })
    print(f"var {var}; results {out}; app {base}", flush=True)
    manage(env, "migrate", "--noinput")
    users_file = var / "users.json"
    manage(env, "shell", "-c", SETUP.format(n=args.users, path=str(users_file),
                                            presigned=args.presigned))
    app_log = (out / "app.log").open("w")
    web = [f"--web-{k}={v}" for k, v in (("workers", args.web_workers),
                                          ("threads", args.web_threads)) if v]
    app = subprocess.Popen([*pin(args.app_cpus), PY, str(ROOT / "manage.py"), "up",
                            "--server", "gunicorn", "--no-seed", "--host", "127.0.0.1",
                            "--port", str(port), "--workers", str(args.workers), *web],
                           cwd=ROOT, env=env, stdout=app_log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    summary = {}
    try:
        wait_http(base + "/healthz", 120)
        wait_http(base + "/readyz", 60)
        summary_file = out / "locust.json"
        started = time.time()
        cpu_before, busy_before = app_cpu(app.pid), machine_busy_s()
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_before = os.getloadavg()
        locust = subprocess.run(
            [*pin(args.locust_cpus), PY, "-m", "locust", "-f",
             str(ROOT / "loadtest" / "locustfile.py"), "--headless",
             "--host", base, "-u", str(args.users), "-r", str(args.spawn_rate),
             "-t", f"{args.duration}s", "--stop-timeout", "30", "--csv", str(out / "locust"),
             "--only-summary"],
            cwd=ROOT, env={**env, "FABRICSCOPE_LOAD_USERS": str(users_file),
                           "FABRICSCOPE_LOAD_SUMMARY": str(summary_file),
                           "FABRICSCOPE_LOAD_WAIT": args.wait},
            capture_output=True, text=True, timeout=args.duration + 300)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = cpu_report(cpu_before, app_cpu(app.pid),
                         children.ru_utime + children.ru_stime - children_before.ru_utime
                         - children_before.ru_stime, machine_busy_s() - busy_before,
                         time.time() - started, (load_before, os.getloadavg()))
        (out / "locust.log").write_text(locust.stdout + locust.stderr)
        jobs = drain(env, 180)
        try:
            with urllib.request.urlopen(base + "/metrics", timeout=30) as response:
                (out / "metrics.txt").write_bytes(response.read())
        except OSError as exc:  # a web tier still backed up: the summary matters more
            (out / "metrics.txt").write_text(f"not scraped: {exc}\n")
        summary = json.loads(summary_file.read_text())
        summary.update({"users": args.users, "duration_s": args.duration,
                        "wall_s": round(time.time() - started, 1), "jobs_in_database": jobs,
                        "locust_exit_code": locust.returncode, "cpu_s": cpu,
                        "wait_s": args.wait,
                        **request_rates(summary["total"], args.users, args.duration,
                                        args.spawn_rate),
                        "sign_in": "presigned sessions" if args.presigned else "the sign-in form",
                        "backend": {"database": "postgresql" if args.database_url else "sqlite",
                                    "redis": "REDIS_URL" if args.redis_url else "embedded"}})
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


def wait_arg(text: str) -> str:
    """``--wait MIN,MAX`` checked (seconds, 0 <= MIN <= MAX), passed on as given."""
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give MIN,MAX seconds, e.g. 0.5,2.0") from None
    if not 0 <= low <= high:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= MIN <= MAX")
    return f"{low},{high}"


def request_rates(total: dict, users: int, duration_s: float, spawn_rate: float) -> dict:
    """Sent and offered requests per second (module docstring) from locust's ``total``.

    Users start ``spawn_rate`` a second, so the users' active time is ``users x duration``
    less the ramp's missing half triangle; the time spent waiting on answers is locust's summed
    response time. Nothing here is tuned: both are ratios of measured totals.
    """
    requests = total.get("requests") or 0
    ramp_s = min(users / spawn_rate, duration_s) if spawn_rate > 0 else 0.0
    active_s = users * duration_s - users * ramp_s / 2
    idle_per_user_s = (active_s - total.get("response_time_s", 0.0)) / users if users else 0.0
    return {"sent_rps": round(requests / duration_s, 1) if duration_s else None,
            "offered_rps": round(requests / idle_per_user_s, 1) if idle_per_user_s > 0 else None}


def pin(cpus: str | None) -> list[str]:
    return ["taskset", "-c", cpus] if cpus else []


def markdown(s: dict) -> str:
    if not s:
        return "no summary (the run failed before locust finished)\n"
    rows = ["| category | requests | failures | p50 ms | p95 ms | max ms |", "|---|---|---|---|---|---|"]
    for name in ("page", "api read", "sign-in", "api edit", "api submit", "api poll", "total"):
        f = s[name]
        rows.append(f"| {name} | {f['requests']} | {f['failures']} | {f['p50_ms']} | "
                    f"{f['p95_ms']} | {f['max_ms']} |")
    jobs = s["jobs_in_database"]
    seen = s["jobs_seen_by_users"]
    return "\n".join([
        f"{s['users']} users, {s['duration_s']} s of load ({s['wall_s']} s wall), "
        f"{s.get('backend')}, signed in with {s.get('sign_in')}, think time {s.get('wait_s')} s",
        f"requests per second: offered {s.get('offered_rps')} (had every answer been instant), "
        f"sent {s.get('sent_rps')}", "", *rows, "",
        f"jobs submitted (201) {seen['submitted']}, refused {seen['refused']}; in the database "
        f"after draining: {jobs}; seen finished by their users: succeeded {seen['succeeded']}, "
        f"failed {seen['failed']}, still polling at the end {seen['unfinished']}",
        f"errors: {s['errors'] or 'none'}; GETs resent once after a kept-alive connection closed "
        f"unanswered (as browsers do): {s.get('resent', 0)}", cpu_line(s.get("cpu_s")), ""])


def cpu_line(cpu: dict | None) -> str:
    if not cpu:
        return ""
    app = ", ".join(f"{k} {v}" for k, v in cpu["app"].items())
    return (f"CPU seconds during the load ({cpu['wall_s']} s wall x {cpu['cores']} cores): app "
            f"{cpu['app_total']} ({app}), locust {cpu['locust']}, rest of the machine "
            f"{cpu['rest_of_machine']}; load average before {cpu['loadavg_before']}, after "
            f"{cpu['loadavg_after']}")


if __name__ == "__main__":
    sys.exit(main())
