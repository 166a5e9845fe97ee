"""The nccl-tests page in a real browser (headless Chromium, live server).

alice opens her 2-host DGX-H100 topology (16 GPUs, rail-optimized), follows the nccl-tests link,
sees the predicted busbw curve (one trace, log x), uploads the stdout of a real all_reduce_perf
run on 2 HGX H100 hosts (NVIDIA/nccl-tests#319, tests/engine/data/nccl_tests/) and gets the
overlay (two traces) and the per-size error table. A garbage upload is refused next to the
field with its line number.

    [h0: 8×H100, 8×NIC] ==rail 0..7== [leaf0..leaf7] == [spine*] == [leaf0..leaf7] ==rail== [h1]

Screenshots: ``$ARTIFACTS_DIR/screenshots/nccl-tests-*.png``.
"""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURE = (Path(__file__).resolve().parents[1] / "engine" / "data" / "nccl_tests"
           / "all_reduce_2x_hgx_h100_nccl_tests_319.txt")
TRACES = """(key) => Array.from(document.querySelector(`[data-plot="${key || 'nccl_busbw'}"]`).data || [])
    .map(t => ({name: t.name, n: t.x.length, xmin: Math.min(...t.x), xmax: Math.max(...t.x)}))"""
SECOND = FIXTURE.with_name("all_reduce_mpi_prefixed_nccl_1453.txt")
LAYOUT = """(key) => { const l = document.querySelector(`[data-plot="${key}"]`).layout;
    return {x: l.xaxis.type, y: l.yaxis.type, ticks: l.xaxis.ticktext}; }"""
AXIS = "() => document.querySelector('[data-plot=\"nccl_busbw\"]').layout.xaxis.type"


@pytest.fixture
def pod(user):
    from designer import services

    return services.topology_build(owner=user, name="pod-2", template="dgx-h100", hosts=2, options={})


def _ready(page):
    page.wait_for_selector("html[data-figures-ready='1']")


def test_predict_upload_overlay_and_errors(app_page, live_server, sign_in, shot, pod):
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/")
    page.click("#nccl-tests-link")
    _ready(page)
    assert "nccl-tests, side by side" in page.inner_text("h1")
    traces = page.evaluate(TRACES)
    assert [t["name"] for t in traces] == ["predicted"]
    assert traces[0]["n"] == 31 and traces[0]["xmin"] == 8 and traces[0]["xmax"] == 8 * 2 ** 30
    assert page.evaluate(AXIS) == "log"
    assert page.locator("#nccl-rows tbody tr").count() == 31
    shot(page, "nccl-tests-predicted")

    page.set_input_files("#id_log", str(FIXTURE))
    page.click("#nccl-submit")
    _ready(page)
    traces = page.evaluate(TRACES)
    assert [t["name"] for t in traces] == ["predicted", FIXTURE.name]      # the run is named by its file
    assert traces[1]["n"] == 10 and traces[1]["xmin"] == 32 * 2 ** 20 and traces[1]["xmax"] == 16 * 2 ** 30
    assert traces[0]["n"] == 32 and traces[0]["xmax"] == 16 * 2 ** 30   # predicted also at the run's 16 GiB
    rows = page.locator("#nccl-compare tbody tr")
    assert rows.count() == 10                       # every size of the run, 32 MiB … 16 GiB
    first = rows.nth(0).inner_text()
    assert "32 MiB" in first and "40.76" in first and "%" in first
    assert page.js_errors == []
    shot(page, "nccl-tests-overlay")

    page.set_input_files("#id_log", files=[{"name": "junk.txt", "mimeType": "text/plain",
                                            "buffer": b"# size count type redop root time algbw busbw "
                                                      b"#wrong time algbw busbw #wrong\n8 2 float sum\n"}])
    page.click("#nccl-submit")
    error = page.inner_text("[data-field='log'] .errorlist")
    assert "line 2: expected 13 columns, got 4" in error
    shot(page, "nccl-tests-bad-log")


def test_stranger_gets_404(app_page, live_server, sign_in, pod, other_user):
    page = sign_in(app_page, "bob", "bob-password-1")
    response = page.goto(f"{live_server.url}/topologies/{pod.pk}/nccl-tests/")
    assert response.status == 404


def test_two_logs_overlaid_on_log_axes(app_page, live_server, sign_in, shot, pod):
    """Two published all-reduce runs (NVIDIA/nccl-tests#319: 2 HGX H100 hosts, 32 MiB … 16 GiB;
    NVIDIA/nccl#1453: 1 MiB … 512 MiB) overlaid: one trace per file on the busbw and the time
    figures; the busbw axis switched to log and the size axis to decades from the keyboard, in
    place (no new prediction); protocol and channel count forced."""
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/nccl-tests/")
    _ready(page)
    page.select_option("#id_protocol", "Simple")
    page.fill("#id_channels", "16")
    page.set_input_files("#id_log", [str(FIXTURE), str(SECOND)])
    page.click("#nccl-submit")
    _ready(page)
    for key in ("nccl_busbw", "nccl_time"):
        traces = page.evaluate(TRACES, key)
        assert [t["name"] for t in traces] == ["predicted", FIXTURE.name, SECOND.name]
        assert traces[2]["xmin"] == 2 ** 20 and traces[2]["xmax"] == 512 * 2 ** 20
    assert page.evaluate(LAYOUT, "nccl_time")["y"] == "log"
    assert page.locator("#nccl-fits tbody tr").count() == 2
    assert set(page.locator("#nccl-rows tbody td:nth-child(7)").all_text_contents()) == {"Simple"}
    before = page.evaluate("performance.getEntriesByType('navigation')[0].startTime + location.href")

    page.focus("#id_busbw_axis")
    page.keyboard.press("ArrowDown")            # linear → log, a change event as a click would fire
    page.wait_for_function("""() => document.querySelector('[data-plot="nccl_busbw"]').layout.yaxis.type === 'log'""")
    page.focus("#id_size_axis")
    page.keyboard.press("ArrowDown")            # log2 → log10
    page.wait_for_function("""() => (document.querySelector('[data-plot="nccl_time"]').layout.xaxis.ticktext || [])
        .includes('1 GB')""")
    busbw = page.evaluate(LAYOUT, "nccl_busbw")
    assert busbw["x"] == "log" and busbw["y"] == "log" and "1 MB" in busbw["ticks"] and "16 GiB" not in busbw["ticks"]
    assert page.evaluate("performance.getEntriesByType('navigation')[0].startTime + location.href") == before
    assert page.js_errors == []
    page.evaluate("window.scrollTo(0, 0)")     # the sticky header would cross a full-page shot mid-page
    shot(page, "nccl-tests-two-logs-log-axes")


def test_rooted_op_and_nccl_knobs(app_page, live_server, sign_in, shot, pod):
    """broadcast_perf with root 3 on host h1 only, NCCL knobs in the textarea: an unmodelled knob
    is refused next to the field (naming the modelled ones); NCCL_PROTO=Simple is applied (every
    row's protocol Simple, the knobs echoed in the figure's note)."""
    page = sign_in(app_page, "alice", "alice-password-1")
    page.goto(f"{live_server.url}/topologies/{pod.pk}/nccl-tests/")
    _ready(page)
    page.select_option("#id_op", "broadcast")
    page.fill("#id_root", "3")
    page.fill("#id_hosts_subset", "h1")
    page.fill("#id_min_bytes", "1M")
    page.fill("#id_max_bytes", "64M")
    page.fill("#id_env", "NCCL_PROTO=Simple\nNCCL_SOCKET_IFNAME=eth0")
    page.click("#nccl-submit")
    error = page.inner_text("[data-field='env'] .errorlist")
    assert "env[1]: NCCL_SOCKET_IFNAME is not modelled (modelled: NCCL_ALGO" in error
    shot(page, "nccl-tests-bad-knob")
    page.fill("#id_env", "NCCL_PROTO=Simple")
    page.click("#nccl-submit")
    _ready(page)
    assert "broadcast_perf" in page.inner_text(".page-head") and "8 ranks" in page.inner_text(".page-head")
    assert "NCCL_PROTO=Simple" in page.inner_text("#sec-busbw .card-head")
    traces = page.evaluate(TRACES)
    assert traces[0]["n"] == 7 and traces[0]["xmin"] == 2 ** 20
    assert page.js_errors == []
    shot(page, "nccl-tests-broadcast-knobs")
