"""Shared pieces of the collective algorithms: participants grouped by host, ring orders, the
NVSwitch and NIC facts an algorithm's support depends on, and nccl-tests' bus-bandwidth factors.

Every algorithm module returns flows as ``(src, dst, bytes)`` arrays over node indices, with
``bytes`` either one number for all flows or one per flow. ``size`` is the pattern's ``bytes``:
nccl-tests' *size* S — the per-rank buffer of an all-reduce and an all-to-all, the whole
gathered (received) buffer of an all-gather, the whole sent buffer of a reduce-scatter.
"""
from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from designer.engine.catalog import nvls_bus_gbytes, nvls_efficiency, nvswitch_generation
from designer.engine.model.pathclass import DOMAIN_KIND, node_domains
from designer.engine.model.topology import Topology, value_codes
from designer.engine.numbers import first_appearance_codes
from designer.engine.traffic.collectives.domains import block_key, nvswitch_plane
from designer.engine.traffic.collectives.mesh import mesh_ring_orders

__all__ = [
    "EMPTY",
    "Group",
    "block_key",
    "busbw_factor",
    "empty",
    "group_of",
    "host_blocks",
    "live_rails",
    "nearest_nics",
    "nvswitch_plane",
    "ring_orders",
]

EMPTY = (np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0)


def empty():
    """No flows (a collective of fewer than two participants moves nothing)."""
    return np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0


def busbw_factor(kind: str, n: int) -> float:
    """nccl-tests' bus-bandwidth factor (``doc/PERFORMANCE.md`` of NVIDIA/nccl-tests):
    all-reduce 2(n−1)/n; all-gather, reduce-scatter, all-to-all, gather and scatter (n−1)/n;
    hypercube (n−1)/n of S/t (nccl-tests ``src/hypercube.cu`` counts ``(n−1)`` per-rank blocks
    as its algbw, with factor 1); anything else (broadcast, reduce, p2p) 1."""
    if n < 2:
        return 1.0
    if kind == "allreduce":
        return 2.0 * (n - 1) / n
    if kind in ("allgather", "reducescatter", "alltoall", "gather", "scatter", "hypercube"):
        return (n - 1) / n
    return 1.0


def host_blocks(topo: Topology, nodes: np.ndarray) -> list[np.ndarray]:
    """Participants grouped by host — by NVLink domain where one holds them (:func:`block_key`)
    — in order of first appearance, each block sorted by GPU index (``attrs.domain_index`` in a
    domain) so that the same local position means the same rail on every host.

    The blocks (read-only arrays) of the participant sets last asked for, up to
    :data:`_HOST_BLOCKS_KEPT` participants in all, are kept on the topology: planning a collective
    groups the same participants for the group, the ring, the tree and the flows simulated (a
    Python pass per GPU each time), and a training step asks for each tensor-parallel group once
    per micro-batch and direction (12,500 groups of 8 at 100,000 GPUs, 32 times each).
    """
    nodes = np.ascontiguousarray(nodes, dtype=np.int64)
    memo = topo.__dict__.setdefault("_host_blocks", {})
    key = hashlib.blake2b(memoryview(nodes).cast("B"), digest_size=16).digest() + len(nodes).to_bytes(8, "little")
    blocks = memo.get(key)
    if blocks is None:
        blocks = _group_by_host(topo, nodes)
        for b in blocks:
            b.setflags(write=False)   # shared by every caller: nobody may write into them
        kept = topo.__dict__.get("_host_blocks_kept", 0)
        while memo and kept + len(nodes) > _HOST_BLOCKS_KEPT:
            kept -= sum(map(len, memo.pop(next(iter(memo)))))
        memo[key] = blocks
        topo.__dict__["_host_blocks_kept"] = kept + len(nodes)
    return list(blocks)


_HOST_BLOCKS_KEPT = 1_000_000   # participants (8 MB of blocks): every group of a 100,000-GPU step


def _group_by_host(topo: Topology, nodes: np.ndarray) -> list[np.ndarray]:
    """The blocks of :func:`host_blocks`: nodes by :func:`block_key` in order of first
    appearance, each sorted by :func:`_local_key`."""
    order = np.asarray(nodes).tolist()
    ids, domain = node_domains(topo)
    if ids:
        keys = [block_key(topo, n) or f"\0{n}" for n in order]
    else:   # no NVLink domain: the host (16,384 GPUs: one pass, no call per GPU)
        host = topo.node_host
        keys = [host[n] or f"\0{n}" for n in order]
    blocks = _sorted_blocks(topo, order, keys)
    if blocks is not None:
        return blocks
    grouped: dict[str, list[int]] = {}
    for n, key in zip(order, keys):
        grouped.setdefault(key, []).append(n)
    return [np.array(sorted(b, key=partial(_local_key, topo)), dtype=np.int64) for b in grouped.values()]


def _local_key(topo: Topology, n: int) -> tuple:
    """A node's place in its block: by ``attrs.domain_index`` (else ``index``) when an int, then
    by node index; nodes without one after those with one."""
    index = topo.node_attrs[n].get("domain_index", topo.node_attrs[n].get("index"))
    return (0, index, n) if isinstance(index, int) else (1, 0, n)


def _sorted_blocks(topo: Topology, order: list[int], keys: list) -> list[np.ndarray] | None:
    """The blocks sorted by :func:`_local_key` in one ``lexsort`` (block, then the key's three
    parts), or None when an index does not fit an int64 (then sorted block by block)."""
    attrs = list(map(topo.node_attrs.__getitem__, order))
    index = [a.get("domain_index", a.get("index")) for a in attrs]
    has = [isinstance(i, int) for i in index]
    try:
        value = np.array([i if h else 0 for i, h in zip(index, has)], dtype=np.int64)
    except OverflowError:
        return None
    _, block = first_appearance_codes(keys)
    nodes = np.array(order, dtype=np.int64)
    ranked = np.lexsort((nodes, value, ~np.array(has, dtype=bool), block))
    bounds = np.flatnonzero(np.diff(block[ranked])) + 1
    return np.split(nodes[ranked], bounds) if len(nodes) else []


def ring_orders(topo: Topology, participants: np.ndarray, channels: int | None = None,
                rails: list[int] | None = None) -> list[np.ndarray]:
    """Ring orders, one per channel, over ``participants``.

    GPUs of one host are consecutive, so intra-host hops ride NVLink/PCIe and only one hop per
    host boundary crosses the fabric. With several hosts, channel ``c`` walks host 0 as the local
    rotation starting at local GPU ``c`` (exit at ``c−1``), host 1 in the reverse rotation starting
    at ``c−1`` (exit at ``c``), and so on: every inter-host hop joins GPUs of the same local
    position — rail-aligned, as NCCL's rings are — and the channels together use every rail.
    The default number of channels is the smallest per-host GPU count (1 for a single host).
    ``rails`` (local positions whose NICs are up, see :func:`live_rails`) keeps only the channels
    whose two rails (``c−1`` and ``c``) are both up, as NCCL only builds channels over the NICs
    it finds. Hosts whose GPUs are a direct mesh (no NVSwitch: AMD xGMI) get channels spread
    over every GPU⇄GPU link instead (:func:`~.mesh.mesh_ring_orders`).
    """
    blocks = host_blocks(topo, participants)
    mesh = mesh_ring_orders(topo, blocks, channels, rails)   # switchless GPU meshes (AMD xGMI)
    if mesh is not None:
        return mesh
    if len(blocks) == 1:
        return [blocks[0]]
    per_host = min(len(b) for b in blocks)
    starts = list(range(per_host))
    if rails is not None:
        up = set(rails)
        starts = [c for c in starts if c in up and (c - 1) % per_host in up] or starts[:0]
        if not starts:
            return []
    count = channels or len(starts)
    orders = []
    # Hosts of one size (the usual case) rotate as rows of one array: the same orders as one
    # np.roll per host, without 2,048 calls per channel on 16,384 GPUs.
    table = np.stack(blocks) if len({len(b) for b in blocks}) == 1 else None
    for k in range(count):
        c = starts[k % len(starts)]
        if table is not None:
            rotation = np.roll(table, -(c % table.shape[1]), axis=1)
            rotation[1::2] = rotation[1::2, ::-1]
            orders.append(rotation.reshape(-1))
            continue
        pieces = []
        for h, block in enumerate(blocks):
            rotation = np.roll(block, -(c % len(block)))
            pieces.append(rotation if h % 2 == 0 else rotation[::-1])
        orders.append(np.concatenate(pieces))
    return orders


def nearest_nics(topo: Topology, gpu: int) -> list[int]:
    """The NICs nearest to ``gpu`` inside its host (hop count through forwarding nodes)."""
    host = topo.node_host[gpu]
    dist, queue, found = {gpu: 0}, deque([gpu]), []
    while queue:
        u = queue.popleft()
        if found and dist[u] >= dist[found[0]]:
            break
        for v, _ in topo.adjacency[u]:
            if v in dist or topo.node_host[v] != host:
                continue
            dist[v] = dist[u] + 1
            if topo.node_kind[v] == "nic" and topo.node_attrs[v].get("role", "compute") == "compute":
                found.append(v)
            elif topo.node_kind[v] not in ("gpu", "memory", "nvme", "storage"):
                queue.append(v)
    return found


def _nic_up(topo: Topology, nic: int, failed) -> bool:
    if nic in failed.nodes:
        return False
    uplinks = [(v, l) for v, l in topo.adjacency[nic] if topo.node_host[v] != topo.node_host[nic]]
    return any(l not in failed.links and v not in failed.nodes for v, l in uplinks)


def live_rails(topo: Topology, blocks: list, failed=None) -> list[int]:
    """Local GPU positions whose GPU and nearest compute NIC are up (with a working uplink) in
    every host: the rails NCCL builds inter-host channels on. All positions without failures."""
    per_node = min(len(b) for b in blocks) if blocks else 0
    if failed is None or not (failed.nodes or failed.links) or len(blocks) < 2:
        return list(range(per_node))
    rails = []
    for c in range(per_node):
        gpus = [int(b[c]) for b in blocks]
        if all(g not in failed.nodes and any(_nic_up(topo, n, failed) for n in nearest_nics(topo, g))
               for g in gpus):
            rails.append(c)
    return rails


@dataclass
class Group:
    """What the algorithms need to know about a pattern's participants.

    Attributes
    ----------
    kind : str
        Pattern kind (``allreduce`` …).
    size : float
        The pattern's ``bytes`` (nccl-tests' size S).
    participants : ndarray
        Node indices.
    blocks : list of ndarray
        Participants per host (see :func:`host_blocks`).
    hosts : list of str or None
        Host of each block.
    channels : int or None
        Channels asked for (None: the algorithm's own count).
    rails : list of int
        Live rails (see :func:`live_rails`).
    root : int or None
        Node index of the root of a rooted collective (broadcast, reduce, gather, scatter);
        None: the first participant.
    """

    kind: str
    size: float
    participants: np.ndarray
    blocks: list
    hosts: list
    channels: int | None = None
    rails: list = field(default_factory=list)
    root: int | None = None

    @property
    def n(self) -> int:
        return len(self.participants)

    @property
    def nodes(self) -> int:
        return len(self.blocks)

    @property
    def per_node(self) -> int:
        return min(len(b) for b in self.blocks) if self.blocks else 0

    def nvls_gap(self, topo: Topology) -> str | None:
        """Why NVLS cannot run in some participant's host (None when every host qualifies):
        NVLS needs an NVSwitch of generation 3 or later (H100-class, NVLink 4) linked to every
        participating GPU of the host, and more than two of them: NCCL turns NVLS off for a
        communicator with two GPUs or fewer in a host (or NVLink domain) — NVIDIA/nccl
        src/transport/nvls.cc ``ncclNvlsInit``: ``gpuCount <= 2`` (``clique.size <= 2`` on MNNVL)."""
        facts = _plane_facts(topo)
        for host, block in zip(self.hosts, self.blocks):
            gap = (_nvls_gap_of_host(topo, host, block, facts) if _plain_host(topo, host, block, facts)
                   else _nvls_gap_walk(topo, host, block))
            if gap is not None:
                return gap
        if self.blocks and self.per_node <= 2:
            return (f"nvls needs more than two GPUs per host; the participants have {self.per_node} "
                    "in a host (NCCL disables NVLS there)")
        return None

    def nvls_efficiency(self, topo: Topology) -> float:
        """Smallest in-switch reduction efficiency over the participants' NVSwitches (catalog).
        NCCL runs more NVLS channels on Blackwell across hosts (catalog.nvls_channels)."""
        return min(nvls_efficiency(g, self.nodes > 1) for g in self._plane_generations(topo))

    def nvls_bus_limit(self, topo: Topology) -> float | None:
        """Smallest NVLS bus bandwidth (GB/s) the participants' NVSwitches sustain (catalog
        ``nvls_bus_gbytes``), None when no generation has a figure."""
        limits = [x for x in map(nvls_bus_gbytes, self._plane_generations(topo)) if x is not None]
        return min(limits) if limits else None

    def _plane_generations(self, topo: Topology) -> list:
        """The participants' NVSwitch generations, each once, in order of first appearance (the
        same first error): 8,192 NVSwitches of a 16,384-GPU ring were 8,192 catalog look-ups."""
        return list(dict.fromkeys(_switch_generation(topo, s) for h in self.hosts for s in nvswitch_plane(topo, h)))

def _nvls_gap_walk(topo: Topology, host: str | None, block) -> str | None:
    """:meth:`Group.nvls_gap` of one host or NVLink domain, from its plane's own links."""
    plane = nvswitch_plane(topo, host)
    if not plane:
        return f"nvls needs NVSwitch gen3+ in every host; {host or topo.node_ids[int(block[0])]} has none"
    lowest = min(_switch_generation(topo, s) or 0 for s in plane)
    if lowest < 3:
        return f"nvls needs NVSwitch gen3+ (H100-class) in every host; {host}'s NVSwitches are gen{lowest}"
    linked = {v for s in plane for v, _ in topo.adjacency[s]}
    stray = [topo.node_ids[int(g)] for g in block if int(g) not in linked]
    if stray:
        return f"nvls needs every GPU on the NVSwitch plane; {stray[0]} has no NVLink to it"
    return None


def _nvls_gap_of_host(topo: Topology, host: str, block, facts) -> str | None:
    """:func:`_nvls_gap_walk` of a plain host (every GPU of ``block`` inside it), from the
    per-topology :func:`_plane_facts`: the same answer without a walk per host."""
    lowest, near, _ = facts
    if host not in lowest:
        return f"nvls needs NVSwitch gen3+ in every host; {host} has none"
    if lowest[host] < 3:
        return f"nvls needs NVSwitch gen3+ (H100-class) in every host; {host}'s NVSwitches are gen{lowest[host]}"
    stray = block[~near[block]]
    if len(stray):
        return f"nvls needs every GPU on the NVSwitch plane; {topo.node_ids[int(stray[0])]} has no NVLink to it"
    return None


def _plain_host(topo: Topology, host, block, facts) -> bool:
    """Whether ``host`` is a host (not an NVLink domain, not None) holding every node of ``block``."""
    code = facts[2]
    return (host is not None and topo.groups.get(host, {}).get("kind") != DOMAIN_KIND
            and host in code["index"] and bool((code["of_node"][block] == code["index"][host]).all()))


def _plane_facts(topo: Topology) -> tuple[dict, np.ndarray, dict]:
    """Per topology, kept on it (NVLS checks of 2,048 hosts read them): each host's lowest
    NVSwitch generation (``g or 0`` over its plane; hosts without NVSwitch absent), per node
    whether it has a link to an NVSwitch of its own host, and the host codes of the nodes."""
    facts = topo.__dict__.get("_nvls_plane_facts")
    if facts is None:
        hosts, host_code = value_codes(topo, "node_host")   # kept on the topology, shared
        kinds, kind_code = value_codes(topo, "node_kind")
        of_node = np.array([-1 if h is None else k for k, h in enumerate(hosts)], dtype=np.int64)[host_code]
        switch = np.array([kind == "nvswitch" for kind in kinds], dtype=bool)[kind_code]
        table = _switch_table(topo)
        lowest: dict = {}
        for host, node in zip(np.asarray(hosts, dtype=object)[host_code[switch]].tolist(),
                              np.flatnonzero(switch).tolist()):
            if host is not None:   # g or 0 over the host's plane
                lowest[host] = min(lowest.get(host, 1 << 30), table[node] or 0)
        a, b = np.asarray(topo.link_a), np.asarray(topo.link_b)
        same_host = (of_node[a] == of_node[b]) & (of_node[a] >= 0)
        near = np.zeros(topo.num_nodes, dtype=bool)
        near[a[same_host & switch[b]]] = True
        near[b[same_host & switch[a]]] = True
        index = {h: k for k, h in enumerate(hosts) if h is not None}
        facts = topo.__dict__["_nvls_plane_facts"] = (lowest, near, {"index": index, "of_node": of_node})
    return facts


def _switch_generation(topo: Topology, node: int) -> int | None:
    """:func:`~designer.engine.catalog.nvswitch_generation` of ``node``, read from a table of every
    NVSwitch built once per topology: validation's NVLS check and planning's NVLS efficiency both
    walk every host's plane (8,192 NVSwitches at 16,384 GPUs), and a node's attrs and links do
    not change."""
    table = _switch_table(topo)
    return table[node] if node in table else nvswitch_generation(topo, node)


def _switch_table(topo: Topology) -> dict[int, int | None]:
    """:func:`_switch_generations`, built once and kept on the topology."""
    table = topo.__dict__.get("_nvswitch_generations")
    if table is None:
        table = topo.__dict__["_nvswitch_generations"] = _switch_generations(topo)
    return table


def _switch_generations(topo: Topology) -> dict[int, int | None]:
    """NVSwitch node → :func:`~designer.engine.catalog.nvswitch_generation`, from one pass over the
    links (the lowest NVLink generation among a switch's links, ``attrs.generation`` first) instead
    of one adjacency walk with string tests per switch."""
    from designer.engine.catalog import NVSWITCH_GEN_BY_NVLINK

    kinds, kind_code = value_codes(topo, "node_kind")
    switches = np.flatnonzero(np.array([kind == "nvswitch" for kind in kinds], dtype=bool)[kind_code]).tolist()
    if not switches:
        return {}
    none = 1 << 30   # "no NVLink link": larger than any generation digit
    techs, tech_code = value_codes(topo, "link_tech")
    link_digit = np.array([_nvlink_digit(t, none) for t in techs], dtype=np.int64)[tech_code]
    nvlink = np.flatnonzero(link_digit < none)   # only NVLink links can lower a switch's digit
    lowest = np.full(topo.num_nodes, none, dtype=np.int64)
    np.minimum.at(lowest, np.asarray(topo.link_a)[nvlink], link_digit[nvlink])
    np.minimum.at(lowest, np.asarray(topo.link_b)[nvlink], link_digit[nvlink])
    table = {}
    for node, low in zip(switches, lowest[switches].tolist()):
        gen = topo.node_attrs[node].get("generation")
        table[node] = (gen if isinstance(gen, int) and not isinstance(gen, bool)
                       else NVSWITCH_GEN_BY_NVLINK.get(low) if low != none else None)
    return table


def _nvlink_digit(tech: str | None, none: int) -> int:
    """The generation digit of an ``nvlink{g}x{n}`` tech (as nvswitch_generation reads it), else ``none``."""
    text = (tech or "").lower()
    return int(text[6]) if text.startswith("nvlink") and text[6:7].isdigit() else none


def group_of(topo: Topology, pattern: dict, failed=None) -> Group:
    """The :class:`Group` of a normalized collective pattern; ``failed`` (a
    :class:`~designer.engine.routing.FailureSet`) leaves out the rails whose NICs are down."""
    p = np.asarray(pattern["participants"], dtype=np.int64)
    blocks = host_blocks(topo, p)
    hosts = [block_key(topo, int(b[0])) for b in blocks]
    root = pattern.get("root")
    return Group(pattern["kind"], float(pattern["bytes"]), p, blocks, hosts, pattern.get("channels"),
                 live_rails(topo, blocks, failed), None if root is None else int(root))
