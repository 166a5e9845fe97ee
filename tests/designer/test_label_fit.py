"""The label-fit rule is one rule: Python's numbers (designer/figures/style.py LABEL_FIT) are
what the figures use and what ``style_json()`` sends the browser, and the Python rule answers
the shared case table (tests/fixtures/label_fit_cases.json) that tests/js/labelfit.test.mjs
checks the browser's rule (static/js/results/labelfit.js) against."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from designer.figures.style import LABEL_FIT, style_json
from designer.figures.topology import fit_label, label_fits

CASES = json.loads((Path(__file__).resolve().parents[1] / "fixtures" / "label_fit_cases.json").read_text("utf-8"))


def test_style_json_sends_the_numbers_the_python_rule_uses():
    assert style_json()["label_fit"] == LABEL_FIT
    assert json.loads(json.dumps(style_json()))["label_fit"] == CASES["label_fit"]


@pytest.mark.parametrize("case", CASES["box"], ids=lambda c: f'{c["width_px"]}px-{c["full"]}')
def test_host_box_labels(case):
    assert fit_label(case["width_px"], case["full"], case["short"]) == case["want"]


@pytest.mark.parametrize("case", CASES["node"], ids=lambda c: f'{c["label"]}-{c["gap"]}x{c["ppu"]}')
def test_node_labels(case):
    assert label_fits(case["label"], case["gap"], case["ppu"]) is case["want"]
