"""What NCCL saw (its ``NCCL_DEBUG=INFO`` log, graph dump) next to what the design says.

:func:`check_log` maps the log's ranks onto the design's GPUs and returns every disagreement as
a located, plain sentence:

- size: ``nranks`` against the design's GPUs, ranks per host against the host's GPUs;
- NICs: the NICs NCCL lists on a host (``NET/IB : Using …``) against the host's compute NICs;
- GPU Direct RDMA: ``GPU Direct RDMA Disabled for HCA …`` lines, and ``via NET/…`` connections
  without ``/GDRDMA``;
- connections: each peer's transport against the design's path class between the two GPUs
  (:func:`designer.engine.model.pathclass.classify`): SHM or NET where the design has NVLink, P2P
  or SHM between GPUs the design puts on two hosts, NET inside one host;
- rings: each printed hop whose design class is ``SYS`` (through the inter-socket link);
- NVLS: no NVLS channel although the design's Hopper/Blackwell GPUs share NVSwitches (NVLink
  SHARP needs NCCL ≥ 2.17 with multicast from the driver and fabric manager);
- graph dumps: ring/tree channel hops through ``SYS``, NIC indices the host does not have, and
  an intra-node path class worse than the design's NVLink;
- topology dumps (``NCCL_TOPO_DUMP_FILE``): GPUs, NICs and NVSwitches NCCL found on a host.

Mapping (why it is done this way): a log names hosts, not the design's host ids, so the host
of rank ``r`` maps to design host ``r // localRanks`` when NCCL printed ``localRanks`` (NCCL
numbers ranks node by node under ``mpirun``/``srun`` block placement), else hosts map in order;
a rank's GPU is the design host's GPU whose ``attrs.index`` is its ``nvmlDev`` (``cudaDev`` when
no ``nvmlDev`` was printed: it differs only under ``CUDA_VISIBLE_DEVICES``). Ranks no line
places (the other hosts of a one-host log) follow the same block rule.
"""
from __future__ import annotations

from designer.engine.io._model import HostModel, walk_devices
from designer.engine.io.nccl_debug_log import NcclLog
from designer.engine.model.pathclass import classify
from designer.engine.model.topology import Topology

__all__ = ["FORMAT", "check_log", "summarize", "design_hosts"]

FORMAT = "fabricscope.nccl-log-check/1"
# GPU model prefixes that have NVLink SHARP (NVLS) on an NVSwitch (Hopper and Blackwell).
_NVLS_MODELS = ("H100", "H200", "H800", "H20", "B100", "B200", "B300", "GB200", "GB300")


def design_hosts(topo: Topology) -> list[dict]:
    """Per design host, in document order: ``id``, ``gpus`` (``attrs.index`` -> node index) and
    ``nics`` (compute NIC node ids; every NIC when none has a role)."""
    hosts = []
    for host in topo.hosts():
        nodes = topo.nodes_of_host(host)
        gpus = [i for i in nodes if topo.node_kind[i] == "gpu"]
        nics = [i for i in nodes if topo.node_kind[i] == "nic"]
        compute = [i for i in nics if topo.node_attrs[i].get("role") == "compute"] or \
            [i for i in nics if topo.node_attrs[i].get("role") in (None, "")]
        by_index = {}
        for k, i in enumerate(gpus):
            by_index.setdefault(int(topo.node_attrs[i].get("index", k)), i)
        hosts.append({"id": host, "gpus": by_index, "nics": [topo.node_ids[i] for i in compute]})
    return hosts


class _Map:
    """Rank -> (design host, GPU node index) and log host -> design host."""

    def __init__(self, log: NcclLog, hosts: list[dict]):
        self.hosts = hosts
        self.nranks = log.nranks or (max(log.ranks) + 1 if log.ranks else 0)
        self.per = self._per_host(log)
        self.host_of: dict[str, int] = {}
        for name in log.hosts:
            ranks = sorted(r for r, info in log.ranks.items() if info["host"] == name)
            guess = ranks[0] // self.per if ranks and self.per else len(self.host_of)
            self.host_of[name] = guess
        self.log = log

    def _per_host(self, log: NcclLog) -> int | None:
        if log.nodes and self.nranks and self.nranks % log.nodes == 0:
            return self.nranks // log.nodes
        if len(self.hosts) and self.nranks and self.nranks % len(self.hosts) == 0 and len(log.hosts) <= 1:
            return min(self.nranks, max(len(h["gpus"]) for h in self.hosts))
        return None

    def gpu(self, rank: int) -> tuple[int, int] | None:
        """(design host index, GPU node) of ``rank``, or None when it cannot be placed."""
        info = self.log.ranks.get(rank)
        if info and info["host"] in self.host_of:
            h = self.host_of[info["host"]]
            dev = next((info[k] for k in ("nvml_dev", "cuda_dev", "local_rank") if info.get(k) is not None),
                       rank % self.per if self.per else None)
        elif self.per:
            h, dev = rank // self.per, rank % self.per
        else:
            return None
        if h >= len(self.hosts) or dev is None or dev not in self.hosts[h]["gpus"]:
            return None
        return h, self.hosts[h]["gpus"][dev]


def _m(kind: str, where: str, message: str) -> dict:
    return {"kind": kind, "where": where, "message": message}


def _gpu_name(topo: Topology, node: int) -> str:
    return topo.node_ids[node]


def _check_size(log: NcclLog, topo: Topology, mapping: _Map) -> list[dict]:
    gpus = sum(len(h["gpus"]) for h in mapping.hosts)
    out = []
    if mapping.nranks and mapping.nranks != gpus:
        out.append(_m("ranks", "run", f"NCCL runs {mapping.nranks} ranks, the design has {gpus} GPUs"))
    if log.nodes and log.nodes != len(mapping.hosts):
        out.append(_m("hosts", "run", f"NCCL counts {log.nodes} nodes, the design has {len(mapping.hosts)} hosts"))
    for name, h in mapping.host_of.items():
        ranks = [r for r, info in log.ranks.items() if info["host"] == name]
        if h >= len(mapping.hosts):
            out.append(_m("hosts", f"host {name}", f"host {name} has no counterpart: the design has "
                                                   f"{len(mapping.hosts)} hosts"))
        elif len(ranks) > len(mapping.hosts[h]["gpus"]):
            out.append(_m("ranks", f"host {name}", f"NCCL runs {len(ranks)} ranks on host {name}, the design's "
                                                   f"host {mapping.hosts[h]['id']} has "
                                                   f"{len(mapping.hosts[h]['gpus'])} GPUs"))
    return out


def _check_nics(log: NcclLog, mapping: _Map) -> list[dict]:
    out = []
    for name, nics in log.nics.items():
        h = mapping.host_of.get(name)
        if h is None or h >= len(mapping.hosts):
            continue
        design = mapping.hosts[h]["nics"]
        seen = sorted({n["name"] for n in nics})
        if len(seen) != len(design):
            out.append(_m("nics", f"host {name}", f"NCCL sees {len(seen)} NICs on host {name} ({', '.join(seen)}), "
                                                  f"the design has {len(design)} on {mapping.hosts[h]['id']}"))
    return out


def _check_gdr(log: NcclLog) -> list[dict]:
    out = [_m("gdr", f"host {g['host']}", f"GDR off on {g['name']} (host {g['host']}): NCCL stages this NIC's "
                                          "traffic through host memory")
           for g in log.gdr if not g["enabled"]]
    hosts = {}
    for p in log.peers:
        if p["transport"] == "NET" and not p["gdr"]:
            host = log.ranks.get(p["dst"] if p["direction"] == "receive" else p["src"], {}).get("host")
            hosts.setdefault(host, set()).add(f"NET/{p['detail']}")
    for host, forms in hosts.items():
        if not any(g["host"] == host and not g["enabled"] for g in log.gdr):
            out.append(_m("gdr", f"host {host}", f"connections on host {host} go {', '.join(sorted(forms))} without "
                                                 "GDRDMA: GPU Direct RDMA is not used"))
    return out


def _check_peers(log: NcclLog, topo: Topology, mapping: _Map) -> list[dict]:
    out, seen = [], set()
    for p in log.peers:
        key = (p["src"], p["dst"], p["transport"])
        a, b = mapping.gpu(p["src"]), mapping.gpu(p["dst"])
        if key in seen or a is None or b is None:
            continue
        seen.add(key)
        message = _peer_mismatch(p, classify(topo, a[1], b[1]), topo, a[1], b[1])
        if message:
            out.append(_m("transport", f"channel {p['channel']}", message))
    return out


def _peer_mismatch(p: dict, cls: str, topo: Topology, a: int, b: int) -> str | None:
    label = f"peer {p['src']}->{p['dst']} via {p['transport']}" + (f"/{p['detail']}" if p["detail"] else "")
    pair = f"{_gpu_name(topo, a)} and {_gpu_name(topo, b)}"
    if p["transport"] in ("P2P", "SHM") and cls == "NET":
        return f"{label}, but the design puts {pair} on different hosts"
    if p["transport"] in ("SHM", "NET") and (cls.startswith("NV") and cls != "NET"):
        return f"{label} where the design has NVLink ({cls}) between {pair}"
    if p["transport"] == "NET" and cls != "NET":
        return f"{label} inside one host, where the design joins {pair} by {cls}"
    return None


def _check_rings(log: NcclLog, topo: Topology, mapping: _Map) -> list[dict]:
    out = []
    for channel, ring in sorted(log.rings.items()):
        hops = list(zip(ring, ring[1:])) + ([(ring[-1], ring[0])] if len(ring) == mapping.nranks else [])
        for r1, r2 in hops:
            a, b = mapping.gpu(r1), mapping.gpu(r2)
            if a is None or b is None or a[0] != b[0]:
                continue
            cls = classify(topo, a[1], b[1])
            if cls == "SYS":
                out.append(_m("ring", f"channel {channel}", f"ring on channel {channel} crosses the CPU interconnect "
                                                            f"(SYS) between GPU {r1} and GPU {r2} "
                                                            f"({_gpu_name(topo, a[1])} -> {_gpu_name(topo, b[1])})"))
    return out


def _check_nvls(log: NcclLog, topo: Topology) -> list[dict]:
    if not log.channels or log.channels.get("nvls") is None or log.channels["nvls"] > 0:
        return []
    gpus = topo.nodes_of_kind("gpu")
    models = {str(topo.node_attrs[i].get("model", "")) for i in gpus}
    if topo.nodes_of_kind("nvswitch") and any(m.startswith(_NVLS_MODELS) for m in models):
        return [_m("nvls", "run", "NCCL built 0 NVLS channels, but the design's GPUs "
                                  f"({', '.join(sorted(models))}) share NVSwitches: NVLink SHARP is off "
                                  "(NCCL_NVLS_ENABLE, driver multicast or fabric manager)")]
    return []


def _check_graphs(graphs: list[dict], topo: Topology, hosts: list[dict]) -> list[dict]:
    if not graphs or not hosts:
        return []
    host, out = hosts[0], []
    nodes = list(host["gpus"].values())
    all_nvlink = len(nodes) > 1 and all(classify(topo, nodes[0], n).startswith("NV") for n in nodes[1:])
    for g in graphs:
        where = f"graph {g['id']} ({g['kind']})"
        for c, ch in enumerate(g["channels"]):
            out += _graph_channel(ch, c, where, topo, host)
        if g["kind"] in ("ring", "tree") and g["nchannels"] and all_nvlink and \
                g["type_intra"] not in (None, "LOC", "NVL", "NVB"):
            out.append(_m("graph", where, f"NCCL's {g['kind']} graph runs over {g['type_intra']} inside the node; "
                                          f"the design joins {host['id']}'s GPUs by NVLink"))
    return out


def _graph_channel(ch: dict, c: int, where: str, topo: Topology, host: dict) -> list[dict]:
    out = []
    for a, b in zip(ch["gpus"], ch["gpus"][1:]):
        if a in host["gpus"] and b in host["gpus"] and classify(topo, host["gpus"][a], host["gpus"][b]) == "SYS":
            out.append(_m("graph", f"{where} channel {c}", f"{where} channel {c} crosses the CPU interconnect (SYS) "
                                                           f"between GPU {a} and GPU {b}"))
    for dev in ch["gpus"]:
        if dev not in host["gpus"]:
            out.append(_m("graph", f"{where} channel {c}", f"{where} channel {c} uses GPU {dev}; the design's host "
                                                           f"{host['id']} has {len(host['gpus'])} GPUs"))
    for dev in ch["nets"]:
        if dev >= len(host["nics"]):
            out.append(_m("graph", f"{where} channel {c}", f"{where} channel {c} uses NIC {dev}; the design's host "
                                                           f"{host['id']} has {len(host['nics'])} compute NICs"))
    return out


def _check_topo_dump(model: HostModel | None, topo: Topology, hosts: list[dict]) -> list[dict]:
    """GPUs, NICs and NVSwitches of an ``NCCL_TOPO_DUMP_FILE`` (read by
    :func:`designer.engine.io.nccl_xml.parse_nccl_xml`) against the design's first host."""
    if model is None or not hosts:
        return []
    devices = [d for numa in model.numas for d in walk_devices(numa.children)]
    host, out = hosts[0], []
    gpus = sum(d.kind == "gpu" for d in devices)
    nics = sum(d.kind == "nic" for d in devices)
    switches = sum(1 for i in topo.nodes_of_host(host["id"]) if topo.node_kind[i] == "nvswitch")
    where = "topology dump"
    if gpus != len(host["gpus"]):
        out.append(_m("topo", where, f"NCCL's topology dump shows {gpus} GPUs, the design's host {host['id']} has "
                                     f"{len(host['gpus'])}"))
    if nics < len(host["nics"]):
        out.append(_m("topo", where, f"NCCL's topology dump shows {nics} NICs, the design's host {host['id']} has "
                                     f"{len(host['nics'])} compute NICs"))
    if switches and not model.nvswitches:
        out.append(_m("topo", where, f"NCCL's topology dump shows no NVSwitch, the design's host {host['id']} has "
                                     f"{switches}"))
    return out


def _notes(log: NcclLog) -> list[str]:
    notes = list(log.warnings)
    if log.version is None:
        notes.append("the log does not say NCCL's version (rank 0 prints 'NCCL version …' once)")
    else:
        parts = log.version.split("+")[0].split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() and (int(parts[0]), int(parts[1])) < (2, 18):
            notes.append(f"NCCL {log.version} is older than 2.18: lines this reader follows (2.18–2.28 formats) "
                         "may be missing or read partly")
    return notes


def summarize(log: NcclLog) -> dict:
    """The log in a few figures: version, hosts × ranks, NICs, a transports table, channels.

    Returns
    -------
    dict
        ``version``, ``nranks``, ``nodes``, ``network``, ``hosts`` (``{host, ranks, nics}``),
        ``transports`` (``{"P2P/CUMEM/read": connections, …}``, NET without GDR marked
        ``(no GDR)``), ``channels``, ``rings``/``trees`` counts, ``algorithms`` (TUNING choices
        ``{"AllReduce Ring/Simple": calls}``), ``collectives``.
    """
    hosts = []
    for name in log.hosts:
        ranks = sorted(r for r, info in log.ranks.items() if info["host"] == name)
        hosts.append({"host": name, "ranks": ranks, "nics": [n["name"] for n in log.nics.get(name, [])]})
    transports: dict[str, int] = {}
    for p in log.peers:
        label = f"{p['transport']}/{p['detail']}" + (" (no GDR)" if p["transport"] == "NET" and not p["gdr"] else "")
        transports[label] = transports.get(label, 0) + 1
    algorithms: dict[str, int] = {}
    for t in log.tuning:
        label = f"{t['op'] + ' ' if t['op'] else ''}{t['algorithm']}/{t['protocol']}"
        algorithms[label] = algorithms.get(label, 0) + 1
    return {"version": log.version, "nranks": log.nranks or (len(log.ranks) or None), "nodes": log.nodes,
            "network": log.network, "hosts": hosts, "transports": transports, "channels": log.channels,
            "rings": len(log.rings), "trees": len(log.trees), "algorithms": algorithms,
            "collectives": log.collectives}


def check_log(log: NcclLog, topo: Topology | None = None, graphs: list[dict] | None = None,
              topo_dump: HostModel | None = None) -> dict:
    """The log's summary and, given a design, every mismatch between them.

    Parameters
    ----------
    log : NcclLog
        From :func:`designer.engine.io.nccl_debug_log.parse_logs`.
    topo : Topology, optional
        The compiled design; without it only the summary and notes are returned.
    graphs : list of dict, optional
        From :func:`designer.engine.io.nccl_graph_dump.parse_graph_dump` (one host's dump,
        checked against the design's first host).
    topo_dump : HostModel, optional
        One host's ``NCCL_TOPO_DUMP_FILE`` read by :func:`designer.engine.io.nccl_xml.parse_nccl_xml`:
        its GPUs, NICs and NVSwitches against the design's first host.

    Returns
    -------
    dict
        ``format`` (:data:`FORMAT`), ``summary`` (:func:`summarize`), ``log`` (the parsed log as
        JSON), ``graphs``, ``mismatches`` (``{kind, where, message}``, one plain sentence each)
        and ``notes`` (version, reader warnings).
    """
    out = {"format": FORMAT, "summary": summarize(log), "log": log.as_dict(), "graphs": graphs or [],
           "mismatches": [], "notes": _notes(log), "design": None}
    if topo is None:
        return out
    hosts = design_hosts(topo)
    mapping = _Map(log, hosts)
    out["design"] = {"name": topo.name, "hosts": len(hosts), "gpus": sum(len(h["gpus"]) for h in hosts)}
    out["mismatches"] = (_check_size(log, topo, mapping) + _check_nics(log, mapping) + _check_gdr(log)
                         + _check_peers(log, topo, mapping) + _check_rings(log, topo, mapping)
                         + _check_nvls(log, topo) + _check_graphs(graphs or [], topo, hosts)
                         + _check_topo_dump(topo_dump, topo, hosts))
    return out
