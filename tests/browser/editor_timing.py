"""Where the editor's open time goes, measured in the browser (tests/browser/test_editor_32k.py,
tests/browser/test_editor_100k.py; figures in docs/PERFORMANCE.md).

``open_editor(page, cdp, url, label)`` navigates to an editor page, waits for its first drawn
frame (two ``requestAnimationFrame``s after the editor is ready) and prints the split:
the page's response, the document's request, server time and transfer (``?document=``,
preloaded by the page), then the browser's part (script start, document ``JSON.parse``,
``new Editor()`` with its first render, frame), beside the renderer's main-thread busy time
(CDP ``Performance.TaskDuration``: on shared cores the wall clock also counts waiting for a CPU).
"""
from __future__ import annotations

FIRST_FRAME = """() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const mark = (name) => (performance.getEntriesByName(name)[0] || {}).startTime;
    const url = new URL(JSON.parse(document.getElementById('editor-config').textContent)
                        .document_url || '', location.href).href;
    const doc = performance.getEntriesByName(url)[0] || {};
    resolve({responseStart: nav.responseStart, responseEnd: nav.responseEnd,
             pageBytes: nav.decodedBodySize,
             domInteractive: nav.domInteractive, boot: mark('fs-editor-boot'),
             fetched: mark('fs-editor-fetched'), config: mark('fs-editor-config'),
             ready: mark('fs-editor-ready'), frame: performance.now(),
             docFetches: performance.getEntriesByName(url).length,
             docStart: doc.startTime, docRequest: doc.requestStart,
             docFirstByte: doc.responseStart, docEnd: doc.responseEnd,
             docEncoded: doc.encodedBodySize, docDecoded: doc.decodedBodySize});
})))"""


def open_editor(page, cdp, url: str, label: str) -> tuple[dict, dict]:
    """Navigate to the editor at ``url``, wait for its first frame, print where the time went;
    returns (timings in ms from navigation start, ``fabricscopeEditor.stats()``)."""
    busy0 = task_seconds(cdp)
    page.goto(url, timeout=300_000)
    page.wait_for_function("window.fabricscopeEditor !== undefined", timeout=300_000)
    t = page.evaluate(FIRST_FRAME)
    busy = task_seconds(cdp)
    busy_ms = (busy - busy0 if busy >= busy0 else busy) * 1000  # restarts with a new renderer
    s = page.evaluate("fabricscopeEditor.stats()")
    print(f"{label}: navigation to first collapsed frame {t['frame']:.0f} ms, of which the "
          f"renderer's main thread was busy {busy_ms:.0f} ms\n"
          f"  page ({t['pageBytes'] / 1e3:.0f} kB): first byte {t['responseStart']:.0f} ms, "
          f"last byte {t['responseEnd']:.0f} ms\n"
          f"  document ({t['docEncoded'] / 1e6:.1f} MB gzip of {t['docDecoded'] / 1e6:.1f} MB): "
          f"requested {t['docStart']:.0f} ms, server {t['docFirstByte'] - t['docRequest']:.0f} ms "
          f"(request → first byte), transfer {t['docEnd'] - t['docFirstByte']:.0f} ms, "
          f"text in the editor at {t['fetched']:.0f} ms\n"
          f"  browser: script start {t['boot']:.0f} ms, document JSON.parse "
          f"{t['config'] - t['fetched']:.0f} ms, Editor() {s['loadMs']:.0f} ms with first "
          f"render {s['lastRenderMs']:.0f} ms, to frame {t['frame'] - t['ready']:.0f} ms; "
          f"showing {s['visibleNodes']} nodes, {s['visibleEdges']} edges")
    return t, s


def task_seconds(cdp) -> float:
    """The renderer's main-thread busy seconds so far (CDP ``Performance.TaskDuration``)."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return next(m["value"] for m in metrics if m["name"] == "TaskDuration")
