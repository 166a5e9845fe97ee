"""Unknown fields of a topology document are refused, located, with a suggestion.

A misspelled field used to be stored silently (a link's ``"degrade": 0.5`` changed nothing). Each
level the document owns — top level, group, node, link — lists its fields; ``attrs`` (every
level), ``fabric`` and ``layout`` stay free-form. Everything the product itself produces
(templates, generated fabrics, imports) must still be accepted, and a document stored before the
rule has a migration path (:func:`migrate_unknown_keys`).

The small document::

    [g0:gpu]--pcie4x16--[sw:pcie_switch]--pcie4x16--[n0:nic]      (all in host h0, rack r0)
"""
import copy
import subprocess
import sys
from pathlib import Path

import pytest

from designer.engine.document import normalize, validate
from designer.engine.errors import InvalidTopology
from tests.engine.test_document import small

ROOT = Path(__file__).resolve().parents[2]


def migrate_unknown_keys(doc):
    from designer.engine.document.normalizer import migrate_unknown_keys as migrate

    return migrate(doc)


def problems_at(doc, path):
    return [p.message for p in validate(doc) if p.path == path]


@pytest.mark.parametrize("where, mutate, path, suggestion", [
    ("top level", lambda d: d.update(link=[]), "link", '"links"'),
    ("top level", lambda d: d.update(capacity_bases="raw"), "capacity_bases", '"capacity_basis"'),
    ("group", lambda d: d["groups"][1].update(parnet="r0"), "groups[1].parnet", '"parent"'),
    ("group", lambda d: d["groups"][0].update(templat="dgx-h100"), "groups[0].templat", '"template"'),
    ("node", lambda d: d["nodes"][2].update(capacity_gpbs=10), "nodes[2].capacity_gpbs", '"capacity_gbps"'),
    ("node", lambda d: d["nodes"][0].update(attr={"model": "H100"}), "nodes[0].attr", '"attrs"'),
    ("link", lambda d: d["links"][1].update(latency=300), "links[1].latency", '"latency_ns"'),
    ("link", lambda d: d["links"][0].update(Tech="nvlink4x18"), "links[0].Tech", '"tech"'),
    ("link", lambda d: d["links"][0].update(capacity_ab_gpbs=5), "links[0].capacity_ab_gpbs",
     '"capacity_ab_gbps"'),
])
def test_unknown_key_at_each_level_is_located_with_a_suggestion(where, mutate, path, suggestion):
    doc = small()
    mutate(doc)
    messages = problems_at(doc, path)
    assert len(messages) == 1, (where, validate(doc))
    key = path.rsplit(".", 1)[-1]
    assert f'unknown field "{key}"' in messages[0]
    assert f"did you mean {suggestion}?" in messages[0]
    assert '"attrs"' in messages[0]   # where the user's own data may go


def test_misspelled_degrade_on_a_link_is_refused_and_points_to_the_scenario():
    doc = small()
    doc["links"][1]["degrade"] = 0.5
    with pytest.raises(InvalidTopology) as err:
        normalize(doc)
    [problem] = err.value.problems
    assert problem.path == "links[1].degrade"
    assert 'unknown field "degrade" of a link' in problem.message
    assert '"failures"' in problem.message and '"mode": "down" | "degrade"' in problem.message


def test_an_unknown_key_without_a_close_field_has_no_guess():
    doc = small()
    doc["nodes"][0]["colour"] = "red"
    [message] = problems_at(doc, "nodes[0].colour")
    assert "did you mean" not in message and 'unknown field "colour" of a node' in message


def test_every_unknown_key_is_reported_and_the_input_is_not_changed():
    doc = small()
    doc["links"][0].update(degrade=0.5, speed=400)
    doc["nodes"][1]["rack"] = "r0"
    doc["extra"] = {"nested": [1, 2]}
    before = copy.deepcopy(doc)
    paths = [p.path for p in validate(doc)]
    assert paths == ["extra", "nodes[1].rack", "links[0].degrade", "links[0].speed"]
    with pytest.raises(InvalidTopology):
        normalize(doc)
    assert doc == before


def test_free_form_fields_stay_free_at_every_level():
    doc = small()
    doc["attrs"] = {"owner": "infra", "notes": {"any": ["thing", 1]}}
    doc["fabric"] = {"kind": "rail-optimized", "notes": []}
    doc["layout"] = {"positions": {"g0": [1, 2]}}
    doc["groups"][0]["attrs"] = {"row": "B", "anything": {"deep": True}}
    doc["nodes"][0]["attrs"] = {"model": "H100", "serial": "X1"}
    doc["links"][0]["attrs"] = {"cable": "DAC", "length_m": 2}
    doc["links"][1].update(bundle=2, status="down", capacity_ab_gbps=50, capacity_ba_gbps=40)
    assert validate(doc) == []
    out = normalize(doc)
    assert out["attrs"] == doc["attrs"] and out["links"][0]["attrs"] == {"cable": "DAC", "length_m": 2}


def _cluster(n_hosts=4):
    from designer.engine.model.fabrics import build_cluster

    return build_cluster("dgx-h100", n_hosts, fabric="rail-optimized")


def test_the_fast_column_path_still_finds_and_locates_an_unknown_key():
    """A generated cluster is accepted column-wise; an unknown scalar key on one link must still
    be found there (from the key shapes) and located at that link."""
    doc = _cluster()
    assert validate(doc) == []
    last = len(doc["links"]) - 1
    doc["links"][last]["degrade"] = 0.5
    doc["nodes"][7]["capacity_gpbs"] = 10.0
    assert [p.path for p in validate(doc)] == ["nodes[7].capacity_gpbs", f"links[{last}].degrade"]


def test_an_unknown_structured_key_is_found_by_the_item_walk():
    doc = _cluster(2)
    doc["links"][3]["degrade"] = {"factor": 0.5}
    assert [p.path for p in validate(doc)] == ["links[3].degrade"]


def test_everything_the_product_builds_is_still_accepted():
    from designer.engine.model.templates import TEMPLATES, host_document

    for name in TEMPLATES:
        assert validate(host_document(name)) == [], name
        normalized = normalize(host_document(name))
        assert validate(normalized) == [], name   # the stored form is read back too
    for fabric in ("rail-optimized", "leaf-spine", "fat-tree"):
        from designer.engine.model.fabrics import build_cluster

        doc = build_cluster("dgx-h100", 8, fabric=fabric, storage=1)
        assert validate(doc) == [] and validate(normalize(doc)) == [], fabric


def test_every_imported_sample_is_still_accepted():
    from designer.engine.io import import_text

    samples = sorted((ROOT / "tests/engine/data/import").iterdir())
    assert samples
    for sample in samples:
        result = import_text(sample.read_bytes())
        assert validate(result.document) == [], sample.name


def test_a_stored_document_with_unknown_fields_migrates_into_attrs():
    doc = small()
    doc["links"][1]["degrade"] = 0.5
    doc["nodes"][0]["colour"] = "red"
    doc["nodes"][0]["attrs"] = {"model": "H100"}
    doc["groups"][1]["site"] = "ams"
    doc["owner"] = "infra"
    before = copy.deepcopy(doc)
    migrated, moved = migrate_unknown_keys(doc)
    assert doc == before   # the input is left as it was
    assert moved == ["owner", "groups[1].site", "nodes[0].colour", "links[1].degrade"]
    assert validate(migrated) == []
    assert migrated["links"][1]["attrs"] == {"legacy_fields": {"degrade": 0.5}}
    assert migrated["nodes"][0]["attrs"] == {"model": "H100", "legacy_fields": {"colour": "red"}}
    assert migrated["attrs"] == {"legacy_fields": {"owner": "infra"}}
    out = normalize(migrated)
    assert out["links"][1]["attrs"]["legacy_fields"] == {"degrade": 0.5}


def test_migrating_a_clean_document_returns_it_unchanged():
    doc = small()
    migrated, moved = migrate_unknown_keys(doc)
    assert moved == [] and migrated == doc


def test_migration_leaves_what_it_cannot_place_for_the_validator():
    doc = small()
    doc["links"][0]["attrs"] = "not an object"
    doc["links"][0]["degrade"] = 0.5
    migrated, moved = migrate_unknown_keys(doc)
    assert moved == []
    assert {p.path for p in validate(migrated)} == {"links[0].attrs", "links[0].degrade"}


def test_cli_validate_prints_the_located_unknown_field(tmp_path):
    doc = small()
    doc["links"][1]["degrade"] = 0.5
    path = tmp_path / "t.json"
    path.write_text(__import__("json").dumps(doc))
    run = subprocess.run([sys.executable, "-m", "designer.engine", "validate", str(path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert 'links[1].degrade: unknown field "degrade" of a link' in run.stdout + run.stderr
