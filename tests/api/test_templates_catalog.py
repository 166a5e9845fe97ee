"""Templates (list, detail, one host as a document) and the catalog."""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


def test_templates(api):
    body = api.get(f"{API}/templates/").json()
    names = {t["name"] for t in body["results"]}
    assert {"dgx-h100", "dgx-a100", "aws-p5", "pcie-commodity"} <= names
    assert {"dgx-b200", "hgx-b300", "dgx-h200", "hgx-h200", "aws-p5e", "aws-p5en", "amd-mi300x",
            "amd-mi325x"} <= names
    assert body["count"] == len(names)
    detail = api.get(f"{API}/templates/dgx-h100/").json()
    assert detail["name"] == "dgx-h100" and "nvme" in detail["params"]
    assert_error(api.get(f"{API}/templates/no-such/"), 404, "not_found")


def test_template_host_document(api):
    """One DGX H100 as host h5: 8 GPUs, node ids under h5/."""
    body = api.get(f"{API}/templates/dgx-h100/host/?host_id=h5").json()
    assert (body["template"], body["host_id"]) == ("dgx-h100", "h5")
    document = body["document"]
    assert document["groups"][0]["id"] == "h5"
    gpus = [n for n in document["nodes"] if n["kind"] == "gpu"]
    assert len(gpus) == 8 and all(n["id"].startswith("h5/") for n in document["nodes"])
    error = assert_error(api.get(f"{API}/templates/dgx-h100/host/?host_id=a/b"), 400)
    assert paths_of(error) == {"host_id"}
    assert_error(api.get(f"{API}/templates/no-such/host/"), 404, "not_found")


def test_catalog(api):
    body = api.get(f"{API}/catalog/").json()
    assert "pcie5x16" in body["techs"] and "gpu" in body["node_kinds"]
    assert body["techs"]["xgmi-mi300"]["family"] == "xgmi" and "ConnectX-8" in body["nic_models"]
    assert body["gpus"]["b200"]["bf16_tflops"] == 2250.0 and body["gpus"]["b200"]["source"].startswith("https://")
