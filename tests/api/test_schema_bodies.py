"""What the server accepts, and the schema saying exactly that.

- JSON bodies are UTF-8 (RFC 8259 §8.1): a Content-Type with another charset is a 415 that names
  the charset, and nothing is saved.
- A document with an unknown field is a located 400 (``document.links[0].degrade``).
- Bodies the server takes in one of two forms (a revision: ``document`` or ``patch``; a grant:
  ``username`` or ``group``; an import: ``file`` or ``text``) say so with ``oneOf``, and a JSON
  import body has no binary field.
- A build job's spec takes no key but its own (``additionalProperties: false``).
- A NUL in a free-text query parameter is a documented 400.
"""
from __future__ import annotations

import json

import pytest
import yaml
from django.core.management import call_command

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def schema(tmp_path_factory, django_db_blocker) -> dict:
    """The validated schema (warnings are tests/api/test_schema.py's to refuse)."""
    out = tmp_path_factory.mktemp("schema") / "schema.yaml"
    with django_db_blocker.unblock():
        call_command("spectacular", "--validate", "--file", str(out))
    return yaml.safe_load(out.read_text())


def _revision_body(topology, **change):
    document = json.loads(json.dumps(topology.revisions.order_by("-number").first().document))
    document["links"][0].update(change)
    return {"document": document, "base_revision": topology.revision_number, "message": "m"}


# ---------------------------------------------------------------------------- charset
@pytest.mark.parametrize("content_type", ["application/json; charset=bogus",
                                          "application/json; charset=latin-1",
                                          "application/json; charset=utf-16"])
def test_a_json_body_in_another_charset_is_refused_and_changes_nothing(api, small_topology,
                                                                       content_type):
    url = f"{API}/topologies/{small_topology.pk}/"
    response = api.generic("PATCH", url, json.dumps({"name": "renamed"}), content_type=content_type)
    error = assert_error(response, 415, "unsupported_media_type")
    charset = content_type.split("=", 1)[1]
    assert f'charset "{charset}"' in error["message"] and "UTF-8" in error["message"]
    small_topology.refresh_from_db()
    assert small_topology.name == "pod-2"


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "application/json; charset=UTF-8",
                                          'application/json; charset="utf-8"'])
def test_a_utf8_json_body_is_accepted(api, small_topology, content_type):
    url = f"{API}/topologies/{small_topology.pk}/"
    response = api.generic("PATCH", url, json.dumps({"name": "é-renamed"}).encode(),
                           content_type=content_type)
    assert response.status_code == 200, response.content
    assert response.json()["name"] == "é-renamed"


# ---------------------------------------------------------------------------- unknown fields
def test_a_revision_with_a_misspelled_link_field_is_a_located_400(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    before = small_topology.revision_number
    response = api.post(url, _revision_body(small_topology, degrade=0.5), format="json")
    error = assert_error(response, 400)
    assert "document.links[0].degrade" in paths_of(error)
    small_topology.refresh_from_db()
    assert small_topology.revision_number == before


# ---------------------------------------------------------------------------- schema
def _request_schema(schema, path, method, media="application/json"):
    body = schema["paths"][path][method]["requestBody"]["content"][media]["schema"]
    if "$ref" in body:
        body = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
    return body


def _component(schema, ref: dict) -> dict:
    return schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]]


def _one_of_required(body) -> list[list[str]]:
    return sorted(sorted(alternative["required"]) for alternative in body["oneOf"])


def test_revision_body_is_document_or_patch(schema):
    body = _request_schema(schema, f"{API}/topologies/{{topology_pk}}/revisions/", "post")
    assert _one_of_required(body) == [["document"], ["patch"]]
    assert "base_revision" in body["required"]


def test_a_build_jobs_spec_is_closed_and_its_answer_is_the_job_to_poll(schema):
    """An unknown build option is a 400 at it (tests/api/test_build_job.py): the schema says the
    spec takes no other key; the 202 is the job, with the URL to poll and its result's."""
    operation = schema["paths"][f"{API}/topologies/build-job/"]["post"]
    body = _request_schema(schema, f"{API}/topologies/build-job/", "post")
    spec = _component(schema, body["properties"]["build"])
    assert spec["additionalProperties"] is False and {"template", "hosts"} <= set(spec["required"])
    job = _component(schema, operation["responses"]["202"]["content"]["application/json"]["schema"])
    assert {"url", "result_url", "progress", "state"} <= set(job["properties"])


def test_share_grant_is_username_or_group(schema):
    body = _request_schema(schema, f"{API}/topologies/{{topology_pk}}/shares/", "post")
    assert _one_of_required(body) == [["group"], ["username"]]
    assert body["required"] == ["role"]


@pytest.mark.parametrize("path", [f"{API}/topologies/import/", f"{API}/topologies/import-preview/"])
def test_import_json_body_has_text_and_no_binary_field(schema, path):
    body = _request_schema(schema, path, "post")
    assert "file" not in body["properties"]
    assert "text" in body["required"]
    assert "binary" not in json.dumps(body)
    multipart = _request_schema(schema, path, "post", "multipart/form-data")
    assert multipart["properties"]["file"]["format"] == "binary"
    assert _one_of_required(multipart) == [["file"], ["text"]]


def test_free_text_query_parameters_document_that_nul_is_refused(schema):
    parameters = {p["name"]: p for p in schema["paths"][f"{API}/topologies/"]["get"]["parameters"]}
    for name in ("search", "name", "owner"):
        assert parameters[name]["schema"]["pattern"] == "^[^\\x00]*$", name


@pytest.mark.parametrize("query", ["search=%00", "name=a%00b"])
def test_nul_in_a_query_parameter_is_the_documented_400(api, small_topology, query):
    error = assert_error(api.get(f"{API}/topologies/?{query}"), 400)
    assert "null characters" in json.dumps(error).lower()


def test_a_schema_valid_revision_body_in_each_form_is_accepted(api, small_topology):
    """Both oneOf alternatives really are what the server takes."""
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    response = api.post(url, {"patch": {"name": "patched"}, "base_revision": small_topology.revision_number},
                        format="json")
    assert response.status_code == 201, response.content
    small_topology.refresh_from_db()
    body = _revision_body(small_topology)
    assert api.post(url, body, format="json").status_code == 201
    both = dict(body, patch={"name": "x"}, base_revision=body["base_revision"] + 1)
    assert_error(api.post(url, both, format="json"), 400)


@pytest.mark.parametrize("host_id", [0, 1.5, True])
def test_a_non_string_host_id_of_an_import_is_refused(api, host_id):
    """The schema says ``host_id`` is a string; a JSON number used to become "0" (schemathesis,
    negative_data_rejection)."""
    text = "\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-15\t0\n"
    response = api.post(f"{API}/topologies/import-preview/",
                        {"text": text, "format": "nvidia-smi", "host_id": host_id}, format="json")
    assert paths_of(assert_error(response, 400)) == {"host_id"}
