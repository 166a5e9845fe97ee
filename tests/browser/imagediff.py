"""Tolerant comparison of screenshots with reference images (tests/browser/reference/*.png).

The PNGs are decoded by Chromium itself (an ``<img>`` drawn on a canvas in a blank page), so no
imaging library is needed. ``FABRICSCOPE_UPDATE_REFERENCES=1`` rewrites the references instead of
comparing; look at the new images before committing them.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["REFERENCE", "MAX_CHANGED_SHARE", "MAX_MEAN_DIFF", "assert_matches_reference", "image_diff"]

REFERENCE = Path(__file__).resolve().parent / "reference"
UPDATE_REFERENCES = os.environ.get("FABRICSCOPE_UPDATE_REFERENCES") == "1"
# Tolerance: anti-aliasing and font hinting move a few pixels between runs; a layout or colour
# regression moves thousands. Mean absolute difference over RGB (0-255) and share of pixels off
# by more than 48 in any channel.
MAX_MEAN_DIFF, MAX_CHANGED_SHARE = 3.0, 0.02

IMAGE_DIFF = """async ([a, b]) => {
    const load = (src) => new Promise((ok, bad) => { const i = new Image(); i.onload = () => ok(i);
        i.onerror = () => bad(new Error('not a PNG')); i.src = 'data:image/png;base64,' + src; });
    const [ia, ib] = await Promise.all([load(a), load(b)]);
    if (ia.width !== ib.width || ia.height !== ib.height) return {size: [ia.width, ia.height, ib.width, ib.height]};
    const px = (img) => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
        const g = c.getContext('2d'); g.drawImage(img, 0, 0); return g.getImageData(0, 0, img.width, img.height).data; };
    const pa = px(ia), pb = px(ib);
    let sum = 0, changed = 0;
    for (let k = 0; k < pa.length; k += 4) {
        const d = Math.max(Math.abs(pa[k] - pb[k]), Math.abs(pa[k + 1] - pb[k + 1]), Math.abs(pa[k + 2] - pb[k + 2]));
        sum += (Math.abs(pa[k] - pb[k]) + Math.abs(pa[k + 1] - pb[k + 1]) + Math.abs(pa[k + 2] - pb[k + 2])) / 3;
        if (d > 48) changed += 1;
    }
    const n = pa.length / 4;
    return {mean: sum / n, changed: changed / n};
}"""


def image_diff(browser, png_a: bytes, png_b: bytes) -> dict:
    """``{"mean": mean |RGB difference| 0-255, "changed": share of pixels off by > 48}``, or
    ``{"size": [wa, ha, wb, hb]}`` when the images differ in size."""
    import base64

    pg = browser.new_page()
    try:
        return pg.evaluate(IMAGE_DIFF, [base64.b64encode(png_a).decode(), base64.b64encode(png_b).decode()])
    finally:
        pg.close()


def assert_matches_reference(browser, png: bytes, name: str, shots: Path) -> dict:
    """Compare a screenshot with tests/browser/reference/<name>.png (decoded by Chromium: no imaging
    library needed); FABRICSCOPE_UPDATE_REFERENCES=1 rewrites the reference instead."""
    ref = REFERENCE / f"{name}.png"
    if UPDATE_REFERENCES or not ref.exists():
        REFERENCE.mkdir(parents=True, exist_ok=True)
        ref.write_bytes(png)
        if not UPDATE_REFERENCES:
            pytest.fail(f"no reference image {ref} yet: written now, look at it and commit it")
        return {"mean": 0.0, "changed": 0.0}
    diff = image_diff(browser, png, ref.read_bytes())
    (shots / f"{name}-actual.png").write_bytes(png)
    assert "size" not in diff, f"{name}: size {diff['size'][:2]} != reference {diff['size'][2:]}"
    assert diff["mean"] <= MAX_MEAN_DIFF and diff["changed"] <= MAX_CHANGED_SHARE, (
        f"{name} differs from {ref}: {diff} (see {shots}/{name}-actual.png)")
    return diff


