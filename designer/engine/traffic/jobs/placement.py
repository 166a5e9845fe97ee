"""Placements of shared-cluster jobs: which GPUs a job runs on (docs/FORMATS.md, Jobs with placements).

A placement is explicit — ``{"hosts": ["h0", "h1"]}`` (every GPU of those hosts) or ``{"gpus":
["h0/gpu0", ...]}`` — or a policy over the GPUs still free: ``{"policy": "packed" |
"rail-aligned" | "spread" | "random", "gpus": N, "seed": k, "free": [...] | "after"}``.
Policies place jobs in document order, each on GPUs no earlier job holds; ``free`` is an
occupancy map (the GPU ids a scheduler reports free) or ``"after"`` (default: every GPU no
earlier job holds).

The policies, on the cluster map of :func:`cluster_map` (hosts, each GPU's local position =
its rail, each host's *leaf block* = the set of fabric switches its NICs reach first):

- ``packed``: the fewest hosts — hosts with the most free GPUs first (document order among
  equals), GPUs by local position (Slurm's default consumable-resource packing);
- ``rail-aligned``: a leaf block first — the smallest block whose free GPUs hold the job
  (best fit), else blocks from the freest down; inside, packed. Like Slurm's ``topology/block``
  and ``topology/tree`` plugins (https://slurm.schedmd.com/topology.html): keep a job under the
  fewest leaf switches, so its rings and trees cross the spine as little as possible;
- ``spread``: one GPU per host in turn (round robin over the hosts with free GPUs);
- ``random``: a seeded sample of the free GPUs (``numpy.random.default_rng(seed)``).

A policy's placement is in document order (host by host, GPUs by local position): the job's
ranks. An explicit ``gpus`` list keeps the order given (its layout groups ranks by host, see
:mod:`designer.engine.traffic.jobs.layout`).

:func:`fragmentation` scores a placement: ``(hosts − min_hosts)/min_hosts + (blocks −
min_blocks)/min_blocks + misaligned_hosts/hosts`` (0 = as compact as the cluster allows; see
docs/ENGINE.md, Shared cluster).
"""
from __future__ import annotations

import math
from collections import Counter, deque

import numpy as np

from designer.engine.errors import InvalidScenario, Problem

__all__ = ["POLICIES", "ClusterMap", "cluster_map", "place", "fragmentation"]

POLICIES = ("packed", "rail-aligned", "spread", "random")
_PLACEMENT_KEYS = {"hosts", "gpus", "policy", "seed", "free"}


class ClusterMap:
    """GPUs of a topology with their host, local position (rail) and leaf block.

    Attributes
    ----------
    gpus : ndarray of int64
        GPU node indices, document order.
    host : ndarray of int64
        Host code of each GPU (0, 1, … in order of first appearance).
    local : ndarray of int64
        Position of each GPU in its host (sorted by ``attrs.index``): its rail.
    block : ndarray of int64
        Leaf-block code of each GPU's host (hosts whose NICs reach the same first switches).
    leaves : list of frozenset
        The first fabric switches (node indices) each GPU's nearest NICs reach.
    """

    def __init__(self, topo):
        gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)
        self.gpus = gpus
        self.position = {int(g): k for k, g in enumerate(gpus.tolist())}
        hosts = [topo.node_host[g] or f"\0{g}" for g in gpus.tolist()]
        codes: dict = {}
        self.host = np.array([codes.setdefault(h, len(codes)) for h in hosts], dtype=np.int64)
        self.host_names = list(codes)
        self.local = np.zeros(len(gpus), dtype=np.int64)
        for h in range(len(codes)):
            members = np.flatnonzero(self.host == h)
            ranked = sorted(members.tolist(), key=lambda m: _index_key(topo, int(gpus[m])))
            self.local[ranked] = np.arange(len(members))
        self.leaves = [_first_switches(topo, int(g)) for g in gpus.tolist()]
        host_leaves: dict = {}
        for k, h in enumerate(self.host.tolist()):
            host_leaves.setdefault(h, set()).update(self.leaves[k])
        bcodes: dict = {}
        host_block = {h: bcodes.setdefault(frozenset(s), len(bcodes)) for h, s in host_leaves.items()}
        self.block = np.array([host_block[h] for h in self.host.tolist()], dtype=np.int64)
        self.per_host = int(np.bincount(self.host).max()) if len(gpus) else 0
        self.block_gpus = int(np.bincount(self.block).max()) if len(gpus) else 0


def _index_key(topo, node: int) -> tuple:
    index = topo.node_attrs[node].get("index")
    return (0, index, node) if isinstance(index, int) else (1, 0, node)


def _first_switches(topo, gpu: int) -> frozenset:
    """The fabric switches adjacent to the NICs nearest ``gpu`` inside its host (breadth first
    over the host's own nodes): the leaves its inter-host traffic enters first."""
    host = topo.node_host[gpu]
    seen, frontier, found = {gpu}, deque([(gpu, 0)]), None
    nics: list[int] = []
    while frontier:
        u, d = frontier.popleft()
        if found is not None and d > found:
            break
        if topo.node_kind[u] == "nic":
            found = d
            nics.append(u)
            continue
        for v, _ in topo.adjacency[u]:
            if v not in seen and topo.node_host[v] == host and host is not None:
                seen.add(v)
                frontier.append((v, d + 1))
    return frozenset(v for n in nics for v, _ in topo.adjacency[n] if topo.node_host[v] != host)


def cluster_map(topo) -> ClusterMap:
    """The topology's :class:`ClusterMap`, built once per topology (kept on it)."""
    cached = topo.__dict__.get("_cluster_map")
    if cached is None:
        cached = topo.__dict__["_cluster_map"] = ClusterMap(topo)
    return cached


def place(topo, raw, where: str, claimed: dict, owner: str) -> tuple[np.ndarray, dict]:
    """The GPUs (node indices, rank order) of one job's placement, and its echo.

    Parameters
    ----------
    raw : dict
        The placement (module docstring).
    where : str
        Its location (``jobs[3].placement``).
    claimed : dict
        GPU node index → id of the job holding it (earlier jobs); not modified.
    owner : str
        This job's id.

    Returns
    -------
    (ndarray, dict)
        GPUs and ``{"policy", "gpus": [ids], "seed"?}``.

    Raises
    ------
    InvalidScenario
        Unknown fields or policy, an unknown or non-GPU id, a GPU claimed twice (by which job),
        too few free GPUs.
    """
    if not isinstance(raw, dict) or not raw:
        raise InvalidScenario("bad placement", [Problem(where, 'must be an object like {"policy": "packed", '
                                                               '"gpus": 16} or {"hosts": [...]}')])
    extra = set(raw) - _PLACEMENT_KEYS
    if extra:
        raise InvalidScenario("bad placement", [Problem(where, f"unknown field(s) {sorted(extra)}")])
    if "policy" in raw:
        return _by_policy(topo, raw, where, claimed)
    if ("hosts" in raw) == ("gpus" in raw):
        raise InvalidScenario("bad placement", [Problem(where, "give one of hosts, gpus or policy")])
    gpus = _explicit(topo, raw, where)
    clash = [Problem(f"{where}.{'gpus' if 'gpus' in raw else 'hosts'}[{k}]",
                     f"{topo.node_ids[g]} is already claimed by job {claimed[g]!r}")
             for k, g in enumerate(gpus.tolist()) if g in claimed]
    if len(np.unique(gpus)) != len(gpus):
        clash.append(Problem(f"{where}.gpus", "names a GPU twice"))
    if clash:
        raise InvalidScenario("GPU claimed twice", clash[:50])
    return gpus, {"policy": "explicit", "gpus": [topo.node_ids[g] for g in gpus.tolist()]}


def _explicit(topo, raw: dict, where: str) -> np.ndarray:
    key = "gpus" if "gpus" in raw else "hosts"
    ids = raw[key]
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise InvalidScenario("bad placement", [Problem(f"{where}.{key}", f"must be a non-empty list of {key[:-1]} ids")])
    cmap, problems, out = cluster_map(topo), [], []
    if key == "gpus":
        for k, i in enumerate(ids):
            n = topo.node_index.get(i)
            if n is None or topo.node_kind[n] != "gpu":
                problems.append(Problem(f"{where}.gpus[{k}]", f"unknown GPU {i!r}" if n is None
                                        else f"{i!r} is a {topo.node_kind[n]}, not a GPU"))
            else:
                out.append(n)
    else:
        names = {h: c for c, h in enumerate(cmap.host_names)}
        for k, h in enumerate(ids):
            if h not in names:
                problems.append(Problem(f"{where}.hosts[{k}]", f"unknown host {h!r} (or a host without GPUs)"))
            else:
                members = np.flatnonzero(cmap.host == names[h])
                out.extend(cmap.gpus[members[np.argsort(cmap.local[members])]].tolist())
    if problems:
        raise InvalidScenario("unknown GPU in placement", problems[:50])
    return np.array(out, dtype=np.int64)


def _by_policy(topo, raw: dict, where: str, claimed: dict) -> tuple[np.ndarray, dict]:
    policy, n, seed = raw["policy"], raw.get("gpus"), raw.get("seed", 0)
    problems = []
    if policy not in POLICIES:
        problems.append(Problem(f"{where}.policy", f"unknown policy {policy!r} (choose from {', '.join(POLICIES)})"))
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        problems.append(Problem(f"{where}.gpus", "with a policy: the number of GPUs, an integer >= 1"))
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        problems.append(Problem(f"{where}.seed", "must be an integer >= 0"))
    if problems:
        raise InvalidScenario("bad placement", problems)
    cmap = cluster_map(topo)
    free = _free(topo, raw.get("free", "after"), f"{where}.free", cmap, claimed)
    if len(free) < n:
        raise InvalidScenario("not enough free GPUs", [Problem(
            f"{where}.gpus", f"needs {n:,} GPUs, only {len(free):,} are free")])
    chosen = choose(cmap, free, n, policy, seed)
    gpus = cmap.gpus[np.sort(chosen)]
    echo = {"policy": policy, "gpus": [topo.node_ids[g] for g in gpus.tolist()]}
    if policy == "random":
        echo["seed"] = seed
    return gpus, echo


def _free(topo, raw, where: str, cmap: ClusterMap, claimed: dict) -> np.ndarray:
    """Positions (into ``cmap.gpus``) of the free GPUs: the occupancy map minus earlier jobs'."""
    taken = np.zeros(len(cmap.gpus), dtype=bool)
    for g in claimed:
        taken[cmap.position[g]] = True
    if raw == "after":
        return np.flatnonzero(~taken)
    if not isinstance(raw, list) or not all(isinstance(i, str) for i in raw):
        raise InvalidScenario("bad placement", [Problem(where, 'must be a list of free GPU ids or "after"')])
    unknown = [Problem(f"{where}[{k}]", f"unknown GPU {i!r}") for k, i in enumerate(raw)
               if i not in topo.node_index or topo.node_index[i] not in cmap.position]
    if unknown:
        raise InvalidScenario("unknown GPU in placement", unknown[:50])
    listed = np.zeros(len(cmap.gpus), dtype=bool)
    listed[[cmap.position[topo.node_index[i]] for i in raw]] = True
    return np.flatnonzero(listed & ~taken)


def choose(cmap: ClusterMap, free: np.ndarray, n: int, policy: str, seed: int = 0) -> np.ndarray:
    """``n`` of the ``free`` GPU positions (into ``cmap.gpus``) by ``policy`` (module docstring)."""
    if policy == "random":
        return np.random.default_rng(seed).choice(free, size=n, replace=False)
    if policy == "spread":
        return _spread(cmap, free, n)
    if policy == "rail-aligned":
        return _rail_aligned(cmap, free, n)
    return _packed(cmap, free, n)


def _packed(cmap: ClusterMap, free: np.ndarray, n: int) -> np.ndarray:
    """Hosts with the most free GPUs first (first appearance among equals), GPUs by rail."""
    host = cmap.host[free]
    count = np.bincount(host, minlength=len(cmap.host_names))
    order = np.lexsort((cmap.local[free], host, -count[host]))
    return free[order[:n]]


def _rail_aligned(cmap: ClusterMap, free: np.ndarray, n: int) -> np.ndarray:
    """The smallest leaf block holding the job (best fit), else the freest blocks first; packed inside."""
    block = cmap.block[free]
    count = np.bincount(block, minlength=int(cmap.block.max()) + 1)
    fits = np.flatnonzero(count >= n)
    if len(fits):
        best = fits[np.argmin(count[fits])]
        return _packed(cmap, free[block == best], n)
    out, left = [], n
    for b in np.argsort(-count, kind="stable").tolist():
        if left <= 0 or count[b] == 0:
            break
        take = _packed(cmap, free[block == b], min(left, int(count[b])))
        out.append(take)
        left -= len(take)
    return np.concatenate(out)


def _spread(cmap: ClusterMap, free: np.ndarray, n: int) -> np.ndarray:
    """One GPU per host in turn: round r takes the r-th free GPU (by rail) of every host."""
    host = cmap.host[free]
    order = np.lexsort((cmap.local[free], host))
    ranked_host = host[order]
    starts = np.searchsorted(ranked_host, ranked_host, side="left")
    round_ = np.arange(len(order)) - starts           # position inside its host
    pick = np.lexsort((ranked_host, round_))          # round by round, hosts in order
    return free[order[pick[:n]]]


def fragmentation(topo, gpus: np.ndarray) -> dict:
    """How scattered a placement is (docs/ENGINE.md, Shared cluster).

    Returns
    -------
    dict
        ``gpus``, ``hosts`` and ``min_hosts`` (⌈N / GPUs per host⌉), ``leaf_blocks`` and
        ``min_leaf_blocks`` (⌈N / GPUs of the largest block⌉), ``leaves`` (first switches
        reached), ``misaligned_hosts`` (hosts whose set of rails differs from the job's most
        common one: their NICs sit on other rail leaves than their ring neighbours'), and
        ``score`` = excess hosts + excess blocks (each relative to its minimum) + misaligned
        share; 0 is as compact as the cluster allows.
    """
    cmap = cluster_map(topo)
    pos = np.array([cmap.position[int(g)] for g in np.asarray(gpus).tolist()], dtype=np.int64)
    n = len(pos)
    hosts = np.unique(cmap.host[pos])
    blocks = len(np.unique(cmap.block[pos]))
    leaves = len(set().union(*[cmap.leaves[p] for p in pos.tolist()])) if n else 0
    rails = Counter(frozenset(cmap.local[pos[cmap.host[pos] == h]].tolist()) for h in hosts.tolist())
    misaligned = len(hosts) - rails.most_common(1)[0][1] if rails else 0
    min_hosts = max(1, math.ceil(n / max(cmap.per_host, 1)))
    min_blocks = max(1, math.ceil(n / max(cmap.block_gpus, 1)))
    score = (len(hosts) - min_hosts) / min_hosts + (blocks - min_blocks) / min_blocks + misaligned / max(len(hosts), 1)
    return {"gpus": n, "hosts": len(hosts), "min_hosts": min_hosts, "leaf_blocks": blocks,
            "min_leaf_blocks": min_blocks, "leaves": leaves, "misaligned_hosts": misaligned,
            "score": round(float(score), 12)}
