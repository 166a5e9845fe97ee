"""Exports for packet-level simulators and operations: ASTRA-sim, htsim, Slurm, NVIDIA Air DOT, NetBox.

Each file is read back with a parser written here from the target's documented grammar (not the
writer's code), and its counts and rates are checked against the design. The designs::

    dgx-h100 × 4, rail-optimized:  [h0..h3: 8 GPU ─NVLink 4─ 4 NVSwitch, 8 × CX-7 400G]
        rail r NICs ══400G══ leaf r (8 leaves) ══2 × 400G══ spine0, spine1
    gb200-nvl72 × 2:  rack0/h0, rack1/h1 = 18 trays × 4 GPUs, 4 × 400G NICs per tray
        rail r NICs ══400G══ leaf r (4 leaves) ══ 2 spines
"""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from math import prod
from pathlib import Path

import pytest
import yaml

from designer.engine.document import normalize
from designer.engine.errors import InvalidTopology
from designer.engine.io.astrasim_out import astrasim_files
from designer.engine.io.dot_out import air_dot
from designer.engine.io.htsim_out import htsim_topology
from designer.engine.io.netbox_out import netbox_csv
from designer.engine.io.ops_exports import BUNDLE_FORMAT, OPS_FORMATS, export_files
from designer.engine.io.slurm_out import hostlist, slurm_block_yaml, slurm_tree_conf
from designer.engine.model.fabrics import build_cluster

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def h100():
    return build_cluster("dgx-h100", 4)


@pytest.fixture(scope="module")
def nvl72():
    return build_cluster("gb200-nvl72", 2)


def _hosts(doc):
    return [g["id"] for g in doc["groups"] if g["kind"] == "host"]


def _switches(doc, role=None):
    return [n for n in doc["nodes"] if n["kind"] == "switch" and role in (None, n["attrs"].get("role"))]


def _cable_count(doc):
    """Cables of the fabric: NIC-switch links plus switch-switch links counted per port."""
    kind = {n["id"]: n["kind"] for n in doc["nodes"]}
    host_nics = {n["id"] for n in doc["nodes"] if n["kind"] == "nic" and n.get("group")}
    total = 0
    for link in doc["links"]:
        ends = {kind[link["a"]], kind[link["b"]]}
        if ends == {"switch"} or ("switch" in ends and (link["a"] in host_nics or link["b"] in host_nics)):
            total += int(link.get("bundle") or 1)
    return total


# ---------------------------------------------------------------- Slurm (man topology.conf/yaml)
def expand_hostlist(expr: str) -> list[str]:
    """Slurm's hostlist grammar: comma-separated items outside brackets; ``pre[a-b,c]suf``."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(expr + ","):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(expr[start:i])
            start = i + 1
    names = []
    for item in items:
        match = re.fullmatch(r"([^\[\]]*)\[([0-9,\-]+)\]([^\[\]]*)", item)
        if not match:
            assert re.fullmatch(r"[A-Za-z0-9_.\-]+", item), item
            names.append(item)
            continue
        pre, ranges, suf = match.groups()
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            width = len(lo) if lo.startswith("0") else 0
            names += [f"{pre}{str(n).zfill(width)}{suf}" for n in range(int(lo), int(hi or lo) + 1)]
    return names


def parse_topology_conf(text: str) -> dict:
    """``{switch: ("nodes"|"switches", [names])}`` per topology.conf(5), tree plugin."""
    switches = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = dict(part.split("=", 1) for part in line.split())
        fields = {k.lower(): v for k, v in fields.items()}
        assert set(fields) <= {"switchname", "nodes", "switches", "linkspeed"}, fields
        assert ("nodes" in fields) != ("switches" in fields), line
        kind = "nodes" if "nodes" in fields else "switches"
        assert fields["switchname"] not in switches
        switches[fields["switchname"]] = (kind, expand_hostlist(fields[kind]))
    for kind, children in switches.values():
        if kind == "switches":
            assert set(children) <= set(switches), children
    return switches


def test_hostlist_round_trips():
    names = ["h0", "h1", "h2", "h5", "n01", "n02", "n10", "login", "h0-tray3", "h0-tray4"]
    expr = hostlist(names)
    assert expr == "h[0-2,5],h0-tray[3-4],n10,n[01-02],login"
    assert sorted(expand_hostlist(expr)) == sorted(names)


def test_slurm_tree_puts_each_host_under_its_rail0_leaf(h100, nvl72):
    tree = parse_topology_conf(slurm_tree_conf(h100))
    assert tree == {"leaf0": ("nodes", ["h0", "h1", "h2", "h3"]),
                    "spine0": ("switches", ["leaf0"]), "spine1": ("switches", ["leaf0"])}
    tree = parse_topology_conf(slurm_tree_conf(nvl72))
    nodes = [n for kind, names in tree.values() if kind == "nodes" for n in names]
    assert sorted(nodes) == sorted(h.replace("/", "-") for h in _hosts(nvl72)) and len(nodes) == 36


def test_slurm_block_groups_nvl72_trays_per_rack(nvl72):
    topologies = yaml.safe_load(slurm_block_yaml(nvl72))
    assert isinstance(topologies, list) and len(topologies) == 1
    topo = topologies[0]
    assert list(topo)[0] == "topology" and set(topo) == {"topology", "cluster_default", "block"}
    assert topo["block"]["block_sizes"] == [18]
    blocks = {b["block"]: expand_hostlist(b["nodes"]) for b in topo["block"]["blocks"]}
    assert blocks == {"h0": [f"h0-tray{t}" for t in range(18)], "h1": [f"h1-tray{t}" for t in range(18)]}


def test_slurm_block_partial_rack_sets_the_base_size():
    doc = build_cluster("gb200-nvl72", 2, params={"trays": 8, "switch_trays": 4})
    topo = yaml.safe_load(slurm_block_yaml(doc))[0]
    assert topo["block"]["block_sizes"] == [8]
    assert all(len(expand_hostlist(b["nodes"])) == 8 for b in topo["block"]["blocks"])


def test_slurm_block_without_nvlink_domain_is_a_located_error(h100):
    with pytest.raises(InvalidTopology) as err:
        slurm_block_yaml(h100)
    assert err.value.problems[0].path == "groups" and "slurm-tree" in err.value.message


# ---------------------------------------------------------------- DOT (graphviz.org/doc/info/lang.html)
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")'
                    r'|(?P<id>[A-Za-z_\x80-\xff][\w\x80-\xff]*|-?(?:\.\d+|\d+(?:\.\d*)?))'
                    r'|(?P<op>--|->|[{}\[\];,:=]))', re.S)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        assert match and match.end() > pos, f"bad DOT at {text[pos:pos + 40]!r}"
        out.append(match.group(match.lastgroup))
        pos = match.end()
    return out


def parse_dot(text: str) -> tuple[dict, list]:
    """A recursive-descent reader of Graphviz's grammar (graph, node and edge statements,
    attribute lists, ports); returns ``({node: attrs}, [((node, port), (node, port))])``."""
    toks = _tokens(text)
    i = 0

    def take(expected=None):
        nonlocal i
        tok = toks[i]
        assert expected is None or tok == expected, (tok, expected, i)
        i += 1
        return tok

    def ident():
        tok = take()
        assert tok not in "{}[];,:=" and tok not in ("--", "->"), tok
        return json.loads(tok) if tok.startswith('"') else tok

    def attr_list():
        attrs = {}
        while i < len(toks) and toks[i] == "[":
            take("[")
            while toks[i] != "]":
                key = ident()
                take("=")
                attrs[key] = ident()
                if toks[i] in (",", ";"):
                    take()
            take("]")
        return attrs

    def node_id():
        name = ident()
        port = None
        if toks[i] == ":":
            take(":")
            port = ident()
        return name, port

    if toks[0].lower() == "strict":
        take()
    assert take().lower() == "graph"   # undirected: edges are --
    if toks[i] != "{":
        ident()
    take("{")
    nodes, edges = {}, []
    while toks[i] != "}":
        a = node_id()
        if toks[i] == "--":
            take("--")
            b = node_id()
            attr_list()
            edges.append((a, b))
        else:
            assert a[1] is None
            nodes[a[0]] = attr_list()
        if toks[i] == ";":
            take(";")
    take("}")
    assert i == len(toks), "text after the graph"
    return nodes, edges


def test_air_dot_is_valid_and_has_every_cable_once(h100):
    text = air_dot(h100)
    assert text == air_dot(h100)   # deterministic
    nodes, edges = parse_dot(text)
    assert len(nodes) == len(_hosts(h100)) + len(_switches(h100)) == 14
    assert nodes["leaf0"]["function"] == "leaf" and nodes["spine1"]["function"] == "spine"
    assert nodes["h0"]["function"] == "server" and {"os", "cpu", "memory"} <= set(nodes["h0"])
    assert len(edges) == _cable_count(h100) == 4 * 8 + 8 * 2 * 2
    ends = [end for edge in edges for end in edge]
    assert len(ends) == len(set(ends)), "a port is used twice"
    assert all(name in nodes for name, _ in ends)
    assert all(re.fullmatch(r"swp\d+" if name in ("leaf0", "spine0") or name.startswith(("leaf", "spine"))
                            else r"eth\d+", port) for name, port in ends)
    # a leaf's ports: its 4 servers first (swp1-4), then 2 bundles of 2 to the spines (swp5-8)
    leaf0 = sorted((port, peer) for (a, port), (peer, _) in edges if a == "leaf0")
    assert [p for p, _ in leaf0] == [f"swp{k}" for k in (1, 2, 3, 4, 5, 6, 7, 8)]
    assert [peer for _, peer in leaf0] == ["h0", "h1", "h2", "h3", "spine0", "spine0", "spine1", "spine1"]


def test_air_dot_quotes_a_hostile_design_name(h100):
    doc = dict(h100, name='x" -- "evil":"p')
    nodes, _ = parse_dot(air_dot(doc))
    assert "evil" not in nodes


# ---------------------------------------------------------------- NetBox (bulk import CSV)
def test_netbox_csv_devices_interfaces_cables(nvl72):
    files = netbox_csv(nvl72)
    devices = list(csv.DictReader(io.StringIO(files["devices.csv"])))
    interfaces = list(csv.DictReader(io.StringIO(files["interfaces.csv"])))
    cables = list(csv.DictReader(io.StringIO(files["cables.csv"])))
    assert list(devices[0]) == ["name", "role", "manufacturer", "device_type", "site", "rack", "status"]
    assert len(devices) == 36 + len(_switches(nvl72))
    trays = [d for d in devices if d["role"] == "server"]
    assert {d["rack"] for d in trays if d["name"].startswith("h0-")} == {"rack0"}
    assert len(cables) == _cable_count(nvl72)
    assert list(cables[0])[:6] == ["side_a_device", "side_a_type", "side_a_name", "side_b_device",
                                   "side_b_type", "side_b_name"]
    ports = {(r["device"], r["name"]) for r in interfaces}
    assert len(ports) == len(interfaces) == 2 * len(cables)
    for cable in cables:
        assert cable["side_a_type"] == cable["side_b_type"] == "dcim.interface"
        assert (cable["side_a_device"], cable["side_a_name"]) in ports
        assert (cable["side_b_device"], cable["side_b_name"]) in ports
    tray_ports = [r for r in interfaces if r["device"] == "h0-tray0"]
    assert [r["name"] for r in tray_ports] == ["eth1", "eth2", "eth3", "eth4"]
    assert {(r["type"], r["speed"]) for r in tray_ports} == {("400gbase-x-osfp", "400000000")}


def test_clashing_device_names_are_located():
    doc = build_cluster("dgx-h100", 1)
    doc["groups"] += [{"id": "x-y", "kind": "host"}, {"id": "x/y", "kind": "host"}]   # both "x-y"
    with pytest.raises(InvalidTopology) as err:
        netbox_csv(doc)
    assert [p.path for p in err.value.problems] == ["x/y"] and '"x-y"' in err.value.problems[0].message


# ---------------------------------------------------------------- ASTRA-sim 2.0
def test_astrasim_network_and_system(h100):
    files = astrasim_files(h100)
    network = yaml.safe_load(files["network.yml"])
    assert set(network) == {"topology", "npus_count", "bandwidth", "latency"}
    assert network["topology"] == ["Switch", "Switch"]
    assert network["npus_count"] == [8, 4] and prod(network["npus_count"]) == 32
    links = normalize(h100)["links"]
    nvlink_gbps = sum(l["capacity_gbps"] for l in links if l["a"] == "h0/gpu0" and "nvswitch" in l["b"])
    assert nvlink_gbps == pytest.approx(2 * 824.0 + 2 * 659.2)   # 2 × NVLink4 x5 + 2 × x4 links
    assert network["bandwidth"][0] == pytest.approx(nvlink_gbps / 8, rel=1e-5)
    # 8 × 400 Gb/s of NICs for 8 GPUs: 50 GB/s per GPU
    assert network["bandwidth"][1] == pytest.approx(50.0)
    # NIC → leaf → NIC (same rail): 2 × 100 ns links + 450 ns leaf + 2 × 300 ns NICs, over 2 links
    assert network["latency"][1] == pytest.approx((200 + 450 + 600) / 2)
    system = json.loads(files["system.json"])
    assert system["all-reduce-implementation"] == ["ring", "ring"]
    assert len(system["all-to-all-implementation"]) == len(network["topology"])
    assert system["local-mem-bw"] == 3350.0   # H100 SXM HBM3 (catalog GPU_COMPUTE)
    assert system["scheduling-policy"] in ("LIFO", "FIFO")


def test_astrasim_nvl72_scale_up_is_the_rack(nvl72):
    network = yaml.safe_load(astrasim_files(nvl72)["network.yml"])
    assert network["npus_count"] == [72, 2]
    assert network["bandwidth"][1] == pytest.approx(4 * 400 / 4 / 8)   # 4 NICs per 4-GPU tray


def test_astrasim_refuses_uneven_domains():
    doc = build_cluster("dgx-h100", 2)
    doc["nodes"] = [n for n in doc["nodes"] if n["id"] != "h1/gpu7"]
    doc["links"] = [l for l in doc["links"] if "h1/gpu7" not in (l["a"], l["b"])]
    with pytest.raises(InvalidTopology) as err:
        astrasim_files(doc)
    assert err.value.problems[0].path == "groups.h1" and "7 GPUs" in err.value.problems[0].message


# ---------------------------------------------------------------- htsim (FatTreeTopology::load)
HTSIM_TIER_KEYS = {"downlink_speed_gbps", "radix_down", "radix_up", "downlink_latency_ns", "switch_latency_ns",
                   "oversubscribed", "bundle"}


def parse_htsim(text: str) -> dict:
    """csg-htsim's ``FatTreeTopology::load`` rules: space-separated ``key value``; ``#`` lines
    skipped; header Nodes/Tiers/Podsize then ``Tier t`` sections; no duplicate key in a tier;
    required per tier: speed, latency, radix_down, and radix_up below the top."""
    header, tiers, current = {}, {}, None
    for line in text.splitlines():
        tokens = [t for t in line.split(" ") if t]
        if not tokens or tokens[0].startswith("#"):
            continue
        assert "\t" not in line
        key = tokens[0].lower()
        if key == "tier":
            current = int(tokens[1])
            tiers[current] = {}
        elif current is None:
            assert key in ("nodes", "tiers", "podsize"), key
            header[key] = int(tokens[1])
        else:
            assert key in HTSIM_TIER_KEYS and key not in tiers[current], key
            tiers[current][key] = int(tokens[1])
    assert header["tiers"] in (2, 3) and sorted(tiers) == list(range(header["tiers"]))
    for t, keys in tiers.items():
        assert {"downlink_speed_gbps", "downlink_latency_ns", "radix_down"} <= set(keys)
        assert keys["downlink_latency_ns"] > 0
        assert ("radix_up" in keys) == (t < header["tiers"] - 1)
    return {"header": header, "tiers": tiers}


def htsim_counts(parsed: dict) -> list[int]:
    """Switches per tier by htsim's set_custom_params arithmetic (written again here)."""
    h, t = parsed["header"], parsed["tiers"]
    pods = h["nodes"] // h["podsize"]
    assert h["nodes"] % h["podsize"] == 0 and h["podsize"] % t[0]["radix_down"] == 0
    tor_up = h["nodes"] * t[0]["downlink_speed_gbps"] // (t[1]["downlink_speed_gbps"] * t[0].get("oversubscribed", 1))
    assert tor_up % (pods * t[1]["radix_down"]) == 0
    counts = [h["nodes"] // t[0]["radix_down"], tor_up // t[1]["radix_down"]]
    if h["tiers"] == 3:
        agg_up = tor_up * t[1]["downlink_speed_gbps"] // (t[2]["downlink_speed_gbps"] * t[1].get("oversubscribed", 1))
        counts.append(agg_up // t[2]["radix_down"])
    return counts


def _host_map(text: str) -> list[str]:
    return [line.split(" ")[3] for line in text.splitlines() if line.startswith("# host ")]


def test_htsim_rail_optimized_two_tiers(h100):
    text = htsim_topology(h100)
    parsed = parse_htsim(text)
    assert parsed["header"] == {"nodes": 32, "tiers": 2, "podsize": 32}
    assert parsed["tiers"][0]["downlink_speed_gbps"] == 400 and parsed["tiers"][0]["downlink_latency_ns"] == 100
    assert parsed["tiers"][1]["bundle"] == 2
    assert htsim_counts(parsed) == [len(_switches(h100, "leaf")), len(_switches(h100, "spine"))] == [8, 2]
    hosts = _host_map(text)
    assert len(hosts) == len(set(hosts)) == 32
    leaf_of = {l["a"]: l["b"] for l in h100["links"] if l["b"].startswith("leaf")}
    radix = parsed["tiers"][0]["radix_down"]
    for tor in range(len(hosts) // radix):   # htsim hangs host k on ToR k // Radix_Down
        assert len({leaf_of[nic] for nic in hosts[tor * radix:(tor + 1) * radix]}) == 1


def test_htsim_three_tier_fat_tree():
    doc = build_cluster("dgx-h100", 8, fabric="fat-tree", k=8)
    parsed = parse_htsim(htsim_topology(doc))
    assert parsed["header"]["tiers"] == 3
    design = [len(_switches(doc, r)) for r in ("leaf", "spine", "core")]
    assert htsim_counts(parsed) == design


def test_htsim_refuses_an_irregular_fabric_with_a_location(h100):
    doc = json.loads(json.dumps(h100))
    doc["links"] = [l for l in doc["links"] if l["id"] != "h3/nic0-leaf0"]
    with pytest.raises(InvalidTopology) as err:
        htsim_topology(doc)
    assert err.value.problems[0].path == "nodes" and "NICs per leaf differ" in err.value.problems[0].message


# ---------------------------------------------------------------- CLI
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "designer.engine", "export", *args], cwd=ROOT,
                          capture_output=True, timeout=120)


def test_cli_bundle_and_directory(tmp_path, nvl72):
    path = tmp_path / "nvl.json"
    path.write_text(json.dumps(nvl72))
    done = _cli(str(path), "--format", "astra-sim")
    assert done.returncode == 0, done.stderr
    bundle = json.loads(done.stdout)
    assert bundle["format"] == BUNDLE_FORMAT and list(bundle["files"]) == list(OPS_FORMATS["astra-sim"])
    assert bundle["files"] == export_files(nvl72, "astra-sim")
    out = tmp_path / "nb"
    assert _cli(str(path), "--format", "netbox", "-o", str(out)).returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["cables.csv", "devices.csv", "interfaces.csv"]
    done = _cli(str(path), "--format", "slurm-block")
    assert done.returncode == 0 and yaml.safe_load(done.stdout)[0]["block"]["block_sizes"] == [18]
    h100_path = tmp_path / "h100.json"
    h100_path.write_text(json.dumps(build_cluster("dgx-h100", 2)))
    done = _cli(str(h100_path), "--format", "slurm-block")
    assert done.returncode == 1 and done.stderr.decode().startswith("error: groups:")
