"""Resources grouped by symmetry (designer/engine/analysis/result_groups.py): exact round trips,
the array path equal to the record path, one group on demand, the CLI, and stored results.

The cluster: 16 DGX-H100 (128 GPUs), rail-optimized, two leaves per rail::

    [h0/gpu0]--pcie--[h0/pcie0]--pcie--[h0/nic0]==400G==[leaf0]==[spine*]==[leaf1]==[h8/nic0] ...
"""
from __future__ import annotations

import json

import numpy as np

import pytest

from designer.engine.analysis.result_columns import pack, unpack
from designer.engine.analysis.result_groups import (FIELDS, expand_resources, expand_result, group_resources,
                                                    is_grouped)
from designer.engine.analysis.simulate import simulate
from designer.engine.cli import main
from designer.engine.model.fabrics import build_cluster


def _scenario(doc, algorithm="ring"):
    return {"topology": doc, "workload": [
        {"id": "ar", "kind": "allreduce", "algorithm": algorithm, "participants": {"kind": "gpu"}, "bytes": 1e9},
        {"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu", "every": 8}, "bytes": 1e8}]}


@pytest.fixture(scope="module")
def cluster():
    return build_cluster("dgx-h100", 16, fabric="rail-optimized", leaves_per_rail=2)


def _without_timings(result):
    return {k: v for k, v in result.items() if k != "timings_s"}


@pytest.mark.parametrize("algorithm, fewer", [("ring", 10), ("tree", 4)])
def test_grouped_result_expands_to_the_full_one(cluster, algorithm, fewer):
    full = simulate(_scenario(cluster, algorithm))
    grouped = simulate(_scenario(cluster, algorithm), group_from=0)
    assert is_grouped(grouped["resources"])
    groups = grouped["resources"]["groups"]
    # Symmetry pays: far fewer groups than records, every record in exactly one group.
    assert len(groups["prefix"]) * fewer < len(full["resources"])
    expanded = expand_result(grouped)
    assert _without_timings(expanded) == _without_timings(full)
    assert all(tuple(a) == tuple(b) == FIELDS for a, b in zip(expanded["resources"], full["resources"]))
    # The arrays the simulation holds group exactly as the records do.
    assert group_resources(full["resources"]) == grouped["resources"]


def test_one_group_on_demand(cluster):
    full = simulate(_scenario(cluster))["resources"]
    grouped = group_resources(full)
    seen = []
    for k in range(len(grouped["groups"]["prefix"])):
        records = expand_resources(grouped, group=k)
        assert records and all(r in full for r in records[:3])
        # one group = equal values, names differing only in their first number
        assert len({(r["dir"], r["tech"], r["tier"], r["capacity_gbps"], r["load_gbps"], r["utilization"])
                    for r in records}) == 1
        seen += records
    assert sorted(r["id"] for r in seen) == sorted(r["id"] for r in full)
    with pytest.raises(ValueError, match="not one of the"):
        expand_resources(grouped, group=len(grouped["groups"]["prefix"]))


def test_unusual_names_and_shapes_round_trip_or_stay_lists():
    def rec(rid, link, direction, util=0.5):
        return {"id": rid, "link": link, "dir": direction, "tech": None if link is None else "eth400",
                "tier": "leaf", "capacity_gbps": 400.0, "load_gbps": 200.0, "utilization": util}
    records = [rec(f"h{i}/x{{1}}-y:a>b", f"h{i}/x{{1}}-y", "a>b") for i in range(5)]
    records += [rec("h01/nic0:b>a", "h01/nic0", "b>a"), rec("nodigits", None, None),
                rec("h7/sw:a>b", "h7/sw", "a>b", None), rec("h9/nic3:b>a", "h9/nic3", "b>a")] * 1
    records += [rec(f"h{i}/gpu0-pcie0:b>a", f"h{i}/gpu0-pcie0", "b>a") for i in (3, 1, 4, 1, 5, 9, 2, 6)]
    records = records * 3
    grouped = group_resources(records)
    assert grouped is not None and expand_resources(json.loads(json.dumps(grouped))) == records
    assert group_resources([{**records[0], "extra": 1}] + records) is None      # another shape
    assert group_resources([{**records[0], "id": "other"}] + records) is None   # id not link:dir
    assert group_resources([rec(f"n{i}", None, None, i / 7) for i in range(10)]) is None   # no symmetry


def test_cli_writes_grouped_and_expands(tmp_path, cluster, capsys):
    (tmp_path / "topo.json").write_text(json.dumps(cluster))
    (tmp_path / "sc.json").write_text(json.dumps({**_scenario("topo.json"), "topology": "topo.json"}))
    full, grouped, expanded, one = (tmp_path / n for n in ("full.json", "grouped.json", "expanded.json", "one.json"))
    assert main(["simulate", str(tmp_path / "sc.json"), "-o", str(full), "--quiet", "--full-resources"]) == 0
    # The CLI groups from 100,000 resources up; this small result stays a list by default.
    assert main(["simulate", str(tmp_path / "sc.json"), "-o", str(grouped), "--quiet"]) == 0
    assert isinstance(json.loads(grouped.read_text())["resources"], list)
    doc = json.loads(full.read_text())
    doc["resources"] = group_resources(doc["resources"])
    grouped.write_text(json.dumps(doc))
    assert main(["expand", str(grouped), "-o", str(expanded)]) == 0
    assert _without_timings(json.loads(expanded.read_text())) == _without_timings(json.loads(full.read_text()))
    assert main(["expand", str(grouped), "--group", "0", "-o", str(one)]) == 0
    assert json.loads(one.read_text()) == expand_resources(doc["resources"], group=0)
    assert main(["expand", str(grouped), "--group", "100000"]) == 1
    assert "--group" in capsys.readouterr().err


def test_stored_body_groups_large_resources_and_reads_back(cluster):
    result = simulate(_scenario(cluster))
    head, body = pack(result, group_from=1000)
    head_list, body_list = pack(result)   # below the threshold: the columns as before
    assert unpack(head, body) == result == unpack(head_list, body_list)
    assert len(body) < len(body_list)


def test_names_split_at_once_as_one_by_one():
    """The bytes-at-once split of names (ASCII ids) equals the per-name one, edge cases included."""
    from designer.engine.analysis.result_groups import _split_each, _split_names

    names = ["h0/gpu0-pcie0", "h12/gpu0-pcie0", "leaf3-spine5", "spine", "h01/x", "h0/x", "7", "x7", "n0", "0",
             "00", "x{1}y", "999999999999999999", "h10/nic0:1"] + [f"h{i}/nic{i % 7}-leaf{i // 3}" for i in range(300)]
    for node_from in (len(names), len(names) - 4, 2):
        fast, slow = _split_names(names, node_from), _split_each(names, node_from)
        assert fast[0] == slow[0] and fast[1].tolist() == slow[1].tolist() and fast[2].tolist() == slow[2].tolist()
    for odd in (["a1\nb2", "c3"], ["é1", "e2"], ["a1\x7fb", "c3"], ["a1\tb", "c3"], ["a\x01b1", "c3"]):
        # a newline inside a name, non-ASCII, DEL or a control character: name by name
        fast, slow = _split_names(odd, 1), _split_each(odd, 1)
        assert fast[0] == slow[0] and fast[2].tolist() == slow[2].tolist() == [1, 3 if odd[1] == "c3" else 2]
    huge = names + ["a1234567890123456789012b"]
    assert _split_names(huge, len(huge))[2].dtype == object
    assert group_resources([{"id": n, "link": None, "dir": None, "tech": None, "tier": "t", "capacity_gbps": 1.0,
                             "load_gbps": 1.0, "utilization": 1.0} for n in huge * 3]) is None


def _digit_runs_by_positions(buf, starts):
    """The previous way to find each name's first digit run: every digit's position and every
    other byte's, searched."""
    digit = (buf >= 48) & (buf <= 57)
    digits_at = np.append(np.flatnonzero(digit), len(buf))
    first = digits_at[np.searchsorted(digits_at, starts)]
    others_at = np.append(np.flatnonzero(~digit), len(buf))
    return first, others_at[np.searchsorted(others_at, np.minimum(first, len(buf)))]


def test_digit_runs_from_edges_as_from_positions():
    """Random names (digits at the start and the end of the text, alone, empty names): each
    name's first digit and the end of its run found from the runs' edges equal the search over
    every position."""
    import random

    from designer.engine.analysis.result_groups import _digit_runs

    rng = random.Random(7)
    for _ in range(300):
        names = ["".join(rng.choice("ab/-0123456789") for _ in range(rng.randint(0, 6)))
                 for _ in range(rng.randint(1, 30))]
        buf = np.frombuffer("\n".join(names).encode("ascii"), dtype=np.uint8)
        lengths = np.array([len(n) for n in names], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        got, want = _digit_runs(buf, starts), _digit_runs_by_positions(buf, starts)
        assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist(), names
