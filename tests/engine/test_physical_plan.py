"""Physical plan: racks and their power summed by hand, one row per cable, media by reach, flags,
located errors on bad overrides, the NetBox round trip, device types and the LLDP as-built check.

The small design of most tests (``build_cluster("dgx-h100", 4, fabric="leaf-spine",
hosts_per_rack=2)``)::

    rack0: [h0][h1]==8x400G each==[tor0]      rack1: [h2][h3]==[tor1]
    tor0 ==8x400G== spine0, tor0 ==8x400G== spine1  (tor1 the same)

Switches are 64 x 800G cages run as 128 x 400G: every switch end is a twin-port cage shared by
two 400G legs (a breakout), so a leg carries half of the cage's end.
"""
from __future__ import annotations

import pytest

from designer.engine.errors import ImportFormatError, InvalidScenario
from designer.engine.io.lldp import as_built_diff, read_lldp_table, read_lldpctl_json
from designer.engine.io.netbox_cables import netbox_csv, read_netbox_cables
from designer.engine.io.netbox_devicetype import device_type_overrides, read_device_type
from designer.engine.model.bom import fabric_bom
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.physical_plan import plan

# Round figures so a rack's power can be summed by hand.
POWER = {"server:dgx-h100": 10_000, "switch:eth-51t2": 1_000, "medium:dac:400": 0.5, "medium:dac:800": 1.0,
         "medium:aec:800": 8.0, "medium:aoc:800": 12.0}


@pytest.fixture(scope="module")
def small():
    return build_cluster("dgx-h100", 4, fabric="leaf-spine", hosts_per_rack=2)


def test_rack_power_summed_by_hand(small):
    p = plan(small, {"media": ["dac", "aec", "aoc"], "power": POWER})
    racks = {r["id"]: r for r in p["racks"]}
    assert [d["id"] for d in racks["R01-01"]["devices"]] == ["h0", "h1", "tor0"]
    # R01-01: h0 + h1 + tor0 = 2 x 10,000 + 1,000 W. Optics: 16 host cables in the rack (2 m: DAC),
    # each a NIC end 0.5 W + half a twin-port 800G DAC end 1.0 / 2 -> 16 x 1.0 = 16 W; 16 uplinks
    # to the spine row (5.5 m: past DAC, AEC), tor0's end half of 8 W -> 16 x 4 = 64 W.
    assert racks["R01-01"]["power_w"] == pytest.approx(20_000 + 1_000 + 16 * (0.5 + 0.5) + 16 * 4.0)
    # Spine rack: two switches + 32 uplink ends of 4 W.
    assert racks["R02-01"]["power_w"] == pytest.approx(2 * 1_000 + 32 * 4.0)
    assert not any(r["over_power"] for r in p["racks"])
    tight = plan(small, {"media": ["dac", "aec", "aoc"], "power": POWER, "rack": {"power_kw": 21.05}})
    over = [f["path"] for f in tight["flags"] if "budget" in f["message"]]
    assert over == ["racks[R01-01]", "racks[R01-02]"] and tight["summary"]["over_budget"] == ["R01-01", "R01-02"]


def test_one_row_per_cable_ports_once_counts_equal_bom(small):
    p = plan(small)
    bom = fabric_bom(small)
    assert len(p["cables"]) == sum(bom["cables"].values()) == 64
    ends = [(c["a_device"], c["a_port"]) for c in p["cables"]] + [(c["b_device"], c["b_port"]) for c in p["cables"]]
    assert len(ends) == len(set(ends))
    assert len({c["label"] for c in p["cables"]}) == len(p["cables"])
    for row in bom["switches"]:
        tiers = [d for r in p["racks"] for d in r["devices"] if d["tier"] == row["tier"]]
        assert len(tiers) == row["count"]
    per_kind = {}
    for c in p["cables"]:
        per_kind[c["kind"]] = per_kind.get(c["kind"], 0) + 1
    assert per_kind == {r["kind"]: r["cables"] for r in bom["links"]}
    assert {c["breakout"] for c in p["cables"] if c["kind"] == "host-leaf"} == {"1/2", "2/2"}


def test_rail_optimized_counts_and_locality():
    doc = build_cluster("dgx-h100", 8, fabric="rail-optimized")
    p = plan(doc)
    assert len(p["cables"]) == sum(fabric_bom(doc)["cables"].values())
    compute = [r for r in p["racks"] if r["role"] == "compute"]
    # 3 DGX H100 (3 x 10.2 kW + optics) fit a 40 kW rack; a fourth would not.
    assert [len(r["devices"]) for r in compute] == [3, 3, 2]
    assert [d["id"] for d in compute[0]["devices"]] == ["h0", "h1", "h2"]
    network = [r for r in p["racks"] if r["role"] == "network"]
    assert network and all(d["tier"] == "leaf" for r in network for d in r["devices"])


def test_mediums_by_reach(small):
    p = plan(small, {"media": ["dac", "acc", "aec", "aoc", "sr", "dr"]})
    for c in p["cables"]:
        if c["length_m"] <= 3:
            assert c["medium"] == "dac"
        elif c["length_m"] <= 5:
            assert c["medium"] == "acc"
        elif c["length_m"] <= 7:
            assert c["medium"] == "aec"
    assert {c["length_m"] for c in p["cables"]} == {2.0, 5.5, 6.0}


def test_unreachable_cable_is_flagged(small):
    p = plan(small, {"media": ["dac", "acc"], "spacing_m": {"row_pitch": 50}})
    far = [c for c in p["cables"] if c["medium"] is None]
    assert len(far) == 32 and all(c["kind"] == "leaf-spine" for c in far)
    flagged = {f["path"] for f in p["flags"] if "longer than any" in f["message"]}
    assert flagged == {f"cables[{c['label']}]" for c in far}
    assert p["summary"]["unreachable"] == 32


@pytest.mark.parametrize("request_, path", [
    ({"prices": {"switch:eth-51t2": 0}}, "prices.switch:eth-51t2"),
    ({"prices": {"medium:dr:800": -5}}, "prices.medium:dr:800"),
    ({"power": {"server:dgx-h100": 5e6}}, "power.server:dgx-h100"),
    ({"prices": {"switch:eth-51t2": float("nan")}}, "prices.switch:eth-51t2"),
    ({"power": {"server:dgx-b200": 1000}}, "power.server:dgx-b200"),
    ({"prices": {"medium:dac:1600": 10}}, "prices.medium:dac:1600"),
    ({"rack": {"power_kw": 0}}, "rack.power_kw"),
    ({"rack": {"units": 42.5}}, "rack.units"),
    ({"media": ["copper"]}, "media[0]"),
    ({"row": {"network": "top"}}, "row.network"),
    ({"colour": "red"}, "colour"),
])
def test_bad_request_is_located(small, request_, path):
    with pytest.raises(InvalidScenario) as info:
        plan(small, request_)
    assert path in [p.path for p in info.value.problems]


def test_overrides_change_the_bom(small):
    base = plan(small)
    cheaper = plan(small, {"prices": {"switch:eth-51t2": 10_000}})
    switches = 2 + 2  # tor0, tor1, spine0, spine1
    assert base["bom"]["total_usd"] - cheaper["bom"]["total_usd"] == pytest.approx(switches * (60_000 - 10_000))
    assert cheaper["bom"]["usd_per_gpu"] == pytest.approx(cheaper["bom"]["total_usd"] / 32)


def test_netbox_round_trip(small):
    p = plan(small)
    files = netbox_csv(p)
    back = read_netbox_cables(files["cables.csv"])
    assert len(back) == len(p["cables"])
    ours = {frozenset(((c["a_device"], c["a_port"]), (c["b_device"], c["b_port"]))) for c in p["cables"]}
    theirs = {frozenset(((c["a_device"], c["a_port"]), (c["b_device"], c["b_port"]))) for c in back}
    assert ours == theirs
    # The same device graph as the design: device pairs with their cable counts.
    def graph(rows):
        out = {}
        for r in rows:
            key = frozenset((r["a_device"], r["b_device"]))
            out[key] = out.get(key, 0) + 1
        return out
    design = {}
    for link in small["links"]:
        if link.get("tech") == "eth400":
            a, b = (x.split("/")[0] for x in (link["a"], link["b"]))
            design[frozenset((a, b))] = design.get(frozenset((a, b)), 0) + int(link.get("bundle") or 1)
    assert graph(back) == design
    devices = files["devices.csv"].splitlines()
    assert devices[0].startswith("name,role") and len(devices) == 1 + 4 + 2 + 2
    interfaces = files["interfaces.csv"].splitlines()
    assert len(interfaces) == 1 + 2 * len(p["cables"])


def test_netbox_reader_locates_bad_lines():
    text = ("side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,length\n"
            "h0,dcim.interface,nic0,tor0,dcim.interface,p1/1,2\n"
            "h1,dcim.interface,nic0,,dcim.interface,p1/2,2\n"
            "h2,dcim.frontport,nic0,tor0,dcim.interface,p2/1,-3\n")
    with pytest.raises(ImportFormatError) as info:
        read_netbox_cables(text)
    lines = [str(p) for p in info.value.problems]
    assert "line 3: side_b_device: empty" in lines
    assert any(s.startswith("line 4: side_a_type") for s in lines) and any("line 4: length" in s for s in lines)
    with pytest.raises(ImportFormatError):
        read_netbox_cables("a,b\n1,2\n")


SN5600 = """
manufacturer: NVIDIA
model: SN5600
slug: nvidia-sn5600
u_height: 2
interfaces:
  - name: swp1
    type: 800gbase-x-osfp
  - name: swp2
    type: 800gbase-x-osfp
  - name: eth0
    type: 1000base-t
power-ports:
  - name: PSU1
    maximum_draw: 1800
    allocated_draw: 900
  - name: PSU2
    maximum_draw: 1800
    allocated_draw: 900
"""


def test_device_type_sets_units_and_power(small):
    dt = read_device_type(SN5600)
    assert dt["ports"] == {800: 2}  # 1000base-t is not a fabric port
    assert dt["u_height"] == 2 and dt["power_w"] == 1800
    overrides = device_type_overrides(dt, "switch:eth-51t2")
    p = plan(small, overrides)
    spine = next(r for r in p["racks"] if r["role"] == "spine")
    assert spine["device_w"] == 2 * 1800


def test_device_type_hostile_or_bad():
    with pytest.raises(ImportFormatError, match="aliases"):
        read_device_type("a: &x [1, 2]\nb: *x\n")
    with pytest.raises(ImportFormatError) as info:
        read_device_type("manufacturer: X\nmodel: Y\nu_height: -1\npower-ports:\n  - maximum_draw: 0\n")
    assert {p.path for p in info.value.problems} == {"u_height", "power-ports[0].maximum_draw"}
    with pytest.raises(ImportFormatError):
        read_device_type("!!python/object/apply:os.system ['true']\n")


def _observed(cables, *, swap=(), drop=()):
    """LLDP as each switch would report it: every cable seen from its switch end, with the two
    cables of ``swap`` crossed at their far ends and the cables of ``drop`` unseen."""
    rows = {c["label"]: c for c in cables}
    far = {c["label"]: (c["a_device"], c["a_port"]) for c in cables}
    if swap:
        x, y = swap
        far[x], far[y] = far[y], far[x]
    out = {}
    for label, c in rows.items():
        if label in drop:
            continue
        dev, port = far[label]
        out.setdefault(c["b_device"], []).append({c["b_port"]: {
            "chassis": {dev: {"id": {"type": "mac", "value": "00:00:00:00:00:01"}}},
            "port": {"id": {"type": "ifname", "value": port}, "descr": port}}})
    return {dev: {"lldp": {"interface": items}} for dev, items in out.items()}


def test_lldp_two_swapped_and_one_missing(small):
    import json

    cables = plan(small)["cables"]
    hosts = [c for c in cables if c["kind"] == "host-leaf"]
    swap, drop = (hosts[0]["label"], hosts[5]["label"]), (hosts[9]["label"],)
    observed = read_lldpctl_json(json.dumps(_observed(cables, swap=swap, drop=drop)))
    diff = as_built_diff(cables, observed)
    assert [s["cables"] for s in diff["swapped"]] == [sorted(swap)]
    assert [m["label"] for m in diff["missing"]] == list(drop)
    assert diff["extra"] == [] and diff["matched"] == len(cables) - 3


def test_lldp_clean_extra_and_single_device():
    cables = [{"label": "C1", "a_device": "h0", "a_port": "nic0", "b_device": "leaf0", "b_port": "p1"}]
    one = '{"lldp": {"interface": {"p1": {"chassis": {"h0": {}}, "port": {"id": {"type": "ifname", "value": "nic0"}}}}}}'
    assert as_built_diff(cables, read_lldpctl_json(one, device="leaf0"))["matched"] == 1
    with pytest.raises(ImportFormatError, match="whose"):
        read_lldpctl_json(one)
    table = ("Port       Neighbor Device ID       Neighbor Port ID    TTL\n"
             "---------- ------------------------ ------------------- ---\n"
             "p1         h0                       nic0                120\n"
             "p2         h9                       nic3                120\n")
    diff = as_built_diff(cables, read_lldp_table(table, "leaf0"))
    assert diff["matched"] == 1 and diff["extra"] == [{"a": "h9:nic3", "b": "leaf0:p2"}]
    with pytest.raises(ImportFormatError) as info:
        read_lldp_table("Port Neighbor Device ID\np1 h0\n", "leaf0")
    assert info.value.problems[0].path == "line 2"


def test_nvl72_is_a_rack_of_its_own_and_over_budget():
    doc = build_cluster("gb200-nvl72", 2)
    p = plan(doc)
    nvl = [r for r in p["racks"] if any(d["id"] in ("h0", "h1") for d in r["devices"])]
    assert [len(r["devices"]) for r in nvl] == [1, 1]
    assert all(r["over_power"] and not r["over_units"] for r in nvl)
    assert len(p["cables"]) == sum(fabric_bom(doc)["cables"].values())
    ends = [(c["a_device"], c["a_port"]) for c in p["cables"]]
    assert len(ends) == len(set(ends)) and ends[0][0] == "h0/tray0"
    assert not [f for f in p["flags"] if "more than once" in f["message"]]


def test_cli_writes_schedule_netbox_and_reports_as_built(small, tmp_path, capsys):
    import csv
    import json

    from designer.engine.cli import main

    doc, lldp = tmp_path / "pod.json", tmp_path / "lldp.json"
    doc.write_text(json.dumps(small))
    cables = plan(small)["cables"]
    hosts = [c for c in cables if c["kind"] == "host-leaf"]
    lldp.write_text(json.dumps(_observed(cables, swap=(hosts[1]["label"], hosts[2]["label"]))))
    (tmp_path / "sn.yaml").write_text(SN5600)
    status = main(["plan", str(doc), "--csv", str(tmp_path / "c.csv"), "--netbox", str(tmp_path / "nb"),
                   "--lldp", str(lldp), "--device-type", f"switch:eth-51t2={tmp_path / 'sn.yaml'}"])
    out = capsys.readouterr().out
    assert status == 0
    rows = list(csv.DictReader((tmp_path / "c.csv").open()))
    assert len(rows) == 64 and rows[0]["label"] == "C00001"
    assert len(read_netbox_cables((tmp_path / "nb" / "cables.csv").read_text())) == 64
    assert "1 swaps, 0 missing, 0 extra" in out and hosts[1]["label"] in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"prices": {"switch:eth-51t2": -1}}))
    assert main(["plan", str(doc), "--request", str(bad)]) == 1
    assert "prices.switch:eth-51t2" in capsys.readouterr().err


def test_oversized_inputs_are_refused():
    from designer.engine.io import lldp, netbox_devicetype

    with pytest.raises(ImportFormatError, match="too large"):
        read_lldpctl_json(" " * (lldp.MAX_LLDP_CHARS + 1))
    with pytest.raises(ImportFormatError, match="too large"):
        read_device_type("#" * (netbox_devicetype.MAX_YAML_CHARS + 1))
