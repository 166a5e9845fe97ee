"""Pod groups of a three-tier fabric: ``pod{p}`` (kind ``pod``) holds its spines and leaves,
the racks (each in the pod holding most of its fabric ports) and the storage servers on those
leaves; the super-spines form one group ``super-spines`` (kind ``other``).

Why: a 32k-GPU design is read pod by pod (the editor opens it as pods → racks and leaves →
hosts), and a pod is a failure domain a scenario can take down. A leaf belongs to the pod of
its spines (``attrs.pod``).

A rack can legitimately straddle two pods: the rail-optimized generator splits the hosts into
equal contiguous leaf blocks (host ``h`` on block ``h * leaves_per_rail // hosts``) whatever the
rack size, so when a block's host count is not a multiple of ``hosts_per_rack`` (600 DGX-H100 on
64-port leaves: 31.6 hosts a block) the hosts of the rack at a pod boundary land on the leaves of
two pods. Such a rack joins the pod that holds most of its fabric ports; a tie goes to the lower
pod, the one its first host reaches (blocks fill in host order). So every rack of a three-tier
build is in exactly one pod; its ports to the other pod's leaves are links across pods.
"""
from __future__ import annotations

__all__ = ["group_pods"]


def group_pods(doc: dict) -> None:
    """Add the pod groups (and ``super-spines``) to a generated three-tier cluster ``doc``, in
    place: see the module docstring."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    pod_of = {n["id"]: n["attrs"]["pod"] for n in doc["nodes"]
              if n["kind"] == "switch" and (n.get("attrs") or {}).get("pod") is not None}
    edge = {n["id"] for n in doc["nodes"] if n["kind"] in ("switch", "storage")}
    # Only links to a switch or storage server matter (a third of a DGX design's links).
    links = [lk for lk in doc["links"] if lk["a"] in edge or lk["b"] in edge]
    _add_leaf_pods(doc["nodes"], links, pod_of)
    groups = {g["id"]: g for g in doc["groups"]}
    member = _pods_of_groups(links, nodes, groups, pod_of)
    pods = sorted(set(pod_of.values()) | set(member.values()))
    doc["groups"][:0] = [{"id": f"pod{p}", "kind": "pod"} for p in pods]
    _group_super_spines(doc, groups, len(pods))
    for gid, p in member.items():
        groups[gid]["parent"] = f"pod{p}"
    for nid, p in pod_of.items():
        if nodes[nid].get("group") is None:
            nodes[nid]["group"] = f"pod{p}"
    _group_storage(links, nodes, pod_of)


def _ends(link: dict):
    """A link's two ends, each way round: ``(a, b)`` then ``(b, a)``."""
    return (link["a"], link["b"]), (link["b"], link["a"])


def _add_leaf_pods(nodes: list, links: list, pod_of: dict) -> None:
    """Give each switch without a pod that links to switches of exactly one pod (a leaf under
    its spines) that pod."""
    reach: dict[str, set] = {}  # node -> pods of the switches it links to
    for link in links:
        for x, y in _ends(link):
            if y in pod_of:
                reach.setdefault(x, set()).add(pod_of[y])
    for n in nodes:  # leaves: the pod of their spines
        if n["kind"] == "switch" and n["id"] not in pod_of and len(reach.get(n["id"], ())) == 1:
            pod_of[n["id"]] = next(iter(reach[n["id"]]))


def _group_super_spines(doc: dict, groups: dict, at: int) -> None:
    """The top tier (core switches in no group) as one unit beside the pods: group
    ``super-spines``, inserted at position ``at`` of the document's groups."""
    cores = [n for n in doc["nodes"] if n["kind"] == "switch" and (n.get("attrs") or {}).get("role") == "core"
             and n.get("group") is None]
    if cores and "super-spines" not in groups:
        doc["groups"].insert(at, {"id": "super-spines", "kind": "other"})
        for n in cores:
            n["group"] = "super-spines"


def _group_storage(links: list, nodes: dict, pod_of: dict) -> None:
    """Storage servers hanging off one pod's storage leaves join that pod."""
    storage: dict[str, set] = {}
    for link in links:
        for x, y in _ends(link):
            if nodes[x]["kind"] == "storage":
                storage.setdefault(x, set()).add(pod_of.get(y))
    for nid, p in storage.items():
        if len(p) == 1 and None not in p and nodes[nid].get("group") is None:
            nodes[nid]["group"] = f"pod{p.pop()}"


def _pods_of_groups(links: list, nodes: dict, groups: dict, pod_of: dict) -> dict:
    """Top-level groups (racks) with fabric ports on pod leaves: {group: the pod holding most of
    those ports, the lower pod on a tie} (see the module docstring for why a rack may reach two)."""
    top = {}
    for g in groups.values():  # the top-level ancestor of every group
        root, seen = g, set()
        while root.get("parent") in groups and root["id"] not in seen:
            seen.add(root["id"])
            root = groups[root["parent"]]
        top[g["id"]] = root["id"]
    ports: dict[str, dict] = {}  # top-level group -> {pod: its fabric ports on that pod's leaves}
    for link in links:
        for x, y in _ends(link):
            group = nodes[x].get("group")
            if y in pod_of and group in top:
                count = ports.setdefault(top[group], {})
                count[pod_of[y]] = count.get(pod_of[y], 0) + 1
    return {gid: min(count, key=lambda p: (-count[p], p)) for gid, count in ports.items()
            if groups[gid].get("parent") is None}
