"""The editor's compact document (``designer/editor_compact.py``, rebuilt by
``static/js/editor/compact.js``): each repeated host interior once, and what the browser rebuilds
is the document itself — the same elements, order and keys — whatever the design holds."""
from __future__ import annotations

import copy
import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from designer.editor_compact import COMPACT_FORMAT, compact_document
from designer.engine.model.fabrics import build_cluster

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster():
    return build_cluster(template="dgx-h100", hosts=4, fabric="rail-optimized")


def expand(raw: dict) -> dict:
    """The form's meaning, written out (the JS module must agree: test below)."""
    doc, templates, hosts = raw["document"], raw["host_templates"], raw["hosts"]

    def listed(items, which, place, shapes, names):
        out = []
        for item in items:
            if isinstance(item, list):
                out.append({**copy.deepcopy(shapes[item[0]]), **dict(zip(names, item[1:]))})
            elif isinstance(item, int):
                host, t = hosts[item]
                out.extend(place(copy.deepcopy(e), f"{host}/", host) for e in templates[t][which])
            else:
                out.append(item)
        return out

    def node(n, prefix, host):
        return {**n, "id": prefix + n["id"], "group": host}

    def link(x, prefix, host):
        return {**x, "id": prefix + x["id"], "a": prefix + x["a"], "b": prefix + x["b"]}

    return {**doc, "nodes": listed(doc["nodes"], "nodes", node, raw["node_shapes"], ("id",)),
            "links": listed(doc["links"], "links", link, raw["link_shapes"], ("id", "a", "b"))}


def same_text(a: dict, b: dict) -> bool:
    """Equal as JSON text: the same keys in the same order, the same list order."""
    return json.dumps(a) == json.dumps(b)


def test_four_identical_hosts_are_one_template(cluster):
    raw = compact_document(cluster, min_nodes=0)
    assert raw["format"] == COMPACT_FORMAT
    assert len(raw["host_templates"]) == 1
    assert raw["hosts"] == [[f"h{i}", 0] for i in range(4)]
    # each host's run of nodes and links is one integer in its place
    assert [x for x in raw["document"]["nodes"] if isinstance(x, int)] == [0, 1, 2, 3]
    assert [x for x in raw["document"]["links"] if isinstance(x, int)] == [0, 1, 2, 3]
    assert same_text(expand(raw), cluster)
    assert len(json.dumps(raw)) < len(json.dumps(cluster)) / 2
    # the NIC-to-leaf links, alike but for id and ends, share a shape
    shaped = [x for x in raw["document"]["links"] if isinstance(x, list)]
    assert shaped and all(len(x) == 4 for x in shaped) and raw["link_shapes"]
    assert all(s["id"] is None and s["a"] is None and s["b"] is None for s in raw["link_shapes"])


def test_a_shape_tells_values_of_another_json_type_apart(cluster):
    """1, 1.0 and True are one key in Python, three values in JSON: never one shape."""
    doc = copy.deepcopy(cluster)
    fabric = [x for x in doc["links"] if not x["a"].startswith("h")][:3]
    for link, value in zip(fabric, (1, 1.0, True)):
        link["latency_ns"] = value
    raw = compact_document(doc, min_nodes=0)
    assert same_text(expand(raw), doc)


def test_a_host_unlike_the_others_stays_as_it_is(cluster):
    doc = copy.deepcopy(cluster)
    odd = next(n for n in doc["nodes"] if n["id"] == "h2/gpu3")
    odd.setdefault("attrs", {})["model"] = "H100 with a different label"
    raw = compact_document(doc, min_nodes=0)
    assert [h for h, _ in raw["hosts"]] == ["h0", "h1", "h3"]
    assert any(isinstance(n, dict) and n["id"] == "h2/gpu3" for n in raw["document"]["nodes"])
    assert same_text(expand(raw), doc)


def test_a_host_whose_devices_are_not_together_stays_as_it_is(cluster):
    doc = copy.deepcopy(cluster)
    moved = next(i for i, n in enumerate(doc["nodes"]) if n["id"] == "h1/gpu0")
    doc["nodes"].append(doc["nodes"].pop(moved))   # h1 now has two runs of devices
    raw = compact_document(doc, min_nodes=0)
    assert "h1" not in [h for h, _ in raw["hosts"]]
    assert same_text(expand(raw), doc)


def test_small_designs_and_designs_without_repeats_are_sent_as_they_are(cluster):
    assert compact_document(cluster) is None                       # under COMPACT_MIN_NODES
    one = build_cluster(template="dgx-h100", hosts=1, fabric="rail-optimized")
    assert compact_document(one, min_nodes=0) is None              # nothing repeats
    assert compact_document({"nodes": "x", "links": []}, min_nodes=0) is None


def test_a_shape_keeps_where_each_element_has_its_id(cluster):
    """Elements alike but for the place of their id (or ends) among their keys: two shapes."""
    doc = copy.deepcopy(cluster)
    doc["nodes"] += [{"id": "extra0", "kind": "switch"}, {"kind": "switch", "id": "extra1"},
                     {"id": "extra2", "kind": "switch"}]
    raw = compact_document(doc, min_nodes=0)
    assert same_text(expand(raw), doc)
    assert json.dumps(expand(raw)["nodes"][-2]) == '{"kind": "switch", "id": "extra1"}'


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_browser_rebuilds_the_document_exactly(cluster, tmp_path):
    """static/js/editor/compact.js on the server's form gives back the document's own text."""
    doc = copy.deepcopy(cluster)
    doc["nodes"].append(doc["nodes"].pop(3))       # a host left as it is, among templated ones
    raw = compact_document(doc, min_nodes=0)
    src = tmp_path / "compact.json"
    src.write_text(json.dumps(raw))
    script = ("import { parseEditorDocument } from '%s';\n"
              "import fs from 'node:fs';\n"
              "process.stdout.write(JSON.stringify(parseEditorDocument(fs.readFileSync(process.argv[2], 'utf8'))));\n"
              % (ROOT / "static/js/editor/compact.js").as_uri())
    runner = tmp_path / "expand.mjs"
    runner.write_text(script)
    out = subprocess.run(["node", str(runner), str(src)], capture_output=True, text=True, check=True, timeout=60)
    # as (key, value) pairs: the same keys in the same order (JS writes 400.0 as 400)
    assert json.loads(out.stdout, object_pairs_hook=list) == json.loads(json.dumps(doc), object_pairs_hook=list)


@pytest.mark.django_db
def test_a_saved_large_design_is_kept_compact_for_the_editor(settings, tmp_path, user, monkeypatch,
                                                             django_capture_on_commit_callbacks):
    """The save's warm-up writes the compact form (from the saved dict, not read back); the
    editor's document URL serves it; the API's document is unchanged."""
    from designer import editor_compact, editor_document, services

    settings.VAR_DIR = tmp_path
    editor_document.cache_clear()
    monkeypatch.setattr(editor_compact, "COMPACT_MIN_NODES", 0)
    monkeypatch.setattr(editor_document, "compact_document",
                        lambda d: editor_compact.compact_document(d, min_nodes=0))
    with django_capture_on_commit_callbacks(execute=True):
        topology = services.topology_build(owner=user, name="pod-4", template="dgx-h100", hosts=4)
    revision = topology.current_revision
    stored = editor_document.store_dir() / f"{revision.pk}-{revision.checksum}.json.gz"
    raw = json.loads(gzip.decompress(stored.read_bytes()))
    assert raw["format"] == COMPACT_FORMAT
    assert expand(raw) == revision.document
    editor_document.cache_clear()
    assert editor_document.document_gzip(topology.pk, revision.pk) == stored.read_bytes()
    editor_document.cache_clear()
