"""What a cluster document adds up to: hosts, GPUs, switches per role, injection and bisection.

One rule for every caller: the summary of a whole document (:func:`fabric_summary`), the BOM
that quotes it (``model.bom``) and a saved edit that adds to or takes from it link by link
(``model.bom_edit``, through :func:`link_side`).
"""
from __future__ import annotations

from designer.engine.catalog import TECHS

__all__ = ["fabric_summary", "fabric_summary_parts", "top_role", "bisection_gbps", "link_side", "link_gbps"]


def link_gbps(link: dict) -> float:
    if link.get("capacity_gbps") is not None:
        return float(link["capacity_gbps"])
    tech = TECHS[link["tech"]]
    return tech.raw_gbps if link.get("capacity_basis") == "raw" else tech.effective_gbps


def fabric_summary(doc: dict) -> dict:
    """Counts and bandwidths of a cluster document.

    Returns
    -------
    dict
        ``hosts``, ``gpus``, ``nodes``, ``links``, ``switches`` (count per role),
        ``injection_gbps`` (capacity of the host⇄fabric links, storage NICs' left out), ``bisection_gbps`` (half the
        capacity into the top switch tier from below, compute side only; half the injection
        when there is a single switch), ``fabric`` (the generator's parameters, if any).
    """
    return fabric_summary_parts(doc)[0]


def fabric_summary_parts(doc: dict) -> tuple[dict, float, str | None]:
    """:func:`fabric_summary`, the capacity into the top tier it halves (Gb/s) and that tier's
    role (None with one tier): what an edit adds to or takes from (``model.bom_edit``)."""
    kinds = {n["id"]: n["kind"] for n in doc["nodes"]}
    roles = {n["id"]: (n.get("attrs") or {}).get("role") for n in doc["nodes"] if n["kind"] == "switch"}
    switches: dict[str, int] = {}
    for role in roles.values():
        switches[role] = switches.get(role, 0) + 1
    compute = {roles[n["id"]] for n in doc["nodes"] if n["id"] in roles and not (n.get("attrs") or {}).get("storage")}
    top = top_role(compute)
    injection, top_in = _injection_and_top_gbps(doc, kinds, roles, top)
    groups = doc.get("groups") or []
    summary = {"hosts": sum(1 for g in groups if g.get("kind") == "host"),
               "gpus": sum(1 for k in kinds.values() if k == "gpu"),
               "nodes": len(doc["nodes"]), "links": len(doc["links"]), "switches": switches,
               "injection_gbps": injection, "bisection_gbps": bisection_gbps(injection, top_in, top),
               "fabric": doc.get("fabric")}
    return summary, top_in, top


def top_role(compute_roles) -> str | None:
    """The compute fabric's top tier: ``core`` if a compute switch has that role, else ``spine``."""
    return next((r for r in ("core", "spine") if r in compute_roles), None)


def bisection_gbps(injection: float, top_in: float, top: str | None) -> float:
    """Half the capacity into the top tier from below (at most the injection); half the
    injection with a single tier."""
    return min(injection, top_in) / 2 if top else injection / 2


def _injection_and_top_gbps(doc: dict, kinds: dict, roles: dict, top: str | None) -> tuple[float, float]:
    """Capacity of the host⇄fabric links (a NIC to a switch), and of the compute-side links into
    the ``top`` switch tier from below (storage leaves left out)."""
    storage_leaf = {n["id"] for n in doc["nodes"] if (n.get("attrs") or {}).get("storage")}
    injection = top_in = 0.0
    for link in doc["links"]:
        a, b = link["a"], link["b"]
        side = link_side(kinds[a], kinds[b], roles.get(a), roles.get(b), top, a in storage_leaf or b in storage_leaf)
        if side == "injection":
            injection += link_gbps(link)
        elif side == "top":
            top_in += link_gbps(link)
    return injection, top_in


def link_side(kind_a: str, kind_b: str, role_a, role_b, top: str | None, storage: bool) -> str | None:
    """What a link counts for in :func:`fabric_summary`: ``injection`` (a NIC to a switch),
    ``top`` (a compute switch to one of the ``top`` tier from below) or None; ``storage``: an end
    is storage-marked (a storage NIC's port or a storage leaf: not compute)."""
    if (kind_a == "nic") != (kind_b == "nic") and "switch" in (kind_a, kind_b):
        return None if storage else "injection"
    if kind_a == kind_b == "switch" and top and (role_a == top) != (role_b == top) and not storage:
        return "top"
    return None
