"""SimAI topology files (the text ``gen_Topo_Template.py`` writes) ↔ a topology document.

Format (aliyun/SimAI, ``astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py`` writes it and
the ns-3 front end's ``ReadConf``/topology reader in ``astra-sim-alibabacloud/astra-sim/network_frontend/ns3``
reads it)::

    <nodes> <gpus per server> <nvswitches> <switches> <links> <gpu type>
    <id of every NVSwitch, then of every switch, each followed by one space>
    <a> <b> <rate> <delay> <error rate>           one line per link, <links> lines

Node ids run from 0 to ``nodes - 1``; an id not on the second line is a GPU (a GPU node stands for
the GPU and its NIC: SimAI has no separate NIC). Rates are ns-3 ``DataRate`` strings
(``400Gbps``), delays ns-3 ``Time`` strings (``0.0005ms``), the error rate a number (packet error
probability). The generator numbers GPUs first (server ``g // gpus_per_server``), then the
NVSwitches, then the access (ASW) and pod (PSW) switches.

Import gives one ``host`` group per server (``s<k>``) holding its GPUs (``s<k>/gpu<j>``) and the
NVSwitches its GPUs link to (``s<k>/nvsw<j>``); switches are ``sw<id>`` with ``attrs.role``
``tor`` when GPUs link to them, ``spine`` otherwise. Every node keeps ``attrs.simai_id`` and every
link the file's three tokens in ``attrs.simai`` (plus ``attrs.error_rate``), so that exporting an
imported file gives back the same bytes. Export numbers a document without ``simai_id`` the way
the generator does (GPUs in host order, NVSwitches, switches) and writes a token only when it
still reads as the link's capacity and latency; a node SimAI cannot hold (a NIC, a CPU, a PCIe
switch) is a located error — SimAI's topology has no host interior.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal

from designer.engine.errors import ImportFormatError, InvalidTopology, Problem
from designer.engine.io.bounded_text import check_text_size

__all__ = ["MAX_NODES", "MAX_LINKS", "MAX_TEXT_CHARS", "parse_simai_topo", "simai_topo_document",
           "export_simai_topo", "rate_gbps", "delay_ns"]

#: Largest node count read (the generator's AlibabaHPN default, 15,360 GPUs, has ~17,600 nodes).
MAX_NODES = 200_000
#: Largest link count read (AlibabaHPN's default has ~90,000 links).
MAX_LINKS = 2_000_000
#: Largest upload, in characters (~40 characters a link line).
MAX_TEXT_CHARS = 96 * 1024 * 1024
# The switch-id line of the largest generator output is ~15 kB; 4 MB leaves room for bigger pods.
_MAX_LINE_CHARS = 4 * 1024 * 1024
MAX_PROBLEMS = 20
# ns-3 DataRate suffixes (bits, and bytes × 8) and Time suffixes, as ns-3's parsers accept them.
_RATE_UNITS = {"bps": 1e-9, "kbps": 1e-6, "Kbps": 1e-6, "Mbps": 1e-3, "Gbps": 1.0, "Tbps": 1e3,
               "Bps": 8e-9, "KBps": 8e-6, "MBps": 8e-3, "GBps": 8.0}
_TIME_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0, "ps": 1e-3}
_NUMBER = r"[0-9]{1,15}(?:\.[0-9]{1,15})?(?:[eE][-+]?[0-9]{1,3})?"
_RATE = re.compile(rf"({_NUMBER})({'|'.join(_RATE_UNITS)})")
_TIME = re.compile(rf"({_NUMBER})({'|'.join(sorted(_TIME_UNITS, key=len, reverse=True))})")
_INT = re.compile(r"[0-9]{1,9}")
_FIELDS = ("nodes", "gpus per server", "nvswitches", "switches", "links")


def rate_gbps(token: str) -> float | None:
    """Gb/s of an ns-3 ``DataRate`` string (``"400Gbps"`` → 400.0), None if it is not one."""
    m = _RATE.fullmatch(token)
    return None if m is None else float(m.group(1)) * _RATE_UNITS[m.group(2)]


def delay_ns(token: str) -> float | None:
    """Nanoseconds of an ns-3 ``Time`` string (``"0.0005ms"`` → 500.0), None if it is not one."""
    m = _TIME.fullmatch(token)
    return None if m is None else float(m.group(1)) * _TIME_UNITS[m.group(2)]


def parse_simai_topo(text: str) -> dict:
    """The header, switch ids and links of a SimAI topology file.

    Returns
    -------
    dict
        ``nodes``, ``gpus_per_server``, ``nvswitches``, ``switches``, ``links`` (the header
        counts), ``gpu_type``, ``nvswitch_ids`` and ``switch_ids`` (lists of int) and
        ``link_rows``: ``(line, a, b, rate token, delay token, error token, gbps, ns, error)``.

    Raises
    ------
    ImportFormatError
        Located at ``line N`` for a bad header, an id out of range or listed twice, a count that
        disagrees with the file, a bad rate, delay or error rate.
    """
    check_text_size(text, "SimAI topology", max_chars=MAX_TEXT_CHARS, max_line_chars=_MAX_LINE_CHARS)
    lines = text.split("\n")
    head = _header(lines[0] if lines else "")
    ids = _switch_ids(lines[1] if len(lines) > 1 else None, head)
    rows, problems = [], []
    body = lines[2:]
    if body and body[-1] == "":
        body = body[:-1]             # the final newline
    if len(body) != head["links"]:
        problems.append(Problem("line 1", f"says {head['links']:,} links, the file has {len(body):,} link lines"))
    for k, line in enumerate(body[:head["links"]]):
        if len(problems) >= MAX_PROBLEMS:
            problems.append(Problem("", f"stopped after {MAX_PROBLEMS} problems"))
            break
        row = _link(k + 3, line, head["nodes"], problems)
        if row is not None:
            rows.append(row)
    if problems:
        raise ImportFormatError("invalid SimAI topology", problems)
    return {**head, **ids, "link_rows": rows}


def _header(line: str) -> dict:
    tokens = line.split(" ")
    if len(tokens) != 6 or not all(_INT.fullmatch(t) for t in tokens[:5]) or not tokens[5]:
        raise ImportFormatError("not a SimAI topology", [Problem("line 1", "expected '<nodes> <gpus per server> "
                                                          "<nvswitches> <switches> <links> <gpu type>', got "
                                                          f"{line[:80]!r}")])
    n, gps, nvs, sws, links = (int(t) for t in tokens[:5])
    problems = []
    if not 0 < n <= MAX_NODES:
        problems.append(Problem("line 1", f"nodes: {n:,} is outside 1..{MAX_NODES:,}"))
    if links > MAX_LINKS:
        problems.append(Problem("line 1", f"links: {links:,} is over the limit of {MAX_LINKS:,}"))
    if gps < 1:
        problems.append(Problem("line 1", "gpus per server must be >= 1"))
    if nvs + sws >= n and not problems:
        problems.append(Problem("line 1", f"{nvs} NVSwitches + {sws} switches leave no GPU among {n} nodes"))
    if not re.fullmatch(r"[A-Za-z0-9_.+-]{1,64}", tokens[5]):
        problems.append(Problem("line 1", f"gpu type {tokens[5][:40]!r}: expected 1-64 letters, digits, _ . + -"))
    if problems:
        raise ImportFormatError("invalid SimAI topology header", problems)
    return {"nodes": n, "gpus_per_server": gps, "nvswitches": nvs, "switches": sws, "links": links,
            "gpu_type": tokens[5]}


def _switch_ids(line: str | None, head: dict) -> dict:
    want = head["nvswitches"] + head["switches"]
    tokens = (line or "").split()
    where = "line 2"
    if line is None or len(tokens) != want or line != "".join(t + " " for t in tokens):
        raise ImportFormatError("invalid SimAI topology", [Problem(where, f"expected the {want:,} switch ids "
                                                                   f"each followed by a space, got {len(tokens):,} "
                                                                   "tokens")])
    ids, seen = [], set()
    for k, t in enumerate(tokens):
        if not _INT.fullmatch(t) or int(t) >= head["nodes"]:
            raise ImportFormatError("invalid SimAI topology", [Problem(where, f"id #{k + 1} {t[:20]!r} is not a node "
                                                                       f"id in 0..{head['nodes'] - 1}")])
        if int(t) in seen:
            raise ImportFormatError("invalid SimAI topology", [Problem(where, f"node {t} listed twice")])
        seen.add(int(t))
        ids.append(int(t))
    return {"nvswitch_ids": ids[:head["nvswitches"]], "switch_ids": ids[head["nvswitches"]:]}


def _link(n: int, line: str, nodes: int, problems: list) -> tuple | None:
    cols = line.split(" ")
    if len(cols) != 5:
        problems.append(Problem(f"line {n}", f"expected '<a> <b> <rate> <delay> <error rate>', got {line[:80]!r}"))
        return None
    a, b, rate, delay, error = cols
    found = len(problems)
    for name, t in (("a", a), ("b", b)):
        if not _INT.fullmatch(t) or int(t) >= nodes:
            problems.append(Problem(f"line {n}", f"{name}: {t[:20]!r} is not a node id in 0..{nodes - 1}"))
    if len(problems) == found and a == b:
        problems.append(Problem(f"line {n}", f"links node {a} to itself"))
    gbps, ns = rate_gbps(rate), delay_ns(delay)
    if gbps is None or not 0 < gbps <= 1e9:
        problems.append(Problem(f"line {n}", f"rate {rate[:40]!r}: expected an ns-3 data rate such as 400Gbps"))
    if ns is None or ns > 1e15:
        problems.append(Problem(f"line {n}", f"delay {delay[:40]!r}: expected an ns-3 time such as 0.0005ms"))
    err = float(error) if re.fullmatch(_NUMBER, error) else None
    if err is None or not 0 <= err <= 1:
        problems.append(Problem(f"line {n}", f"error rate {error[:40]!r}: expected a number in 0..1"))
    if len(problems) > found:
        return None
    return (n, int(a), int(b), rate, delay, error, gbps, ns, err)


def simai_topo_document(text: str, *, name: str = "simai") -> tuple[dict, list[str]]:
    """A ``fabricscope.topology/1`` document (not yet normalized) of a SimAI topology file.

    Returns
    -------
    (dict, list of str)
        The document and the warnings (defaults taken), one line each.

    Raises
    ------
    ImportFormatError
        See :func:`parse_simai_topo`; a GPU linked to another server's NVSwitch.
    """
    p = parse_simai_topo(text)
    nvs, sws = set(p["nvswitch_ids"]), set(p["switch_ids"])
    gpus = [i for i in range(p["nodes"]) if i not in nvs and i not in sws]
    gps = p["gpus_per_server"]
    nodes, node_id = _nodes(p, gpus)
    links = [{"id": f"l{k}", "a": node_id[a], "b": node_id[b], "capacity_gbps": gbps, "latency_ns": ns,
              "attrs": {"error_rate": err, "simai": {"rate": rate, "delay": delay, "error_rate": error}}}
             for k, (_, a, b, rate, delay, error, gbps, ns, err) in enumerate(p["link_rows"])]
    groups = [{"id": f"s{k}", "kind": "host"} for k in range(math.ceil(len(gpus) / gps))]
    warnings = [] if len(gpus) % gps == 0 else [f"{len(gpus)} GPUs are not a whole number of {gps}-GPU servers: "
                                                f"the last server holds {len(gpus) % gps}"]
    doc = {"format": "fabricscope.topology/1", "name": name, "groups": groups, "nodes": nodes, "links": links,
           "attrs": {"simai_topo": {"gpu_type": p["gpu_type"], "gpus_per_server": gps}}}
    return doc, warnings


def _nodes(p: dict, gpus: list) -> tuple[list, dict]:
    """The document's nodes and SimAI id → node id: GPUs by server, NVSwitches in the server
    whose GPUs reach them, switches ``tor`` (GPUs link to them) or ``spine``."""
    gps = p["gpus_per_server"]
    node_id = {g: f"s{r // gps}/gpu{r % gps}" for r, g in enumerate(gpus)}
    host = {g: f"s{r // gps}" for r, g in enumerate(gpus)}
    nvsw_host = _nvswitch_hosts(p, host)
    local: dict = {}
    for s in p["nvswitch_ids"]:
        h = nvsw_host.get(s)
        local[h] = local.get(h, -1) + 1
        node_id[s] = f"{h}/nvsw{local[h]}" if h else f"nvsw{s}"
    tor = {b if a in host else a for _, a, b, *_ in p["link_rows"] if (a in host) != (b in host)}
    node_id.update({s: f"sw{s}" for s in p["switch_ids"]})
    nodes = [{"id": node_id[g], "kind": "gpu", "group": host[g],
              "attrs": {"simai_id": g, "index": r % gps, "model": p["gpu_type"]}} for r, g in enumerate(gpus)]
    nodes += [{"id": node_id[s], "kind": "nvswitch", **({"group": nvsw_host[s]} if s in nvsw_host else {}),
               "attrs": {"simai_id": s}} for s in p["nvswitch_ids"]]
    nodes += [{"id": node_id[s], "kind": "switch", "attrs": {"simai_id": s, "role": "tor" if s in tor else "spine"}}
              for s in p["switch_ids"]]
    return nodes, node_id


def _nvswitch_hosts(p: dict, host: dict) -> dict:
    """NVSwitch id → the server whose GPUs link to it (an NVSwitch joined by two servers' GPUs
    — an NVL72-like domain — stays outside any host)."""
    seen: dict = {}
    nvs = set(p["nvswitch_ids"])
    for _, a, b, *_ in p["link_rows"]:
        for s, g in ((a, b), (b, a)):
            if s in nvs and g in host:
                seen.setdefault(s, set()).add(host[g])
    return {s: next(iter(h)) for s, h in seen.items() if len(h) == 1}


def export_simai_topo(doc: dict) -> str:
    """The SimAI topology text of a document (nodes: GPUs, NVSwitches, switches only).

    Parameters
    ----------
    doc : dict
        A normalized ``fabricscope.topology/1`` document.

    Returns
    -------
    str
        The file's text, ending with a newline.

    Raises
    ------
    InvalidTopology
        A node SimAI cannot hold (located at ``nodes[k].kind``), a duplicate or out-of-range
        ``attrs.simai_id``, no GPU.
    """
    nodes, links = doc.get("nodes", []), doc.get("links", [])
    problems = [Problem(f"nodes[{k}].kind", f"{n['kind']} {n['id']!r}: a SimAI topology holds GPUs, NVSwitches "
                                            "and switches only (its GPU node includes the NIC)")
                for k, n in enumerate(nodes) if n["kind"] not in ("gpu", "nvswitch", "switch")]
    if problems:
        raise InvalidTopology("not expressible as a SimAI topology", problems[:MAX_PROBLEMS])
    numbers = _simai_numbers(nodes)
    gpus = [n for n in nodes if n["kind"] == "gpu"]
    if not gpus:
        raise InvalidTopology("no GPU", [Problem("nodes", "a SimAI topology needs at least one GPU")])
    meta = (doc.get("attrs") or {}).get("simai_topo") or {}
    gps = meta.get("gpus_per_server") or _largest_host(gpus)
    gpu_type = meta.get("gpu_type") or (gpus[0].get("attrs") or {}).get("model") or "GPU"
    nvs = [numbers[n["id"]] for n in nodes if n["kind"] == "nvswitch"]
    sws = [numbers[n["id"]] for n in nodes if n["kind"] == "switch"]
    out = [f"{len(nodes)} {gps} {len(nvs)} {len(sws)} {len(links)} {gpu_type}\n",
           "".join(f"{i} " for i in sorted(nvs) + sorted(sws)) + "\n"]
    out += [f"{numbers[l['a']]} {numbers[l['b']]} {_tokens(l)}\n" for l in links]
    return "".join(out)


def _simai_numbers(nodes: list) -> dict:
    """Node id → SimAI id: the nodes' ``attrs.simai_id`` when every node has a distinct one in
    range, else the generator's order (GPUs, NVSwitches, switches, each in document order)."""
    given = [(n.get("attrs") or {}).get("simai_id") for n in nodes]
    if all(isinstance(g, int) and not isinstance(g, bool) and 0 <= g < len(nodes) for g in given) \
            and len(set(given)) == len(nodes):
        return {n["id"]: g for n, g in zip(nodes, given)}
    order = [n for kind in ("gpu", "nvswitch", "switch") for n in nodes if n["kind"] == kind]
    return {n["id"]: k for k, n in enumerate(order)}


def _largest_host(gpus: list) -> int:
    count: dict = {}
    for g in gpus:
        count[g.get("group")] = count.get(g.get("group"), 0) + 1
    return max(count.values())


def _tokens(link: dict) -> str:
    """``<rate> <delay> <error>``: the imported tokens while they still read as the link's
    numbers (an edited capacity writes a fresh token), else tokens formatted from the numbers."""
    kept = (link.get("attrs") or {}).get("simai") or {}
    gbps = float(link.get("capacity_gbps") or 0.0)
    ns = float(link.get("latency_ns") or 0.0)
    err = float((link.get("attrs") or {}).get("error_rate") or 0.0)
    rate = kept.get("rate") if _same(rate_gbps(str(kept.get("rate", ""))), gbps) else f"{_plain(gbps)}Gbps"
    delay = kept.get("delay") if _same(delay_ns(str(kept.get("delay", ""))), ns) else f"{_plain(ns / 1e6)}ms"
    kept_err = kept.get("error_rate")
    error = kept_err if re.fullmatch(_NUMBER, str(kept_err)) and _same(float(kept_err), err) else _plain(err)
    return f"{rate} {delay} {error}"


def _same(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def _plain(x: float) -> str:
    """A number without exponent or trailing zeros (``5e-4`` → ``0.0005``, ``400.0`` → ``400``),
    as the generator's default strings are written."""
    text = format(Decimal(repr(float(x))), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text
