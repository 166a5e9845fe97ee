"""The vendored plotly.js bundle: the file the pages load is the one recorded (static/vendor/VERSIONS.md,
``make vendor``), built from the pinned recipe (tools/plotly-bundle) with the same plotly.js version as
the pinned plotly Python package, registers every trace type the figures draw, and every page that
draws figures loads it (not a bigger dist bundle) from our own static files."""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "static" / "vendor"
RECIPE = REPO / "tools" / "plotly-bundle"
BUNDLE = VENDOR / "plotly-fabricscope.min.js"
FIGURE_PAGES = ("result.html", "compare.html", "nccl_tests.html")
BANNER = re.compile(r"plotly\.js \(fabricscope: core \+ bar \+ box - minified\) v(\d+\.\d+\.\d+)")


def _makefile_value(name: str) -> str:
    match = re.search(rf"^{name} := (\S+)$", (REPO / "Makefile").read_text(), re.M)
    assert match, f"Makefile has no {name}"
    return match.group(1)


def _locked_version(package: str) -> str:
    lock = json.loads((RECIPE / "package-lock.json").read_text())
    return lock["packages"][f"node_modules/{package}"]["version"]


def _registered_trace_types() -> set[str]:
    """Trace types the bundle registers: each trace module object carries ``moduleType:"trace",name:"bar"``."""
    return set(re.findall(r'moduleType:"trace",name:"(\w+)"', BUNDLE.read_text()))


def test_bundle_is_the_recorded_file():
    digest = hashlib.sha256(BUNDLE.read_bytes()).hexdigest()
    assert _makefile_value("PLOTLY_BUNDLE") == BUNDLE.name
    assert digest == _makefile_value("PLOTLY_BUNDLE_SHA256")  # what `make vendor` checks after rebuilding
    versions = (VENDOR / "VERSIONS.md").read_text()
    row = next(line for line in versions.splitlines() if line.startswith(f"| {BUNDLE.name} "))
    assert digest in row and f"{BUNDLE.stat().st_size:,} B" in row, row  # what the table records
    assert (VENDOR / "plotly-fabricscope.LICENSE").read_text().startswith("MIT License")


def test_recipe_pins_exact_versions_and_the_bundle_says_which():
    """package.json pins exact versions (no ranges), the lock file agrees, and the banner names both."""
    pins = json.loads((RECIPE / "package.json").read_text())["devDependencies"]
    assert set(pins) == {"plotly.js", "esbuild"}
    for package, version in pins.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), (package, version)
        assert _locked_version(package) == version
    head = BUNDLE.read_text()[:400]
    assert BANNER.search(head).group(1) == pins["plotly.js"]
    assert f"esbuild {pins['esbuild']}" in head
    row = next(line for line in (VENDOR / "VERSIONS.md").read_text().splitlines() if BUNDLE.name in line)
    assert f"plotly.js {pins['plotly.js']}" in row and f"esbuild {pins['esbuild']}" in row, row


def test_bundle_is_the_plotly_js_of_the_python_package():
    """designer/figures targets the plotly.js the plotly package ships: the same version here."""
    plotly = pytest.importorskip("plotly")
    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    version = re.search(r"plotly\.js v(\d+\.\d+\.\d+)", full.read_text()[:300]).group(1)
    assert BANNER.search(BUNDLE.read_text()[:400]).group(1) == version
    assert _locked_version("plotly.js") == version


def test_bundle_registers_exactly_the_entry_trace_types():
    """tools/plotly-bundle/entry.js registers bar and box on top of core (scatter): nothing else came in."""
    assert _registered_trace_types() == {"scatter", "bar", "box"}


def test_every_trace_type_the_figures_draw_is_registered():
    """A type the bundle lacks is drawn by plotly.js as a scatter, silently: build the figures of a
    2-host result, a what-if with a NIC down, a sweep and a comparison, and check each type is there."""
    from designer import figures as F
    from designer.pages import selectors as page_selectors
    from designer.engine.analysis.simulate import simulate
    from designer.engine.analysis.whatif import simulate_with_diff, sweep
    from tests.scenarios import dgx_h100_scenario

    def jsonable(x):
        return json.loads(json.dumps(x))

    topo, sc = dgx_h100_scenario(2, latency=True)
    a = jsonable(simulate(sc))
    _, sc_down = dgx_h100_scenario(2, failures=[{"target": "h0/nic0", "mode": "down"}], policy="any")
    b = jsonable(simulate_with_diff(sc_down))
    sets = [F.figures_for_result(a, topology_doc=topo), F.figures_for_result(b, topology_doc=topo),
            F.figures_for_sweep(jsonable(sweep(sc, over=["nic"])), selected=0),
            page_selectors.compare_context(a=a, b=b)["figures"]]
    used = {t.get("type", "scatter") for figs in sets for fig in figs.values() for t in fig["data"]}
    assert {"scatter", "bar", "box"} <= used  # the check below looks at every type the bundle has
    assert used <= _registered_trace_types(), used - _registered_trace_types()


@pytest.mark.parametrize("page", FIGURE_PAGES)
def test_figure_pages_load_the_bundle_locally(page):
    text = (REPO / "templates" / "designer" / page).read_text()
    scripts = re.findall(r'<script[^>]*src="([^"]+)"', text)
    plotly = [s for s in scripts if "plotly" in s]
    assert plotly == [f"{{% static 'vendor/{BUNDLE.name}' %}}"], plotly
