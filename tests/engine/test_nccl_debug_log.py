"""NCCL_DEBUG=INFO logs: published excerpts read right, bad input located, a design checked.

Fixtures (``tests/engine/data/nccl_debug/``, each citing its source in its header):

- ``a100_8gpu_shm_nccl_tests_228.log``: one host, 8 × A100-SXM4-80GB behind NVSwitches, which
  NCCL joined through SHM/direct/direct, with 2 IB NICs (NVIDIA/nccl-tests#228);
- ``ib_2node_16rank_nccl_1412.log``: the first of 2 hosts of a 16-rank IB run without GPU
  Direct RDMA (NVIDIA/nccl#1412).

Design checked against (``dgx-a100``, one host)::

    [gpu0..gpu7]==NV12==[nvswitch0..5]      [gpuN]--pcie--[sw]--pcie--[nicN]  (8 compute NICs)
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from designer.engine.analysis.nccl_log_check import check_log
from designer.engine.analysis.nccl_tests import compile_topology
from designer.engine.errors import ImportFormatError
from designer.engine.io.nccl_debug_log import parse_logs
from designer.engine.io.nccl_graph_dump import parse_graph_dump

DATA = Path(__file__).parent / "data" / "nccl_debug"
A100 = (DATA / "a100_8gpu_shm_nccl_tests_228.log").read_text()
IB2 = (DATA / "ib_2node_16rank_nccl_1412.log").read_text()
# The NIC list line of NVIDIA/nccl#302 (4 NICs, one of them RoCE), behind an "mpirun -tag" prefix.
FOUR_NICS = ("[56] crow-ib-new-nccl-262-b-7:7240:7240 [0] NCCL INFO NET/IB : Using [0]mlx5_3:1/IB [1]mlx5_0:1/IB "
             "[2]mlx5_2:1/RoCE [3]mlx5_4:1/IB ; OOB eth0:10.100.72.18<0>\n")


def design(template: str, hosts: int = 1):
    build = {"template": template, "hosts": hosts}
    if hosts > 1:
        build["fabric"] = "rail-optimized"
    return compile_topology({"build": build})


def problems(texts) -> list[str]:
    with pytest.raises(ImportFormatError) as info:
        parse_logs(texts)
    assert info.value.problems, "errors are located"
    return [str(p) for p in info.value.problems]


# ---------------------------------------------------------------- published logs
def test_single_host_a100_log_gpus_nics_and_transports():
    log = parse_logs([("run.log", A100)])
    assert log.hosts == ["user"] and log.network == "IB"
    assert [n["name"] for n in log.nics["user"]] == ["mlx5_0", "mlx5_2"]
    assert sorted(log.ranks) == list(range(8))
    # the bracket of pre-2.19 connection lines is the bus id; the printing thread's [dev] the CUDA device
    assert log.ranks[7]["bus_id"] == "ca000" and log.ranks[7]["cuda_dev"] == 7
    assert log.ranks[0]["bus_id"] == "27000"
    assert {p["transport"] for p in log.peers} == {"SHM"}
    assert len(log.peers) == 13                       # 13 distinct (channel, src, dst) lines
    assert (7, 6) in {(p["src"], p["dst"]) for p in log.peers}
    assert log.version is None and log.warnings == []


def test_two_host_ib_log_ranks_rings_trees_and_net():
    log = parse_logs([("swat1-04.log", IB2)])
    assert log.nranks == 16 and log.nodes == 2 and log.comm_id == "0x49bbd7790311d5eb"
    assert log.hosts == ["swat1-04"]
    assert log.ranks[0]["bus_id"] == "7000" and log.ranks[6]["nvml_dev"] == 6
    assert log.ranks[2]["bus_id"] == "48000"          # from its Destroy COMPLETE line
    assert sorted(log.rings) == [0, 1, 2, 3, 4]
    assert log.rings[3] == [0, 5, 12, 15, 14, 11, 10, 9, 8, 13, 4, 7, 6, 3, 2, 1]
    assert log.trees[1][1] == {"down": [], "up": 0} and log.trees[0][1] == {"down": [2], "up": 0}
    net = [p for p in log.peers if p["transport"] == "NET"]
    assert {(p["src"], p["dst"], p["direction"]) for p in net} == {(5, 12, "send"), (13, 4, "receive")}
    assert all(p["net"] == "IB" and p["nic"] == 3 and not p["gdr"] for p in net)
    p2p = [p for p in log.peers if p["transport"] == "P2P"]
    assert p2p and all(p["detail"] == "direct pointer/read" for p in p2p)


def test_newer_formats_gdr_pxn_nvls_counts_and_tuning():
    """Line forms of NCCL 2.19–2.27 as printed in NVIDIA/nccl#1814, #1537, #1453, #1595, #1781."""
    text = "\n".join([
        "h0:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
        "h0:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
        "h0:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'",
        "h0:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'",
        "h0:1:1 [0] NCCL INFO comm 0x55 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 commId 0xab - Init START",
        "h0:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0",
        "h0:1:1 [0] NCCL INFO NVLS Head  0:  0  8",
        "h0:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0(1)/GDRDMA",
        "h0:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "h0:1:1 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
        "h0:1:1 [0] NCCL INFO CC Off, workFifoBytes 1048576",
        "h0:1:1 [0] NCCL INFO AllReduce: 131072 Bytes -> Algo 1 proto 2 time 51.603912",
        "h0:1:1 [0] NCCL INFO 65536 Bytes -> Algo 0 proto 0 time 37.798233",
        "h0:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 2048 datatype 7 op 0 root 0 "
        "comm 0x55 [nranks=16] stream 0x3",
    ])
    log = parse_logs([("run.log", text)])
    assert log.version == "2.21.5+cuda12.4"
    assert [(g["name"], g["enabled"]) for g in log.gdr] == [("mlx5_1", False), ("mlx5_0", True)]
    net = next(p for p in log.peers if p["transport"] == "NET")
    assert (net["nic"], net["proxy"], net["gdr"], net["pxn"]) == (0, 1, True, True)
    assert log.channels == {"coll": 24, "collnet": 24, "nvls": 0, "p2p": 32, "p2p_per_peer": 32}
    assert log.nvls == {"multicast": {"h0": [0]}, "heads": {0: [0, 8]}}
    assert [(t["op"], t["algorithm"], t["protocol"]) for t in log.tuning] == [
        ("AllReduce", "Ring", "Simple"), (None, "Tree", "LL")]
    assert log.collectives == {"AllReduce": 1}


def test_graph_dump_channels_in_order():
    """The 2-channel ring and tree graphs of a 4-GPU host posted in NVIDIA/nccl#524."""
    xml = """<graphs version="1">
  <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="12" speedinter="12" typeintra="SYS" typeinter="SYS" samechannels="1">
    <channel><net dev="3"/><gpu dev="0"/><gpu dev="1"/><gpu dev="2"/><gpu dev="3"/><net dev="0"/></channel>
    <channel><net dev="3"/><gpu dev="0"/><gpu dev="1"/><gpu dev="2"/><gpu dev="3"/><net dev="0"/></channel>
  </graph>
  <graph id="2" pattern="3" crossnic="0" nchannels="0" speedintra="0" speedinter="0" typeintra="NVL" typeinter="PIX" samechannels="1"/>
</graphs>"""
    graphs = parse_graph_dump(xml)
    assert [g["kind"] for g in graphs] == ["ring", "tree"]
    assert graphs[0]["channels"][0] == {"gpus": [0, 1, 2, 3], "nets": [3, 0]}
    assert graphs[0]["speed_intra_gbs"] == 12.0 and graphs[0]["type_intra"] == "SYS"
    # against a DGX A100 host: its GPUs are all NVLink, NCCL's ring graph ran over SYS
    report = check_log(parse_logs([("run.log", A100)]), design("dgx-a100"), graphs)
    graph = [m for m in report["mismatches"] if m["kind"] == "graph"]
    assert graph == [{"kind": "graph", "where": "graph 0 (ring)",
                      "message": "NCCL's ring graph runs over SYS inside the node; the design joins h0's GPUs "
                                 "by NVLink"}]


# ---------------------------------------------------------------- checks against a design
def test_four_nic_log_against_an_eight_nic_design_names_the_difference():
    report = check_log(parse_logs([("run.log", FOUR_NICS)]), design("dgx-h100"))
    nics = [m for m in report["mismatches"] if m["kind"] == "nics"]
    assert nics == [{"kind": "nics", "where": "host crow-ib-new-nccl-262-b-7",
                     "message": "NCCL sees 4 NICs on host crow-ib-new-nccl-262-b-7 (mlx5_0, mlx5_2, mlx5_3, "
                                "mlx5_4), the design has 8 on h0"}]


def test_shm_where_the_design_has_nvlink_is_named_per_peer():
    report = check_log(parse_logs([("run.log", A100)]), design("dgx-a100"))
    transport = [m["message"] for m in report["mismatches"] if m["kind"] == "transport"]
    assert len(transport) == 7                        # 7 distinct pairs, each named once
    assert ("peer 1->0 via SHM/direct/direct where the design has NVLink (NV12) between h0/gpu1 and h0/gpu0"
            in transport)
    kinds = {m["kind"] for m in report["mismatches"]}
    assert kinds == {"nics", "transport"}             # 8 ranks on 8 GPUs: no size mismatch
    assert report["summary"]["transports"] == {"SHM/direct/direct": 13}


def test_ib_without_gdr_and_rank_counts_against_designs():
    log = parse_logs([("swat1-04.log", IB2)])
    two = check_log(log, design("dgx-h100", 2))
    assert [m["kind"] for m in two["mismatches"]] == ["gdr"]
    assert "NET/IB/3 without GDRDMA" in two["mismatches"][0]["message"]
    one = check_log(log, design("dgx-h100", 1))
    messages = [m["message"] for m in one["mismatches"]]
    assert "NCCL runs 16 ranks, the design has 8 GPUs" in messages
    assert "NCCL counts 2 nodes, the design has 1 hosts" in messages


def test_ring_hop_through_sys_is_located():
    """A DGX H100 ring (every hop NV18) reports nothing; ring ``0 1`` on the two-socket host of
    :func:`_two_socket_pcie` crosses SYS both ways (the ring closes: it lists all 2 ranks)."""
    topo = design("dgx-h100")
    text = ("n:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 8 cudaDev 0 busId 1000 - Init COMPLETE\n"
            "n:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7\n")
    report = check_log(parse_logs([("r.log", text)]), topo)
    assert not [m for m in report["mismatches"] if m["kind"] == "ring"]     # every hop is NV18
    sys_topo = _two_socket_pcie()
    report = check_log(parse_logs([("r.log", text.replace("nranks 8", "nranks 2").replace(
        "0   1   2   3   4   5   6   7", "0   1"))]), sys_topo)
    rings = [m["message"] for m in report["mismatches"] if m["kind"] == "ring"]
    assert rings == ["ring on channel 0 crosses the CPU interconnect (SYS) between GPU 0 and GPU 1 "
                     "(h0/gpu0 -> h0/gpu1)",
                     "ring on channel 0 crosses the CPU interconnect (SYS) between GPU 1 and GPU 0 "
                     "(h0/gpu1 -> h0/gpu0)"]


def _two_socket_pcie():
    """``[gpu0]--pcie--[cpu0]==upi==[cpu1]--pcie--[gpu1]``: the two GPUs are SYS apart."""
    doc = {"format": "fabricscope.topology/1", "name": "two-socket",
           "groups": [{"id": "h0", "kind": "host"}],
           "nodes": [{"id": "h0/cpu0", "kind": "cpu", "group": "h0", "attrs": {"socket": 0}},
                     {"id": "h0/cpu1", "kind": "cpu", "group": "h0", "attrs": {"socket": 1}},
                     {"id": "h0/gpu0", "kind": "gpu", "group": "h0", "attrs": {"index": 0}},
                     {"id": "h0/gpu1", "kind": "gpu", "group": "h0", "attrs": {"index": 1}}],
           "links": [{"id": "u", "a": "h0/cpu0", "b": "h0/cpu1", "tech": "upi-spr"},
                     {"id": "p0", "a": "h0/gpu0", "b": "h0/cpu0", "tech": "pcie5x16"},
                     {"id": "p1", "a": "h0/gpu1", "b": "h0/cpu1", "tech": "pcie5x16"}]}
    return compile_topology(doc)


def test_summary_without_a_design_has_no_mismatches():
    report = check_log(parse_logs([("swat1-04.log", IB2)]))
    assert report["design"] is None and report["mismatches"] == []
    assert report["summary"]["hosts"] == [{"host": "swat1-04", "ranks": list(range(8)), "nics": []}]
    assert report["summary"]["transports"] == {"P2P/direct pointer/read": 10, "NET/IB/3 (no GDR)": 4}


# ---------------------------------------------------------------- bad input: located, nothing kept
def test_line_cut_midway_is_located():
    cut = IB2.replace("swat1-04:2017630:2017698 [6] NCCL INFO Channel 07/0 : 6[6] -> 3[3] via P2P/direct pointer/read",
                      "swat1-04:2017630:2017698 [6] NCCL INFO Channel 07/0 : 6[6] -> 3[3] via P2P/dir")
    found = problems([("swat1-04.log", cut)])
    line = next(i for i, t in enumerate(cut.splitlines(), 1) if t.endswith("via P2P/dir"))
    assert len(found) == 1 and found[0].startswith(f"line {line}: a connection line cut short")
    init_cut = IB2.replace("busId 88000 commId 0x49bbd7790311d5eb - Init COMPLETE", "busId 88")
    line = next(i for i, t in enumerate(init_cut.splitlines(), 1) if t.endswith("busId 88"))
    assert problems([("a", init_cut)]) == [f"line {line}: an Init line cut short (no ' - Init START/COMPLETE' "
                                           "at its end)"]


def test_two_runs_mixed_are_refused_with_both_places():
    other = IB2.replace("nranks 16", "nranks 8").replace("nRanks 16", "nRanks 8")
    found = problems([("a.log", IB2), ("b.log", other)])
    assert any(p.startswith("b.log: line ") and "nranks 8, but a.log: line " in p and "two different runs" in p
               for p in found)
    versions = problems([("a.log", "NCCL version 2.19.3+cuda12.3\n" + A100),
                         ("b.log", "NCCL version 2.21.5+cuda12.4\n" + A100)])
    assert versions == ["b.log: line 1: NCCL version 2.21.5+cuda12.4, but a.log: line 1 says 2.19.3+cuda12.3: "
                        "logs of two different runs are mixed (give one run's logs)"]
    comm = problems([("a.log", IB2), ("b.log", IB2.replace("0x49bbd7790311d5eb", "0x1111111111111111"))])
    assert any("commId 0x1111111111111111, but a.log" in p for p in comm)


def test_unknown_nic_names_are_kept_and_noted():
    text = "n:1:1 [0] NCCL INFO NET/IB : Using [0]weirdnic0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>\n"
    log = parse_logs([("run.log", text)])
    assert [n["name"] for n in log.nics["n"]] == ["weirdnic0", "mlx5_1"]
    assert log.warnings == ["line 1: NIC 'weirdnic0' is not a device name of a known RDMA driver (mlx5_*, "
                            "bnxt_re*, irdma*, efa*, …); kept as NCCL printed it"]


@pytest.mark.parametrize("text, where", [
    ("", "log"),
    ("just some launcher chatter\nno nccl here\n", "log"),
    ("n:1:1 [0] NCCL INFO Using network IB\n\x00\x01\x02binary", "line 2"),
    ("\x01\x02\x03\x04\x05\x06\x07\x08 not text", "line 1"),
])
def test_empty_junk_and_binary_are_located(text, where):
    found = problems([("x.log", text)])
    assert found[0].startswith(where + ":")


def test_glued_lines_of_two_ranks_are_both_read():
    text = ("n:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read"
            "n:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n")
    with pytest.raises(ImportFormatError):            # the first half lost its end: located, not guessed
        parse_logs([("x.log", text)])
    ok = ("n:1:1 [0] NCCL INFO Using network IB n:1:2 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via "
          "P2P/CUMEM/read\n")
    log = parse_logs([("x.log", ok)])
    assert log.network == "IB" and [(p["src"], p["dst"]) for p in log.peers] == [(1, 0)]
    assert log.ranks[1]["host"] == "n"


def test_graph_dump_bad_input_is_located():
    with pytest.raises(ImportFormatError) as info:
        parse_graph_dump('<graphs version="1"><graph id="0" pattern="x"><channel><gpu dev="a"/></channel>'
                         '</graph></graphs>')
    paths = [p.path for p in info.value.problems]
    assert paths == ["graph[0].channel[0].gpu[0].dev", "graph[0].pattern"]
    with pytest.raises(ImportFormatError):
        parse_graph_dump("<system/>")
    with pytest.raises(ImportFormatError):
        parse_graph_dump('<graphs version="1"><graph id="0"')


# ---------------------------------------------------------------- CLI
def test_cli_prints_summary_and_mismatches(capsys, tmp_path):
    from designer.engine.cli import main

    dump = tmp_path / "graph.xml"
    dump.write_text('<graphs version="1"><graph id="0" pattern="4" nchannels="1" speedintra="20" speedinter="20" '
                    'typeintra="NVL" typeinter="PIX"><channel><net dev="0"/><gpu dev="0"/><gpu dev="1"/>'
                    '<net dev="0"/></channel></graph></graphs>')
    assert main(["nccl-log", str(DATA / "a100_8gpu_shm_nccl_tests_228.log"), "--template", "dgx-a100",
                 "--graph-dump", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "host user: ranks 0-7; NICs mlx5_0, mlx5_2" in out
    assert "SHM/direct/direct     13" in out
    assert "graph 0 (ring): 1 channels, intra NVL, inter PIX, 20.0 GB/s per channel" in out
    assert "design dgx-a100-1x-rail-optimized: 1 hosts, 8 GPUs — 8 mismatch(es)" in out
    assert "  host user: NCCL sees 2 NICs on host user (mlx5_0, mlx5_2), the design has 8 on h0" in out
    assert main(["nccl-log", str(DATA / "ib_2node_16rank_nccl_1412.log"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["nranks"] == 16 and report["design"] is None


def test_cli_bad_log_is_one_located_error_line(capsys, tmp_path):
    from designer.engine.cli import main

    bad = tmp_path / "cut.log"
    bad.write_text("n:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/IB/x\n")
    assert main(["nccl-log", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: line 1: a connection line cut short or malformed")


def test_topology_dump_counts_against_the_design():
    """The DGX A100 NCCL topology dump of ``tests/engine/data/import`` matches the dgx-a100
    template (8 GPUs, 8 compute NICs, NVSwitches); the 1-GPU VM dump does not."""
    from designer.engine.io.nccl_xml import parse_nccl_xml

    imports = Path(__file__).parent / "data" / "import"
    log = parse_logs([("run.log", A100)])
    dgx = parse_nccl_xml((imports / "dgx-a100-nccl-dump.xml").read_text())
    assert [m for m in check_log(log, design("dgx-a100"), None, dgx)["mismatches"] if m["kind"] == "topo"] == []
    vm = parse_nccl_xml((imports / "vm-1gpu-10gbe-nccl.xml").read_text())
    topo = [m["message"] for m in check_log(log, design("dgx-a100"), None, vm)["mismatches"] if m["kind"] == "topo"]
    assert topo == ["NCCL's topology dump shows 1 GPUs, the design's host h0 has 8",
                    "NCCL's topology dump shows 1 NICs, the design's host h0 has 8 compute NICs",
                    "NCCL's topology dump shows no NVSwitch, the design's host h0 has 6"]
