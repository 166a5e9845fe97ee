#!/usr/bin/env python
"""Fabricscope's REST API from a script: 32 DGX H100 hosts, a ring all-reduce, a NIC-failure sweep.

    export FABRICSCOPE_URL=http://localhost:8000
    export FABRICSCOPE_TOKEN=...      # profile page, or: python manage.py drf_create_token alice
    python examples/api_client.py     # or --url URL --token TOKEN [--hosts 32]

It builds a rail-optimized cluster in one call, creates a ring all-reduce scenario on it, runs a
sweep of every single NIC failure on the workers, shows progress while it waits, and prints the
five failures that hurt the all-reduce most. Needs only ``requests``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import requests

RING_ALLREDUCE = [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                   "participants": {"kind": "gpu"}, "bytes": 1e9}]


class ApiError(Exception):
    """An error answered by the API: ``{"error": {"code", "message", "details"}}``."""


class Fabricscope:
    """A minimal client: JSON in, JSON out, errors raised with the API's message and details."""

    def __init__(self, url: str, token: str):
        self.base = url.rstrip("/") + "/api/v1/"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        response = self.session.request(method, self.base + path, json=body, timeout=60)
        if response.status_code >= 400:
            try:
                error = response.json()["error"]
            except (ValueError, KeyError):
                raise ApiError(f"HTTP {response.status_code}: {response.text[:200]}") from None
            details = json.dumps(error["details"]) if error["details"] else ""
            raise ApiError(f"HTTP {response.status_code} {error['code']}: {error['message']} "
                           f"{details}".strip())
        return response.json()

    def get(self, path: str) -> dict:
        return self.call("GET", path)

    def post(self, path: str, body: dict) -> dict:
        return self.call("POST", path, body)


def wait(api: Fabricscope, job: dict, timeout_s: float = 1800) -> dict:
    """Poll the job until it ends, drawing a progress bar on one line."""
    deadline = time.monotonic() + timeout_s
    while job["state"] in ("queued", "running") and time.monotonic() < deadline:
        bar = "#" * (job["progress"] // 5)
        print(f"\r  [{bar:<20}] {job['progress']:3d}%  {job['state']:<8} {job['message'][:60]:<60}",
              end="", flush=True)
        time.sleep(0.5)
        job = api.get(f"jobs/{job['id']}/")
    print(f"\r  [{'#' * (job['progress'] // 5):<20}] {job['progress']:3d}%  {job['state']}"
          + " " * 60)
    return job


def describe(entry: dict) -> str:
    """One ranking entry as text: the failure, then its impact on the workload."""
    failure = entry.get("failure", {})
    impact = entry.get("impact", {})
    keys = [k for k in ("slowdown", "completion_increase_s", "throughput_lost_gbps",
                        "disconnected_flows", "worst_pattern") if impact.get(k) is not None] or [
        k for k, v in impact.items() if isinstance(v, (int, float, str))]
    figures = ", ".join(f"{k}={_short(impact[k])}" for k in keys)
    if impact.get("broken"):   # a collective with a lost flow hangs: no slowdown to speak of
        figures = f"does not complete ({', '.join(impact['broken'])}), " + figures
    return f"{failure.get('mode', 'down')} {failure.get('target')}: {figures}"


def _short(value):
    return f"{value:.4g}" if isinstance(value, float) else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("FABRICSCOPE_URL", "http://localhost:8000"))
    parser.add_argument("--token", default=os.environ.get("FABRICSCOPE_TOKEN"))
    parser.add_argument("--hosts", type=int, default=32)
    parser.add_argument("--name", default=f"dgx-h100-rail-{time.strftime('%Y%m%d-%H%M%S')}")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("set FABRICSCOPE_TOKEN or pass --token")
    api = Fabricscope(args.url, args.token)
    try:
        return run(api, args)
    except (ApiError, requests.RequestException) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def run(api: Fabricscope, args) -> int:
    topology = api.post("topologies/", {"name": args.name, "build": {
        "template": "dgx-h100", "hosts": args.hosts, "fabric": "rail-optimized"}})
    print(f"topology {topology['id']} {topology['name']!r}: {topology['host_count']} hosts, "
          f"{topology['gpu_count']} GPUs, {topology['node_count']} nodes, "
          f"{topology['link_count']} links")
    scenario = api.post("scenarios/", {"topology": topology["id"], "name": "ring all-reduce 1 GB",
                                       "workload": RING_ALLREDUCE,
                                       "routing": {"nic_policy": "affinity"}})
    print(f"scenario {scenario['id']} {scenario['name']!r} on revision {scenario['revision']}")
    job = api.post("jobs/", {"scenario": scenario["id"], "kind": "sweep", "over": ["nic"]})
    print(f"sweep job {job['id']} submitted: every single NIC failure")
    job = wait(api, job)
    if job["state"] != "succeeded":
        print(f"sweep {job['state']}: {job['message']}\n{job['error']}".rstrip(), file=sys.stderr)
        return 1
    print(f"sweep succeeded in {job['timings']['total_s']} s")
    sweep = api.get(f"jobs/{job['id']}/result/")
    ranking, skipped = sweep["ranking"], sweep.get("skipped") or {}
    unwired = len(skipped.get("unwired", []))
    print(f"Top 5 of {len(ranking)} NIC failures, most harmful first"
          + (f" ({unwired} unwired NICs not ranked)" if unwired else "") + ":")
    for rank, entry in enumerate(ranking[:5], 1):
        print(f"  {rank}. {describe(entry)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
