"""The NVIDIA Air DOT export read back with pydot (Graphviz's grammar as pydot's parser knows it),
next to the grammar reader of ``test_exports_ops.py``.

``networkx.nx_pydot.read_dot`` is not used for the counts: networkx keeps ``"leaf0":"swp1"`` as a
node name of its own (a port becomes a node), so pydot's graph is read directly and each edge end
split into device and port here. The designs::

    dgx-h100 × 4, rail-optimized:  [h0..h3: 8 × CX-7 400G] ══ leaf r (8 leaves) ══2 × 400G══ spine0, spine1
    gb200-nvl72 × 2:  18 trays a rack (h0/tray0 … h1/tray17), 4 × 400G NICs a tray ══ 4 leaves ══ 2 spines

Everything expected is counted from the design document (groups, nodes, links and bundles), not
from the writer.
"""
from __future__ import annotations

import re
from collections import Counter

import pydot
import pytest

from designer.engine.io.dot_out import air_dot
from designer.engine.model.fabrics import build_cluster

# pydot 4.0.1 calls pyparsing's pre-3.0 names (setParseAction), which pyparsing 3.3 warns about.
pytestmark = pytest.mark.filterwarnings("ignore:'[A-Za-z]+' deprecated:DeprecationWarning")

_END = re.compile(r'"((?:[^"\\]|\\.)*)":"((?:[^"\\]|\\.)*)"')


@pytest.fixture(scope="module", params=[("dgx-h100", 4), ("gb200-nvl72", 2)], ids=["h100x4", "nvl72x2"])
def design(request):
    return build_cluster(*request.param)


def _unquote(text: str) -> str:
    assert text.startswith('"') and text.endswith('"'), text
    return text[1:-1]


def _read(text: str):
    """``({device: attrs}, [((device, port), (device, port))])`` as pydot parses ``text``."""
    graphs = pydot.graph_from_dot_data(text)
    assert graphs is not None and len(graphs) == 1, "pydot did not read exactly one graph"
    graph = graphs[0]
    assert graph.get_type() == "graph"       # undirected: Air's custom topology
    nodes = {_unquote(n.get_name()): {k: _unquote(v) for k, v in n.get_attributes().items()}
             for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")}
    edges = []
    for edge in graph.get_edges():
        ends = [_END.fullmatch(edge.get_source()), _END.fullmatch(edge.get_destination())]
        assert all(ends), (edge.get_source(), edge.get_destination())
        edges.append(tuple((m.group(1), m.group(2)) for m in ends))
    return nodes, edges


def _name(ident: str) -> str:
    return ident.replace("/", "-")


def _expected(doc):
    """Devices, and the cables as a multiset of unordered device pairs, from the document."""
    kind = {n["id"]: n["kind"] for n in doc["nodes"]}
    group = {n["id"]: n.get("group") for n in doc["nodes"]}
    hosts = {_name(g["id"]) for g in doc["groups"] if g["kind"] == "host"}
    switches = {n["id"]: n["attrs"]["role"] for n in doc["nodes"] if n["kind"] == "switch"}
    cables = Counter()
    for link in doc["links"]:
        a, b = link["a"], link["b"]
        if kind[a] == "switch" and kind[b] == "switch":
            pair = (a, b)
        elif {kind[a], kind[b]} == {"nic", "switch"}:
            nic, switch = (a, b) if kind[a] == "nic" else (b, a)
            if not group[nic]:
                continue
            pair = (group[nic], switch)
        else:
            continue
        cables[frozenset(map(_name, pair))] += int(link.get("bundle") or 1)
    return hosts, switches, cables


def test_pydot_reads_every_device_and_cable_of_the_design(design):
    hosts, switches, cables = _expected(design)
    nodes, edges = _read(air_dot(design))
    assert set(nodes) == hosts | set(switches)
    assert len(nodes) == len(hosts) + len(switches)
    assert Counter(frozenset((a[0], b[0])) for a, b in edges) == cables
    assert len(edges) == sum(cables.values())
    for name in hosts:
        assert nodes[name]["function"] == "server"
    for ident, role in switches.items():
        assert nodes[_name(ident)]["function"] == role      # leaf / spine, as the design says
    assert all({"os", "cpu", "memory", "storage"} <= set(attrs) for attrs in nodes.values())


def test_pydot_ports_are_each_used_once_and_numbered_from_one(design):
    hosts, switches, cables = _expected(design)
    _, edges = _read(air_dot(design))
    ends = [end for edge in edges for end in edge]
    assert len(ends) == len(set(ends)), "a port is used twice"
    per_device = {}
    for device, port in ends:
        per_device.setdefault(device, []).append(port)
    cables_at = Counter()
    for pair, count in cables.items():
        for device in pair:
            cables_at[device] += count
    for device, ports in per_device.items():
        prefix = "eth" if device in hosts else "swp"
        assert sorted(ports, key=lambda p: int(p[len(prefix):])) == [
            f"{prefix}{k}" for k in range(1, cables_at[device] + 1)], device


def test_pydot_reads_a_hostile_design_name_as_the_graph_name_only(design):
    doc = dict(design, name='x" -- "evil":"p')
    nodes, edges = _read(air_dot(doc))
    assert "evil" not in nodes and all("evil" not in (a[0], b[0]) for a, b in edges)
