"""Helpers of the schemathesis run in tests/api/test_live.py: seed data, config, command, counts.

The run is bounded (``--max-examples``, one worker, a fixed seed) and uses every check
(``--checks all``). tests/api/schemathesis.toml holds the static part of the configuration;
:func:`write_config` appends the ids of the objects seeded for this run as schemathesis
*dictionaries*, bound to path parameters and body fields with a probability below 1, so the
generated requests reach real objects (200s whose bodies are checked against the schema) as well
as missing ones (404s), and the stateful phase has real objects to chain from.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SCHEMATHESIS", "Seed", "seed", "write_config", "run", "request_counts"]

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
BASE_CONFIG = Path(__file__).with_name("schemathesis.toml")
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Seed:
    """Ids of the seeded objects, by dictionary name (see :func:`write_config`)."""

    token: str
    ids: dict[str, list] = field(default_factory=dict)


def seed(*, user, other_user, topology, scenario) -> Seed:
    """Objects the run can reach, owned by ``user`` (whose token the run sends).

    Two of each kind that a request can destroy: the main objects are read, changed and
    shared; ``doomed`` ones take the DELETEs (and ``given away`` the ownership transfer), so a
    delete early in the run does not leave every later request a 404 or 403.
    """
    from django.contrib.auth.models import Group

    from designer import services

    doomed = services.topology_build(owner=user, name="doomed", template="dgx-h100", hosts=1)
    given = services.topology_build(owner=user, name="given away", template="dgx-h100", hosts=1)
    doomed_scenario = services.scenario_create(topology=topology, user=user, name="doomed",
                                               workload=scenario.workload)
    succeeded = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=succeeded.pk)
    queued = services.job_submit_simulate(scenario=scenario, user=user)
    Group.objects.get_or_create(name="infra")  # the docs' "team editor" example names it
    share = services.share_grant(topology=topology, actor=user, role="viewer", user=other_user)
    link, _ = services.share_link_create(topology=topology, actor=user, job=succeeded,
                                         expires_at=None, label="schemathesis")
    return Seed(token=services.api_token_rotate(user=user).key, ids={
        "topology": [topology.pk], "doomed_topology": [doomed.pk], "given_topology": [given.pk],
        "scenario": [scenario.pk], "doomed_scenario": [doomed_scenario.pk],
        "job": [succeeded.pk], "queued_job": [queued.pk], "revision": [1], "share": [share.pk],
        "link": [link.pk], "username": [other_user.get_username()]})


# (operation name regex, parameter, dictionary): which seeded ids feed which parameter. One value
# per dictionary: schemathesis draws the same entry of a dictionary for a whole run. Names are
# "METHOD /path" (separate include-path/include-method keys would be ORed by schemathesis).
# Viewset ids are strings of digits in the schema (``{id}``: pattern ``^[0-9]+$``), so they take
# the ``_s`` (string) form of a dictionary; ``<int:...>`` path parts and body fields the ints.
_T = "/api/v1/topologies"
_BINDINGS = [
    (f"^[A-Z]+ {_T}/\\{{topology_pk\\}}/", "path.topology_pk", "topology"),
    (f"^(GET|PATCH) {_T}/\\{{id\\}}/$", "path.id", "topology_s"),
    (f"^[A-Z]+ {_T}/\\{{id\\}}/(fork|audit)/$", "path.id", "topology_s"),
    (f"^DELETE {_T}/\\{{id\\}}/$", "path.id", "doomed_topology_s"),
    (f"^POST {_T}/\\{{id\\}}/transfer/$", "path.id", "given_topology_s"),
    (f"^POST {_T}/\\{{id\\}}/transfer/$", "body.username", "username"),
    (f"^POST {_T}/\\{{topology_pk\\}}/shares/$", "body.username", "username"),
    (f"^GET {_T}/\\{{topology_pk\\}}/revisions/\\{{number\\}}/$", "path.number", "revision"),
    (f"^[A-Z]+ {_T}/\\{{topology_pk\\}}/shares/\\{{id\\}}/$", "path.id", "share"),
    (f"^[A-Z]+ {_T}/\\{{topology_pk\\}}/links/\\{{id\\}}/$", "path.id", "link"),
    (f"^POST {_T}/\\{{topology_pk\\}}/links/$", "body.job", "job"),
    ("^(GET|PATCH) /api/v1/scenarios/\\{id\\}/$", "path.id", "scenario_s"),
    ("^DELETE /api/v1/scenarios/\\{id\\}/$", "path.id", "doomed_scenario_s"),
    ("^POST /api/v1/scenarios/$", "body.topology", "topology"),
    ("^GET /api/v1/jobs/\\{id\\}/(result/|figures/)?$", "path.id", "job_s"),
    ("^POST /api/v1/jobs/\\{id\\}/cancel/$", "path.id", "queued_job_s"),
    ("^POST /api/v1/jobs/$", "body.scenario", "scenario"),
]
PROBABILITY = 0.8  # the rest stays generated: missing ids (404) and odd values keep coming


def write_config(path: Path, data: Seed) -> Path:
    """tests/api/schemathesis.toml plus this run's dictionaries and their bindings."""
    lines = [BASE_CONFIG.read_text(), "", "# --- written by tests/api/_schemathesis.py ---"]
    for name, values in data.ids.items():
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}", "",
                  f"[dictionaries.{name}_s]", f"values = {json.dumps([str(v) for v in values])}",
                  ""]
    grouped: dict[str, list[str]] = {}  # one [[operations]] per selector, all its bindings
    for name_re, parameter, dictionary in _BINDINGS:
        grouped.setdefault(name_re, []).append(
            f'"{parameter}" = {{ dictionary = "{dictionary}", probability = {PROBABILITY} }}')
    for name_re, bindings in grouped.items():
        lines += ["[[operations]]", f"include-name-regex = {json.dumps(name_re)}",
                  f"parameters = {{ {', '.join(bindings)} }}", ""]
    path.write_text("\n".join(lines))
    return path


def run(url: str, config: Path, report: Path, *, max_examples: int, phases: str,
        headers: list[str], security_parameters: bool = True) -> subprocess.CompletedProcess:
    """One bounded schemathesis run with every check; the output is returned, not raised.

    ``security_parameters=False`` stops schemathesis from generating credentials of its own
    (random ``X-Share-Token`` or session cookies, each a 401) next to the ``headers`` given, so
    an authenticated run spends its requests behind the login; the ``ignored_auth`` check
    still probes every operation without and with invalid credentials.
    """
    command = [str(SCHEMATHESIS), "--config-file", str(config), "run", f"{url}/api/v1/schema/",
               "--checks", "all", "--phases", phases, "--max-examples", str(max_examples),
               "--seed", "1", "--workers", "1", "--request-timeout", "120", "--no-shrink",
               "--generation-database", "none",
               "--generation-with-security-parameters", str(security_parameters).lower(),
               # POST/DELETE there would rotate or revoke the very token the run uses.
               "--exclude-path", "/api/v1/auth/token/",
               "--exclude-path", "/api/v1/auth/token/{id}/",
               # DELETE /plan/ resets the saved placements; the plan is computed from the design
               # and stays readable, which the stateful phase's use-after-free check reads as a
               # deleted resource still served (a per-operation check setting is not honoured in
               # that phase). Its cases, roles included, are in tests/api/test_plan_placements.py.
               "--exclude-name", "DELETE /api/v1/topologies/{topology_pk}/plan/",
               "--report", "ndjson", "--report-ndjson-path", str(report)]
    for header in headers:
        command += ["-H", header]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1500)


_LINE = re.compile(r'^fabricscope_http_requests_total\{method="[A-Z]+",route="api/v1/[^"]*",'
                   r'status="(\d+)"\} (\d+)$', re.M)


def request_counts() -> dict[str, int]:
    """Requests the live server answered under /api/v1/ so far, by status class ("2xx"…).

    Read from the app's own request metrics (the live server runs in this process), so the
    count includes schemathesis' extra probes, not only its test cases.
    """
    from designer.ops import metrics

    counts: dict[str, int] = {}
    for status, number in _LINE.findall(metrics.render()):
        key = f"{status[0]}xx"
        counts[key] = counts.get(key, 0) + int(number)
    return counts
