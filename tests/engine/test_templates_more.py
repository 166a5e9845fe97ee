"""The templates of servers_more.py: GH200, H800/H20 (NVLink links and generation as parameters),
Google Cloud A3 High/Mega/Ultra and A4, Azure ND H100/H200 v5 and ND GB200 v6.

Hosts drawn (one GPU of each shown; every GPU alike)::

    hgx-h800:  [gpu0]==nvlink4 x2==[nvswitch0..3]   (8 links: 2 per chip)     [gpu0]--pcie--[pcie0]--[nic0 400G]
    gh200:     [mem0]==[cpu0 Grace]==c2c 450 GB/s==[gpu0]==nvlink4 x18==[gpu1]==c2c==[cpu1]==[mem1]
                           |pcie5x16                                                   |pcie5x16
                         [nic0]                                                      [nic1]
    gcp-a3-high: [gpu0][gpu1]--[pcie0]--[nic0 200G]  (4 switches: one NIC per GPU pair) + gVNIC on cpu0
"""
from __future__ import annotations

from collections import Counter

import pytest

from designer.engine.catalog import TECHS
from designer.engine.document import normalize
from designer.engine.errors import InvalidTopology
from designer.engine.model.servers_more import nvswitch_spread
from designer.engine.model.templates import TEMPLATES, host_document


def doc(name: str, **params) -> dict:
    return normalize(host_document(name, **params))


def kinds(d: dict) -> Counter:
    return Counter(n["kind"] for n in d["nodes"])


def compute_nics(d: dict) -> list[dict]:
    return [n for n in d["nodes"] if n["kind"] == "nic" and n["attrs"].get("role") == "compute"]


def gpu_links(d: dict, gpu: str, peer_kinds=("nvswitch", "gpu")) -> list[dict]:
    kind = {n["id"]: n["kind"] for n in d["nodes"]}
    return [l for l in d["links"] if gpu in (l["a"], l["b"])
            and kind[l["b"] if l["a"] == gpu else l["a"]] in peer_kinds]


# name -> (GPUs, compute NICs, compute NIC Gb/s, NVLink links per GPU, NVSwitches)
EXPECTED = {
    "hgx-h800": (8, 8, 400, 8, 4), "hgx-h20": (8, 8, 400, 18, 4),
    "gcp-a3-high": (8, 4, 200, 18, 4), "gcp-a3-mega": (8, 8, 200, 18, 4),
    "gcp-a3-ultra": (8, 8, 400, 18, 4), "gcp-a4": (8, 8, 400, 18, 2),
    "azure-nd-h100-v5": (8, 8, 400, 18, 4), "azure-nd-h200-v5": (8, 8, 400, 18, 4),
    "gh200": (2, 2, 400, 18, 0),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_per_template(name):
    gpus, nics, gbps, nvlinks, nvswitches = EXPECTED[name]
    d = doc(name)
    assert name in TEMPLATES
    assert kinds(d)["gpu"] == gpus and kinds(d).get("nvswitch", 0) == nvswitches
    compute = compute_nics(d)
    assert len(compute) == nics and {n["attrs"]["port_gbps"] for n in compute} == {gbps}
    links = sum(TECHS[l["tech"]].width for l in gpu_links(d, "h0/gpu0"))
    assert links == nvlinks


def test_cloud_host_nics_are_not_rails():
    """GCP's gVNICs carry host traffic, not GPU traffic: they are storage-role NICs, not wired."""
    for name, host_nics in (("gcp-a3-high", 1), ("gcp-a3-mega", 1), ("gcp-a3-ultra", 2), ("gcp-a4", 2)):
        d = doc(name)
        others = [n for n in d["nodes"] if n["kind"] == "nic" and n["attrs"]["role"] != "compute"]
        assert len(others) == host_nics and all(n["attrs"]["port_gbps"] == 200 for n in others)


def test_a3_high_pairs_share_a_nic_switch():
    d = doc("gcp-a3-high")
    under = Counter(l["b"] for l in d["links"] if l["b"].startswith("h0/pcie") and l["a"].startswith("h0/gpu"))
    assert set(under.values()) == {2} and len(under) == 4


def test_nvlink_count_and_generation_set_gpu_to_gpu_capacity():
    """gpu0's NVLink capacity = links × the generation's per-link rate: 8 × NVLink 4 (H800),
    18 × NVLink 4 (H100/H20), 8 × NVLink 5."""
    def capacity(**params):
        return sum(l["capacity_gbps"] for l in gpu_links(doc("hgx-h800", **params), "h0/gpu0"))

    per4, per5 = TECHS["nvlink4x1"].effective_gbps, TECHS["nvlink5x1"].effective_gbps
    assert capacity() == pytest.approx(8 * per4)
    assert capacity(nvlinks=18) == pytest.approx(18 * per4)
    assert capacity(nvlink_gen=5) == pytest.approx(8 * per5)
    assert capacity(nvlinks=18) > capacity()


def test_nvlink_spread_follows_hgx_wiring():
    assert nvswitch_spread(18) == [5, 4, 4, 5] and nvswitch_spread(8) == [2, 2, 2, 2]
    assert nvswitch_spread(10) == [3, 2, 2, 3] and sum(nvswitch_spread(13)) == 13


@pytest.mark.parametrize("params, path", [({"nvlinks": 0}, "params.nvlinks"), ({"nvlinks": 19}, "params.nvlinks"),
                                          ({"nvlink_gen": 2}, "params.nvlink_gen")])
def test_bad_nvlink_parameters_are_located(params, path):
    with pytest.raises(InvalidTopology) as err:
        host_document("hgx-h20", **params)
    assert [p.path for p in err.value.problems] == [path]


def test_gh200_c2c_link_and_superchip_count():
    d = doc("gh200")
    c2c = [l for l in d["links"] if l.get("tech") == "nvlink-c2c"]
    assert {(l["a"], l["b"]) for l in c2c} == {("h0/gpu0", "h0/cpu0"), ("h0/gpu1", "h0/cpu1")}
    assert all(l["capacity_gbps"] == pytest.approx(450 * 8) for l in c2c)   # 900 GB/s bidirectional
    quad = doc("gh200", superchips=4)
    assert kinds(quad)["gpu"] == 4 and kinds(quad)["cpu"] == 4
    # 18 links split over 3 peers: 6 per pair, every pair joined
    pairs = [l for l in quad["links"] if l["a"].startswith("h0/gpu") and l["b"].startswith("h0/gpu")]
    assert len(pairs) == 6 and {l["tech"] for l in pairs} == {"nvlink4x6"}
    assert not gpu_links(doc("gh200", superchips=1), "h0/gpu0")
    with pytest.raises(InvalidTopology) as err:
        host_document("gh200", superchips=5)
    assert err.value.problems[0].path == "params.superchips"


def test_nd_gb200_v6_is_an_nvl72_rack_with_four_400g_per_tray():
    d = doc("azure-nd-gb200-v6")
    assert kinds(d)["gpu"] == 72
    compute = compute_nics(d)
    assert len(compute) == 72 and {n["attrs"]["port_gbps"] for n in compute} == {400}
    assert Counter(n["group"] for n in compute) == Counter({f"h0/tray{t}": 4 for t in range(18)})
