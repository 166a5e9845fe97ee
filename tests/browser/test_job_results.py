"""Browser tests of a job's result page: a training job with a failure, a SimAI job and a
disaggregated-inference job, drawn from real engine results (the URLconf, static server and page
helpers of :mod:`tests.browser.test_results`).

Clusters (DGX-H100 hosts, rail-optimized fabric)::

    training: 2 hosts, llama3-8b on B200 figures, tp 2 × dp 8, 12 micro-batches, h0/nic0 down
              (the DP all-reduce loses flows: the step hangs)
    SimAI:    4 hosts, workload_ep_test (tp 4 × ep 4 × dp 8, 43 layers: 204 phases)
    inference: 2 hosts, llama3-70b, prefill on h0, decode on h1, 10 req/s (prefill 415 ms: the
              queue grows without bound)

Screenshots go to /tmp/shots/ (look at them).
"""
from __future__ import annotations

import pathlib

import pytest

from tests.browser.test_results import PAGES, open_page, page, run, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

SHOTS = pathlib.Path("/tmp/shots")
SIMAI = pathlib.Path(__file__).resolve().parents[1] / "engine" / "data" / "simai" / "workload_ep_test.txt"


@pytest.fixture(scope="module")
def jobs():
    from designer.engine.io.simai import simai_job
    from designer.engine.model.fabrics import build_cluster

    two, four = build_cluster("dgx-h100", 2), build_cluster("dgx-h100", 4)
    train = {"layout": {"tp": 2, "dp": 8},
             "template": {"model": "llama3-8b", "microbatches": 12, "seq_len": 4096, "gpu": "b200"}}
    infer = {"template": {"kind": "inference", "model": "llama3-70b", "prompt_tokens": 8192,
                          "prefill": {"group": "h0"}, "decode": {"group": "h1"}, "request_rate": 10,
                          "requests": 16}}
    PAGES["job-fail"] = {"result": run({"topology": two, "workload": {"job": train},
                                        "failures": [{"target": "h0/nic0", "mode": "down"}]}), "topology": two}
    PAGES["job-simai"] = {"result": run({"topology": four, "workload": simai_job(SIMAI.read_text())}),
                          "topology": four}
    PAGES["job-infer"] = {"result": run({"topology": two, "workload": {"job": infer}}), "topology": two}
    return PAGES


def shot(page, name: str, selector: str | None = None) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"job-{name}.png"
    if selector:
        page.locator(selector).screenshot(path=str(path))
    else:
        page.screenshot(path=str(path), full_page=False)


# Each drawn bar's centre (y, px) and each y tick label's centre and text, from the live plot.
GANTT_GEOMETRY = """() => {
    const el = document.querySelector('[data-plot=job]');
    const bars = [...el.querySelectorAll('.barlayer .trace')].flatMap((tr, t) => {
        const data = el._fullData[t];
        return [...tr.querySelectorAll('.point path')].map((p, i) => {
            const r = p.getBoundingClientRect();
            return {id: data.y[i], y: r.top + r.height / 2, h: r.height};
        });
    });
    const ticks = [...el.querySelectorAll('.ytick text')].map(t => {
        const r = t.getBoundingClientRect();
        return {text: t.textContent, y: r.top + r.height / 2};
    });
    return {bars, ticks};
}"""


def _label_beside_each_bar(page) -> tuple[int, list]:
    """Number of bars, and the bars whose nearest y label is another phase's (or none)."""
    page.locator("#sec-job").scroll_into_view_if_needed()
    geo = page.evaluate(GANTT_GEOMETRY)
    wrong = []
    for bar in geo["bars"]:
        near = min(geo["ticks"], key=lambda t: abs(t["y"] - bar["y"]))
        if near["text"] != bar["id"] or abs(near["y"] - bar["y"]) > 6:
            wrong.append((bar["id"], near["text"], round(near["y"] - bar["y"], 1)))
    return len(geo["bars"]), wrong


def test_training_job_with_a_failure_leads_with_the_hang_and_the_step_table(page, server, jobs):
    """The step hangs: one short headline (what hangs, why, NCCL's fallback), a tile naming the
    hung phase instead of a critical bottleneck, the collectives as they ran in the step, and a
    Gantt of 49 drawn rows whose every label sits beside its own bar."""
    open_page(page, f"{server}/_t/result/job-fail/")
    verdict = page.locator("#result-verdict").inner_text()
    assert verdict.startswith("The step does not complete: phase dp.s0 hangs because dp.s0 lost flows")
    assert "NCCL re-initialized without the failed parts would run dp.s0 as" in verdict
    assert " on 3 of 4 rails" in verdict                               # the rails it keeps
    assert len(verdict) < 400, verdict
    assert page.locator("#tile-hang").inner_text().startswith("dp.s0 hangs")
    assert "critical bottleneck" not in page.locator(".fs-stats").inner_text()
    assert page.locator("#result-collectives").count() == 0          # no all-at-once lines
    table = page.locator("#step-collectives").inner_text()
    assert "time in the step" in table and "busbw in the step" in table and "NCCL after re-init" in table
    shot(page, "training-failure-top")
    bars, wrong = _label_beside_each_bar(page)
    assert bars > 40 and not wrong, wrong[:5]
    shot(page, "training-failure-gantt", "#sec-job")


def test_simai_job_headline_is_the_step_and_tiles_read_as_numbers(page, server, jobs):
    """The SimAI step: the headline speaks of the step only (no all-at-once 'slowest pattern'),
    tiles print 3 significant digits with a unit, and the 204-phase Gantt is capped at
    MAX_PHASES_DRAWN rows, each labelled beside its own bar."""
    from designer.figures.style import fmt_time

    open_page(page, f"{server}/_t/result/job-simai/")
    step = jobs["job-simai"]["result"]["summary"]["job"]["step_time_s"]
    verdict = page.locator("#result-verdict").inner_text()
    assert verdict.startswith("Step ") and "slowest pattern" not in verdict
    assert page.locator("#tile-step .v").inner_text() == fmt_time(step)
    stats = page.locator("#job-stats").inner_text()
    assert fmt_time(step) in stats and f"{step:.6f}" not in stats
    shot(page, "simai-top")
    bars, wrong = _label_beside_each_bar(page)
    assert bars > 40 and not wrong, wrong[:5]
    shot(page, "simai-gantt", "#sec-job")


def test_inference_result_shows_ttft_tpot_and_cannot_keep_up(page, server, jobs):
    """10 req/s against a 415 ms prefill on one instance: utilization 4.15, the page says it
    cannot keep up with the numbers, and shows TTFT and TPOT; the section is not a training step."""
    open_page(page, f"{server}/_t/result/job-infer/")
    inf = jobs["job-infer"]["result"]["summary"]["job"]["inference"]
    assert not inf["keeps_up"] and inf["prefill_queue"]["utilization"] > 1
    verdict = page.locator("#result-verdict").inner_text()
    assert verdict.startswith("Inference cannot keep up: prefill utilization 4.15")
    assert "TTFT" in page.locator("#tile-ttft").inner_text() and "TPOT" in page.locator("#tile-tpot").inner_text()
    assert page.locator("#sec-job h2").inner_text() == "Inference requests"
    assert "Training step" not in page.locator(".fs-toc").inner_text()
    assert "cannot keep up" in page.locator("#job-stats").inner_text()
    shot(page, "inference-top")
    shot(page, "inference-requests", "#sec-job")
