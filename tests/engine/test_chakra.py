"""Chakra execution traces → a job (designer.engine.io.chakra).

The fixture (``tests/engine/data/chakra/``, written by ``tools/chakra_fixture.py`` from
mlcommons/chakra ``schema/protobuf/et_def.proto``): four ranks on one DGX-H100's first four GPUs,
communicators ``tp0`` = ranks 0, 1 and ``tp1`` = ranks 2, 3, every node type::

    [gpu0 gpu1 gpu2 gpu3 ...] == NVSwitch        rank r = h0/gpu<r>
    1 META → 2 LOAD 5µs → 3 COMP 100µs (rank 3: 120) → 4 AR 8MiB tp → 5 COMP 50µs → {6 AG 4MiB tp,
    7 SEND 0→2, 1→3 2MiB} → 8 COMP 30µs → {9 RS 16MiB world, 10 A2A 1MiB tp} → 11 BCAST 1MiB tp
    → 12 STORE 5µs → 13 BARRIER
"""
import json
import pathlib
import subprocess
import sys

import pytest

from designer.engine.analysis.simulate import simulate
from designer.engine.errors import ImportFormatError, LimitExceeded
from designer.engine.io import chakra
from designer.engine.io.chakra import chakra_job, parse_groups, read_trace
from designer.engine.io.chakra_write import encode_node, encode_trace
from designer.engine.io.protowire import delimited, encode_bytes, encode_varint

DATA = pathlib.Path(__file__).parent / "data" / "chakra"
GPUS = [f"h0/gpu{i}" for i in range(8)]
MIB = 1024 * 1024
TP = [["h0/gpu0", "h0/gpu1"], ["h0/gpu2", "h0/gpu3"]]
DESIGN = {"build": {"template": "dgx-h100", "hosts": 1}}


def _traces():
    return [(p.name, p.read_bytes()) for p in sorted(DATA.glob("*.et"))]


def _groups():
    return (DATA / "groups.json").read_text()


def _hand_job():
    """The fixture's program written by hand (docs/FORMATS.md, Jobs)."""
    def ph(i, after, **kw):
        return {"id": f"n{i}", "after": [f"n{a}" for a in after], **kw}
    return {"job": {"name": "by hand", "phases": [
        ph(1, []), ph(2, [1], compute_s=5e-6), ph(3, [2], compute_s=120e-6),
        ph(4, [3], patterns=[{"id": "ar", "kind": "allreduce", "bytes": 8 * MIB, "groups": TP}]),
        ph(5, [4], compute_s=50e-6),
        ph(6, [5], patterns=[{"id": "ag", "kind": "allgather", "bytes": 4 * MIB, "groups": TP}]),
        ph(7, [5], patterns=[{"id": "pp", "kind": "p2p", "bytes": 2 * MIB,
                              "groups": [["h0/gpu0", "h0/gpu2"], ["h0/gpu1", "h0/gpu3"]]}]),
        ph(8, [6, 7], compute_s=30e-6),
        ph(9, [8], patterns=[{"id": "rs", "kind": "reducescatter", "bytes": 16 * MIB,
                              "groups": [["h0/gpu0", "h0/gpu1", "h0/gpu2", "h0/gpu3"]]}]),
        ph(10, [8], patterns=[{"id": "a2a", "kind": "alltoall", "bytes": MIB, "groups": TP}]),
        ph(11, [9, 10], patterns=[{"id": f"bc{k}", "kind": "broadcast", "bytes": MIB, "participants": {"ids": g}}
                                  for k, g in enumerate(TP)]),
        ph(12, [11], compute_s=5e-6), ph(13, [12])]}}


def test_fixture_imports_into_a_job_whose_step_time_equals_the_job_written_by_hand():
    result = chakra_job(_traces(), _groups(), GPUS)
    imported = simulate({"topology": DESIGN, "workload": result.workload})["summary"]["job"]
    by_hand = simulate({"topology": DESIGN, "workload": _hand_job()})["summary"]["job"]
    assert imported["complete"] and by_hand["complete"]
    assert imported["step_time_s"] == pytest.approx(by_hand["step_time_s"], rel=1e-12)
    # The slowest rank's compute counts: 5 + 120 + 50 + 30 + 5 µs.
    assert imported["compute_s"] == pytest.approx(210e-6, rel=1e-12)
    assert imported["step_time_s"] > imported["compute_s"]


def test_summary_counts_every_rank_and_bytes_by_collective():
    s = chakra_job(_traces(), _groups(), GPUS).summary
    assert s["ranks"] == 4 and s["phases"] == 13 and s["distinct_rank_files"] == 4
    assert s["nodes"] == {"METADATA_NODE": 4, "MEM_LOAD_NODE": 4, "MEM_STORE_NODE": 4, "COMP_NODE": 12,
                          "COMM_SEND_NODE": 2, "COMM_RECV_NODE": 2, "COMM_COLL_NODE": 24}
    assert s["bytes_by_collective"] == {"allreduce": 4 * 8 * MIB, "allgather": 4 * 4 * MIB, "p2p": 2 * 2 * MIB,
                                        "reducescatter": 4 * 16 * MIB, "alltoall": 4 * MIB, "broadcast": 4 * MIB}
    assert s["groups"] == {"tp0": 2, "tp1": 2}


def test_phases_carry_dependencies_labels_and_the_communicators_as_groups():
    phases = {p["id"]: p for p in chakra_job(_traces(), _groups(), GPUS).workload["job"]["phases"]}
    assert phases["n8"]["after"] == ["n6", "n7"] and phases["n3"]["label"] == "aten::mm fwd"
    assert phases["n4"]["patterns"][0]["groups"] == TP
    assert phases["n9"]["patterns"][0]["groups"] == [GPUS[:4]]          # no pg_name: the world
    assert "patterns" not in phases["n13"] and "compute_s" not in phases["n1"]


def test_identical_rank_files_are_recognised_and_give_the_same_job():
    """Two SPMD ranks in one communicator write the same bytes: decoded once, counted once."""
    nodes = [{"id": 1, "type": "COMP_NODE", "duration_micros": 10},
             {"id": 2, "type": "COMM_COLL_NODE", "data_deps": [1],
              "attrs": [("comm_type", 0), ("comm_size", MIB), ("pg_name", "0", "string")]}]
    data = encode_trace(nodes)
    r = chakra_job([("a.0.et", data), ("a.1.et", data)], '{"0": [0, 1]}', GPUS)
    assert r.summary["distinct_rank_files"] == 1
    assert r.workload["job"]["phases"][1]["patterns"][0]["groups"] == [GPUS[:2]]


def test_ring_sends_are_split_into_rounds_of_disjoint_pairs():
    def rank(r):
        return encode_trace([{"id": 1, "type": "COMM_SEND_NODE", "attrs": [("comm_dst", (r + 1) % 3, "int32"),
                                                                          ("comm_size", 64)]}])
    pats = chakra_job([(f"t.{r}.et", rank(r)) for r in range(3)], None, GPUS).workload["job"]["phases"][0]["patterns"]
    pairs = [tuple(g) for p in pats for g in p["groups"]]
    assert sorted(pairs) == [("h0/gpu0", "h0/gpu1"), ("h0/gpu1", "h0/gpu2"), ("h0/gpu2", "h0/gpu0")]
    for p in pats:
        members = [m for g in p["groups"] for m in g]
        assert len(members) == len(set(members))


def test_cli_writes_the_job_and_the_summary(tmp_path):
    out = tmp_path / "job.json"
    proc = subprocess.run([sys.executable, "-m", "designer.engine", "import-workload", "--format", "chakra",
                           str(DATA), "--groups", str(DATA / "groups.json"), "--template", "dgx-h100", "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "4 ranks, 13 phases" in proc.stderr and "COMM_COLL_NODE 24" in proc.stderr
    assert json.loads(out.read_text())["job"]["source"] == "chakra"


# --- hostile and inconsistent input: located errors -------------------------------------------------

META = delimited(encode_bytes(1, "0.0.4"))


def _one(data, groups=None, name="t.0.et"):
    with pytest.raises((ImportFormatError, LimitExceeded)) as exc:
        chakra_job([(name, data)], groups, GPUS)
    return exc.value.problems[0]


@pytest.mark.parametrize("tail, words", [
    (b"\xff\xff", "truncated varint"),
    (encode_varint(100) + b"12345", "past the end"),
    (encode_varint(10 ** 9) + b"x", "length 1,000,000,000 past the end"),
    (delimited(b"\x08" + b"\xff" * 11), "longer than 10 bytes"),
    (delimited(b"\x08\x01\x18\x2a"), "unknown node type 42"),
    (delimited(b"\x08\x01\x18\x00"), "unknown node type 0 (INVALID_NODE)"),
    (delimited(b"\x08\x01\x1b"), "wire type 3"),
    (delimited(b"\x08\x01\x18\x04\x39\x00"), "truncated 64-bit"),
])
def test_malformed_wire_data_is_located_at_the_rank_and_byte(tail, words):
    p = _one(META + tail)
    assert p.path.startswith("rank 0 (t.0.et) byte ") and words in p.message, p


def test_empty_files_and_files_without_nodes_are_refused():
    assert "no GlobalMetadata" in _one(b"").message
    assert "no Node" in _one(META).message


def test_deeply_nested_unknown_fields_are_skipped_without_recursion():
    """20,000 nested length-delimited levels inside a node's IOInfo: skipped as one field."""
    inner = b""
    for _ in range(20_000):
        inner = encode_bytes(1, inner)
    node = encode_node({"id": 1, "type": "COMP_NODE", "duration_micros": 7}) + encode_bytes(8, inner)
    nodes = list(read_trace(META + delimited(node)))
    assert nodes[0][1] == 1 and nodes[0][5] == 7


def test_over_the_size_and_node_limits(monkeypatch):
    monkeypatch.setattr(chakra, "MAX_TRACE_BYTES", 10)
    assert "over the limit" in _one(META + delimited(b"\x08\x01\x18\x04")).message
    monkeypatch.setattr(chakra, "MAX_TRACE_BYTES", 1 << 20)
    monkeypatch.setattr(chakra, "MAX_NODES_PER_RANK", 2)
    node = delimited(encode_node({"id": 1, "type": "COMP_NODE"}))
    assert "more than 2 nodes" in _one(META + node * 3).message


def test_rank_count_mismatches_are_located():
    traces = _traces()[:2]
    with pytest.raises(ImportFormatError) as exc:
        chakra_job(traces, _groups(), GPUS)
    assert exc.value.problems[0].path == "groups['tp1'][1]" and "rank 3 has no trace" in exc.value.problems[0].message
    with pytest.raises(ImportFormatError) as exc:
        chakra_job(_traces(), _groups(), GPUS[:3])
    assert "4 ranks, the design has 3 GPUs" in exc.value.problems[0].message
    with pytest.raises(ImportFormatError) as exc:
        chakra_job([("t.1.et", b""), ("t.2.et", b"")], None, GPUS)
    assert "rank 0 has none" in exc.value.problems[0].message


def test_ranks_that_disagree_or_point_outside_are_located():
    comp = {"id": 3, "type": "COMP_NODE"}
    coll = {"id": 3, "type": "COMM_COLL_NODE", "attrs": [("comm_type", 0), ("comm_size", 8)]}
    with pytest.raises(ImportFormatError) as exc:
        chakra_job([("t.0.et", encode_trace([comp])), ("t.1.et", encode_trace([coll]))], None, GPUS)
    assert exc.value.problems[0].path.startswith("rank 1 (t.1.et) byte") and "SPMD" in exc.value.problems[0].message
    bad_dep = encode_trace([{"id": 1, "type": "COMP_NODE", "data_deps": [99]}])
    assert "depends on node 99" in _one(bad_dep).message
    wrong_pg = encode_trace([{**coll, "attrs": coll["attrs"] + [("pg_name", "tp1", "string")]}])
    with pytest.raises(ImportFormatError) as exc:
        chakra_job([("t.0.et", wrong_pg), ("t.1.et", wrong_pg)], '{"tp1": [1]}', GPUS)
    assert "does not hold rank 0" in exc.value.problems[0].message
    unknown_pg = encode_trace([{**coll, "attrs": coll["attrs"] + [("pg_name", "x", "string")]}])
    assert "not in the groups file" in _one(unknown_pg, "{}").message
    self_send = encode_trace([{"id": 1, "type": "COMM_SEND_NODE", "attrs": [("comm_dst", 0, "int32")]}])
    assert "comm_dst 0" in _one(self_send).message


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000, "not JSON"), ("[1, 2]", "expected"), ('{"a": [0, -1]}', "expected a rank"),
    ('{"a": [0, 0]}', "twice"), ('{"a": []}', "non-empty"), ('{"a": [true]}', "expected a rank"),
])
def test_bad_group_files_are_located(text, words):
    with pytest.raises(ImportFormatError) as exc:
        parse_groups(text)
    assert words in exc.value.problems[0].message


def test_only_content_is_read_never_a_path_given_as_content():
    with pytest.raises(ImportFormatError) as exc:
        chakra_job([("t.0.et", "/etc/passwd")], None, GPUS)
    assert "bytes of a .et file" in exc.value.problems[0].message
