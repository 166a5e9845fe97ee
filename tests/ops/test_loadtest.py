"""The load-test runner end to end, short: app on loopback, locust headless, a summary."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.worker, pytest.mark.slow]


def test_runner_short_run_has_no_errors_and_loses_no_job(tmp_path):
    # find_spec, not import: importing locust monkey-patches this process with gevent.
    if importlib.util.find_spec("locust") is None:
        pytest.skip("locust is not installed")
    out = tmp_path / "load"
    run = subprocess.run([sys.executable, "loadtest/run.py", "--users", "4", "--spawn-rate", "4",
                          "--duration", "12", "--workers", "1", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=500)
    app_errors = [line for line in (out / "app.log").read_text(errors="replace").splitlines()
                  if "level=ERROR" in line][:3]
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:], app_errors)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total"]["requests"] > 50 and summary["total"]["failures"] == 0
    for category in ("page", "api read", "api edit"):
        assert summary[category]["requests"] > 0 and summary[category]["p95_ms"] is not None
    jobs = summary["jobs_in_database"]
    assert jobs == {"succeeded": summary["jobs_seen_by_users"]["submitted"]} or \
        summary["jobs_seen_by_users"]["submitted"] == 0
    assert "fabricscope_http_requests_total" in (out / "metrics.txt").read_text()
    assert (out / "summary.md").read_text().startswith("4 users")
    # each user signed in once through the form (its own category); CPU by process role
    assert summary["sign-in"]["requests"] == 8 and summary["sign-in"]["failures"] == 0
    cpu = summary["cpu_s"]
    assert cpu["app"]["web"] > 0 and cpu["app"]["worker"] > 0 and cpu["locust"] > 0, cpu


RESEND_SCRIPT = r'''
import socket, sys, threading
sys.path.insert(0, "loadtest")
import locustfile
from requests import Session

server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(4)

def serve():
    for n in range(10):
        conn, _ = server.accept()
        conn.recv(65536)
        if n in (0, 2):   # as a recycled gunicorn worker: the request read, the connection closed unanswered
            conn.close()
            continue
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        conn.close()

threading.Thread(target=serve, daemon=True).start()
session = Session()
session.mount("http://", locustfile._resend_once())
url = f"http://127.0.0.1:{server.getsockname()[1]}/"
print(session.get(url).status_code, locustfile.RESENT["requests"])
try:
    session.post(url, data=b"x")
    print("post answered")
except Exception as exc:   # a POST is never resent: the server may have acted on it
    print("post", type(exc).__name__, locustfile.RESENT["requests"])
'''


def test_a_get_is_resent_once_after_a_connection_closed_unanswered_and_counted():
    # A subprocess: importing locust monkey-patches the importing process with gevent.
    if importlib.util.find_spec("locust") is None:
        pytest.skip("locust is not installed")
    run = subprocess.run([sys.executable, "-c", RESEND_SCRIPT], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.split("\n")
    assert lines[0] == "200 1"                       # resent once, answered, counted
    assert lines[1] == "post ConnectionError 1"      # a POST is not resent (nor counted)
