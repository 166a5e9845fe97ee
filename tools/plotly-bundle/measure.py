"""Main-thread script time of loading plotly.js bundles in Chromium, first visit (nothing cached).

For each bundle, alternating, ``--runs`` times: a new browser context (empty HTTP and code caches)
loads a page holding only the bundle and one scatter + bar + box figure; Chromium's CDP
``Performance.getMetrics`` ``ScriptDuration`` (compile + run of every script, in ms) and the
``Plotly.newPlot`` time are read. Used for the bundle's numbers in docs/PERFORMANCE.md::

    .venv/bin/python tools/plotly-bundle/measure.py static/vendor/plotly-fabricscope.min.js OTHER.min.js
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from playwright.sync_api import sync_playwright

__all__ = ["measure"]

ORIGIN = "http://bundle.test/"
PAGE = """<!doctype html><div id=g style="width:600px;height:400px"></div><script src="/bundle.js"></script>
<script>const t0 = performance.now();
Plotly.newPlot('g', [{type: 'scatter', y: [1, 3, 2]}, {type: 'bar', y: [2, 1, 3]}, {type: 'box', y: [1, 2, 3, 4, 9]}])
  .then(() => { window.drawMs = performance.now() - t0; });</script>"""


def _one_load(browser, body: bytes) -> tuple[float, float]:
    """Script time and newPlot time (ms) of one first visit of the test page with ``body`` as bundle."""
    context = browser.new_context()
    page = context.new_page()
    page.route(ORIGIN, lambda route: route.fulfill(body=PAGE, content_type="text/html"))
    page.route(ORIGIN + "bundle.js", lambda route: route.fulfill(body=body, content_type="text/javascript"))
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(ORIGIN)
    page.wait_for_function("window.drawMs !== undefined")
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    draw_ms = page.evaluate("window.drawMs")
    context.close()
    return metrics["ScriptDuration"] * 1e3, draw_ms


def measure(bundles: list[Path], runs: int = 5, chromium: str = "/usr/bin/chromium") -> dict[str, list]:
    """Per bundle, ``runs`` (script ms, newPlot ms) pairs, the bundles alternating run by run."""
    out = {str(b): [] for b in bundles}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium)
        for _ in range(runs):
            for bundle in bundles:
                out[str(bundle)].append(_one_load(browser, bundle.read_bytes()))
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundles", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    for bundle, pairs in measure(args.bundles, args.runs).items():
        script = [round(s) for s, _ in pairs]
        draw = [round(d) for _, d in pairs]
        print(f"{bundle}: {Path(bundle).stat().st_size:,} B; script time median {statistics.median(script)} ms "
              f"{script}; newPlot median {statistics.median(draw)} ms {draw}")


if __name__ == "__main__":
    main()
