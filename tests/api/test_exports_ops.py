"""``/topologies/<id>/export/?format=astra-sim|htsim|slurm-tree|slurm-block|dot-air|netbox``.

The design is the ``small_topology`` fixture: 2 DGX-H100 hosts, rail-optimized, one storage
server (8 rail leaves, 2 spines).
"""
from __future__ import annotations

import csv
import io

import pytest
import yaml

from tests.api.conftest import API, assert_error


@pytest.fixture
def url(small_topology):
    return f"{API}/topologies/{small_topology.pk}/export/"


def test_single_file_formats(api, url):
    response = api.get(url + "?format=slurm-tree")
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"].startswith("text/plain")
    assert 'filename="pod-2-r1.conf"' in response["Content-Disposition"]
    text = response.content.decode()
    assert "SwitchName=leaf0 Nodes=h[0-1]" in text.splitlines()
    response = api.get(url + "?format=dot-air")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/vnd.graphviz")
    assert response.content.decode().startswith('graph "pod-2"')
    assert '"leaf0":"swp1" -- "h0":"eth1"' in response.content.decode()


def test_bundle_formats_are_json(api, url):
    response = api.get(url + "?format=netbox")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    bundle = response.json()
    assert bundle["format"] == "fabricscope.export-bundle/1" and bundle["export"] == "netbox"
    devices = list(csv.DictReader(io.StringIO(bundle["files"]["devices.csv"])))
    assert {d["name"] for d in devices} >= {"h0", "h1", "leaf0", "spine1"}
    network = yaml.safe_load(api.get(url + "?format=astra-sim").json()["files"]["network.yml"])
    assert network["npus_count"] == [8, 2]


def test_errors_are_located_and_json(api, url):
    error = assert_error(api.get(url + "?format=slurm-block"), 400)
    assert error["details"][0]["path"].endswith("groups"), error
    assert_error(api.get(url + "?format=htsim&revision=9"), 404, "not_found")
    error = assert_error(api.get(url + "?format=astra"), 400, "invalid")
    assert "slurm-tree" in str(error)


def test_huge_design_is_refused_with_the_command(api, url, monkeypatch):
    monkeypatch.setattr("api.views.export.OPS_MAX_ELEMENTS", 10)
    error = assert_error(api.get(url + "?format=netbox"), 413, "export_too_large")
    assert error["details"]["limit_elements"] == 10
    assert error["details"]["command"].endswith("--format netbox -o <file>")
