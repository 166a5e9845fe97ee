"""Fabricscope load test: people who browse pages, read the API, save revisions, submit jobs
and poll them until they finish.

Run through ``loadtest/run.py`` (it starts the app on loopback, creates one account per
simulated user and writes a summary). Accounts come from the JSON file in
``FABRICSCOPE_LOAD_USERS``: ``[{"username", "password", "token", "topology", "scenario",
"session", "session_cookie"}, ...]`` (``session`` set: use it instead of signing in);
each simulated user takes the next one, so nobody waits on another's revisions or job quota.
Think time between a user's tasks: ``FABRICSCOPE_LOAD_WAIT=MIN,MAX`` seconds (``run.py --wait``;
0.5,2.0 by default).

Request names start with a category -- ``page``, ``api read``, ``sign-in``, ``api edit``,
``api submit``, ``api poll`` -- and :func:`_summary` writes per-category p50/p95 to
``FABRICSCOPE_LOAD_SUMMARY``. Sign-in is its own category: checking a password is PBKDF2 with a
million iterations (~0.25 s of CPU by design), once per simulated user, all in the first
``users / spawn-rate`` seconds.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time

from locust import HttpUser, between, events, task
from locust.clients import LocustHttpAdapter
from locust.stats import StatsEntry
from urllib3.util.retry import Retry

ACCOUNTS = json.loads(open(os.environ["FABRICSCOPE_LOAD_USERS"]).read()) \
    if os.environ.get("FABRICSCOPE_LOAD_USERS") else []
_next = itertools.count()
_lock = threading.Lock()
JOBS = {"submitted": 0, "succeeded": 0, "failed": 0, "unfinished": 0, "refused": 0}
RESENT = {"requests": 0}
POLL_TIMEOUT_S = float(os.environ.get("FABRICSCOPE_LOAD_POLL_TIMEOUT", "120"))
CATEGORIES = ("page", "api read", "sign-in", "api edit", "api submit", "api poll")


def wait_bounds(text: str) -> tuple[float, float]:
    """``"MIN,MAX"`` seconds of think time between a user's tasks (``run.py --wait``)."""
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise SystemExit(f"FABRICSCOPE_LOAD_WAIT={text!r}: give MIN,MAX seconds, "
                         "e.g. 0.5,2.0") from None
    if not 0 <= low <= high:
        raise SystemExit(f"FABRICSCOPE_LOAD_WAIT={text!r}: need 0 <= MIN <= MAX")
    return low, high


WAIT_S = wait_bounds(os.environ.get("FABRICSCOPE_LOAD_WAIT", "0.5,2.0"))


def _count(key: str) -> None:
    with _lock:
        JOBS[key] += 1


class ResendOnce(Retry):
    """One resend of a GET whose kept-alive connection closed before any answer, as browsers do
    (RFC 9112 §9.3.1: a client may retry an idempotent request that met a closed connection).
    Gunicorn recycles a worker after ``--max-requests``, closing its idle keep-alive connections;
    a request sent on one at that instant never reached the app. Counted: the summary reports
    ``resent`` next to the errors, so nothing is hidden."""

    def increment(self, *args, **kwargs):
        resend = super().increment(*args, **kwargs)   # raises when the request is not resent
        with _lock:
            RESENT["requests"] += 1
        return resend


def _resend_once() -> LocustHttpAdapter:
    return LocustHttpAdapter(None, max_retries=ResendOnce(total=1, connect=1, read=1, status=0, other=0,
                                                          allowed_methods=frozenset({"GET", "HEAD"}),
                                                          raise_on_status=False))


class Designer(HttpUser):
    wait_time = between(*WAIT_S)

    def on_start(self) -> None:
        self.client.mount("http://", _resend_once())
        account = ACCOUNTS[next(_next) % len(ACCOUNTS)]
        self.account = account
        self.api = {"Authorization": f"Bearer {account['token']}"}
        self.topology, self.scenario = account["topology"], account["scenario"]
        self.document = None
        self.job = None
        if account.get("session"):  # run.py --presigned: a session made in setup
            self.client.cookies.set(account["session_cookie"], account["session"])
            return
        login = self.client.get("/accounts/login/", name="sign-in")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        self.client.post("/accounts/login/", name="sign-in", data={
            "username": account["username"], "password": account["password"],
            "csrfmiddlewaretoken": token[1] if token else ""},
            headers={"Referer": self.host + "/accounts/login/"})

    # --- pages -------------------------------------------------------------------------------
    @task(4)
    def browse(self) -> None:
        self.client.get("/topologies/", name="page topology list")
        self.client.get(f"/topologies/{self.topology}/", name="page topology")
        if self.job:
            self.client.get(f"/jobs/{self.job}/", name="page job")

    # --- API reads ---------------------------------------------------------------------------
    @task(4)
    def read_api(self) -> None:
        self.client.get("/api/v1/topologies/", headers=self.api, name="api read topologies")
        self.client.get(f"/api/v1/topologies/{self.topology}/revisions/", headers=self.api,
                        name="api read revisions")
        self.client.get("/api/v1/jobs/?page_size=20", headers=self.api, name="api read jobs")

    # --- edits: a new revision on the current head -------------------------------------------
    @task(2)
    def edit(self) -> None:
        head = self.client.get(f"/api/v1/topologies/{self.topology}/", headers=self.api,
                               name="api read topology").json()["revision_number"]
        if self.document is None:
            self.document = self.client.get(
                f"/api/v1/topologies/{self.topology}/revisions/{head}/", headers=self.api,
                name="api read revision").json()["document"]
        self.client.post(f"/api/v1/topologies/{self.topology}/revisions/", headers=self.api,
                         json={"document": self.document, "base_revision": head,
                               "message": "load test edit"}, name="api edit save revision")

    # --- jobs: submit, then poll until it ends (a person waiting for a result) -----------------
    @task(1)
    def simulate(self) -> None:
        with self.client.post("/api/v1/jobs/", headers=self.api, name="api submit job",
                              json={"scenario": self.scenario, "kind": "simulate"},
                              catch_response=True) as response:
            if response.status_code != 201:
                _count("refused")
                response.failure(f"{response.status_code}: {response.text[:200]}")
                return
            self.job = response.json()["id"]
        _count("submitted")
        deadline = time.monotonic() + POLL_TIMEOUT_S
        while time.monotonic() < deadline:
            state = self.client.get(f"/api/v1/jobs/{self.job}/", headers=self.api,
                                    name="api poll job").json().get("state")
            if state in ("succeeded", "failed", "cancelled"):
                _count("succeeded" if state == "succeeded" else "failed")
                return
            time.sleep(0.5)
        _count("unfinished")


def _category(name: str) -> str | None:
    return next((c for c in CATEGORIES if name.startswith(c)), None)


@events.quitting.add_listener
def _summary(environment, **kwargs) -> None:
    path = os.environ.get("FABRICSCOPE_LOAD_SUMMARY")
    if not path:
        return
    stats = environment.stats
    merged = {c: StatsEntry(stats, c, "") for c in CATEGORIES}
    for entry in stats.entries.values():
        if (category := _category(entry.name)) is not None:
            merged[category].extend(entry)
    figures = {name: _figures(entry) for name, entry in merged.items()}
    figures["total"] = _figures(stats.total)
    figures["per_request"] = {f"{e.method} {e.name}": _figures(e)
                              for e in sorted(stats.entries.values(), key=lambda e: e.name)}
    figures["errors"] = [{"method": e.method, "name": e.name, "error": str(e.error),
                          "occurrences": e.occurrences} for e in stats.errors.values()]
    figures["jobs_seen_by_users"] = dict(JOBS)
    figures["resent"] = RESENT["requests"]
    with open(path, "w") as out:
        json.dump(figures, out, indent=2)


def _figures(entry) -> dict:
    return {"requests": entry.num_requests, "failures": entry.num_failures,
            "p50_ms": entry.get_response_time_percentile(0.5) if entry.num_requests else None,
            "p95_ms": entry.get_response_time_percentile(0.95) if entry.num_requests else None,
            "max_ms": round(entry.max_response_time) if entry.num_requests else None,
            # summed over requests: run.py subtracts it from the users' time (offered rate)
            "response_time_s": round(entry.total_response_time / 1000, 3),
            "rps": round(entry.total_rps, 2)}
