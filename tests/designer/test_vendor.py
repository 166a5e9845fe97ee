"""The vendored plotly.js bundle: the file the pages load is the one recorded (static/vendor/VERSIONS.md,
``make vendor``), the same plotly.js version as the pinned plotly Python package, and every page that
draws figures loads it (not the full 4.8 MB bundle) from our own static files."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "static" / "vendor"
BUNDLE = VENDOR / "plotly-cartesian.min.js"
FIGURE_PAGES = ("result.html", "compare.html", "nccl_tests.html")


def _makefile_value(name: str) -> str:
    match = re.search(rf"^{name} := (\S+)$", (REPO / "Makefile").read_text(), re.M)
    assert match, f"Makefile has no {name}"
    return match.group(1)


def test_bundle_is_the_recorded_file():
    digest = hashlib.sha256(BUNDLE.read_bytes()).hexdigest()
    assert digest == _makefile_value("PLOTLY_JS_SHA256")      # what `make vendor` checks
    assert digest in (VENDOR / "VERSIONS.md").read_text()     # what the table records
    assert (VENDOR / "plotly-cartesian.LICENSE").read_text().startswith("MIT License")


def test_bundle_is_the_plotly_js_of_the_python_package():
    """designer/figures targets the plotly.js the plotly package ships: the same version here."""
    plotly = pytest.importorskip("plotly")
    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    version = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", full.read_text()[:300]).group(1)
    assert f"plotly.js (cartesian - minified) v{version}" in BUNDLE.read_text()[:300]
    assert _makefile_value("PLOTLY_JS_PACKAGE") == f"plotly.js-cartesian-dist-min@{version}"


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_figure_pages_load_the_cartesian_bundle_locally(page):
    text = (REPO / "templates" / "designer" / page).read_text()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', text)
    plotly = [s for s in scripts if "plotly" in s]
    assert plotly == ["{% static 'vendor/plotly-cartesian.min.js' %}"], plotly
