"""Bill of materials: switch, port, cable and transceiver counts checked by hand on small fabrics.

Rail-optimized, 4 x DGX-H100 (8 x 400G compute NICs each), default switch eth-51t2 in its
128 x 400G mode, o = 1::

    [h0..h3]/nic r --1 port each--> [leaf r]  (8 leaves: 4 host ports + 4 uplink ports)
    [leaf r] ==2 ports==> [spine0], ==2 ports==> [spine1]  (fewest spines >= 2 in equal bundles)

- leaves: 8, ports used 8 x (4 + 4) = 64, free 8 x 128 - 64 = 960;
- spines: 2, ports used 2 x 8 leaves x 2 = 32, free 2 x 128 - 32 = 224;
- host links: 32 ports in-row (leaves are not in a host's rack) = 32 fibres, 64 transceivers;
- leaf-spine: 16 links of 2 ports = 32 fibres (optics), 64 transceivers;
- power: 10 x 1100 W = 11,000 W, per GPU 11,000 / 32 = 343.75 W;
- bisection: min(injection 32 x 400, into spines 32 x 400) / 2 = 6,400 Gb/s.
"""
import json
import subprocess
import sys

import pytest

from designer.engine.model.bom import fabric_bom
from designer.engine.catalog import SWITCH_MODELS
from designer.engine.model.fabrics import build_cluster


def rows(bom, key="tier"):
    return {r[key]: r for r in bom["switches"]}


def test_small_rail_optimized_bom_by_hand():
    bom = fabric_bom(build_cluster("dgx-h100", 4))
    sw = rows(bom)
    assert (sw["leaf"]["count"], sw["leaf"]["ports_used"], sw["leaf"]["ports_free"]) == (8, 64, 960)
    assert (sw["spine"]["count"], sw["spine"]["ports_used"], sw["spine"]["ports_free"]) == (2, 32, 224)
    links = {r["kind"]: r for r in bom["links"]}
    assert (links["host-leaf"]["ports"], links["host-leaf"]["reach"], links["host-leaf"]["transceivers"]) == \
        (32, "in-row", 64)
    assert (links["leaf-spine"]["links"], links["leaf-spine"]["ports"], links["leaf-spine"]["cables"]) == (16, 32, 32)
    assert bom["transceivers"] == {"in-row": 64, "optics": 64}
    watts = SWITCH_MODELS["eth-51t2"].power_w
    assert bom["power"]["switch_w"] == pytest.approx(10 * watts)
    assert bom["power"]["per_gpu_w"] == pytest.approx(10 * watts / 32)
    assert bom["bisection_gbps"] == pytest.approx(6400.0)
    assert bom["oversubscription"] == {"leaf": 1.0}
    assert bom["ports"] == {"used": 96, "total": 10 * 128, "free": 10 * 128 - 96}


def test_tor_links_are_in_rack_copper_and_oversubscription_per_tier():
    """8 x DGX-A100 leaf-spine, 4 hosts per rack, o = 2: two ToRs of 32 x 200G host ports and
    16 uplink ports each (2 spines x 8) — copper to the hosts, no transceiver."""
    bom = fabric_bom(build_cluster("dgx-a100", 8, fabric="leaf-spine", oversubscription=2))
    links = {r["kind"]: r for r in bom["links"]}
    assert (links["host-leaf"]["reach"], links["host-leaf"]["cables"], links["host-leaf"]["transceivers"]) == \
        ("in-rack copper", 64, 0)
    assert links["leaf-spine"]["ports"] == 32
    assert bom["oversubscription"]["leaf"] == pytest.approx(2.0)
    assert rows(bom)["spine"]["count"] == 2


def test_three_tier_bom_counts_every_tier():
    doc = build_cluster("dgx-h100", 264, switch="ib-ndr-64")
    bom = fabric_bom(doc)
    sw = rows(bom)
    f = doc["fabric"]
    assert (sw["leaf"]["count"], sw["spine"]["count"], sw["core"]["count"]) == (72, f["spines"], f["cores"])
    assert bom["oversubscription"]["spine"] <= 1.0  # pod spines are non-blocking
    used = sum(r["ports_used"] for r in bom["switches"])
    assert used == 264 * 8 + 2 * sum(r["ports"] for r in bom["links"] if r["kind"] != "host-leaf")


def test_cli_bom_json_and_table(tmp_path):
    path = tmp_path / "pod.json"
    path.write_text(json.dumps(build_cluster("dgx-h100", 4)))
    run = [sys.executable, "-m", "designer.engine", "bom", str(path)]
    out = subprocess.run(run + ["--json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["power"]["gpus"] == 32
    table = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert "eth-51t2" in table and "in-row" in table
    bad = subprocess.run(run[:-1] + [str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr


def test_cli_catalog_switches_and_build_flags(tmp_path):
    """``catalog --switches --json`` lists id/radix/port_gbps/tech; ``build --switch ID
    --oversubscription R --leaves-per-rail N --planes N`` uses them: 8 DGX-H100 on ib-ndr-64 at
    o = 2, 2 leaves per rail → 4 hosts per leaf, 2 uplink ports; 2 planes of 4 rails."""
    run = [sys.executable, "-m", "designer.engine"]
    models = json.loads(subprocess.run(run + ["catalog", "--switches", "--json"], capture_output=True,
                                       text=True, check=True).stdout)
    ndr = next(m for m in models if m["id"] == "ib-ndr-64")
    assert (ndr["radix"], ndr["port_gbps"], ndr["tech"]) == (64, 400.0, "infiniband")
    out = tmp_path / "ndr.json"
    subprocess.run(run + ["build", "--template", "dgx-h100", "--hosts", "8", "--switch", "ib-ndr-64",
                          "--oversubscription", "2", "--leaves-per-rail", "2", "--planes", "2",
                          "--nic-link-tech", "ib-ndr", "-o", str(out)], capture_output=True, text=True, check=True)
    fabric = json.loads(out.read_text())["fabric"]
    assert (fabric["switch"], fabric["leaves_per_rail"], fabric["planes"], fabric["spines"]) == ("ib-ndr-64", 2, 2, 4)
    bad = subprocess.run(run + ["build", "--template", "dgx-h100", "--hosts", "8", "--switch", "nope"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.startswith("error: switch:")


def test_hand_drawn_and_invalid_documents():
    """A hand-drawn pair of switches without model attrs still counts (radix unknown → no free
    ports, no power); an invalid document is a located error, not a traceback::

        [a]==ib-ndr x 2==[b]     (no attrs.model / radix)
    """
    from designer.engine.errors import InvalidTopology

    doc = {"format": "fabricscope.topology/1", "nodes": [
        {"id": "a", "kind": "switch", "attrs": {"role": "leaf"}},
        {"id": "b", "kind": "switch", "attrs": {"role": "spine"}}],
        "links": [{"id": "a-b", "a": "a", "b": "b", "tech": "ib-ndr", "bundle": 2, "capacity_gbps": 800}]}
    bom = fabric_bom(doc)
    assert [(r["tier"], r["model"], r["ports_used"], r["ports_free"]) for r in bom["switches"]] == \
        [("leaf", "unspecified", 2, None), ("spine", "unspecified", 2, None)]
    assert bom["power"]["unknown_models"] == ["unspecified"] and bom["ports"]["free"] is None
    doc["links"][0]["b"] = "nowhere"
    with pytest.raises(InvalidTopology) as exc:
        fabric_bom(doc)
    assert exc.value.problems[0].path == "links[0].b"


def test_1024_gpu_rail_optimized_bom_by_hand():
    """128 x DGX-H100 (1,024 GPUs), rail-optimized on eth-51t2 (128 x 400G), o = 1::

        [h0..h127]/nic r --1 port--> [leaf 2r + h//64]   16 leaves: 64 host ports + 64 uplinks
        [leaf*] ==8 ports==> [spine0 .. spine7]          1,024 uplinks / 128 ports = 8 spines

    - leaves 16 x 128 ports all used (2,048), spines 8 x 128 used (1,024): no port free;
    - host links 1,024 (in-row: 1,024 fibres, 2,048 transceivers); leaf-spine 16 x 8 = 128
      bundles of 8 ports = 1,024 fibres (optics), 2,048 transceivers;
    - power 24 x 1,100 W = 26,400 W, 25.78 W per GPU; bisection 1,024 x 400 / 2 = 204.8 Tb/s.
    """
    bom = fabric_bom(build_cluster("dgx-h100", 128, switch="eth-51t2"))
    sw = rows(bom)
    assert (sw["leaf"]["count"], sw["leaf"]["ports_used"], sw["leaf"]["ports_free"]) == (16, 16 * 128, 0)
    assert (sw["spine"]["count"], sw["spine"]["ports_used"], sw["spine"]["ports_free"]) == (8, 8 * 128, 0)
    links = {r["kind"]: r for r in bom["links"]}
    assert (links["host-leaf"]["links"], links["host-leaf"]["cables"], links["host-leaf"]["transceivers"]) == \
        (1024, 1024, 2048)
    assert (links["leaf-spine"]["links"], links["leaf-spine"]["ports"], links["leaf-spine"]["cables"]) == \
        (16 * 8, 1024, 1024)
    assert bom["cables"] == {"in-row": 1024, "optics": 1024}
    watts = SWITCH_MODELS["eth-51t2"].power_w
    assert bom["power"]["switch_w"] == pytest.approx(24 * watts)
    assert bom["power"]["per_gpu_w"] == pytest.approx(24 * watts / 1024)
    assert bom["bisection_gbps"] == pytest.approx(1024 * 400 / 2)


def test_compare_boms_marks_differences_and_which_side_is_better():
    """A: 4 x DGX-H100 at o = 1 (8 leaves, 2 spines: 32 uplink ports); B: the same at o = 2
    (8 leaves of 4 host + 2 uplink ports, 2 spines: 16 uplink ports)."""
    from designer.engine.model.bom import compare_boms

    a = fabric_bom(build_cluster("dgx-h100", 4))
    b = fabric_bom(build_cluster("dgx-h100", 4, oversubscription=2.0))
    got = {(r["section"], r["label"]): r for r in compare_boms(a, b)}
    leaves = got[("Switches", "leaf · eth-51t2 · switches")]
    assert (leaves["a"], leaves["b"], leaves["differs"], leaves["better"]) == (8, 8, False, None)
    used = got[("Switches", "spine · eth-51t2 · ports used")]
    assert (used["a"], used["b"], used["delta"], used["better"]) == (32, 16, -16, None)  # neither
    optics = got[("Cables", "optics")]
    assert (optics["a"], optics["b"], optics["better"]) == (32, 16, "B")  # fewer fibres to buy
    over = got[("Oversubscription", "leaf tier")]
    assert (over["a"], over["b"], over["better"]) == (1.0, 2.0, "A")
    bisection = got[("Fabric", "bisection bandwidth")]
    assert bisection["unit"] == "Tb/s" and bisection["a"] == pytest.approx(6.4) and bisection["better"] == "A"
    # A design without switches: every switch figure is only on one side.
    only = compare_boms(a, None)
    assert all(r["b"] is None and r["differs"] for r in only if r["section"] == "Switches")
