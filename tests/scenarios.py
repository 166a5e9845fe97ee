"""Scenarios shared by the figure tests and the result-page browser tests: a DGX-H100 cluster with
a storage node, a ring all-reduce on every GPU and a GPUDirect storage read into host h0."""
from __future__ import annotations


def dgx_h100_scenario(hosts: int = 2, *, failures=None, policy="affinity", mode="steady",
                      latency=False):
    """``(topology document, scenario dict)`` for ``hosts`` DGX H100s."""
    from designer.engine.model.fabrics import build_cluster

    topo = build_cluster("dgx-h100", hosts, storage=1)
    sc = {"format": "fabricscope.scenario/1", "topology": topo, "mode": mode,
          "workload": [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"},
                        "bytes": 1e9},
                       {"id": "load", "kind": "storage_read", "source": {"kind": "storage"},
                        "participants": {"group": "h0", "kind": "gpu"}, "bytes": 4e9, "via": "gpudirect"}],
          "routing": {"nic_policy": policy, "multipath": "hash", "seed": 1}}
    if failures:
        sc["failures"] = failures
    if latency:
        sc["latency"] = {"message_bytes": 65536, "initiators": ["cpu_proxy", "gpu_initiated"]}
    return topo, sc
