"""Read ``NCCL_DEBUG=INFO`` output: what NCCL saw and chose, rank by rank.

One log per rank or all ranks interleaved, as ``mpirun``/``srun``/``torchrun`` print them: every
NCCL line carries a ``host:pid:tid [cudaDev] NCCL INFO`` prefix, itself maybe behind a launcher
tag (``[1,0]<stdout>:``, ``[0] ``, ``(RayTrainWorker pid=615, ip=…) ``). The lines read (NCCL
``src/init.cc``, ``src/transport.cc``, ``src/graph/connect.cc``, ``src/transport/net_ib.cc``,
``src/enqueue.cc``; formats of NCCL 2.18–2.28 as printed in published NVIDIA/nccl issue logs)::

    NCCL version 2.19.3+cuda12.3                       (bare before 2.20, then after the prefix)
    comm 0x8d57d40 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 7000 commId 0x49bb… - Init COMPLETE
    comm 0x8dd01c0 rank 2 nranks 16 cudaDev 2 busId 48000 - Destroy COMPLETE
    comm 0x8ec0ac0 rank 6 nRanks 16 nNodes 2 localRanks 8 localRank 6 MNNVL 0
    NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:10.0.0.1<0>
    NET/Socket : Using [0]eth0:10.0.0.1<0>        Using network IB       NET/OFI … (found 4 nics)
    NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'
    Channel 00/24 :    0   1   2   3   4   5   6   7               (a ring; NCCL may cut it short)
    Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read       (also P2P/IPC, P2P/direct pointer, SHM/…)
    Channel 01/0 : 3[3] -> 11[3] [send] via NET/IB/3/GDRDMA     (NET/IBext_v8/2, NET/IB/0(1)/GDRDMA)
    Trees [0] 1/-1/-1->0->-1 [1] …                              (down0/down1/down2->rank->up)
    16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 1 p2p channels per peer
    NVLS multicast support is available on dev 5          NVLS Head  0:  0  8 16
    AllReduce: opCount 0 sendbuff … count 2048 datatype 7 op 0 root 0 comm 0x… [nranks=8] stream …
    131072 Bytes -> Algo 0 proto 1 time 51.603912         (NCCL_DEBUG_SUBSYS=TUNING)

``NCCL_GRAPH_DUMP_FILE`` XML is read by :mod:`designer.engine.io.nccl_graph_dump`;
``NCCL_TOPO_DUMP_FILE`` XML is the NCCL topology XML that
:func:`designer.engine.io.nccl_xml.parse_nccl_xml` already imports.

Every pattern is anchored after a fixed literal found with ``str.find`` (linear in the line), and
:func:`designer.engine.io.bounded_text.check_text_size` bounds the text and its lines first. A
recognised line that does not parse (cut mid-way), ranks of two runs mixed (two NCCL versions,
two ``nranks``, two ``commId``, one rank on two GPUs), binary data or a text without one NCCL
line is an :class:`ImportFormatError` with every problem located (``b.log: line 7: …``). NIC
names no RDMA driver uses are kept and noted in ``warnings``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from designer.engine.errors import ImportFormatError, Problem
from designer.engine.io.bounded_text import check_text_size

__all__ = ["MAX_LOG_CHARS", "NcclLog", "parse_logs", "ALGORITHMS", "PROTOCOLS"]

#: Largest text read, all files together (16 ranks × init at NCCL_DEBUG=INFO is ~1–2 MB).
MAX_LOG_CHARS = 8 * 1024 * 1024
#: NCCL's algorithm and protocol numbers in TUNING lines (``src/include/device.h``).
ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
PROTOCOLS = ("LL", "LL128", "Simple")
# RDMA device names of the drivers NCCL's IB transport meets (mlx5 ConnectX/BlueField, Broadcom
# bnxt_re, Intel irdma, AWS efa, AMD Pensando ionic, Alibaba erdma, Huawei hns, Cornelis hfi1).
_KNOWN_NIC = re.compile(r"^(mlx[45]_|bnxt_re|irdma|efa|ionic|erdma|hns|hfi1|rocep|qedr|siw|rxe|cxi)")
_MARKERS = (" NCCL INFO ", " NCCL WARN ", " NCCL ERROR ", " NCCL TRACE ")
_INIT = re.compile(r"comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) cudaDev (\d+)(?: nvmlDev (\d+))?"
                   r"(?: busId ([0-9a-fA-F]+))?(?: commId (0x[0-9a-fA-F]+))?"
                   r".* - (Init START|Init COMPLETE|Destroy COMPLETE)")
_INIT_HEAD = re.compile(r"(?:\w+ )?comm 0x[0-9a-fA-F]+ rank \d+ nranks \d+")
_NODES = re.compile(r"comm 0x[0-9a-fA-F]+ rank (\d+) nRanks (\d+) nNodes (\d+) localRanks (\d+) localRank (\d+)")
_RING = re.compile(r"Channel (\d+)(?:/(\d+))? :((?:\s+\d+)+)\s*$")
_PEER = re.compile(r"Channel (\d+)(?:/(\d+))? : (\d+)\[([0-9a-fA-F]+)\] -> (\d+)\[([0-9a-fA-F]+)\]"
                   r"(?: \[(send|receive)\])? via (\S.*)$")
_NIC_ENTRY = re.compile(r"\[(\d+)\]([^\s:\[\]<]+):(\d+)/(IB|RoCE)")
_SOCKET_ENTRY = re.compile(r"\[(\d+)\]([^\s:\[\]<]+):")
_GDR = re.compile(r"GPU Direct RDMA (?:\([^)]*\) )?(Enabled|Disabled|enabled|disabled) for HCA (\d+) '([^']+)'")
_TREE = re.compile(r"\[(\d+)\]\s*(-?\d+)/(-?\d+)/(-?\d+)->(-?\d+)->(-?\d+)")
_COUNTS = re.compile(r"(?<![0-9])(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?"
                     r"(\d+) p2p channels, (\d+) p2p channels per peer")
_TUNING = re.compile(r"(?:(\w+): )?(\d+) Bytes -> Algo (\w+) proto (\w+) time (\d+(?:\.\d*)?)")
_COLL = re.compile(r"(\w+): opCount [0-9a-fA-F]+ sendbuff \S+ recvbuff \S+ count (\d+) datatype (\d+) op (\d+) "
                   r"root (\d+) comm (0x[0-9a-fA-F]+) \[nranks=(\d+)\]")
_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+\S*)")
_P2P_KINDS = frozenset({"IPC", "CUMEM", "direct pointer", "CE"})
_SHM_KINDS = frozenset({"direct", "CE", "CUDA"})
_NET_DEV = re.compile(r"^(\d+)(?:\((\d+)\))?$")
_CONTROL = re.compile("[\x01-\x08\x0e-\x1a\x1c-\x1f\ufffd]")


@dataclass
class NcclLog:
    """What the ``NCCL_DEBUG=INFO`` lines of one run say.

    Attributes
    ----------
    version : str or None
        ``2.19.3+cuda12.3``.
    nranks, comm_id : int or None, str or None
        Of the communicator (one per run; two are refused).
    hosts : list of str
        Host names in order of their lowest rank.
    ranks : dict
        rank -> ``{host, cuda_dev, nvml_dev, bus_id, local_rank}``.
    nodes : int or None
        ``nNodes`` NCCL counted.
    network : str or None
        ``IB``, ``Socket``, ``AWS Libfabric`` … (``Using network X``).
    nics : dict
        host -> list of ``{index, name, port, link_layer}`` (``NET/IB : Using`` and friends).
    gdr : list of dict
        ``{host, hca, name, enabled, where}`` per ``GPU Direct RDMA … for HCA`` line.
    peers : list of dict
        One per distinct ``(channel, src, dst, direction)`` connection: ``transport`` (P2P, SHM,
        NET …), ``detail`` (``CUMEM/read``), ``net`` (``IB``), ``nic`` (device index), ``proxy``
        (PXN relay rank), ``gdr`` (bool), ``where``.
    rings : dict
        channel -> list of ranks as printed (NCCL cuts long rings short).
    trees : dict
        channel -> rank -> ``{"down": [...], "up": int}``.
    channels : dict or None
        ``coll``, ``collnet``, ``nvls``, ``p2p``, ``p2p_per_peer`` (None where not printed).
    nvls : dict
        ``multicast`` (host -> list of devs with support), ``heads`` (head -> ranks).
    tuning : list of dict
        ``{op, bytes, algorithm, protocol, time_us}`` from TUNING lines.
    collectives : dict
        op name -> calls seen (``AllReduce: opCount …`` lines).
    warnings : list of str
        Located notes (unknown NIC names, NCCL WARN lines).
    """

    version: str | None = None
    nranks: int | None = None
    comm_id: str | None = None
    hosts: list = field(default_factory=list)
    ranks: dict = field(default_factory=dict)
    nodes: int | None = None
    network: str | None = None
    nics: dict = field(default_factory=dict)
    gdr: list = field(default_factory=list)
    peers: list = field(default_factory=list)
    rings: dict = field(default_factory=dict)
    trees: dict = field(default_factory=dict)
    channels: dict | None = None
    nvls: dict = field(default_factory=lambda: {"multicast": {}, "heads": {}})
    tuning: list = field(default_factory=list)
    collectives: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    def as_dict(self) -> dict:
        """Plain JSON (rings/trees keyed by channel as strings)."""
        out = dict(self.__dict__)
        out["ranks"] = {str(r): v for r, v in sorted(self.ranks.items())}
        out["rings"] = {str(c): v for c, v in sorted(self.rings.items())}
        out["trees"] = {str(c): {str(r): t for r, t in sorted(v.items())} for c, v in sorted(self.trees.items())}
        out["nvls"] = {"multicast": self.nvls["multicast"],
                       "heads": {str(h): v for h, v in sorted(self.nvls["heads"].items())}}
        return out


def _split(line: str) -> tuple[str | None, str | None, str]:
    """(host, level, message) of a ``host:pid:tid [dev] NCCL LEVEL message`` line, else
    (None, None, line). Found from the fixed marker, then the two tokens before it; the host is
    returned as ``host[dev]`` split by :func:`_host_dev`."""
    for marker in _MARKERS:
        at = line.find(marker)
        if at < 0:
            continue
        head = line[:at].split()
        if len(head) >= 2 and head[-1].startswith("[") and head[-1].endswith("]") and head[-2].count(":") >= 2:
            host = head[-2].rsplit(":", 2)[0]
            return f"{host}{head[-1]}", marker.split()[1], line[at + len(marker):].strip()
    return None, None, line


def _host_dev(tagged: str | None) -> tuple[str | None, int | None]:
    """``"node1[3]"`` → ``("node1", 3)``: the host and the CUDA device of the printing thread."""
    if tagged is None:
        return None, None
    host, _, dev = tagged[:-1].rpartition("[")
    return host, int(dev) if dev.isdigit() else None


def _unglue(msg: str) -> tuple[str, str]:
    """``msg`` up to a second ``host:pid:tid [dev] NCCL …`` glued into it, and that second line."""
    for marker in _MARKERS:
        at = msg.find(marker)
        if at > 0:
            head = msg[:at].rsplit(None, 2)
            if len(head) >= 2 and head[-1].startswith("["):
                cut = at - len(head[-1]) - 1 - len(head[-2])
                return msg[:cut].rstrip(), msg[cut:]
    return msg, ""


def _binary(text: str) -> int | None:
    """1-based line of the first NUL, or of the 8th control character / undecodable byte (a log
    holds none; a binary file many), else None. Two C-speed scans."""
    nul = text.find("\x00")
    if nul >= 0:
        return text.count("\n", 0, nul) + 1
    for k, m in enumerate(_CONTROL.finditer(text)):
        if k == 7:
            return text.count("\n", 0, m.start()) + 1
    return None


class _Reader:
    """Feeds lines of one or more files into one :class:`NcclLog`, collecting located problems."""

    def __init__(self):
        self.log = NcclLog()
        self.problems: list[Problem] = []
        self.seen: dict[str, dict] = {"version": {}, "nranks": {}, "comm_id": {}}
        self.peer_keys: set = set()
        self.lines = 0
        self.nic_lines: set = set()
        self.hosts_seen: dict = {}
        self.host: str | None = None
        self.dev: int | None = None

    def feed(self, where: str, raw: str) -> None:
        glued = False
        while raw:                             # two ranks may have written into one line: read each part
            host, level, msg = _split(raw)
            host, dev = _host_dev(host)
            raw = ""
            if level is not None:
                msg, raw = _unglue(msg)
                if glued:                      # the glued host token may carry the end of the other line
                    host = next((h for h in self.hosts_seen if h and host.endswith(h)), None)
                else:
                    self.hosts_seen.setdefault(host, None)
            self._line(where, host, dev, level, msg)
            glued = True

    def _line(self, where: str, host: str | None, dev: int | None, level: str | None, msg: str) -> None:
        version = _VERSION.search(msg) if "NCCL version" in msg else None
        if version:
            self._same("version", version.group(1), where)
            self.lines += 1
        if level is None:
            return
        self.lines += 1
        if level != "INFO":
            if len(self.log.warnings) < 50:
                self.log.warnings.append(f"{where}: NCCL {level} {msg[:200]}")
            return
        self.host, self.dev = host, dev
        self._info(host, msg, where)

    def _info(self, host: str, msg: str, where: str) -> None:
        for prefix, handler in _HANDLERS:
            if msg.startswith(prefix) or (prefix.startswith(" ") and prefix in msg):
                handler(self, host, msg, where)
                return

    def _same(self, key: str, value, where: str) -> None:
        """Record ``value`` of a run-wide ``key``; a second different value is two runs mixed."""
        seen = self.seen[key]
        if value not in seen:
            seen[value] = where
            if len(seen) == 2:
                (first, at), = [(v, w) for v, w in seen.items() if v != value]
                label = {"version": "NCCL version", "nranks": "nranks", "comm_id": "commId"}[key]
                self.problems.append(Problem(where, f"{label} {value}, but {at} says {first}: logs of two "
                                                    "different runs are mixed (give one run's logs)"))

    def bad(self, where: str, what: str) -> None:
        self.problems.append(Problem(where, what))

    # ---------------------------------------------------------------- line kinds
    def init(self, host, msg, where):
        # Matched from the first "comm 0x" only: searching from every one would rescan the line
        # once per occurrence (quadratic on a hostile line).
        m = _INIT.match(msg, max(msg.find("comm 0x"), 0))
        if not m:
            self.bad(where, "an Init line cut short or malformed (expected 'comm 0x… rank R nranks N cudaDev D "
                            "… - Init COMPLETE')")
            return
        _, rank, nranks, cuda, nvml, bus, comm, _ = m.groups()
        self._same("nranks", int(nranks), where)
        if comm:
            self._same("comm_id", comm, where)
        self._rank(int(rank), {"host": host, "cuda_dev": int(cuda), "nvml_dev": None if nvml is None else int(nvml),
                               "bus_id": bus.lower() if bus else None}, where)

    def cut_init(self, host, msg, where):
        """``comm 0x… rank R nranks N …`` without its `` - Init …`` tail: an Init line cut short."""
        if _INIT_HEAD.match(msg):
            self.bad(where, "an Init line cut short (no ' - Init START/COMPLETE' at its end)")

    def _rank(self, rank: int, info: dict, where: str) -> None:
        old = self.log.ranks.get(rank)
        if old is None:
            self.log.ranks[rank] = {**info, "local_rank": None, "where": where}
            return
        for key in ("host", "cuda_dev", "bus_id"):
            if info.get(key) is not None and old.get(key) is not None and info[key] != old[key]:
                self.bad(where, f"rank {rank} on {key} {info[key]}, but {old['where']} puts it on {old[key]}: "
                                "logs of two different runs are mixed")
                return
        old.update({k: v for k, v in info.items() if old.get(k) is None})

    def nodes(self, host, msg, where):
        m = _NODES.search(msg)
        if m:
            rank, nranks, nodes, _, local = (int(x) for x in m.groups())
            self._same("nranks", nranks, where)
            self.log.nodes = nodes
            self.log.ranks.setdefault(rank, {"host": host, "cuda_dev": None, "nvml_dev": None, "bus_id": None,
                                             "where": where})["local_rank"] = local

    def channel(self, host, msg, where):
        if " -> " in msg or " via " in msg:
            self._peer(msg, where)
            return
        m = _RING.match(msg)
        if m:
            ranks = [int(x) for x in m.group(3).split()]
            self.log.rings.setdefault(int(m.group(1)), ranks)
        elif re.match(r"Channel \d+(?:/\d+)? :", msg) and not re.search(r"[A-Za-z]", msg[9:].split(":", 1)[1]):
            self.bad(where, "a ring line cut short or malformed")

    def _peer(self, msg: str, where: str) -> None:
        m = _PEER.match(msg)
        transport = _transport(m.group(8)) if m else None
        if transport is None:
            self.bad(where, f"a connection line cut short or malformed: {msg[:120]!r} (expected 'Channel 00/0 : "
                            "0[0] -> 1[1] via P2P/IPC' or '… [send] via NET/IB/0/GDRDMA')")
            return
        channel, _, src, src_dev, dst, dst_dev, direction, _ = m.groups()
        key = (int(channel), int(src), int(dst), direction)
        if key in self.peer_keys:
            return
        self.peer_keys.add(key)
        printer, other = (dst, dst_dev), (src, src_dev)
        if direction != "receive":
            printer, other = other, printer
        self._learn(int(printer[0]), printer[1], where, self.dev)
        if transport["transport"] in ("P2P", "SHM"):     # both ends on the printing host
            self._learn(int(other[0]), other[1], where, None)
        self.log.peers.append({"channel": int(channel), "src": int(src), "dst": int(dst), "src_dev": src_dev,
                               "dst_dev": dst_dev, "direction": direction, **transport, "where": where})

    def _learn(self, rank: int, bracket: str, where: str, cuda_dev: int | None) -> None:
        """The printing rank of a connection line runs on this line's host: the sender prints
        send and P2P/SHM lines, the receiver ``[receive]`` ones (NCCL ``src/transport.cc``). Its
        bracket is the bus id (hex, before 2.19) or the device index (later)."""
        if self.host is None:
            return
        long = len(bracket) >= 4 or not bracket.isdigit()
        self._rank(rank, {"host": self.host, "cuda_dev": cuda_dev, "nvml_dev": None if long else int(bracket),
                          "bus_id": bracket.lower() if long else None}, where)

    def nics(self, host, msg, where):
        name = msg[4:msg.find(" ", 4)] if " " in msg[4:] else msg[4:]
        if "Using" not in msg or msg.startswith("NET/Plugin"):
            self._ofi(host, msg)
            return
        entries = [{"index": int(i), "name": n, "port": int(p), "link_layer": ll}
                   for i, n, p, ll in _NIC_ENTRY.findall(msg)]
        if not entries and name == "Socket":
            entries = [{"index": int(i), "name": n, "port": None, "link_layer": "Socket"}
                       for i, n in _SOCKET_ENTRY.findall(msg.split(";")[0])]
        if not entries:
            return
        self.log.nics[host] = entries
        for e in entries:
            if e["link_layer"] != "Socket" and not _KNOWN_NIC.match(e["name"]) and e["name"] not in self.nic_lines:
                self.nic_lines.add(e["name"])
                self.log.warnings.append(f"{where}: NIC {e['name']!r} is not a device name of a known RDMA driver "
                                         "(mlx5_*, bnxt_re*, irdma*, efa*, …); kept as NCCL printed it")

    def _ofi(self, host, msg):
        m = re.search(r"\(found (\d+) nics\)", msg)
        if m and host not in self.log.nics:
            self.log.nics[host] = [{"index": i, "name": f"ofi{i}", "port": None, "link_layer": "OFI"}
                                   for i in range(int(m.group(1)))]

    def network(self, host, msg, where):
        self.log.network = msg[len("Using network "):].strip()

    def gdr(self, host, msg, where):
        m = _GDR.search(msg)
        if m:
            state, hca, name = m.groups()
            self.log.gdr.append({"host": host, "hca": int(hca), "name": name,
                                 "enabled": state.lower() == "enabled", "where": where})

    def trees(self, host, msg, where):
        found = _TREE.findall(msg)
        if not found:
            self.bad(where, "a Trees line cut short or malformed (expected '[0] 1/-1/-1->0->-1 …')")
            return
        for channel, d0, d1, d2, rank, up in found:
            down = [int(d) for d in (d0, d1, d2) if int(d) >= 0]
            self.log.trees.setdefault(int(channel), {})[int(rank)] = {"down": down, "up": int(up)}

    def counts(self, host, msg, where):
        m = _COUNTS.search(msg)
        if m:
            coll, collnet, nvls, p2p, per_peer = (None if g is None else int(g) for g in m.groups())
            self.log.channels = {"coll": coll, "collnet": collnet, "nvls": nvls, "p2p": p2p,
                                 "p2p_per_peer": per_peer}

    def nvls(self, host, msg, where):
        m = re.match(r"NVLS multicast support is available on dev (\d+)", msg)
        if m:
            devs = self.log.nvls["multicast"].setdefault(host, [])
            if int(m.group(1)) not in devs:
                devs.append(int(m.group(1)))
        m = re.match(r"NVLS Head\s+(\d+):((?:\s+\d+)+)\s*$", msg)
        if m:
            self.log.nvls["heads"][int(m.group(1))] = [int(x) for x in m.group(2).split()]

    def tuning(self, host, msg, where):
        m = _TUNING.match(msg)
        if m and len(self.log.tuning) < 10000:
            op, size, algo, proto, time_us = m.groups()
            self.log.tuning.append({"op": op, "bytes": int(size), "algorithm": _name(algo, ALGORITHMS),
                                    "protocol": _name(proto, PROTOCOLS), "time_us": float(time_us)})

    def coll(self, host, msg, where):
        m = _COLL.match(msg)
        if m:
            self.log.collectives[m.group(1)] = self.log.collectives.get(m.group(1), 0) + 1


def _net_line(reader: _Reader, host, msg, where) -> None:
    # "NET/IB : GPU Direct RDMA … for HCA" and "NET/IB : Using [0]mlx5_0…" both start with "NET/".
    if "GPU Direct RDMA" in msg:
        reader.gdr(host, msg, where)
    else:
        reader.nics(host, msg, where)


# (literal, handler): a message starting with the literal, or containing it when it starts with a
# space, goes to the handler; the first match wins.
_HANDLERS = (
    ("Channel ", _Reader.channel), ("Trees", _Reader.trees), ("NET/", _net_line),
    ("Using network ", _Reader.network), ("NVLS", _Reader.nvls), (" Bytes -> Algo ", _Reader.tuning),
    (" opCount ", _Reader.coll), (" coll channels, ", _Reader.counts), (" - Init ", _Reader.init),
    (" - Destroy ", _Reader.init),
    (" nNodes ", _Reader.nodes), (" nranks ", _Reader.cut_init),
)


def _name(token: str, names: tuple) -> str:
    """NCCL prints the algorithm/protocol as its number (2.18–2.22) or its name (later)."""
    if token.isdigit():
        return names[int(token)] if int(token) < len(names) else token
    return token


def _transport(text: str) -> dict | None:
    """``P2P/CUMEM/read`` → ``{transport, detail, net, nic, proxy, gdr, pxn}``; None if not one
    of NCCL's forms (what a line cut mid-way leaves)."""
    pxn = text.endswith("(PXN)")
    text = text[:-5] if pxn else text
    kind, _, rest = text.partition("/")
    parts = rest.split("/")
    base = {"transport": kind, "detail": rest, "net": None, "nic": None, "proxy": None, "gdr": False, "pxn": pxn}
    if kind == "P2P" and parts[0] in _P2P_KINDS and all(p in ("read", "") for p in parts[1:]):
        return base
    if kind == "SHM" and parts[0] in _SHM_KINDS and all(p in _SHM_KINDS for p in parts[1:]):
        return base
    if kind in ("NVLS", "COLLNET", "CollNet") and rest:
        return base
    if kind == "NET":
        return _net(parts, base)
    return None


def _net(parts: list[str], base: dict) -> dict | None:
    flags = {"GDRDMA", "Shared"}
    tail = [p for p in parts if p in flags]
    core = [p for p in parts if p not in flags]
    if len(core) < 2 or not core[0]:
        return None
    dev = _NET_DEV.match(core[-1])
    if not dev:
        return None
    proxy = None if dev.group(2) is None else int(dev.group(2))
    return {**base, "net": "/".join(core[:-1]), "nic": int(dev.group(1)), "proxy": proxy,
            "gdr": "GDRDMA" in tail, "pxn": base["pxn"] or proxy is not None}


def parse_logs(files: list[tuple[str, str]]) -> NcclLog:
    """Parse the ``NCCL_DEBUG=INFO`` output of one run (one text per rank, or one for all).

    Parameters
    ----------
    files : list of (str, str)
        ``(name, text)`` per file; the name locates problems (``rank3.log: line 7``), and is
        left out when there is a single file.

    Returns
    -------
    NcclLog

    Raises
    ------
    ImportFormatError
        Every located problem: over :data:`MAX_LOG_CHARS` or a line over 64 KiB, binary data,
        a recognised line cut short, two runs mixed, no NCCL line at all.
    """
    total = sum(len(text) for _, text in files)
    if total > MAX_LOG_CHARS:
        raise ImportFormatError("NCCL log is too large", [Problem(
            "input", f"{total:,} characters, over the limit of {MAX_LOG_CHARS:,}")])
    reader = _Reader()
    for name, text in files:
        prefix = f"{name}: " if len(files) > 1 else ""
        _check_text(prefix, name, text)
        for number, line in enumerate(text.splitlines(), start=1):
            reader.feed(f"{prefix}line {number}", line)
    _finish(reader)
    return reader.log


def _check_text(prefix: str, name: str, text: str) -> None:
    try:
        check_text_size(text, "NCCL log", max_chars=MAX_LOG_CHARS)
    except ImportFormatError as exc:
        raise ImportFormatError(exc.message, [Problem(prefix + p.path, p.message) for p in exc.problems]) from None
    line = _binary(text)
    if line is not None:
        raise ImportFormatError("not a text log", [Problem(f"{prefix}line {line}", "binary data (NUL or control "
                                                           "bytes): give NCCL_DEBUG=INFO text output")])


def _finish(reader: _Reader) -> None:
    log = reader.log
    if reader.lines == 0:
        reader.bad("log", "no NCCL debug line found: run with NCCL_DEBUG=INFO and give its output "
                          "(lines like 'host:pid:tid [0] NCCL INFO ...')")
    log.version = next(iter(reader.seen["version"]), None)
    log.nranks = next(iter(reader.seen["nranks"]), None)
    log.comm_id = next(iter(reader.seen["comm_id"]), None)
    _check_ranks(reader)
    if reader.problems:
        raise ImportFormatError("not a usable NCCL debug log", reader.problems)
    for info in log.ranks.values():
        info.pop("where", None)
    order = sorted(log.ranks.items())
    ranked = [info["host"] for _, info in order if info["host"]]
    log.hosts = list(dict.fromkeys(ranked + [h for h in reader.hosts_seen if h]))
    for peer in log.peers:
        peer.pop("where", None)


def _check_ranks(reader: _Reader) -> None:
    """Ranks beyond ``nranks`` in Init lines, rings and connections: a mixed or truncated log."""
    n = reader.log.nranks
    if n is None:
        return
    for rank, info in reader.log.ranks.items():
        if rank >= n:
            reader.bad(info["where"], f"rank {rank} in a run of {n} ranks: logs of two different runs are mixed")
    for channel, ring in reader.log.rings.items():
        if any(r >= n for r in ring) or len(set(ring)) != len(ring):
            reader.bad(f"ring of channel {channel}", f"{ring} is not a ring of {n} ranks (a rank repeats or is "
                                                     f"out of range)")
