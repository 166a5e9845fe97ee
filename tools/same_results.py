"""Check that two commits give the same ``simulate`` results (timings aside) on ten cases.

Used to show that a speed-up changes nothing (docs/PERFORMANCE.md): rings of 256 to 16,384
DGX-H100 GPUs, ``auto`` and tree all-reduces, a NIC down and a PCIe link degraded, all-to-alls
with storage, a p2p and an unroutable flow::

    python tools/same_results.py cases /tmp/cases            # topologies + scenarios
    for c in /tmp/cases/*.scenario.json; do                   # once per commit (checkout A, B)
        python -m designer.engine simulate "$c" -o /tmp/out_A/$(basename "$c" .scenario.json).json --quiet
    done
    python tools/same_results.py compare /tmp/out_A /tmp/out_B

``compare`` exits 1 when any result differs (keys, order aside; every number to the bit).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

RING = {"id": "ar", "kind": "allreduce", "algorithm": "ring", "participants": {"kind": "gpu"}, "bytes": 1e9}
AUTO = {"id": "ar", "kind": "allreduce", "participants": {"kind": "gpu"}, "bytes": 1e8}
TREE = {**RING, "algorithm": "tree"}
A2A = {"id": "a2a", "kind": "alltoall", "participants": {"kind": "gpu"}, "bytes": 1e8}
P2P = {"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h5/gpu3", "bytes": 1e9, "demand_gbps": 100}
TOPOLOGIES = {"t32": (32, {"leaves_per_rail": 2}), "t256": (256, {"leaves_per_rail": 8}),
              "t2048": (2048, {"leaves_per_rail": 64}), "t64s": (64, {"storage": 2})}
FAILED_NIC_AND_PCIE = [{"target": "h0/nic0", "mode": "down"},
                       {"target": {"kind": "link", "tech": "pcie5x16", "group": "h3"}, "mode": "degrade",
                        "factor": 0.5}]
CASES = {
    "ring32": ("t32", [RING], None), "auto32": ("t32", [AUTO], None), "tree256": ("t256", [TREE], None),
    "ring256": ("t256", [RING], None), "auto256": ("t256", [AUTO], None),
    "ring256_fail": ("t256", [RING], FAILED_NIC_AND_PCIE),
    "a2a32_fail": ("t32", [A2A], [{"target": "h1/nic2", "mode": "down"}]),
    "a2a64s": ("t64s", [A2A, P2P], None), "ring16k": ("t2048", [RING], None), "auto16k": ("t2048", [AUTO], None),
}


def write_cases(folder: Path) -> None:
    """The four topologies (``build_cluster``, DGX-H100, rail-optimized) and ten scenarios."""
    from designer.engine.model.fabrics import build_cluster

    folder.mkdir(parents=True, exist_ok=True)
    for name, (hosts, options) in TOPOLOGIES.items():
        doc = build_cluster("dgx-h100", hosts, fabric="rail-optimized", **options)
        (folder / f"{name}.json").write_text(json.dumps(doc))
    for name, (topology, workload, failures) in CASES.items():
        scenario = {"topology": f"{topology}.json", "workload": workload}
        if failures:
            scenario["failures"] = failures
        (folder / f"{name}.scenario.json").write_text(json.dumps(scenario))


def compare(a: Path, b: Path) -> int:
    """Print same/DIFF per result of ``a`` (against ``b``); 1 when any differs or is missing."""
    bad = 0
    for path in sorted(a.glob("*.json")):
        other = b / path.name
        x = json.loads(path.read_text())
        y = json.loads(other.read_text()) if other.exists() else None
        for doc in (x, y):
            if isinstance(doc, dict):
                doc.pop("timings_s", None)
        same = y is not None and json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True)
        bad += not same
        print(("same " if same else "DIFF ") + path.name)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "cases":
        write_cases(Path(sys.argv[2]))
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
