"""A host template without storage NICs, for the shared storage design (storage_fabric.py)."""
from __future__ import annotations

import copy

from designer.engine.model.templates import resolved_spec

__all__ = ["without_storage_nics"]


def without_storage_nics(template: str = "dgx-h100") -> dict:
    """``template``'s spec with its storage-role NICs (and their PCIe links) removed."""
    spec = copy.deepcopy(resolved_spec(template, {}))
    drop = {n["local"] for n in spec["nodes"] if n["kind"] == "nic" and n["attrs"].get("role") == "storage"}
    spec["nodes"] = [n for n in spec["nodes"] if n["local"] not in drop]
    spec["links"] = [x for x in spec["links"] if x["a"] not in drop and x["b"] not in drop]
    spec["name"] = f"{template}-no-storage-nic"
    return spec
