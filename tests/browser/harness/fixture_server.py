"""Tiny HTTP server for the editor's browser tests (test-only; never used by the app).

Serves ``/harness`` (editor_harness.html with an ``editor-config`` built from :class:`MockState`),
``/static/...`` from the repository, and mocks of the API endpoints the editor calls:

- ``POST /api/v1/topologies/1/revisions/`` answers 201, 409 or 400 as ``state.save_mode`` says;
- ``POST /api/v1/topologies/build-preview/`` returns a generated cluster document;
- ``GET /api/v1/templates/<name>/host/?host_id=h7`` returns one host fragment;
- ``POST /api/v1/validate/`` answers ``{"valid": true, "problems": []}``.

The small generator below (DGX-H100-like host, rail-optimized or leaf/spine fabric) is enough for
rendering tests; the real templates and fabrics live in the engine.
"""
from __future__ import annotations

import html
import json
import math
import mimetypes
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from designer.engine.document.patch import apply_patch

__all__ = ["MockState", "serve", "dgx_h100_host", "cluster_document", "catalog"]

REPO = Path(__file__).resolve().parents[3]
STATIC = REPO / "static"
HARNESS = Path(__file__).with_name("editor_harness.html")


def catalog() -> dict:
    """The engine's catalog when importable, else a small stand-in with the same shape."""
    try:
        from designer.engine.catalog import catalog_as_dict
        return catalog_as_dict()
    except Exception:  # pragma: no cover - only while the engine is being written
        def t(name, family, raw, eff, lat=100.0):
            return {"name": name, "family": family, "raw_gbps": raw, "effective_gbps": eff, "latency_ns": lat}
        techs = [t("pcie5x16", "pcie", 504.0, 384.0), t("pcie4x4", "pcie", 63.0, 48.0),
                 t("nvlink4x4", "nvlink", 800.0, 659.2), t("nvlink4x5", "nvlink", 1000.0, 824.0),
                 t("upi-spr", "inter_socket", 1024.0, 176.0, 130.0), t("ddr5x8", "memory", 2457.6, 1966.1, 90.0),
                 t("ib-ndr", "infiniband", 400.0, 400.0), t("eth400", "ethernet", 400.0, 400.0)]
        return {"basis_default": "effective", "techs": {x["name"]: x for x in techs},
                "node_kinds": {k: {} for k in "gpu cpu memory pcie_switch nvswitch nic nvme switch storage".split()},
                "group_kinds": {"host": "", "rack": ""}}


def build_form_html() -> str:
    """The Generate dialog's form as editor.html prints it (templates/designer/_build_form.html)."""
    from django.template.loader import render_to_string

    from designer.pages.forms.topologies import TopologyNewForm
    from designer.pages.selectors import template_choices

    form = TopologyNewForm(templates=template_choices())
    inner = render_to_string("designer/_build_form.html", {"form": form})
    return f'<template id="fs-build-form">{inner}</template>'


def _link(links, a, b, tech, cap, lat=100.0):
    links.append({"id": f"{a}-{b.split('/')[-1]}" if a.split('/')[0] == b.split('/')[0] else f"{a}-{b}",
                  "a": a, "b": b, "tech": tech, "capacity_gbps": cap, "latency_ns": lat})


def dgx_h100_host(host_id: str, parent: str | None = None) -> dict:
    """One DGX-H100-like host: 8 GPU, 4 NVSwitch, 4 PCIe switches, 10 NIC, 8 NVMe, 2 CPU, 2 memory.

    Returns a fragment ``{"groups", "nodes", "links"}`` (38 nodes, 65 links).
    """
    h = host_id
    group = {"id": h, "kind": "host", "template": "dgx-h100"}
    if parent:
        group["parent"] = parent
    nodes, links = [], []

    def node(local, kind, **attrs):
        n = {"id": f"{h}/{local}", "kind": kind, "group": h}
        if attrs:
            n["attrs"] = attrs
        nodes.append(n)

    for s in range(4):
        node(f"nvsw{s}", "nvswitch")
    for g in range(8):
        node(f"gpu{g}", "gpu", model="H100", rail=g, socket=g // 4)
    for p in range(4):
        node(f"pcie{p}", "pcie_switch", socket=p // 2)
    for n in range(8):
        node(f"nic{n}", "nic", rail=n, port_gbps=400, model="ConnectX-7")
    for n in range(8, 10):
        node(f"nic{n}", "nic", role="storage", port_gbps=400)
    for d in range(8):
        node(f"nvme{d}", "nvme")
    for c in range(2):
        node(f"cpu{c}", "cpu", socket=c, model="Xeon 8480C")
        node(f"mem{c}", "memory", socket=c)
    for g in range(8):
        for s, count in enumerate((5, 4, 4, 5)):
            _link(links, f"{h}/gpu{g}", f"{h}/nvsw{s}", f"nvlink4x{count}", 25.0 * 8 * count)
        _link(links, f"{h}/gpu{g}", f"{h}/pcie{g // 2}", "pcie5x16", 504.0)
        _link(links, f"{h}/pcie{g // 2}", f"{h}/nic{g}", "pcie5x16", 504.0)
        _link(links, f"{h}/pcie{g // 2}", f"{h}/nvme{g}", "pcie4x4", 63.0)
    for p in range(4):
        _link(links, f"{h}/cpu{p // 2}", f"{h}/pcie{p}", "pcie5x16", 504.0)
    for c in range(2):
        _link(links, f"{h}/cpu{c}", f"{h}/nic{8 + c}", "pcie5x16", 504.0)
        _link(links, f"{h}/cpu{c}", f"{h}/mem{c}", "ddr5x8", 2457.6, 90.0)
    _link(links, f"{h}/cpu0", f"{h}/cpu1", "upi-spr", 1024.0, 130.0)
    return {"groups": [group], "nodes": nodes, "links": links}


def cluster_document(hosts: int = 4, *, fabric: str = "rail-optimized", rails: int = 8, spines: int = 4,
                     nic_gbps: float = 400.0, uplink_gbps: float = 400.0, name: str = "cluster", **_) -> dict:
    """``hosts`` DGX-H100-like hosts wired by a rail-optimized or leaf/spine (ToR per rack of 4) fabric."""
    doc = {"format": "fabricscope.topology/1", "name": name, "groups": [], "nodes": [], "links": []}
    tech = {100: "ib-edr", 200: "ib-hdr", 400: "ib-ndr", 800: "ib-xdr"}
    nic_tech, up_tech = tech.get(int(nic_gbps), "ib-ndr"), tech.get(int(uplink_gbps), "ib-ndr")
    racks = fabric != "rail-optimized"
    for i in range(hosts):
        parent = None
        if racks and i % 4 == 0:
            parent = f"r{i // 4}"
            doc["groups"].append({"id": parent, "kind": "rack"})
        frag = dgx_h100_host(f"h{i}", f"r{i // 4}" if racks else None)
        for key in ("groups", "nodes", "links"):
            doc[key].extend(frag[key])
    for s in range(spines):
        doc["nodes"].append({"id": f"spine{s}", "kind": "switch", "attrs": {"role": "spine"}})
    leaves = []
    if racks:
        for r in range(math.ceil(hosts / 4)):
            leaf = f"r{r}/tor0"
            doc["nodes"].append({"id": leaf, "kind": "switch", "group": f"r{r}", "attrs": {"role": "tor"}})
            leaves.append(leaf)
            for i in range(r * 4, min(hosts, r * 4 + 4)):
                for n in range(rails):
                    doc["links"].append({"id": f"h{i}/nic{n}-{leaf}", "a": f"h{i}/nic{n}", "b": leaf, "tech": nic_tech,
                                         "capacity_gbps": nic_gbps, "latency_ns": 100})
    else:
        per_rail = max(1, math.ceil(hosts / 32))
        for rail in range(rails):
            for k in range(per_rail):
                leaf = f"leaf{rail * per_rail + k}"
                leaves.append(leaf)
                doc["nodes"].append({"id": leaf, "kind": "switch", "attrs": {"role": "leaf", "rail": rail}})
                for i in range(k * 32, min(hosts, k * 32 + 32)):
                    doc["links"].append({"id": f"h{i}/nic{rail}-{leaf}", "a": f"h{i}/nic{rail}", "b": leaf, "tech": nic_tech,
                                         "capacity_gbps": nic_gbps, "latency_ns": 100})
    for leaf in leaves:
        for s in range(spines):
            doc["links"].append({"id": f"{leaf}-spine{s}", "a": leaf, "b": f"spine{s}", "tech": up_tech,
                                 "capacity_gbps": uplink_gbps, "latency_ns": 100})
    return doc


@dataclass
class MockState:
    """What the mock server answers; tests mutate it directly (same process)."""

    document: dict = field(default_factory=lambda: cluster_document(2, fabric="leaf-spine", spines=2, name="pod-a"))
    revision: int | None = 3
    readonly: bool = False
    save_mode: str = "201"          # "201" | "409" | "400"
    invalid_details: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    templates: list = field(default_factory=lambda: [{"name": "dgx-h100", "label": "NVIDIA DGX H100"},
                                                     {"name": "dgx-a100", "label": "NVIDIA DGX A100"}])

    def config(self) -> dict:
        return {
            "topology_id": 1, "revision": self.revision, "document": self.document, "catalog": catalog(),
            "templates": self.templates, "readonly": self.readonly,
            "urls": {"save": "/api/v1/topologies/1/revisions/", "build": "/api/v1/topologies/build-preview/",
                     "validate": "/api/v1/validate/", "template_host": "/api/v1/templates/<name>/host/",
                     "import_host": "/api/v1/topologies/import-preview/"},
            "csrf_token": "test-csrf-token",
        }


def _handler(state: MockState):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep pytest output clean
            pass

        def _send(self, status, body, ctype="application/json"):
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urlparse(self.path)
            if url.path == "/harness":
                cfg = json.dumps(state.config()).replace("</", "<\\/")
                page = (HARNESS.read_text().replace("__EDITOR_CONFIG__", cfg)
                        .replace("__BUILD_FORM__", build_form_html()))
                return self._send(200, page.encode(), "text/html; charset=utf-8")
            if url.path.startswith("/static/"):
                path = (STATIC / url.path[len("/static/"):]).resolve()
                if STATIC not in path.parents or not path.is_file():
                    return self._send(404, {"error": {"code": "not_found", "message": html.escape(url.path)}})
                ctype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
                return self._send(200, path.read_bytes(), ctype)
            parts = url.path.strip("/").split("/")
            if parts[:3] == ["api", "v1", "templates"] and len(parts) == 5 and parts[4] == "host":
                host_id = parse_qs(url.query).get("host_id", ["h0"])[0]
                state.requests.append(("GET", url.path, {"host_id": host_id}))
                if parts[3] not in {t["name"] for t in state.templates}:
                    return self._send(404, {"error": {"code": "not_found", "message": f"no template {parts[3]}"}})
                return self._send(200, dgx_h100_host(host_id))
            return self._send(404, {"error": {"code": "not_found", "message": url.path}})

        def do_POST(self):
            url = urlparse(self.path)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
            state.requests.append(("POST", url.path, body, self.headers.get("X-CSRFToken")))
            if url.path == "/api/v1/topologies/1/revisions/":
                if state.save_mode == "409":
                    return self._send(409, {"error": {"code": "conflict", "message": "The topology changed since your base revision.",
                                                      "details": {"current_revision": (state.revision or 0) + 1}}})
                if state.save_mode == "400":
                    return self._send(400, {"error": {"code": "invalid_topology", "message": "The topology is not valid.",
                                                      "details": state.invalid_details}})
                state.revision = (state.revision or 0) + 1
                # the editor sends a patch against the revision it loaded when that is smaller;
                # applied as the real API does
                state.document = (apply_patch(state.document, body["patch"]) if "patch" in body
                                  else body["document"])
                return self._send(201, {"revision": state.revision, "message": body.get("message", "")})
            if url.path == "/api/v1/topologies/build-preview/":
                return self._send(200, {"document": cluster_document(**body)})
            if url.path == "/api/v1/validate/":
                return self._send(200, {"valid": True, "problems": []})
            if url.path == "/api/v1/topologies/import-preview/":
                return self._send(*_import_preview(body))
            return self._send(404, {"error": {"code": "not_found", "message": url.path}})

    return Handler


def _import_preview(body: dict) -> tuple[int, dict]:
    """The API's import-preview answer, from the engine's real importers (no database needed)."""
    from designer.engine.errors import EngineError
    from designer.engine.io import import_text

    try:
        result = import_text(body.get("text") or "", host_id=body.get("host_id") or "h0")
    except EngineError as exc:
        return 400, {"error": {"code": "invalid_import", "message": str(exc)}}
    return 200, {"document": result.document, "format": result.format, "warnings": result.warnings,
                 "matrix": result.matrix}


def serve(state: MockState) -> tuple[ThreadingHTTPServer, str]:
    """Start the server on a free port in a daemon thread; returns it and its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


if __name__ == "__main__":  # manual use: python tests/browser/harness/fixture_server.py
    import sys
    st = MockState()
    if len(sys.argv) > 1:
        st.document = cluster_document(int(sys.argv[1]), name=f"{sys.argv[1]} hosts")
    srv, base = serve(st)
    print(f"{base}/harness")
    threading.Event().wait()
