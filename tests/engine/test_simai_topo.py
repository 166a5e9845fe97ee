"""SimAI topology files in and out (designer.engine.io.simai_topo).

Fixtures (``tests/engine/data/simai_topo/``) are written by ``tools/simai_topo_fixtures.py``, a
reimplementation of aliyun/SimAI's ``astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py``
for its three templates; the Spectrum-X one is the configuration of SimAI's shipped
``Spectrum-X_16g_8gps_100Gbps_A100`` (header ``90 8 2 72 544 A100``)::

    Spectrum-X:  [gpu0..7]=nvsw  [gpu8..15]=nvsw   gpu k, k+8 -- asw k (100G) -- every psw (400G)
    HPN dual plane: every GPU on one ASW of each plane; plane p's ASWs on plane p's PSWs only
    DCN+:  32 consecutive GPUs per ASW; every ASW on every PSW
"""
import json
import pathlib
import subprocess
import sys

import pytest

from designer.engine.document import normalize
from designer.engine.errors import ImportFormatError, InvalidTopology
from designer.engine.io.simai_topo import (delay_ns, export_simai_topo, parse_simai_topo, rate_gbps,
                                           simai_topo_document)

DATA = pathlib.Path(__file__).parent / "data" / "simai_topo"
# name → (nodes, GPUs, GPUs per server, NVSwitches, switches, links, ToRs (ASW), spines (PSW))
CASES = {"Spectrum-X_16g_8gps_100Gbps_A100": (90, 16, 8, 2, 72, 544, 8, 64),
         "AlibabaHPN_32g_8gps_DualToR_DualPlane_200Gbps_H100": (172, 32, 8, 4, 136, 1056, 16, 120),
         "DCN+SingleToR_128g_8gps_400Gbps_H100": (156, 128, 8, 16, 12, 288, 4, 8)}


def _doc(name):
    doc, warnings = simai_topo_document((DATA / name).read_text())
    assert warnings == []
    return normalize(doc)


@pytest.mark.parametrize("name", sorted(CASES))
def test_generator_examples_import_with_the_counts_their_header_states(name):
    nodes, gpus, gps, nvs, sws, links, tors, spines = CASES[name]
    head = (DATA / name).read_text().split("\n", 1)[0].split()
    assert [int(x) for x in head[:5]] == [nodes, gps, nvs, sws, links]
    doc = _doc(name)
    kinds = [n["kind"] for n in doc["nodes"]]
    assert (len(doc["nodes"]), len(doc["links"])) == (nodes, links)
    assert (kinds.count("gpu"), kinds.count("nvswitch"), kinds.count("switch")) == (gpus, nvs, sws)
    hosts = [g for g in doc["groups"] if g["kind"] == "host"]
    assert len(hosts) == gpus // gps
    assert all(sum(n.get("group") == h["id"] and n["kind"] == "gpu" for n in doc["nodes"]) == gps for h in hosts)
    roles = [n["attrs"]["role"] for n in doc["nodes"] if n["kind"] == "switch"]
    assert (roles.count("tor"), roles.count("spine")) == (tors, spines)


@pytest.mark.parametrize("name", sorted(CASES))
def test_export_of_an_import_gives_back_the_same_bytes(name):
    text = (DATA / name).read_text()
    doc = json.loads(json.dumps(_doc(name)))          # through JSON, as stored
    assert export_simai_topo(doc) == text


def test_spectrum_x_wiring_is_rail_optimized_and_rates_are_read_with_units():
    """GPU k of each server reaches ASW k (sw18 + k) at 100 Gb/s, 500 ns; NVLink 2400 Gb/s, 25 ns."""
    doc = _doc("Spectrum-X_16g_8gps_100Gbps_A100")
    up = {(l["a"], l["b"]): l for l in doc["links"] if l["b"].startswith("sw") and "gpu" in l["a"]}
    assert up[("s1/gpu3", "sw21")]["capacity_gbps"] == 100.0 and up[("s0/gpu3", "sw21")]["latency_ns"] == 500.0
    nv = next(l for l in doc["links"] if l["b"] == "s1/nvsw0")
    assert (nv["capacity_gbps"], nv["latency_ns"]) == (2400.0, 25.0)
    assert rate_gbps("25GBps") == 200.0 and delay_ns("2us") == 2000.0 and rate_gbps("400Gb") is None


def test_an_edited_capacity_is_written_fresh_and_untouched_links_keep_their_tokens():
    doc = _doc("DCN+SingleToR_128g_8gps_400Gbps_H100")
    doc["links"][1]["capacity_gbps"] = 800.0
    doc["links"][1]["latency_ns"] = 1200.0
    lines = export_simai_topo(doc).split("\n")
    assert lines[3] == "0 144 800Gbps 0.0012ms 0"      # GPU 0 to its ASW (ids 144..147)
    assert lines[2] == "0 128 2880Gbps 0.000025ms 0"   # GPU 0 to its NVSwitch (ids 128..143)


def test_a_document_without_simai_ids_is_numbered_gpus_first_and_reimports_alike():
    doc = _doc("Spectrum-X_16g_8gps_100Gbps_A100")
    for n in doc["nodes"]:
        n["attrs"].pop("simai_id")
    for l in doc["links"]:
        l["attrs"].pop("simai")
    again = normalize(simai_topo_document(export_simai_topo(doc))[0])
    assert [n["id"] for n in again["nodes"]] == [n["id"] for n in doc["nodes"]]
    assert [(l["a"], l["b"], l["capacity_gbps"], l["latency_ns"]) for l in again["links"]] == \
           [(l["a"], l["b"], l["capacity_gbps"], l["latency_ns"]) for l in doc["links"]]


def test_a_design_with_nics_is_refused_with_the_node_located():
    from designer.engine.traffic.scenario import normalize_scenario

    doc = normalize_scenario({"topology": {"build": {"template": "dgx-h100", "hosts": 1}}}).topology.doc
    with pytest.raises(InvalidTopology) as exc:
        export_simai_topo(doc)
    assert exc.value.problems[0].path.startswith("nodes[") and "SimAI topology holds" in exc.value.problems[0].message


GOOD = "4 2 1 1 4 H100\n2 3 \n0 2 2880Gbps 0.000025ms 0\n1 2 2880Gbps 0.000025ms 0\n0 3 400Gbps 0.0005ms 0\n1 3 400Gbps 0.0005ms 0\n"


@pytest.mark.parametrize("text, where, words", [
    ("", "line 1", "expected"),
    ("4 2 1 1 5 H100" + GOOD[14:], "line 1", "5 links, the file has 4"),
    (GOOD.replace("2 3 \n", "2 3\n"), "line 2", "each followed by a space"),
    (GOOD.replace("2 3 \n", "2 9 \n"), "line 2", "not a node id"),
    (GOOD.replace("2 3 \n", "2 2 \n"), "line 2", "listed twice"),
    (GOOD.replace("0 3 400Gbps", "3 3 400Gbps"), "line 5", "itself"),
    (GOOD.replace("0 3 400Gbps", "0 7 400Gbps"), "line 5", "not a node id"),
    (GOOD.replace("0 3 400Gbps", "0 3 400Gb"), "line 5", "rate"),
    (GOOD.replace("0 3 400Gbps 0.0005ms", "0 3 400Gbps 5"), "line 5", "delay"),
    (GOOD.replace("0.0005ms 0\n1 3", "0.0005ms 2\n1 3"), "line 5", "error rate"),
    ("999999999 8 1 1 0 H100\n1 2 \n", "line 1", "outside"),
    ("4 2 1 1 4 H100;rm\n2 3 \n", "line 1", "gpu type"),
])
def test_bad_files_get_located_errors(text, where, words):
    with pytest.raises(ImportFormatError) as exc:
        parse_simai_topo(text)
    assert any(p.path == where and words in p.message for p in exc.value.problems), exc.value.problems


def test_the_good_small_file_round_trips():
    assert export_simai_topo(normalize(simai_topo_document(GOOD)[0])) == GOOD


def test_cli_import_then_export_is_byte_stable(tmp_path):
    src = DATA / "AlibabaHPN_32g_8gps_DualToR_DualPlane_200Gbps_H100"
    doc, out = tmp_path / "d.json", tmp_path / "t.txt"
    for cmd in (["import", str(src), "--format", "simai-topo", "-o", str(doc)],
                ["export", str(doc), "--format", "simai-topo", "-o", str(out)]):
        proc = subprocess.run([sys.executable, "-m", "designer.engine", *cmd], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == src.read_bytes()
