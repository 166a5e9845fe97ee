"""Shared helpers of the import tests: fixtures, matrices, NCCL's own path rules."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from designer.engine.model.pathclass import topo_matrix
from designer.engine.model.topology import Topology

DATA = Path(__file__).parent / "data" / "import"


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


def matrix_by_id(doc: dict, host: str = "h0") -> dict:
    """{(row node id, column node id): class} of ``topo_matrix``."""
    m = topo_matrix(Topology.compile(doc), host)
    return {(m["ids"][r], m["ids"][c]): m["matrix"][i][j]
            for i, r in enumerate(m["rows"]) for j, c in enumerate(m["labels"])}


def kinds(doc: dict) -> Counter:
    return Counter(n["kind"] for n in doc["nodes"])


def nccl_reference(xml_text: bytes) -> dict:
    """What NCCL computes for every (GPU, GPU|NIC) pair of a topology XML, by bus id.

    NCCL's rules (``paths.cc``): NVLink pairs are NVL (``NV<n>``: direct count, or through the
    NVSwitch plane the smaller of the two GPUs' link totals); otherwise two ``<cpu>`` → SYS, a
    path through the ``<cpu>`` → PHB, one ``<pci>`` bridge → PIX, several → PXB.
    """
    root = ET.fromstring(xml_text)
    parent, devices = {}, []
    for el in root.iter():
        for child in el:
            parent[child] = el
    for el in root.iter("pci"):
        cls = el.get("class", "")
        if el.find("gpu") is not None or cls.startswith("0x03"):
            devices.append(("gpu", el))
        elif el.find("nic") is not None or cls.startswith("0x02"):
            devices.append(("nic", el))

    def chain(el):
        out = []
        while el in parent:
            el = parent[el]
            out.append(el)
        return out

    nv = {}
    for kind, el in devices:
        gpu = el.find("gpu")
        for link in ([] if gpu is None else gpu.findall("nvlink")):
            nv.setdefault(el.get("busid"), []).append(
                (link.get("target"), int(link.get("count")), link.get("tclass")))

    def nvcount(a, b):
        la, lb = nv.get(a, []), nv.get(b, [])
        direct = sum(c for t, c, k in la if t == b)
        sw_a = sum(c for t, c, k in la if k == "0x068000")
        sw_b = sum(c for t, c, k in lb if k == "0x068000")
        return direct + (min(sw_a, sw_b) if sw_a and sw_b else 0)

    out = {}
    for ka, a in devices:
        if ka != "gpu":
            continue
        for kb, b in devices:
            ba, bb = a.get("busid"), b.get("busid")
            if a is b:
                out[(ba, bb)] = "X"
                continue
            if kb == "gpu" and nvcount(ba, bb):
                out[(ba, bb)] = f"NV{nvcount(ba, bb)}"
                continue
            ca, cb = chain(a), chain(b)
            common = next(x for x in ca if x in cb)
            if common.tag == "system":
                out[(ba, bb)] = "SYS"
            elif common.tag == "cpu":
                out[(ba, bb)] = "PHB"
            else:
                bridges = set(ca[:ca.index(common) + 1]) | set(cb[:cb.index(common) + 1])
                out[(ba, bb)] = "PIX" if len(bridges) == 1 else "PXB"
    return out


def imported_by_busid(result) -> dict:
    """topo_matrix of an import keyed by the source bus ids."""
    by_id = matrix_by_id(result.document)
    key_of = {v: k for k, v in result.ids.items()}
    return {(key_of[a], key_of[b]): cls for (a, b), cls in by_id.items()}
