"""NVLS's per-host check (``Group.nvls_gap``) from per-topology facts equals the walk of every
host's NVSwitch plane (2,048 walks were ~0.1 s of a 16,384-GPU ring's validation).

Hosts are DGX-H100 / DGX-A100 (8 GPUs on 4 / 6 NVSwitches) and GB200 NVL72 domains, broken
one way each::

    hX/gpu0..7 ==NVLink== hX/nvswitch0..3      (h1/gpu3 unlinked, h2 without NVSwitch, gen 2)
"""
import copy

import pytest

from designer.engine.traffic.collectives import common
from designer.engine.traffic.collectives.common import group_of
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology


def _unlinked_gpu(doc):
    doc["links"] = [l for l in doc["links"] if not ({l["a"], l["b"]} & {"h1/gpu3"} and
                                                    "nvswitch" in l["a"] + l["b"])]


def _no_nvswitch(doc):
    doc["nodes"] = [n for n in doc["nodes"] if not n["id"].startswith("h2/nvswitch")]
    doc["links"] = [l for l in doc["links"] if "h2/nvswitch" not in l["a"] + l["b"]]


def _older_switch(doc):
    next(n for n in doc["nodes"] if n["id"] == "h1/nvswitch2").setdefault("attrs", {})["generation"] = 2


@pytest.mark.parametrize("template, hosts, breakage, expected", [
    ("dgx-h100", 3, None, None),
    ("dgx-a100", 2, None, "h0's NVSwitches are gen2"),
    ("gb200-nvl72", 2, None, None),
    ("dgx-h100", 3, _unlinked_gpu, "h1/gpu3 has no NVLink to it"),
    ("dgx-h100", 3, _no_nvswitch, "h2 has none"),
    ("dgx-h100", 3, _older_switch, "h1's NVSwitches are gen2"),
])
def test_the_gap_from_facts_is_the_gap_from_walking_every_plane(template, hosts, breakage, expected):
    doc = copy.deepcopy(build_cluster(template, hosts, fabric="rail-optimized"))
    if breakage:
        breakage(doc)
    topo = Topology.from_document(doc)
    gpus = [i for i, kind in enumerate(topo.node_kind) if kind == "gpu"]
    group = group_of(topo, {"kind": "allreduce", "participants": gpus, "bytes": 1e9})
    walked = next((gap for host, block in zip(group.hosts, group.blocks)
                   if (gap := common._nvls_gap_walk(topo, host, block))), None)
    assert group.nvls_gap(topo) == walked
    assert (walked is None) if expected is None else expected in walked


@pytest.mark.parametrize("template", ["dgx-h100", "dgx-a100", "gb200-nvl72"])
def test_the_generation_table_is_the_catalogs_per_switch_answer(template):
    """One pass over the NVLink links gives every NVSwitch the generation
    ``catalog.nvswitch_generation`` reads from its own links and attrs (one switch says its own)."""
    from designer.engine.catalog import nvswitch_generation

    doc = copy.deepcopy(build_cluster(template, 2, fabric="rail-optimized"))
    switch = next(n for n in doc["nodes"] if n["kind"] == "nvswitch")
    switch.setdefault("attrs", {})["generation"] = 7
    topo = Topology.from_document(doc)
    table = common._switch_generations(topo)
    assert table == {i: nvswitch_generation(topo, i) for i, kind in enumerate(topo.node_kind) if kind == "nvswitch"}
    assert table[topo.node_index[switch["id"]]] == 7
