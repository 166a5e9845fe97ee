"""designer.figures: Plotly figure dicts built from real engine results.

Cluster (engine-built, ``build_cluster("dgx-h100", 2, storage=1)``)::

    [spine0] [spine1] ...            (leaf–spine)
     [leaf0 .. leaf7]   [sleaf0]--[storage0]
      |  rail i: h*/nic i           (NIC–leaf, eth400)
    [h0: gpu0-7, nvswitch0-3, pcie0-7, nic0-9, cpu0-1 + rc0-7, mem0-1, nvme0-7]   [h1: same]

    workload: ring all-reduce over the 16 GPUs (1 GB) + storage0 → h0's 8 GPUs (4 GB, GPUDirect)

Every figure must be valid for plotly.graph_objects (unknown attributes raise), small, and say
why when it has nothing to draw.
"""
from __future__ import annotations

import json

import pytest

from designer import figures as F
from designer.pages import selectors as page_selectors
from tests.scenarios import dgx_h100_scenario

go = pytest.importorskip("plotly.graph_objects")


def scenario(hosts=2, *, failures=None, policy="affinity", mode="steady", latency=False):
    return dgx_h100_scenario(hosts, failures=failures, policy=policy, mode=mode, latency=latency)


def jsonable(x):
    return json.loads(json.dumps(x))


@pytest.fixture(scope="module")
def small():
    from designer.engine.analysis.simulate import simulate

    topo, sc = scenario(latency=True)
    return topo, jsonable(simulate(sc))


@pytest.fixture(scope="module")
def failed():
    """h0/nic0 down under NIC policy 'any': flows move to other NICs (rerouted), none is lost."""
    from designer.engine.analysis.whatif import simulate_with_diff

    topo, sc = scenario(failures=[{"target": "h0/nic0", "mode": "down"}], policy="any")
    return topo, jsonable(simulate_with_diff(sc))


def assert_valid(fig):
    """Plotly accepts it, it is JSON, and it carries our metadata."""
    go.Figure(data=fig["data"], layout=fig["layout"])
    json.dumps(fig, allow_nan=False)
    meta = fig["fabricscope"]
    assert meta["kind"] and set(meta["table"]) == {"columns", "rows"}
    for row in meta["table"]["rows"]:
        assert len(row) == len(meta["table"]["columns"])
    assert all(t["type"] != "table" for t in fig["data"])  # tables are HTML (not in the cartesian bundle)
    if meta.get("view") == "table":
        assert fig["data"] == [] and len(meta["headers"]) == len(meta["table"]["columns"])
        assert 0 <= meta["shown"] <= len(meta["table"]["rows"])
        assert len(meta.get("tones", meta["table"]["rows"])) == len(meta["table"]["rows"])


def test_result_figures_are_valid_and_complete(small):
    topo, result = small
    figs = F.figures_for_result(result, topology_doc=topo)
    assert list(figs) == ["topology", "topology_collapsed", "path", "patterns", "rates", "tiers", "bottlenecks",
                          "latency"]
    for fig in figs.values():
        assert_valid(fig)
    assert not figs["topology"]["fabricscope"]["collapsed"] and figs["topology_collapsed"]["fabricscope"]["collapsed"]


def test_topology_edges_are_coloured_by_max_utilization_of_both_directions(small):
    topo, result = small
    fig = F.topology_figure(result, topo)
    links = next(t for t in fig["data"] if t["name"] == "links")
    assert len(links["x"]) == len(topo["links"])  # every link has a hover point
    util = {}
    for r in result["resources"]:
        if r["link"]:
            util[r["link"]] = max(util.get(r["link"], 0.0), r["utilization"])
    # hover text is built by Plotly from customdata (link id first) through one template per trace
    assert "%{customdata[0]}" in links["hovertemplate"] and "hovertext" not in links
    by_hover = dict(zip((cd[0] for cd in links["customdata"]), links["marker"]["color"]))
    for lid, u in util.items():
        assert by_hover[lid] == pytest.approx(u, abs=1e-3)
    idle = [l["id"] for l in topo["links"] if l["id"] not in util]
    assert idle and all(by_hover[l] == 0 for l in idle)
    kinds = {t["name"] for t in fig["data"] if t.get("mode", "").startswith("markers") and t["name"] != "links"}
    assert {"GPU", "NVSwitch", "PCIe switch", "NIC", "Switch", "Storage"} <= kinds


def test_link_hover_customdata_holds_both_directions(small):
    """Each link point's customdata: id, tech, ends, then load/capacity/utilization of a>b and b>a."""
    topo, result = small
    links = next(t for t in F.topology_figure(result, topo)["data"] if t["name"] == "links")
    res = {(r["link"], r["dir"]): r for r in result["resources"] if r["link"]}
    by_id = {l["id"]: l for l in topo["links"]}
    for cd in links["customdata"]:
        lid, _, a, b, load_ab, _, u_ab, load_ba, _, _, u_ba = cd
        assert (a, b) == (by_id[lid]["a"], by_id[lid]["b"])
        for d, load, u in (("a>b", load_ab, u_ab), ("b>a", load_ba, u_ba)):
            r = res.get((lid, d), {"load_gbps": 0.0, "utilization": 0.0})
            assert load == pytest.approx(r["load_gbps"], abs=0.01) and u == pytest.approx(r["utilization"], abs=1e-3)


def test_host_labels_fit_their_box_or_shorten():
    """6.5 px per character + 8 px padding: 'h0 · hottest 100%' (17 chars) needs 118.5 px, 'h0' 21 px."""
    from designer.figures.topology import fit_label
    assert fit_label(119, "h0 · hottest 100%", "h0") == "h0 · hottest 100%"
    assert fit_label(118, "h0 · hottest 100%", "h0") == "h0"
    assert fit_label(21, "h0 · hottest 100%", "h0") == "h0"
    assert fit_label(20, "h0 · hottest 100%", "h0") == ""


def test_node_labels_show_only_where_they_fit_their_row():
    """Row y=0: a at x 0, b at 1, c at 5 (gaps 1, 1, 4 units); at 10 px per unit a 4-character label
    needs 4 × 5.5 + 4 = 26 px: only c's fits (40 px); at 30 px per unit all do."""
    from designer.figures.topology import label_fits, label_gaps
    nodes = [{"id": i, "x": x, "y": 0} for i, x in (("a", 0), ("b", 1), ("c", 5))] + [{"id": "d", "x": 2, "y": -1}]
    gaps = label_gaps(nodes)
    assert gaps == {"a": 1, "b": 1, "c": 4, "d": 6}  # d is alone in its row: the drawing's width (5 + 1)
    assert [label_fits("gpu0", gaps[n], 10) for n in "abc"] == [False, False, True]
    assert all(label_fits("gpu0", gaps[n], 30) for n in "abc") and not label_fits("", 99, 99)


def test_collapsed_topology_has_host_super_nodes_and_drill_down(small):
    topo, result = small
    fig = F.topology_figure(result, topo, collapsed=True)
    hosts = next(t for t in fig["data"] if t["name"] == "Host")
    assert hosts["customdata"] == ["h0", "h1"]
    details = fig["fabricscope"]["hosts"]
    assert len(details["shapes"]) == 1  # two hosts of one template share a shape
    host = F.expand_host(details, "h0")
    assert_valid(host)
    assert host == F.host_figure(result, topo, "h0")
    internal = [l for l in topo["links"] if l["a"].startswith("h0/") and l["b"].startswith("h0/")]
    assert len(host["fabricscope"]["table"]["rows"]) == len(internal)
    # the super-node's colour is the hottest internal link of the host
    hot = max((r["utilization"] for r in result["resources"]
               if r["link"] and r["link"].startswith("h0/") and r["link"] in {l["id"] for l in internal}), default=0)
    assert hosts["marker"]["color"][0] == pytest.approx(hot, abs=1e-3)


def test_path_view_hops_equal_the_flow_path(small):
    topo, result = small
    for flow in [f for f in result["flows"] if f["status"] == "ok"][::17]:
        fig = F.path_figure(result, flow["id"], topology_doc=topo)
        assert_valid(fig)
        meta = fig["fabricscope"]
        assert meta["path"] == flow["path"]
        assert [(h["from"], h["to"]) for h in meta["hops"]] == list(zip(flow["path"], flow["path"][1:]))
        assert f"class <b>{flow['class']}</b>" in fig["layout"]["title"]["text"]
        res = {r["id"]: r for r in result["resources"]}
        for h in meta["hops"]:
            assert h["resource"] in res and h["utilization"] == pytest.approx(res[h["resource"]]["utilization"], abs=1e-4)
        marked = [h["resource"] for h in meta["hops"] if h["bottleneck"]]
        assert marked == ([flow["bottleneck"]] if flow["bottleneck"] in {h["resource"] for h in meta["hops"]} else [])


def test_path_view_default_and_without_topology(small):
    """Default: the slowest flow of the slowest pattern; without a document hops resolve by link id."""
    topo, result = small
    slowest = max(result["summary"]["patterns"].values(), key=lambda p: p["completion_s"])["slowest_flow"]
    fig = F.figures_for_result(result, topology_doc=topo)["path"]
    assert fig["fabricscope"]["flow"] == slowest
    bare = F.path_figure(result, slowest)
    assert [h["resource"] for h in bare["fabricscope"]["hops"]] == [h["resource"] for h in fig["fabricscope"]["hops"]]
    assert F.path_figure(result, "nope#1")["fabricscope"]["empty"]


def test_tier_box_groups_match_resource_tiers(small):
    _, result = small
    fig = F.tier_figure(result)
    tiers = {r["tier"] for r in result["resources"]}
    assert set(fig["fabricscope"]["groups"]) == tiers
    box = fig["data"][0]
    assert len(fig["data"]) == 1 and box["type"] == "box" and len(box["x"]) == len(tiers)
    for t, hi, n in zip(fig["fabricscope"]["groups"], box["upperfence"],
                        (row[1] for row in fig["fabricscope"]["table"]["rows"])):
        us = [r["utilization"] for r in result["resources"] if r["tier"] == t]
        assert hi == max(us) and n == len(us)
    assert all(q1 <= m <= q3 for q1, m, q3 in zip(box["q1"], box["median"], box["q3"]))


def test_patterns_rates_bottlenecks_latency(small):
    _, result = small
    pats = result["summary"]["patterns"]
    bars = F.pattern_figure(result)["data"][0]
    assert bars["x"] == list(pats) and bars["y"] == [pytest.approx(p["completion_s"] * 1e3) for p in pats.values()]
    rates = F.rate_figure(result)
    assert sum(sum(t["y"]) for t in rates["data"]) == len(result["flows"])  # every listed flow binned once
    table = F.bottleneck_figure(result)
    assert table["data"] == [] and table["fabricscope"]["view"] == "table"  # an HTML table, no Plotly trace
    assert table["fabricscope"]["table"]["rows"][0][0] == result["summary"]["bottlenecks"][0]
    lat = F.latency_figure(result)
    flows, labels = lat["data"][0]["x"]
    inits = [lab.split("<br>")[0] for lab in labels]
    assert set(inits) == {"cpu proxy", "gpu initiated"} and len(flows) == 2 * len(result["latency"])
    trip = lat["data"][-1]
    bars = [t for t in lat["data"] if t["type"] == "bar"]
    totals = [sum(t["y"][i] for t in bars) for i in range(len(flows))]
    expected = [e["initiators"][i]["total_ns"] / 1e3 for e in result["latency"] for i in e["initiators"]]
    assert totals == [pytest.approx(t) for t in expected]
    # The round trip (what docs/FIDELITY.md calibrates) is its own plotted, named value, not a
    # footnote to a one-way bar: the axis reaches it, the marker says what it is, and each
    # category names both figures.
    trips = [e["initiators"][i]["round_trip_ns"] / 1e3 for e in result["latency"] for i in e["initiators"]]
    assert trip["name"] == "round trip (ping + pong)" and trip["y"] == [pytest.approx(r) for r in trips]
    labels = lat["data"][0]["x"][1]
    assert labels == [f"{i}<br>one way {t:.2f} µs<br>round trip {r:.2f} µs" for i, t, r in zip(inits, totals, trips)]
    assert lat["layout"]["yaxis"]["range"][1] > max(trips)
    assert all(r > t for t, r in zip(totals, trips))            # a round trip is two steps, not one


def test_timeline_marks_each_pattern_finish():
    from designer.engine.analysis.simulate import simulate

    topo, sc = scenario(mode="timeline")
    result = jsonable(simulate(sc))
    fig = F.figures_for_result(result, topology_doc=topo)["timeline"]
    assert_valid(fig)
    finishes = sorted(s["x0"] for s in fig["layout"]["shapes"])
    assert finishes == sorted(p["completion_s"] * 1e3 for p in result["summary"]["patterns"].values())
    assert {t["name"] for t in fig["data"] if t["yaxis"] == "y2"} == {
        f"{F.TIER_LABELS[t]} max" for t in result["summary"]["timeline"]["tiers"]}


def test_failure_diff_figures(failed):
    topo, result = failed
    diff = result["diff"]
    assert diff["summary"]["rerouted"] > 0
    figs = F.figures_for_result(result, topology_doc=topo)
    for key in ("whatif_completion", "whatif_changes"):
        assert_valid(figs[key])
    before, after = figs["whatif_completion"]["data"]
    pats = diff["summary"]["patterns"]
    assert before["y"] == [pytest.approx(p["completion_s"]["before"] * 1e3) for p in pats.values()]
    # A pattern that does not complete draws when its surviving flows finish.
    assert after["y"] == [pytest.approx((p["completion_s"]["after"] or p["surviving_completion_s"]) * 1e3)
                          for p in pats.values()]
    rows = figs["whatif_changes"]["fabricscope"]["table"]["rows"]
    rerouted = [r for r in rows if r[0] == "rerouted"]
    assert [r[1] for r in rerouted] == [d["flow"] for d in diff["rerouted"]]
    assert all(d["old_class"] in r[2] for r, d in zip(rerouted, diff["rerouted"]) if d["old_class"] != d["new_class"])
    # the failed NIC is drawn as failed on the topology
    failed_x = [t for t in figs["topology"]["data"] if t["name"] == "failed"]
    assert failed_x and len(failed_x[0]["x"]) == 1


def test_sweep_ranking_order_preserved_and_click_through():
    from designer.engine.analysis.whatif import sweep

    _, sc = scenario()
    sw = jsonable(sweep(sc, over=["nic"]))
    figs = F.figures_for_sweep(sw, selected=3)
    rank = figs["ranking"]
    assert_valid(rank)
    assert rank["data"][0]["y"] == [f"{i + 1}. {e['label']}" for i, e in enumerate(sw["ranking"])]
    assert rank["data"][0]["x"] == [e["impact"]["disconnected_flows"] for e in sw["ranking"]]
    assert rank["data"][0]["customdata"] == list(range(len(sw["ranking"])))
    assert rank["fabricscope"]["link"] == "?failure={index}"
    assert sw["ranking"][3]["label"] in figs["whatif_completion"]["layout"]["title"]["text"]
    assert_valid(figs["whatif_changes"])
    ctx = page_selectors.result_context(result=sw, selected=3)
    assert ctx["view"] == "sweep" and ctx["failure_index"] == 3


def test_sweep_rows_tell_nics_apart_after_nccls_fallback():
    """Every NIC down breaks the running ring; the ranking's rows used to all read "does not
    complete" and the whole job's throughput lost. Read after NCCL's fallback, a NIC of the 400G
    rails costs more than one of the 100G rail (see tests/engine/test_sweep.py), and the panels
    say so: distinct increases and losses, each marked "after re-init"."""
    from designer.engine.analysis.whatif import sweep
    from tests.engine.test_sweep import _slow_rail_scenario

    sw = jsonable(sweep(_slow_rail_scenario(), over=["nic"]))
    rank = F.ranking_figure(sw)
    assert_valid(rank)
    _, inc, thr = rank["data"]
    whole = sw["baseline"]["patterns"]["ar"]["throughput_gbps"]
    assert all(0 <= v < whole for v in thr["x"]) and len(set(thr["x"])) >= 2
    assert len(set(inc["x"])) >= 2 and inc["x"][0] > inc["x"][-1]
    assert all(t.startswith("↻ ") for t in inc["text"] + thr["text"] if t)
    assert "after NCCL re-initializes" in rank["layout"]["xaxis2"]["title"]["text"]
    assert "after NCCL re-initializes" in rank["data"][0]["hovertext"][0]
    assert " on 7 of 8 rails, busbw" in rank["data"][0]["hovertext"][0]   # the rail count NCCL keeps
    assert "cost the same" not in rank["layout"]["title"]["text"]
    row = rank["fabricscope"]["table"]["rows"][0]
    cols = rank["fabricscope"]["table"]["columns"]
    assert row[cols.index("fallback_busbw_gbs")] < sw["ranking"][0]["impact"]["fallback"]["patterns"]["ar"]["busbw_before_gbs"]


def test_sweep_of_a_symmetric_pod_says_every_failure_costs_the_same():
    from designer.engine.analysis.whatif import sweep

    _, sc = scenario()
    sc = {**sc, "workload": [w for w in sc["workload"] if w["id"] == "ar"]}
    rank = F.ranking_figure(jsonable(sweep(sc, over=["nic"])))
    # 16 compute NICs, each breaking the ring the same way; the 4 storage NICs (nic8, nic9 of
    # each host, on the storage fabric) carry none of the all-reduce
    assert ("all 16 that matter cost the same (a symmetric design); 4 change nothing"
            in rank["layout"]["title"]["text"])


def test_policy_comparison_grouped_bars():
    from designer.engine.analysis.whatif import compare_policies

    _, sc = scenario(failures=[{"target": "h0/nic0", "mode": "down"}])
    cmp_ = jsonable(compare_policies(sc))
    ctx = page_selectors.result_context(result=cmp_)
    assert ctx["view"] == "policies"
    fig = ctx["figures"]["policies"]
    assert_valid(fig)
    assert [t["name"] for t in fig["data"] if t.get("showlegend", True)] == list(cmp_["policies"])
    cases, patterns = fig["data"][0]["x"]
    assert set(cases) == {"baseline", "with failures"} and set(patterns) == {"ar", "load"}
    # Bar labels: the time only, shrunk to the bar or hidden rather than overlapping; lost flows in the hover.
    assert fig["layout"]["uniformtext"] == {"minsize": 8, "mode": "hide"}
    rows = fig["fabricscope"]["table"]["rows"]
    for trace in fig["data"]:
        assert trace["constraintext"] == "both" and "%{customdata}" in trace["hovertemplate"]
        mine = [r for r in rows if r[0] == trace["offsetgroup"]]
        assert trace["text"] == ["does not complete" if r[5] else F.fmt_time(r[3]) for r in mine]
        assert trace["customdata"] == [(f"<b>does not complete</b>: {r[5]}" if r[5] else F.fmt_time(r[3]))
                                       + (f"<br>{r[4]:,} flows lost" if r[4] else "") for r in mine]


def test_policy_comparison_labels_what_does_not_complete_and_uses_a_log_axis():
    """A pattern that does not complete was a missing bar with no label or reason, on a linear
    axis that squashed 7 and 69 ms beside 640 ms. Now: a hatched bar labelled "does not
    complete", its reason in the hover and under the plot; a log axis (with a linear/log switch)
    when the times span more than a decade."""
    comparison = {"format": "fabricscope.compare/1", "policy_order": ["affinity", "pxn"], "best": {},
                  "policies": {
                      "affinity": {"baseline": {"patterns": {"ar": {"completion_s": 0.007, "complete": True},
                                                             "kv": {"completion_s": 0.64, "complete": True}}},
                                   "with_failures": {"patterns": {
                                       "ar": {"completion_s": None, "complete": False, "unroutable": 2,
                                              "reason": "GPU h0/gpu0's only NIC under policy affinity is down"},
                                       "kv": {"completion_s": 0.64, "complete": True}}}},
                      "pxn": {"baseline": {"patterns": {"ar": {"completion_s": 0.007, "complete": True},
                                                        "kv": {"completion_s": 0.64, "complete": True}}},
                              "with_failures": {"patterns": {"ar": {"completion_s": 0.069, "complete": True},
                                                             "kv": {"completion_s": 0.64, "complete": True}}}}}}
    fig = F.policy_figure(comparison)
    assert_valid(fig)
    aff, aff_broken = fig["data"][:2]
    k = aff["x"][0].index("with failures")          # (with failures, ar)
    assert aff["y"][k] is None and aff_broken["offsetgroup"] == aff["offsetgroup"] == "affinity"
    assert aff_broken["text"][k] == "does not complete" and aff_broken["y"][k] == pytest.approx(640.0)
    assert [y is None for y in aff_broken["y"]] == [i != k for i in range(len(aff["y"]))]
    assert "only NIC under policy affinity is down" in aff_broken["customdata"][k]
    assert aff_broken["marker"]["pattern"]["shape"] == "/" and aff_broken["textangle"] == -90
    assert len(fig["data"]) == 3                    # pxn completes everywhere: no broken trace
    notes = [a["text"] for a in fig["layout"]["annotations"]]
    assert notes == ["does not complete · affinity · with failures · ar: GPU h0/gpu0's only NIC under policy "
                     "affinity is down"]
    y = fig["layout"]["yaxis"]
    assert y["type"] == "log" and 10 ** y["range"][0] < 7 and 10 ** y["range"][1] > 640
    labels = [b["label"] for b in fig["layout"]["updatemenus"][0]["buttons"]]
    assert labels == ["log", "linear"] and fig["layout"]["updatemenus"][0]["active"] == 0
    # Times within a decade stay on a linear axis (the switch is still there).
    near = {**comparison, "policies": {"pxn": comparison["policies"]["pxn"]}}
    near["policies"]["pxn"] = {"baseline": {"patterns": {"ar": {"completion_s": 0.07, "complete": True}}}}
    lin = F.policy_figure(near)["layout"]
    assert lin["yaxis"].get("type") is None and lin["yaxis"]["range"][0] == 0 and lin["updatemenus"][0]["active"] == 1


def test_compare_two_results(small, failed):
    _, a = small
    _, b = failed
    ctx = page_selectors.compare_context(a=a, b=b)
    for fig in ctx["figures"].values():
        assert_valid(fig)
    rows = ctx["figures"]["compare_completion"]["fabricscope"]["table"]["rows"]
    for p, x, y, change in rows:
        assert x == a["summary"]["patterns"][p]["completion_s"] and y == b["summary"]["patterns"][p]["completion_s"]
        if b["summary"]["patterns"][p]["complete"]:
            assert change == f"{y / x - 1:+.1%}"
        else:   # a pattern with a lost flow has no completion to compare
            assert y is None and change == "does not complete in B"
    changes = ctx["figures"]["compare_bottlenecks"]["fabricscope"]["table"]["rows"]
    new = {r for c, r in changes if c.startswith("only in B")}
    assert new == set(b["summary"]["bottlenecks"]) - set(a["summary"]["bottlenecks"])
    assert [r["pattern"] for r in ctx["rows"]] == list(a["summary"]["patterns"])


def test_edge_cases_render_without_error():
    empty = {"format": "fabricscope.result/1", "summary": {"patterns": {}}, "flows": [], "resources": [], "diff": None}
    figs = F.figures_for_result(empty)
    for fig in figs.values():
        assert_valid(fig)
    assert all(figs[k]["fabricscope"].get("empty") for k in ("topology", "path", "patterns", "rates", "tiers",
                                                            "bottlenecks"))
    assert F.figures_for_result({})["path"]["fabricscope"]["empty"]
    assert_valid(F.figures_for_sweep({"format": "fabricscope.sweep/1", "ranking": []})["ranking"])
    for fig in F.figures_for_compare(empty, {}).values():
        assert_valid(fig)


def test_unroutable_flows():
    """A GPU whose only NIC is down under 'affinity': its inter-host flows are unroutable."""
    from designer.engine.analysis.whatif import simulate_with_diff

    topo, sc = scenario(failures=[{"target": "h0/nic0", "mode": "down"}])
    result = jsonable(simulate_with_diff(sc))
    bad = [f for f in result["flows"] if f["status"] == "unroutable"]
    assert bad
    figs = F.figures_for_result(result, topology_doc=topo)
    for fig in figs.values():
        assert_valid(fig)
    fig = F.path_figure(result, bad[0]["id"], topology_doc=topo)
    assert "UNROUTABLE" in fig["layout"]["title"]["text"] and fig["fabricscope"]["hops"] == []
    assert bad[0]["reason"] in fig["layout"]["annotations"][0]["text"]
    bars = F.pattern_figure(result)["data"][0]
    assert any(t.startswith("does not complete") for t in bars["text"])
    rows = figs["whatif_changes"]["fabricscope"]["table"]["rows"]
    assert {r[1] for r in rows if r[0] == "disconnected"} == {d["flow"] for d in result["diff"]["disconnected"]}


@pytest.mark.slow
def test_1024_gpu_payload_is_aggregated():
    """128 hosts: hosts collapse, nothing ships one point per flow, the whole page JSON stays small."""
    from designer.engine.analysis.simulate import simulate

    topo, sc = scenario(128)
    result = jsonable(simulate(sc))
    figs = F.figures_for_result(result, topology_doc=topo)
    assert figs["topology"]["fabricscope"]["collapsed"] and "topology_collapsed" not in figs
    hosts = next(t for t in figs["topology"]["data"] if t["name"] == "Host")
    assert len(hosts["x"]) == 128
    assert len(figs["tiers"]["data"][0]["q1"]) == len({r["tier"] for r in result["resources"]})
    size = len(json.dumps(figs))
    print(f"\n1,024-GPU figures: {size / 1e6:.2f} MB for {len(result['flows']):,} listed flows")
    assert size < 6e6


# ---------------------------------------------------------------------------------- HTML tables, trace types
def test_table_figures_carry_rows_tones_and_limits(small, failed):
    """The three tables (bottlenecks, what changed, bottleneck changes A → B) are table views: the rows
    the page shows, with a tone per row the page colours (h0/nic0 down under 'any': rerouted flows)."""
    _, a = small
    _, b = failed
    figs = F.figures_for_result(b)
    changes = figs["whatif_changes"]["fabricscope"]
    assert changes["view"] == "table" and changes["headers"] == ["change", "flow / resource", "detail"]
    tones = dict(zip((r[0] for r in changes["table"]["rows"]), changes["tones"]))
    assert tones["rerouted"] == "warn" and changes["shown"] == min(200, len(changes["table"]["rows"]))
    assert "rerouted" in changes["subtitle"] and "<" not in changes["title"] + changes["subtitle"]  # plain text
    cmp_ = page_selectors.compare_context(a=a, b=b)["figures"]["compare_bottlenecks"]["fabricscope"]
    assert cmp_["view"] == "table"
    for (change, _), tone in zip(cmp_["table"]["rows"], cmp_["tones"]):
        assert tone == {"only in B (new)": "bad", "only in A (gone)": "good"}.get(change)


def test_table_figure_limits_rows_shown_and_checks_its_input():
    from designer.figures.base import table_figure

    rows = [[i, f"r{i}"] for i in range(5)]
    fig = table_figure("k", "T", ["n", "name"], rows, shown=3)
    assert fig["fabricscope"]["shown"] == 3 and fig["fabricscope"]["table"]["rows"] == rows  # CSV keeps all
    assert table_figure("k", "T", ["n", "name"], rows, shown=99)["fabricscope"]["shown"] == 5
    with pytest.raises(ValueError):
        table_figure("k", "T", ["n", "name"], rows, headers=["only one"])
    with pytest.raises(ValueError):
        table_figure("k", "T", ["n", "name"], rows, tones=["red"] * 5)


def _bundle_trace_types() -> set[str]:
    """Trace types the vendored plotly.js bundle registers (``moduleType:"trace",name:"bar"``)."""
    import re
    from pathlib import Path

    bundle = Path(__file__).resolve().parents[2] / "static" / "vendor" / "plotly-fabricscope.min.js"
    return set(re.findall(r'moduleType:"trace",name:"(\w+)"', bundle.read_text()))


def test_every_trace_type_drawn_is_in_the_vendored_bundle(small, failed):
    """The pages load the vendored plotly.js bundle (scatter, bar, box); a trace type it lacks would be drawn as a scatter
    (or not at all), so every figure of a result, a what-if, a sweep and a comparison uses only its types."""
    from designer.engine.analysis.whatif import sweep

    known = _bundle_trace_types()
    assert {"scatter", "bar", "box"} <= known and "table" not in known
    topo, a = small
    _, b = failed
    sw = jsonable(sweep(scenario()[1], over=["nic"]))
    sets = [F.figures_for_result(a, topology_doc=topo), F.figures_for_result(b, topology_doc=topo),
            F.figures_for_sweep(sw, selected=0), page_selectors.compare_context(a=a, b=b)["figures"]]
    used = {t["type"] for figs in sets for fig in figs.values() for t in fig["data"]}
    assert used and used <= known, used - known


def test_policy_bars_follow_the_requested_order_whatever_the_stored_key_order():
    """PostgreSQL's jsonb stores object keys sorted (shorter first), so a comparison of
    ["affinity", "any"] reads back as {"any", "affinity"}: the bars follow ``policy_order``."""
    from designer.figures.whatif import policy_figure

    def summary(ms):
        return {"patterns": {"ar": {"completion_s": ms / 1e3, "complete": True, "unroutable": 0}},
                "unroutable": 0, "broken": [], "job_completion_s": ms / 1e3}

    asked = {"format": "fabricscope.compare/1", "policy_order": ["affinity", "any"],
             "policies": {"affinity": {"baseline": summary(3.0), "with_failures": None},
                          "any": {"baseline": summary(5.0), "with_failures": None}}}
    stored = {**asked, "policies": {"any": asked["policies"]["any"],
                                    "affinity": asked["policies"]["affinity"]}}
    for doc in (asked, stored):
        bars = policy_figure(doc)["data"]
        assert [b["name"] for b in bars] == ["affinity", "any"]
        assert bars[1]["y"][-1] == pytest.approx(5.0)
