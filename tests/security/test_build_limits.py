"""Resource exhaustion through one build request.

A build spec is ``hosts`` copies of a template host. Template parameters are counts (``gpus``,
``nics``, ``nvme``) that were only checked for being non-negative, and the document size limit
(``document.LIMITS["max_nodes"]``) was applied only *after* the whole cluster had been built in
memory. So one authenticated request (``POST /api/v1/topologies/build-preview/`` with
``{"template": "pcie-commodity", "hosts": 2048, "params": {"gpus": 1000000}}``) made the web
process build billions of nodes. The counts are now bounded, and the cluster's size is checked
from the one-host spec before any host is instantiated.
"""
from __future__ import annotations

import pytest

from designer.engine.document import validator as document

from designer.engine.model import fabrics

from designer.engine.model import templates
from designer.engine.errors import EngineError

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/topologies/build-preview/"


def test_template_count_params_are_bounded():
    with pytest.raises(EngineError) as exc:
        templates.template_spec("pcie-commodity", gpus=templates.MAX_TEMPLATE_COUNT + 1)
    assert {p.path for p in exc.value.problems} == {"params.gpus"}
    # the largest allowed count still builds
    spec = templates.template_spec("pcie-commodity", gpus=16, nvme=templates.MAX_TEMPLATE_COUNT)
    assert sum(n["kind"] == "nvme" for n in spec["nodes"]) == templates.MAX_TEMPLATE_COUNT


def test_api_refuses_huge_template_params(api_as):
    client = api_as("stranger")
    response = client.post(PREVIEW, {"template": "pcie-commodity", "hosts": 1,
                                     "params": {"gpus": 5000}}, format="json")
    assert response.status_code == 400, response.content[:300]
    assert "params.gpus" in response.content.decode()


def test_cluster_size_checked_before_building(api_as, monkeypatch):
    """2 hosts of a 1-GPU server is ~10 nodes: with max_nodes=5 the spec is refused up front,
    without instantiating a single host."""
    monkeypatch.setitem(document.LIMITS, "max_nodes", 5)
    built = []
    monkeypatch.setattr(fabrics, "_add_hosts", lambda *a, **k: built.append(a))
    response = api_as("stranger").post(PREVIEW, {"template": "pcie-commodity", "hosts": 2},
                                       format="json")
    assert response.status_code == 400, response.content[:300]
    assert "max_nodes" in response.content.decode()
    assert built == []
