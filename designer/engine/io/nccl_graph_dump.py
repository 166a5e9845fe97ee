"""Read an ``NCCL_GRAPH_DUMP_FILE`` XML: the rings, trees and NVLS graphs NCCL searched for a node.

The format (NCCL ``src/graph/search.cc``, ``ncclTopoGetXmlFromGraphs``; examples posted by NCCL's
maintainers in NVIDIA/nccl issue threads)::

    <graphs version="1">
      <graph id="0" pattern="4" crossnic="0" nchannels="2" speedintra="12" speedinter="12"
             latencyinter="0" typeintra="SYS" typeinter="SYS" samechannels="1">
        <channel><net dev="3"/><gpu dev="0"/><gpu dev="1"/><gpu dev="2"/><gpu dev="3"/><net dev="0"/></channel>
        …
      </graph>
    </graphs>

A ring channel enters the node at its first ``<net>``, visits the GPUs (CUDA device indices of
the node) in order and leaves at its last ``<net>``; ``speedintra``/``speedinter`` are NCCL's
bandwidth per channel in GB/s, ``typeintra``/``typeinter`` the worst path class it accepted.
The XML is parsed by :func:`designer.engine.io.safe_xml.parse_xml` (bounded, no entities).
"""
from __future__ import annotations

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.safe_xml import parse_xml

__all__ = ["GRAPH_PATTERNS", "parse_graph_dump"]

#: ``<graph pattern>`` numbers (``src/include/graph.h``, NCCL_TOPO_PATTERN_*).
GRAPH_PATTERNS = {1: "balanced_tree", 2: "split_tree", 3: "tree", 4: "ring", 5: "nvls", 6: "collnet_direct"}


def parse_graph_dump(text: str | bytes) -> list[dict]:
    """Parse an ``NCCL_GRAPH_DUMP_FILE`` XML: NCCL's graphs (ring, tree, collnet, nvls …).

    Returns
    -------
    list of dict
        Per ``<graph>``: ``id``, ``pattern`` (number), ``kind`` (``ring``, ``tree`` …),
        ``crossnic``, ``nchannels``, ``speed_intra_gbs``/``speed_inter_gbs`` (NCCL's bwIntra/bwInter,
        GB/s per channel), ``latency_inter``, ``type_intra``/``type_inter`` (path classes),
        ``same_channels``, and ``channels``: per channel ``{"gpus": [dev…], "nets": [dev…]}``
        in NCCL's order (a ring enters at ``nets[0]``, visits the GPUs, leaves at ``nets[-1]``).

    Raises
    ------
    ImportFormatError
        Not XML, not a ``<graphs>`` document, or a located bad attribute
        (``graph[1].nchannels``, ``graph[0].channel[2].gpu[1].dev``).
    """
    root = parse_xml(text, what="NCCL graph dump")
    if root.tag != "graphs":
        raise ImportFormatError("not an NCCL graph dump", [Problem("root", f"<{root.tag}>, expected <graphs>")])
    problems: list[Problem] = []
    graphs = [_graph(el, f"graph[{i}]", problems) for i, el in enumerate(root.findall("graph"))]
    if not graphs:
        problems.append(Problem("graphs", "no <graph> element"))
    if problems:
        raise ImportFormatError("not a valid NCCL graph dump", problems)
    return graphs


def _graph(el, where: str, problems: list) -> dict:
    def number(name, cast=int, default=None):
        value = el.get(name)
        if value is None:
            return default
        try:
            return cast(value)
        except ValueError:
            problems.append(Problem(f"{where}.{name}", f"expected a number, got {value!r}"))
            return default

    channels = []
    for c, ch in enumerate(el.findall("channel")):
        devs = {"gpu": [], "net": []}
        for k, item in enumerate(ch):
            dev = item.get("dev", "")
            if item.tag not in devs or not dev.isdigit():
                problems.append(Problem(f"{where}.channel[{c}].{item.tag}[{k}].dev",
                                        f"expected <gpu dev=N/> or <net dev=N/>, got <{item.tag} dev={dev!r}>"))
                continue
            devs[item.tag].append(int(dev))
        channels.append({"gpus": devs["gpu"], "nets": devs["net"]})
    pattern = number("pattern")
    return {"id": number("id"), "pattern": pattern, "kind": GRAPH_PATTERNS.get(pattern, "unknown"),
            "crossnic": number("crossnic"), "nchannels": number("nchannels", default=len(channels)),
            "speed_intra_gbs": number("speedintra", float), "speed_inter_gbs": number("speedinter", float),
            "latency_inter": number("latencyinter", float), "type_intra": el.get("typeintra"),
            "type_inter": el.get("typeinter"), "same_channels": number("samechannels"), "channels": channels}
