"""Graphviz DOT in the dialect NVIDIA Air reads for a custom topology.

Air builds a simulation from a DOT file (NVIDIA Air user guide, "Custom Topology": the
CumulusNetworks/docs source ``content/nvidia-air-v2/Custom-Topology.md``): an undirected
``graph``, one node statement per device with its attributes (``function``, ``os``, ``cpu``,
``memory`` in MB, ``storage`` in GB) and one edge per cable naming both ports as
``"leaf01":"swp31" -- "spine01":"swp1"``. The DOT grammar itself is Graphviz's
(https://graphviz.org/doc/info/lang.html): every id here is a double-quoted string.

What is written: every server (host group; a GB200 NVL72 tray is one) and every switch, and one
edge per cable of the fabric, with deterministic ports (``swpN`` on switches, downward cables
first; ``ethN`` on servers in NIC order; :meth:`FabricView.cables`). What is lost: everything
inside a server (GPUs, NVLink, PCIe, CPUs), storage nodes outside host
groups, and the link rates and latencies (Air's virtual links do not model them). The
``os`` images and VM sizes are Air's example defaults (:data:`SWITCH_NODE`, :data:`SERVER_NODE`):
pick others in Air's image list before uploading.
"""
from __future__ import annotations

from designer.engine.io.fabric_view import FabricView, comment_text, device_name

__all__ = ["air_dot", "SWITCH_NODE", "SERVER_NODE", "FUNCTION_BY_TIER"]

#: VM attributes of a switch and of a server: the values of Air's custom-topology example
#: (Cumulus VX 2 vCPU / 4 GB / 20 GB; Ubuntu server 2 vCPU / 2 GB / 10 GB).
SWITCH_NODE = {"os": "cumulus-vx-5.16.1", "cpu": "2", "memory": "4096", "storage": "20"}
SERVER_NODE = {"os": "generic/ubuntu2404", "cpu": "2", "memory": "2048", "storage": "10"}
#: Air ``function`` of a switch by tier.
FUNCTION_BY_TIER = {0: "leaf", 1: "spine", 2: "super-spine"}


def _quote(text: str) -> str:
    """A DOT double-quoted string (``"`` and ``\\`` escaped; ids here are already safe)."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attrs(values: dict) -> str:
    return "[" + " ".join(f"{key}={_quote(value)}" for key, value in values.items()) + "]"


def air_dot(doc: dict) -> str:
    """DOT text of the design's servers, switches and cables for NVIDIA Air.

    Raises
    ------
    InvalidTopology
        The document is invalid, a switch has no tier, or two ids map to one device name.
    """
    view = FabricView.of(doc)
    lines = [f"graph {_quote(comment_text(view.topo.name) or 'fabricscope')} {{"]
    for host in view.servers:
        lines.append(f"  {_quote(device_name(host))} {_attrs({'function': 'server', **SERVER_NODE})}")
    for switch in view.switches:
        function = FUNCTION_BY_TIER[view.tier[switch]]
        lines.append(f"  {_quote(device_name(switch))} {_attrs({'function': function, **SWITCH_NODE})}")
    for cable in view.cables():
        lines.append(f"  {_quote(cable.a_device)}:{_quote(cable.a_port)} -- "
                     f"{_quote(cable.b_device)}:{_quote(cable.b_port)}")
    lines.append("}")
    return "\n".join(lines) + "\n"
