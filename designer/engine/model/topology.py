"""The compiled, array-backed view of a ``fabricscope.topology/1`` document.

The JSON document (see ``document.py``) is what users edit, store and exchange; :class:`Topology`
is what routing, the solver and the what-if engine compute on: integer node and link indices,
numpy arrays of capacities, and an adjacency list (:class:`Adjacency`). Build it with
:meth:`Topology.from_document`, which validates and normalizes the document first (catalog
defaults filled in).

Resources
---------
Every link is full duplex: each direction is its own resource. Resource ``2*l`` is link ``l`` in
the a→b direction and ``2*l + 1`` the b→a direction. Nodes that carry their own
``capacity_gbps`` (a root complex's peer-to-peer limit, memory bandwidth) are resources too,
numbered after the links: ``2*L + k`` for the k-th such node. Resource ids as strings
(docs/FORMATS.md, Result): ``"<link id>:a>b"``, ``"<link id>:b>a"``, or the node id.

A link's two directions may differ (a measured host→device rate below the device→host one): a
document link's ``capacity_ab_gbps`` / ``capacity_ba_gbps`` override ``capacity_gbps`` for the
a→b / b→a direction (:attr:`Topology.link_capacity_ab_gbps`, ``link_capacity_ba_gbps``).
"""
from __future__ import annotations

import operator
import threading
from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from itertools import repeat
from operator import itemgetter

import numpy as np

from designer.engine.document.columnar import read_columns
from designer.engine.document.validator import _normalize
from designer.engine.numbers import first_appearance_codes

__all__ = ["Topology", "Adjacency", "ENDPOINT_KINDS", "SWITCH_KIND", "HOST_INTERNAL_KINDS", "value_codes",
           "kind_nodes", "node_attr_keys"]

_FINISHING = threading.Lock()   # one thread completes a document left unfinished, the others wait

# Kinds that only send and receive (never forward, except a GPU acting as an explicit PXN relay).
ENDPOINT_KINDS = frozenset({"gpu", "memory", "nvme", "storage"})
SWITCH_KIND = "switch"
# Components inside a host that forward only traffic starting or ending in that host.
HOST_INTERNAL_KINDS = frozenset({"cpu", "pcie_switch", "nvswitch", "nic"})


@dataclass
class Topology:
    """Array view of a validated topology document.

    Attributes
    ----------
    doc : dict
        The normalized document this view was built from (do not mutate).
    node_ids, node_kind, node_role, node_group, node_host : list
        Per node index: id, kind, switch role (``tor``/``leaf``/``spine``/``core`` or None), the
        group it sits in directly, and the id of its enclosing ``host`` group (None for fabric
        nodes).
    node_attrs : list of dict
        Per node index: the document's ``attrs`` (model, rail, socket, …).
    node_capacity_gbps : ndarray of float
        Per node: its own throughput limit in Gb/s, or NaN when the node is not a resource.
    link_ids, link_tech : list
        Per link index: id and technology name.
    link_a, link_b : ndarray of int
        Endpoint node indices of each link.
    link_capacity_gbps : ndarray of float
        Nominal capacity per direction in Gb/s (the document's ``capacity_gbps``).
    link_capacity_ab_gbps, link_capacity_ba_gbps : ndarray of float
        Capacity of the a→b and b→a direction in Gb/s: ``capacity_ab_gbps`` / ``capacity_ba_gbps``
        when the link gives one, else ``capacity_gbps``. The solver uses these.
    link_latency_ns : ndarray of float
        One-way latency of the link in ns.
    groups : dict
        Group id -> group dict from the document (``kind``, ``parent``, ``template``, …).
    node_index, link_index : dict
        Node id / link id -> index; ``link_index`` is built at its first read (a property).
    """

    _doc: dict   # read it as ``doc`` (below): the loader may leave its links' completion to the first reader
    node_ids: list[str]
    node_kind: list[str]
    node_role: list[str | None]
    node_group: list[str | None]
    node_host: list[str | None]
    node_attrs: list[dict]
    node_capacity_gbps: np.ndarray
    link_ids: list[str]
    link_tech: list[str | None]
    link_a: np.ndarray
    link_b: np.ndarray
    link_capacity_gbps: np.ndarray
    link_latency_ns: np.ndarray
    groups: dict[str, dict]
    link_capacity_ab_gbps: np.ndarray | None = None
    link_capacity_ba_gbps: np.ndarray | None = None
    # ``node_index`` / ``link_index`` when the caller has them already (the document's loading
    # builds the node index to find duplicate ids: not spent twice); without a link index,
    # :attr:`link_index` builds it at its first read.
    known_indices: InitVar[tuple[dict, dict | None] | None] = None
    node_index: dict[str, int] = field(init=False)
    adjacency: Adjacency = field(init=False)
    node_resource: np.ndarray = field(init=False)
    resource_node: np.ndarray = field(init=False)

    def __post_init__(self, known_indices=None) -> None:
        if self.link_capacity_ab_gbps is None:
            self.link_capacity_ab_gbps = self.link_capacity_gbps.copy()
        if self.link_capacity_ba_gbps is None:
            self.link_capacity_ba_gbps = self.link_capacity_gbps.copy()
        node_index, link_index = known_indices or (None, None)
        self.node_index = node_index if node_index is not None else _positions(self.node_ids)
        if link_index is not None:
            self.__dict__["_link_index"] = link_index
        self.adjacency = Adjacency(self.link_a, self.link_b, len(self.node_ids))
        has_capacity = np.isfinite(self.node_capacity_gbps)
        self.resource_node = np.flatnonzero(has_capacity).astype(np.int64)
        self.node_resource = np.full(len(self.node_ids), -1, dtype=np.int64)
        self.node_resource[self.resource_node] = 2 * self.num_links + np.arange(len(self.resource_node))

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_document(cls, doc: dict | str, *, owned: bool = False) -> "Topology":
        """Validate and normalize ``doc`` (a dict or JSON text), then compile it.

        Parameters
        ----------
        doc : dict or str
        owned : bool
            The caller hands ``doc`` over (a dict it just parsed, held by nobody else): its
            nodes and links may be completed in place and become the topology's document
            instead of being copied (the same document, without a second copy of every item
            while loading).
            Never for a document someone keeps.

        Raises
        ------
        InvalidTopology
            With every located problem, when the document is not valid (``doc`` unchanged).
        """
        normalized, columns = _normalize(doc, owned=owned)
        # The columns validation read are handed over, not read again from the normalized
        # document (one pass over every item fewer); None when the item walk validated.
        return cls._assemble(normalized, columns or _document_columns(normalized))

    @classmethod
    def read_file_bytes(cls, data: bytes, kernels=None) -> "Topology | None":
        """The topology of a document file's raw bytes read straight into columns
        (:func:`~designer.engine.document.columnar.read_columns`: no dict per node or link; the
        document is built at the first read of :attr:`doc`), or None when that reader cannot
        vouch for the file: then parse it and use :meth:`from_document`, which validates it
        and reports every problem, located."""
        read = read_columns(data, kernels)
        return None if read is None else cls._assemble(*read)

    @classmethod
    def compile(cls, doc: dict) -> "Topology":
        """Compile an already normalized, valid document (no validation: use ``from_document``)."""
        return cls._assemble(doc, _document_columns(doc))

    @classmethod
    def _assemble(cls, doc: dict, columns: dict) -> "Topology":
        """The topology of a normalized ``doc`` from its columns (:func:`_document_columns`, or
        the same lists handed over by ``document._normalize``, which already has them)."""
        groups = {g["id"]: g for g in doc.get("groups", [])}
        node_ids, node_group = columns["node_ids"], columns["node_group"]
        # One walk up the group tree per distinct group, not per node (2,569 groups for 103,296
        # nodes at 16,384 GPUs).
        host_of = {g: _enclosing_host(g, groups) for g in set(node_group)}
        node_attrs = _attrs_or_empty(columns["node_attrs"])
        link_a, link_b = _end_indices(node_ids, columns)
        # The arrays when the loader made them from the tech codes, else from the lists.
        capacity = columns.get("link_capacity_array")
        capacity = _floats(columns["link_capacity"]) if capacity is None else capacity
        latency = columns.get("link_latency_array")
        latency = _latencies(columns["link_latency"]) if latency is None else latency
        topo = cls(
            _doc=doc,
            node_ids=node_ids,
            node_kind=columns["node_kind"],
            node_role=list(map(dict.get, node_attrs, repeat("role"))),
            node_group=node_group,
            node_host=list(map(host_of.__getitem__, node_group)),
            node_attrs=node_attrs,
            node_capacity_gbps=_node_capacity(columns["node_capacity"]),
            link_ids=columns["link_ids"],
            link_tech=columns["link_tech"],
            link_a=link_a,
            link_b=link_b,
            link_capacity_gbps=capacity,
            link_latency_ns=latency,
            groups=groups,
            link_capacity_ab_gbps=_direction_capacity(columns["link_capacity_ab"], capacity),
            link_capacity_ba_gbps=_direction_capacity(columns["link_capacity_ba"], capacity),
            known_indices=(columns.get("node_index"), columns.get("link_index")),
        )
        _keep_what_validation_read(topo, columns)
        if columns.get("finish_links") is not None:
            topo.__dict__["_finish_doc"] = columns["finish_links"]
        return topo

    @property
    def name(self) -> str:
        """The document's ``name`` (reading it leaves an unfinished document as it is)."""
        return self._doc.get("name", "")

    @property
    def doc(self) -> dict:
        """The normalized document this view was built from (do not mutate).

        Why a property: loading a file it owns (``from_document(..., owned=True)``), the loader
        completes the links' dicts in place only here, at the first read — a simulation never
        reads them (16,384 GPUs: 191k dicts); the document is the same."""
        if "_finish_doc" in self.__dict__:
            with _FINISHING:
                finish = self.__dict__.get("_finish_doc")
                if finish is not None:
                    finish()
                    del self.__dict__["_finish_doc"]
        return self._doc

    # ------------------------------------------------------------------ sizes and lookups
    @property
    def link_index(self) -> dict[str, int]:
        """Link id -> link index (do not mutate), built at the first read: a simulation never
        asks a link by id (failures, what-ifs do), and the dict has an entry per link."""
        index = self.__dict__.get("_link_index")
        if index is None:
            index = self.__dict__["_link_index"] = _positions(self.link_ids)
        return index

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def num_links(self) -> int:
        return len(self.link_ids)

    @property
    def num_resources(self) -> int:
        return 2 * self.num_links + len(self.resource_node)

    def resource_capacity_gbps(self) -> np.ndarray:
        """Capacity of every resource (link directions, then capacity-bearing nodes), Gb/s."""
        per_direction = np.empty(2 * self.num_links, dtype=np.float64)
        per_direction[0::2] = self.link_capacity_ab_gbps
        per_direction[1::2] = self.link_capacity_ba_gbps
        return np.concatenate([per_direction, self.node_capacity_gbps[self.resource_node]])

    def link_resource(self, link: int, src_node: int) -> int:
        """Resource index of ``link`` traversed starting from node ``src_node``."""
        return 2 * link + (0 if self.link_a[link] == src_node else 1)

    def resource_id(self, resource: int) -> str:
        """The string id of a resource index (docs/FORMATS.md, Result)."""
        if resource < 2 * self.num_links:
            return f"{self.link_ids[resource // 2]}:{'a>b' if resource % 2 == 0 else 'b>a'}"
        return self.node_ids[int(self.resource_node[resource - 2 * self.num_links])]

    def resource_link(self, resource: int) -> int | None:
        """Link index of a link-direction resource, None for a node resource."""
        return resource // 2 if resource < 2 * self.num_links else None

    def hosts(self) -> list[str]:
        """Ids of all ``host`` groups, in document order."""
        return [gid for gid, g in self.groups.items() if g.get("kind") == "host"]

    def nodes_of_host(self, host: str) -> list[int]:
        """Node indices whose enclosing host is ``host`` (a new list; ascending)."""
        return list(self._host_index().get(host, ()))

    def _host_index(self) -> dict:
        # Built once: collective planning asks per host, several times per host, and a scan of
        # every node per call was most of a 16,384-GPU ring's CPU (node_host never changes).
        index = self.__dict__.get("_nodes_by_host")
        if index is None:
            index = {}
            for i, h in enumerate(self.node_host):
                index.setdefault(h, []).append(i)
            self.__dict__["_nodes_by_host"] = index
        return index

    def in_group_mask(self, group: str) -> np.ndarray:
        """Boolean mask of nodes inside ``group``: their own group or any ancestor of it."""
        inside: dict[str | None, bool] = {}
        for start in set(self.node_group):
            chain, g, found = [], start, False
            while g is not None and g not in chain:
                if g in inside:
                    found = inside[g]
                    break
                chain.append(g)
                if g == group:
                    found = True
                    break
                g = self.groups.get(g, {}).get("parent")
            for c in chain:
                inside[c] = found
            inside[start] = found
        return np.array([inside[g] for g in self.node_group], dtype=bool)

    def nodes_of_kind(self, kind: str) -> list[int]:
        """Indices of the nodes of ``kind``, in document order."""
        return kind_nodes(self, kind).tolist()

    def to_networkx(self):
        """A ``networkx.MultiGraph`` with node kind/host and link tech/capacity/latency attributes."""
        import networkx as nx

        graph = nx.MultiGraph(name=self.name)
        for i, nid in enumerate(self.node_ids):
            graph.add_node(nid, kind=self.node_kind[i], host=self.node_host[i] or "")
        for l, lid in enumerate(self.link_ids):
            graph.add_edge(self.node_ids[self.link_a[l]], self.node_ids[self.link_b[l]], key=lid,
                           tech=self.link_tech[l] or "",
                           capacity_gbps=float(self.link_capacity_gbps[l]),
                           latency_ns=float(self.link_latency_ns[l]))
        return graph


class Adjacency(Sequence):
    """Per node index: the list of ``(neighbour, link)`` of the links at that node, in link
    order (a list of lists, as read: ``adjacency[u]``, ``len``, iteration, ``==``).

    Each node's list is built the first time it is asked (then kept: the same list every
    time), from the link ends sorted by node once. Why: the 16,384-GPU ring's simulate asks 83
    of 103,296 nodes' lists, and building all of them (382,976 tuples) costs far more than the
    one sort.
    """

    __slots__ = ("_ptr", "_other", "_link", "_rows")

    def __init__(self, link_a: np.ndarray, link_b: np.ndarray, num_nodes: int):
        a, b = np.asarray(link_a, dtype=np.int64), np.asarray(link_b, dtype=np.int64)
        ends = np.stack([a, b], axis=1).reshape(-1)   # a link's a end before its b end
        order = np.argsort(ends, kind="stable")       # per node: its links in link order
        self._other = np.stack([b, a], axis=1).reshape(-1)[order]
        self._link = order >> 1
        self._ptr = np.zeros(num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(ends, minlength=num_nodes), out=self._ptr[1:])
        self._rows: list[list | None] = [None] * num_nodes

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, u):
        if isinstance(u, slice):
            return [self[i] for i in range(*u.indices(len(self)))]
        row = self._rows[u]   # IndexError / TypeError as a list's
        if row is None:
            u = operator.index(u)
            u += len(self._rows) if u < 0 else 0
            lo, hi = int(self._ptr[u]), int(self._ptr[u + 1])
            row = self._rows[u] = list(zip(self._other[lo:hi].tolist(), self._link[lo:hi].tolist()))
        return row

    def __eq__(self, other) -> bool:
        if isinstance(other, (Adjacency, list)):
            return len(self) == len(other) and all(x == y for x, y in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"Adjacency({len(self)} nodes)"


def _document_columns(doc: dict) -> dict:
    """The per-node and per-link values :meth:`Topology._assemble` reads, one list per field
    (one C-level pass over the items each, instead of a Python loop per item)."""
    nodes, links = doc["nodes"], doc["links"]

    def column(items, key):
        return list(map(dict.get, items, repeat(key)))

    return {"node_ids": list(map(itemgetter("id"), nodes)), "node_kind": list(map(itemgetter("kind"), nodes)),
            "node_group": column(nodes, "group"), "node_attrs": column(nodes, "attrs"),
            "node_capacity": column(nodes, "capacity_gbps"),
            "link_ids": list(map(itemgetter("id"), links)), "link_tech": column(links, "tech"),
            "link_a_ids": list(map(itemgetter("a"), links)), "link_b_ids": list(map(itemgetter("b"), links)),
            "link_capacity": list(map(itemgetter("capacity_gbps"), links)),
            "link_latency": column(links, "latency_ns"),
            "link_capacity_ab": column(links, "capacity_ab_gbps"),
            "link_capacity_ba": column(links, "capacity_ba_gbps")}


def _end_indices(node_ids: list, columns: dict) -> tuple[np.ndarray, np.ndarray]:
    """Node indices of every link's two ends (given as arrays, or as node ids to look up)."""
    if "link_a" in columns:
        return columns["link_a"], columns["link_b"]
    index = columns.get("node_index") or _positions(node_ids)
    count = len(columns["link_a_ids"])
    return tuple(np.fromiter(map(index.__getitem__, columns[key]), dtype=np.int64, count=count)
                 for key in ("link_a_ids", "link_b_ids"))


def _positions(ids: list[str]) -> dict[str, int]:
    return dict(zip(ids, range(len(ids))))


def _floats(values: list) -> np.ndarray:
    """``float(v)`` of every value, as float64 (exact floats, the common case: one C call)."""
    if set(map(type, values)) <= {float}:
        return np.array(values, dtype=np.float64)
    return np.fromiter(map(float, values), dtype=np.float64, count=len(values))


def _attrs_or_empty(attrs: list) -> list:
    """``[a or {} for a in attrs]``: a copy of the list when every item is truthy (every node
    has non-empty attrs, the usual case: one C-level test instead of a Python loop)."""
    return list(attrs) if all(attrs) else [a or {} for a in attrs]


def _latencies(values: list) -> np.ndarray:
    """``float(v or 0.0)`` of every latency, as float64: one numpy conversion when they are all
    exact ints and floats (a list of floats from the catalog, the usual case: no Python call per
    link), a zero of either sign then made +0.0 as ``or`` does."""
    if set(map(type, values)) <= {float, int}:
        out = np.array(values, dtype=np.float64)
        out[out == 0] = 0.0
        return out
    return np.array([float(x or 0.0) for x in values], dtype=np.float64)


def _node_capacity(values: list) -> np.ndarray:
    """Per node: its ``capacity_gbps`` as a float, NaN when it has none (most nodes)."""
    if values.count(None) == len(values):
        return np.full(len(values), np.nan, dtype=np.float64)
    return np.array([np.nan if c is None else float(c) for c in values], dtype=np.float64)


def _direction_capacity(given: list, capacity: np.ndarray) -> np.ndarray:
    """Per link: the per-direction override ``given`` when there is one, else ``capacity_gbps``
    (``capacity``, the links' ``capacity_gbps`` as floats)."""
    out = capacity.copy()
    if given.count(None) != len(given):
        for i, v in enumerate(given):
            if v is not None:
                out[i] = float(v)
    return out


def _enclosing_host(group: str | None, groups: dict[str, dict]) -> str | None:
    seen = set()
    while group is not None and group in groups and group not in seen:
        seen.add(group)
        if groups[group].get("kind") == "host":
            return group
        group = groups[group].get("parent")
    return None


def _keep_what_validation_read(topo: Topology, columns: dict) -> None:
    """Keep on ``topo`` what the column-wise validation computed that the routing context and
    the tiers read: the attrs keys, the codes of the kinds and techs (of these very lists: ~25
    ms at 16,384 GPUs not spent again)."""
    if columns.get("node_attr_keys") is not None:
        topo.__dict__["_node_attr_keys"] = columns["node_attr_keys"]
    codes = topo.__dict__.setdefault("_value_codes", {})
    for column, key in (("node_kind", "node_kind_codes"), ("link_tech", "link_tech_codes")):
        if columns.get(key) is not None and columns[column] is getattr(topo, column):
            codes[column] = columns[key]


def node_attr_keys(topo: Topology) -> frozenset | None:
    """The keys of every node's ``attrs`` when the load found them (validation of the columns
    reads them all), else None (not known: a compiled document, the item walk)."""
    return topo.__dict__.get("_node_attr_keys")


def value_codes(topo: Topology, column: str) -> tuple[list, np.ndarray]:
    """:func:`first_appearance_codes` of a per-node or per-link list of ``topo`` (``"node_kind"``,
    ``"link_tech"``, ``"node_role"``, …), built once and kept on the topology (read-only: the
    routing context and the tiers share them)."""
    cache = topo.__dict__.setdefault("_value_codes", {})
    got = cache.get(column)
    if got is None:
        got = cache[column] = first_appearance_codes(getattr(topo, column))
    return got


def kind_nodes(topo: Topology, kind: str) -> np.ndarray:
    """Indices (int64, document order) of the nodes of ``kind``, from the kept kind codes: no
    Python pass over the nodes (106k at 16,384 GPUs) for the few CPUs or NVSwitches asked for."""
    kinds, codes = value_codes(topo, "node_kind")
    return np.flatnonzero(codes == kinds.index(kind)) if kind in kinds else np.zeros(0, dtype=np.int64)
