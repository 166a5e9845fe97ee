"""Topology services: create, build from a template, rename, delete (with jobs and results)."""
import pytest
from django.core.exceptions import ValidationError

from designer import services
from designer.exceptions import EngineValidationError
from designer.models import (
    Scenario, SimulationJob, SimulationResult, Topology, TopologyRevision)

pytestmark = pytest.mark.django_db


def test_build_caches_size_figures(small_topology):
    """2 x DGX-H100: 16 GPUs; the cached figures match the stored document."""
    document = small_topology.current_revision.document
    assert small_topology.host_count == 2 and small_topology.gpu_count == 16
    assert small_topology.node_count == len(document["nodes"])
    assert small_topology.link_count == len(document["links"])
    assert document["name"] == "pod-2"
    assert small_topology.current_revision.message.startswith("generated: 2 x dgx-h100")


def test_build_rejects_bad_specs(user):
    with pytest.raises(ValidationError):
        services.topology_build(owner=user, name="x", template="dgx-h100", hosts=0)
    with pytest.raises(EngineValidationError):
        services.topology_build(owner=user, name="x", template="no-such-server", hosts=2)
    with pytest.raises(EngineValidationError):
        services.topology_build(owner=user, name="x", template="dgx-h100", hosts=2,
                                options={"warp_drive": True})
    assert not Topology.objects.exists()


def test_create_empty_then_first_revision_and_unique_names(user, small_topology):
    empty = services.topology_create(owner=user, name="scratch")
    assert empty.revision_number == 0 and empty.current_revision is None
    revision = services.revision_save(topology=empty, user=user,
                                      document=small_topology.current_revision.document,
                                      base_revision=None, message="paste")
    assert revision.number == 1 and empty.revision_number == 1
    with pytest.raises(ValidationError):
        services.topology_create(owner=user, name="scratch")


def test_rename_and_delete_with_jobs(scenario, user, published):
    topology = scenario.topology
    services.topology_update(topology=topology, name="renamed", description="d")
    assert Topology.objects.get(pk=topology.pk).name == "renamed"
    job = services.job_submit_simulate(scenario=scenario, user=user)
    SimulationResult.objects.create(job=job, data={"format": "fabricscope.result/1"})
    services.topology_delete(topology=topology)
    for model in (Topology, TopologyRevision, Scenario, SimulationJob, SimulationResult):
        assert not model.objects.exists(), model
