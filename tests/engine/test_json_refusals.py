"""Inputs the stdlib JSON reader refuses with something other than JSONDecodeError — an integer
beyond Python's digit limit, nesting deeper than its recursion — are reported like any other bad
JSON (exit 1, one located message), not as a traceback (found in review)."""
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _run(args):
    return subprocess.run([sys.executable, "-m", "designer.engine", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


@pytest.mark.parametrize("text, message", [
    ('{"links": [], "flows": [{"id": "f", "links": [], "demand_gbps": ' + "9" * 100_000 + "}]}",
     "number not readable"),
    ('{"links": ' + "[" * 5000 + "]" * 5000 + ', "flows": []}', "nested too deeply"),
])
def test_solve_reports_them_as_bad_json(tmp_path, text, message):
    problem = tmp_path / "in.json"
    problem.write_text(text)
    done = _run(["solve", str(problem)])
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "not valid JSON" in done.stderr and message in done.stderr


def test_simulate_reports_a_deep_scenario_as_bad_json(tmp_path):
    scenario = tmp_path / "s.json"
    scenario.write_text('{"topology": ' + "[" * 5000 + "]" * 5000 + "}")
    done = _run(["simulate", str(scenario), "--quiet"])
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "nested too deeply" in done.stderr
