"""Figures of a shared cluster's result: steps alone vs shared, the interference grid (bar
tiles: the vendored Plotly has no heatmap trace) and the occupancy picture.

The fabric (tests/engine/test_shared_cluster.py, one GPU per host)::

    [h0/gpu0]--[h0/nic0]==400==[leaf0]==100==[spine0]==100==[leaf1]==400==[h2/nic0]--[h2/gpu0]
    [h1/gpu0]--[h1/nic0]==400=='                                '==400==[h3/nic0]--[h3/gpu0]

Job A rings over h0, h2 and job B over h1, h3: both cross leaf0-spine0 and halve each other's
rate there, so each slows the other (off-diagonal cells > 0).
"""
from __future__ import annotations

import json

import pytest

from designer.engine.analysis.simulate import simulate
from designer.figures import shared as S
from designer.figures.result import figures_for_result
from tests.engine.test_shared_cluster import spine_fabric, two_jobs


@pytest.fixture(scope="module")
def result():
    return json.loads(json.dumps(simulate(two_jobs())))


def test_interference_grid_is_jobs_by_jobs_with_the_engine_values(result):
    fig = S.interference_figure(result["jobs"])
    matrix = result["jobs"]["interference"]["matrix"]
    cells, grey = fig["data"]
    # 2 × 2: the off-diagonal cells coloured by % slowdown, the diagonal grey.
    assert sorted(zip(cells["y"], cells["base"])) == [("A", 1), ("B", 0)]
    assert sorted(zip(grey["y"], grey["base"])) == [("A", 0), ("B", 1)]
    by_row = dict(zip(cells["y"], cells["marker"]["color"]))
    assert by_row["A"] == pytest.approx(100 * matrix[0][1]) and by_row["A"] > 0
    assert fig["layout"]["xaxis"]["ticktext"] == ["A", "B"] == fig["fabricscope"]["jobs"]
    assert len(fig["fabricscope"]["table"]["rows"]) == 4
    assert {d["type"] for d in fig["data"]} == {"bar"}


def test_interference_keeps_the_most_slowed_jobs_past_the_cap(monkeypatch, result):
    monkeypatch.setattr(S, "MAX_MATRIX_JOBS", 1)
    fig = S.interference_figure(result["jobs"])
    assert len(fig["fabricscope"]["jobs"]) == 1 and "most slowed of 2" in fig["fabricscope"]["title"]


def test_steps_alone_vs_shared(result):
    fig = S.shared_steps_figure(result["jobs"])
    alone, shared = fig["data"]
    jobs = {j["id"]: j for j in result["jobs"]["jobs"]}
    assert alone["x"] == shared["x"] == ["A", "B"]
    assert shared["y"][0] == pytest.approx(jobs["A"]["step_time_s"] * 1e3)
    assert alone["y"][0] == pytest.approx(jobs["A"]["alone_step_time_s"] * 1e3)
    assert alone["y"][0] < shared["y"][0]
    assert "shared with B" in shared["hovertext"][0]


def test_occupancy_colours_each_gpu_by_its_job(result):
    fig = S.occupancy_figure(result["jobs"], spine_fabric())
    traces = {t["name"]: t for t in fig["data"]}
    assert set(traces) == {"A", "B"}      # every GPU is held: no "free" trace
    assert sorted(traces["A"]["y"]) == ["h0", "h2"] and sorted(traces["B"]["y"]) == ["h1", "h3"]
    assert traces["A"]["marker"]["color"] != traces["B"]["marker"]["color"]
    assert fig["fabricscope"]["level"] == "host"


def test_occupancy_collapses_to_racks_past_the_row_cap(monkeypatch, result):
    doc = spine_fabric()
    for g in doc["groups"]:
        g["parent"] = "rack0" if g["id"] in ("h0", "h1") else "rack1"
    monkeypatch.setattr(S, "MAX_OCCUPANCY_ROWS", 3)
    fig = S.occupancy_figure(result["jobs"], doc)
    assert fig["fabricscope"]["level"] == "rack"
    traces = {t["name"]: t for t in fig["data"]}
    assert traces["A"]["y"] == ["rack0", "rack1"] and traces["A"]["x"] == [1, 1]
    # Past the cap for racks too: runs of consecutive racks.
    monkeypatch.setattr(S, "MAX_OCCUPANCY_ROWS", 1)
    fig = S.occupancy_figure(result["jobs"], doc)
    assert fig["data"][0]["y"] == ["rack0…rack1"] and fig["data"][0]["x"] == [2]


def test_result_figures_have_the_shared_views_only_with_jobs(result):
    figs = figures_for_result(result, topology_doc=spine_fabric())
    assert {"shared_steps", "interference", "occupancy"} <= set(figs)
    plain = {k: v for k, v in result.items() if k != "jobs"}
    assert not {"shared_steps", "interference", "occupancy"} & set(figures_for_result(plain))
