"""Cost of every page of a big design: CPU seconds and peak Python memory per GET.

Builds a ``--hosts`` host DGX-H100 rail-optimized design (2,048 by default: 16,384 GPUs), saves
it through the services (the model layer, as the New page does), adds a second revision by a
small patch, a scenario and a share, then GETs each page once with Django's test client and
prints ``process CPU s`` and ``peak MB`` (tracemalloc) per page.

    .venv/bin/python tools/big_design_pages.py [--hosts 2048] [--profile PAGE]

Runs against a throw-away SQLite database in a temporary directory (the embedded default's
engine), so it never touches ``var/``. ``--profile NAME`` prints the 25 costliest functions
(cProfile, cumulative) of one page instead. docs/RELIABILITY.md, "Big designs: cost per page",
holds the figures this prints.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _django(var_dir: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    os.environ["FABRICSCOPE_VAR_DIR"] = var_dir
    os.environ["DATABASE_URL"] = f"sqlite:///{var_dir}/pages.sqlite3"
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    os.environ.setdefault("DEBUG", "1")  # as `manage.py up`, the embedded default, runs
    os.environ.setdefault("FABRICSCOPE_BUILD_MAX_ELEMENTS", "1000000")
    os.environ.setdefault("FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE", "10000000")
    os.environ.setdefault("FABRICSCOPE_BROKER_PRECHECK", "0")  # --build-job: no broker, messages captured
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _build_by_job(user, hosts: int):
    """The design built as the New page builds it over MAX_BUILD_HOSTS hosts: a ``build`` job
    (its message captured, run in this process as a worker runs it, under the worker's
    ``RLIMIT_AS``); prints the run's CPU seconds and the process's peak RSS so far."""
    import resource

    from designer import services
    from designer.ops.limits import apply_memory_limit
    from designer.services import queue

    sent = []
    queue._send = lambda name, *args, task_id: sent.append(task_id)
    job = services.topology_build_submit(owner=user, name=f"big-{hosts}", template="dgx-h100",
                                         hosts=hosts)
    limit = resource.getrlimit(resource.RLIMIT_AS)
    apply_memory_limit()
    start = time.process_time()
    services.job_run(job_id=job.pk, hostname="tool", task_id=sent[0])
    resource.setrlimit(resource.RLIMIT_AS, limit)  # the pages after it run in a web process
    job.refresh_from_db()
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"{'build job (' + job.state + ')':34s} {time.process_time() - start:8.2f} s  "
          f"peak RSS {peak_gb:.2f} GB  {job.message or job.error}")
    job.topology.refresh_from_db()
    return job.topology


def build_design(hosts: int, profile_patch: bool = False, with_scenario: bool = True,
                 build_job: bool = False):
    """The design, its saved scenario (None without ``with_scenario``) and the user:
    (user, topology, scenario)."""
    from django.contrib.auth import get_user_model

    from django.test import TestCase

    from designer import services

    user = get_user_model().objects.create_user("big", password="big-password-1")
    if build_job:
        topology = _build_by_job(user, hosts)
    else:
        topology = services.topology_build(owner=user, name=f"big-{hosts}", template="dgx-h100",
                                           hosts=hosts)
    for label, patch in _one_node_edits(topology.current_revision.document):
        profiler = cProfile.Profile() if profile_patch else None
        start = time.process_time()
        with TestCase.captureOnCommitCallbacks(execute=True), _maybe(profiler):
            services.revision_save(topology=topology, user=user, base_revision=topology.revision_number,
                                   patch=patch, message=label)
        if profiler:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        print(f"{'patch save: ' + label:34s} {time.process_time() - start:8.2f} s")
    topology.refresh_from_db()
    if not with_scenario:
        return user, topology, None
    scenario = services.scenario_create(
        topology=topology, user=user, name="ring",
        workload=[{"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e9}],
        failures=[{"target": topology.current_revision.document["links"][0]["id"], "mode": "down"}])
    return user, topology, scenario


def _one_node_edits(document: dict) -> list[tuple[str, dict]]:
    """The editor's one-node saves, in order: link latencies inside a host (an update is whole),
    a drive added with its PCIe link, then removed, a device moved (the ``layout`` field), then
    devices and cables of the fabric: a GPU's model, a NIC's speed, a leaf-spine cable's latency
    (none of them read by the BOM) and a leaf's switch model (read by it), then a leaf added with
    an uplink and a NIC cabled to it, and both removed (the BOM told from its tallies)."""
    inside = [lk for lk in document["links"][:5000] if str(lk.get("tech", "")).startswith(("pcie", "nvlink"))]
    pcie = next(n for n in document["nodes"] if n.get("kind") == "pcie_switch")
    drive = {"id": f"{pcie['group']}/nvme-extra", "kind": "nvme", "group": pcie["group"]}
    cable = {"id": f"{drive['id']}-link", "a": pcie["id"], "b": drive["id"], "tech": "pcie5x4"}
    moved = {**(document.get("layout") or {}), "positions": {pcie["id"]: [120.0, 80.0]}}
    gpu = next(n for n in document["nodes"] if n.get("kind") == "gpu")
    nic = next(n for n in document["nodes"] if n.get("kind") == "nic")
    switches = {n["id"]: n for n in document["nodes"] if n.get("kind") == "switch"}
    uplink = next(lk for lk in document["links"] if lk["a"] in switches and lk["b"] in switches)
    leaf = switches[uplink["a"]]
    new_leaf = dict(leaf, id="leaf-extra", attrs={**leaf["attrs"], "index": 999})
    new_cables = [{"id": "leaf-extra-up", "a": "leaf-extra", "b": uplink["b"], "tech": uplink.get("tech", "eth400")},
                  {"id": "nic-extra-cable", "a": nic["id"], "b": "leaf-extra", "tech": uplink.get("tech", "eth400")}]
    return ([(f"link latency {n + 1}", {"links": {"update": [dict(link, latency_ns=777 + n)]}})
             for n, link in enumerate(inside[:3])]
            + [("drive added", {"nodes": {"add": [drive]}, "links": {"add": [cable]}}),
               ("drive removed", {"nodes": {"remove": [drive["id"]]}, "links": {"remove": [cable["id"]]}}),
               ("device moved", {"layout": moved}),
               ("GPU model", {"nodes": {"update": [dict(gpu, attrs={**gpu["attrs"], "model": "H100-SXM5-94GB"})]}}),
               ("NIC speed", {"nodes": {"update": [dict(nic, attrs={**nic["attrs"], "port_gbps": 800.0})]}}),
               ("leaf-spine cable latency", {"links": {"update": [dict(uplink, latency_ns=1500.0)]}}),
               ("leaf switch model (BOM)", {"nodes": {"update": [dict(leaf, attrs={**leaf["attrs"],
                                                                                   "model": "eth-25t6"})]}}),
               ("leaf + 2 cables added (BOM)", {"nodes": {"add": [new_leaf]}, "links": {"add": new_cables}}),
               ("leaf + 2 cables removed (BOM)", {"nodes": {"remove": [new_leaf["id"]]},
                                                  "links": {"remove": [c["id"] for c in new_cables]}})])


def _maybe(profiler):
    import contextlib

    if profiler is None:
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def running():
        profiler.enable()
        try:
            yield
        finally:
            profiler.disable()
    return running()


def pages(topology, scenario) -> dict[str, str]:
    t, r = topology.pk, topology.revision_number
    api = f"/api/v1/topologies/{t}"
    return {
        "topology list": "/topologies/",
        "topology page": f"/topologies/{t}/",
        "hosts (host matrix)": f"/topologies/{t}/hosts/",
        "scenario form (new)": f"/topologies/{t}/scenarios/new/",
        "scenario page (saved)": f"/scenarios/{scenario.pk if scenario else 0}/",
        "scenario targets (search)": f"/topologies/{t}/scenarios/targets/?q=h1/gpu",
        "revision diff": f"/topologies/{t}/diff/?a={r - 1}&b={r}",
        "editor page": f"/topologies/{t}/editor/",
        "nccl-tests page": f"/topologies/{t}/nccl-tests/",
        "sharing page": f"/topologies/{t}/sharing/",
        "export JSON": f"{api}/export/?format=json",
        "export GraphML": f"{api}/export/?format=graphml",
        "BOM (API)": f"{api}/bom/",
        "revisions (API)": f"{api}/revisions/",
        "revision (API)": f"{api}/revisions/{r}/",
    }


def measure(client, url: str, memory: bool) -> tuple[float, float, int]:
    """(CPU s, peak MB or nan, status) of one GET, the body read whole (streamed bodies too).
    With ``memory``, tracemalloc runs around it (it slows Python down: CPU is then inflated)."""
    if memory:
        tracemalloc.start()
    start = time.process_time()
    response = client.get(url)
    if getattr(response, "streaming", False):
        for _ in response.streaming_content:
            pass
    else:
        _ = response.content
    cpu = time.process_time() - start
    peak = float("nan")
    if memory:
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    return cpu, peak, response.status_code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=2048)
    parser.add_argument("--profile", default="", help="a page name to profile instead")
    parser.add_argument("--patch-only", action="store_true", help="time the patch save, no page")
    parser.add_argument("--build-job", action="store_true",
                        help="build the design by a build job (as the New page over 2,048 hosts)")
    parser.add_argument("--pages", default="", help="comma-separated page names to GET (default all)")
    parser.add_argument("--memory", action="store_true",
                        help="peak Python memory per page (tracemalloc; inflates CPU)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as var_dir:
        _django(var_dir)
        from django.test import Client

        user, topology, scenario = build_design(args.hosts, args.profile == "patch",
                                                with_scenario=not (args.patch_only or args.profile == "patch"
                                                                   or (args.pages and "scenario" not in args.pages)),
                                                build_job=args.build_job)
        if args.patch_only or args.profile == "patch":
            return
        client = Client(SERVER_NAME="localhost")
        client.force_login(user)
        urls = pages(topology, scenario)
        if args.profile:
            client.get(urls["topology list"])
            for name in args.profile.split(","):
                profiler = cProfile.Profile()
                profiler.runcall(client.get, urls[name])
                print(f"==== {name}")
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
            return
        print(f"{'page':34s} {'CPU s':>8s} {'peak MB':>8s} status")
        client.get(urls["topology list"])  # the first request's imports, not any page's cost
        for name, url in urls.items():
            if args.pages and name not in args.pages.split(","):
                continue
            cpu, peak, status = measure(client, url, args.memory)
            print(f"{name:34s} {cpu:8.2f} {peak:8.1f} {status}")


if __name__ == "__main__":
    main()
