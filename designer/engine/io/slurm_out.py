"""Slurm topology files: ``topology.conf`` (topology/tree) and ``topology.yaml`` (topology/block).

Grammar followed (Slurm's man pages, https://slurm.schedmd.com/topology.conf.html and
https://slurm.schedmd.com/topology.yaml.html, Slurm 23.11 - 25.x):

- ``topology.conf``, tree plugin: one line per switch, ``SwitchName=<name>`` then ``Nodes=<hostlist>``
  (a leaf) or ``Switches=<hostlist>`` (a switch above leaves); ``#`` starts a comment.
- ``topology.yaml``: a YAML list of topologies, each ``topology: <name>`` first, then one type;
  ``block:`` holds ``block_sizes`` (the base block size first; larger ones must be power-of-two
  multiples of the previous) and ``blocks``, each ``block: <name>`` with ``nodes: <hostlist>``.
- hostlist expressions: ``prefix[0-3,12,18-20]`` (:func:`hostlist`).

Node names are the host groups' ids made hostname-safe (``h0/tray3`` → ``h0-tray3``,
:func:`designer.engine.io.fabric_view.device_name`): the names slurm.conf must use.

What is kept and lost. Tree: each server sits under the leaf its first compute NIC (rail 0) is
cabled to. In a rail-optimized fabric a server reaches one leaf per rail, with the same servers
behind each rail's leaves; Slurm's tree wants one leaf per node, so the first rail's leaves stand
for all of them (the others are left out, and so are link speeds and oversubscription). Block:
one block per multi-host NVLink domain (a GB200 NVL72 rack: its 18 trays), the base block size
the smallest domain; a design without multi-host NVLink domains has no blocks (use the tree).
"""
from __future__ import annotations

import re

from designer.engine.errors import InvalidTopology, Problem
from designer.engine.io.fabric_view import FabricView, comment_text, device_name, natural_key

__all__ = ["slurm_tree_conf", "slurm_block_yaml", "hostlist"]

_TRAILING_NUMBER = re.compile(r"^(.*?)(\d+)$")


def hostlist(names: list[str]) -> str:
    """Slurm hostlist expression of ``names``: ``["h0", "h1", "h2", "h5"]`` → ``h[0-2,5]``.

    Names are grouped by the text before their trailing number (zero-padded numbers keep their
    width, as Slurm's parser reads ``n[01-10]``); names without one are listed as they are.
    """
    groups: dict[tuple, list[int]] = {}
    plain = []
    for name in names:
        match = _TRAILING_NUMBER.match(name)
        if not match:
            plain.append(name)
            continue
        digits = match.group(2)
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        groups.setdefault((match.group(1), width), []).append(int(digits))
    parts = []
    for (prefix, width), numbers in sorted(groups.items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1])):
        ranges = _ranges(sorted(set(numbers)), width)
        parts.append(f"{prefix}[{ranges}]" if "," in ranges or "-" in ranges else f"{prefix}{ranges}")
    return ",".join(parts + sorted(plain, key=natural_key))


def _ranges(numbers: list[int], width: int) -> str:
    out, start, prev = [], numbers[0], numbers[0]
    for n in numbers[1:] + [None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        a, b = str(start).zfill(width), str(prev).zfill(width)
        out.append(a if start == prev else f"{a}-{b}")
        if n is not None:
            start = prev = n
    return ",".join(out)


def slurm_tree_conf(doc: dict) -> str:
    """``topology.conf`` for Slurm's tree plugin (see the module docstring).

    Raises
    ------
    InvalidTopology
        The document is invalid, or no server is cabled to a leaf switch.
    """
    view = FabricView.of(doc)
    children: dict[str, list[str]] = {}
    leaf_of = view.first_leaves()
    for host in view.servers:
        leaf = leaf_of.get(host)
        if leaf is not None:
            children.setdefault(leaf, []).append(device_name(host))
    if not children:
        raise InvalidTopology("no server is cabled to a leaf switch: nothing for Slurm's tree",
                              [Problem("links", "no NIC-to-leaf link")])
    design = comment_text(view.topo.name)
    lines = [f'# Slurm topology.conf (topology/tree) written by Fabricscope from design "{design}"',
             f"# {sum(map(len, children.values()))} nodes under {len(children)} leaf switches"]
    for leaf in view.switches:
        if leaf in children:
            lines.append(f"SwitchName={device_name(leaf)} Nodes={hostlist(children[leaf])}")
    in_tree = set(children)
    for level in (1, 2):
        above: dict[str, list[str]] = {}
        for lo, hi, _ in view.switch_links:
            if lo in in_tree and view.tier[hi] == level:
                above.setdefault(hi, []).append(device_name(lo))
        for switch in view.switches:
            if switch in above:
                lines.append(f"SwitchName={device_name(switch)} Switches={hostlist(above[switch])}")
        in_tree |= set(above)
    return "\n".join(lines) + "\n"


def slurm_block_yaml(doc: dict, *, name: str = "nvlink") -> str:
    """``topology.yaml`` with one ``block`` topology: a block per multi-host NVLink domain.

    Parameters
    ----------
    doc : dict
        Topology document.
    name : str
        The topology's name (partitions refer to it); letters, digits, ``_ . -``.

    Raises
    ------
    InvalidTopology
        The document is invalid or has no multi-host NVLink domain (``nvlink_domain`` group).
    """
    view = FabricView.of(doc)
    domains = {d: hosts for d, hosts in view.domains.items() if hosts}
    if not domains:
        raise InvalidTopology(
            "the design has no multi-host NVLink domain (such as a GB200 NVL72 rack): Slurm's block "
            "plugin has nothing to group; export slurm-tree instead",
            [Problem("groups", 'no group of kind "nvlink_domain" holding hosts')])
    base = min(len(hosts) for hosts in domains.values())
    design = comment_text(view.topo.name)
    lines = [f'# Slurm topology.yaml (topology/block) written by Fabricscope from design "{design}":',
             "# one block per NVLink domain (its trays/hosts), base block size = the smallest domain",
             f'- topology: "{device_name(name)}"',
             "  cluster_default: true",
             "  block:",
             "    block_sizes:",
             f"      - {base}",
             "    blocks:"]
    for domain in sorted(domains, key=natural_key):
        lines.append(f'      - block: "{device_name(domain)}"')
        lines.append(f'        nodes: "{hostlist([device_name(h) for h in domains[domain]])}"')
    return "\n".join(lines) + "\n"
