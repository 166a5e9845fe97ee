"""Reads the HTML pages need beyond ``designer.selectors``: list search, revision diffs, host
matrices, the editor's config and the scenario builder's pick lists.

Every function takes the requesting user (or objects already fetched through
``designer.selectors`` with that user), so the visibility rule stays in one place. The engine is
imported inside functions, as in ``designer.bridge``: list pages never pay for numpy start-up.
"""
from __future__ import annotations

from django.db.models import Q, QuerySet
from django.urls import reverse

from designer import selectors
from designer.choices import TERMINAL_STATES
from designer.models import SimulationJob, Topology, TopologyRevision

__all__ = [
    "TOPOLOGY_SORTS", "topology_search", "document_diff", "revision_diff", "host_list",
    "host_matrix", "editor_config", "scenario_targets", "job_status", "template_choices",
    "recent_jobs", "shared_owners", "topology_access", "link_editor_config",
]

# ?sort= value -> (label, ordering). Size = GPUs, then nodes (what users compare clusters by).
TOPOLOGY_SORTS = {
    "updated": ("Last updated", ["-updated_at", "-pk"]),
    "created": ("Newest", ["-created_at", "-pk"]),
    "name": ("Name", ["name", "pk"]),
    "size": ("Size", ["-gpu_count", "-node_count", "pk"]),
}


def topology_search(*, user, q: str = "", sort: str = "updated", tab: str = "mine",
                    role: str = "", owner: str = "") -> QuerySet[Topology]:
    """Topologies of a list tab (``mine`` or ``shared``), filtered by ``q`` and sorted.

    The shared tab also filters by the user's ``role`` (viewer/editor) and the ``owner``'s
    username; both go through ``selectors.shared_with_me``, so nothing unshared can appear.
    """
    if tab == "mine":
        rows = selectors.topology_list(user=user).filter(owner=user)
    else:
        rows = selectors.shared_with_me(user=user, role=role or None, owner=owner or None)
    if q:
        rows = rows.filter(Q(name__icontains=q) | Q(description__icontains=q))
    return rows.order_by(*TOPOLOGY_SORTS.get(sort, TOPOLOGY_SORTS["updated"])[1])


# --- Revision diff -------------------------------------------------------------------------------

_COMPARED = {"nodes": ("kind", "group", "attrs", "capacity_gbps"),
             "links": ("a", "b", "tech", "capacity_gbps", "latency_ns", "bundle"),
             "groups": ("kind", "parent", "template")}


def document_diff(old: dict, new: dict) -> dict:
    """What changed between two topology documents, by element id.

    Returns
    -------
    dict
        For each of ``nodes``, ``links``, ``groups``: ``added`` and ``removed`` (sorted ids) and
        ``changed`` (``[{"id", "fields": {name: [old, new]}}]``), plus ``total`` (count of all
        entries) and ``name`` ([old, new] when renamed, else None).

    Example: ``{"nodes": [{"id": "a"}]}`` → ``{"nodes": [{"id": "a"}, {"id": "b"}]}`` gives
    ``nodes.added == ["b"]``.
    """
    out: dict = {"name": None, "total": 0}
    if (old or {}).get("name") != (new or {}).get("name"):
        out["name"] = [(old or {}).get("name"), (new or {}).get("name")]
    for section, fields in _COMPARED.items():
        before = {e.get("id"): e for e in (old or {}).get(section) or []}
        after = {e.get("id"): e for e in (new or {}).get(section) or []}
        changed = []
        for eid in sorted(before.keys() & after.keys(), key=str):
            delta = {f: [before[eid].get(f), after[eid].get(f)] for f in fields
                     if before[eid].get(f) != after[eid].get(f)}
            if delta:
                changed.append({"id": eid, "fields": delta})
        out[section] = {"added": sorted(after.keys() - before.keys(), key=str),
                        "removed": sorted(before.keys() - after.keys(), key=str),
                        "changed": changed}
        out["total"] += sum(len(v) for v in out[section].values())
    return out


def revision_diff(*, user, topology_pk: int, a: int, b: int) -> dict:
    """Diff of revisions ``a`` → ``b`` of a visible topology (Http404 for an unknown number)."""
    old = selectors.revision_get(user=user, topology_pk=topology_pk, number=a)
    new = selectors.revision_get(user=user, topology_pk=topology_pk, number=b)
    return {"old": old, "new": new, "diff": document_diff(old.document, new.document)}


# --- Hosts ---------------------------------------------------------------------------------------

def host_list(revision: TopologyRevision | None) -> list[dict]:
    """Host groups of a revision: ``[{"id", "template", "parent"}]`` in document order."""
    if revision is None:
        return []
    return [{"id": g["id"], "template": g.get("template", ""), "parent": g.get("parent", "")}
            for g in revision.document.get("groups") or [] if g.get("kind") == "host"]


def host_matrix(revision: TopologyRevision, host: str) -> dict:
    """``nvidia-smi topo -m`` of one host of a revision (engine ``pathclass.topo_matrix``).

    Raises ``Http404`` when the revision has no such host.
    """
    from django.http import Http404

    from designer.engine.errors import EngineError
    from designer.engine.pathclass import topo_matrix
    from designer.engine.topology import Topology as EngineTopology

    try:
        matrix = topo_matrix(EngineTopology.from_document(revision.document), host)
    except EngineError as exc:
        raise Http404(str(exc)) from exc
    rows = [{"label": label, "id": matrix["ids"][label], "numa": numa,
             "cells": [{"code": code, "css": _class_css(code)} for code in cells]}
            for label, numa, cells in zip(matrix["rows"], matrix["numa"], matrix["matrix"])]
    legend = [(code, text) for code, text in matrix["legend"].items() if not code.startswith("NIC")]
    return {"host": host, "labels": matrix["labels"], "rows": rows, "ids": matrix["ids"],
            "legend": [{"code": c, "text": t, "css": _class_css(c)} for c, t in legend],
            "nics": [(lab, matrix["ids"][lab]) for lab in matrix["labels"] if lab.startswith("NIC")]}


def _class_css(code: str) -> str:
    """CSS class of a path class: NV12/NV18 share ``pc-nv``; '-' (no path) is ``pc-none``."""
    if code.startswith("NV"):
        return "pc-nv"
    return "pc-" + ("none" if code in ("-", "") else code.lower())


# --- Editor and scenario builder -----------------------------------------------------------------

def template_choices() -> list[tuple[str, str]]:
    """(name, one-line description) of every host template the engine offers."""
    from designer.engine.templates import TEMPLATES

    return [(name, TEMPLATES[name]["description"]) for name in sorted(TEMPLATES)]


def editor_config(*, topology: Topology, user, csrf_token: str) -> dict:
    """The JSON config ``templates/designer/editor.html`` reads (``editor-config``)."""
    from designer.engine.catalog import catalog_as_dict

    revision = topology.current_revision
    document = (revision.document if revision is not None else
                {"format": "fabricscope.topology/1", "name": topology.name,
                 "groups": [], "nodes": [], "links": []})
    api = "/api/v1/"
    return {
        "topology_id": topology.pk,
        "revision": revision.number if revision is not None else None,
        "document": document,
        "catalog": catalog_as_dict(),
        "templates": [{"name": n, "label": f"{n} — {d}"} for n, d in template_choices()],
        "readonly": not selectors.topology_can(user, topology, "edit"),
        "urls": {"save": f"{api}topologies/{topology.pk}/revisions/",
                 "build": f"{api}topologies/build-preview/",
                 "validate": f"{api}validate/",
                 "template_host": f"{api}templates/{{name}}/host/",
                 "import_host": f"{api}topologies/import-preview/",
                 "topology": reverse("topology_detail", args=[topology.pk])},
        "csrf_token": csrf_token,
    }


def scenario_targets(revision: TopologyRevision) -> dict:
    """Pick lists for the scenario builder: failure targets and selector groups."""
    doc = revision.document
    nodes = [(n["id"], f'{n["id"]} · {n.get("kind", "")}') for n in doc.get("nodes") or []]
    links = [(lk["id"], f'{lk["id"]} · {lk.get("tech", "")}') for lk in doc.get("links") or []]
    groups = [(g["id"], f'{g["id"]} · {g.get("kind", "")}') for g in doc.get("groups") or []]
    return {"nodes": nodes, "links": links, "groups": groups}


def job_status(job: SimulationJob) -> dict:
    """The small JSON the job page polls every second."""
    done = job.state in TERMINAL_STATES
    result_url = (reverse("job_result", args=[job.pk])
                  if job.state == "succeeded" else None)
    return {"id": job.pk, "state": job.state, "state_label": job.get_state_display(),
            "progress": job.progress, "message": job.message, "error": job.error if done else "",
            "terminal": done, "cancel_requested": job.cancel_requested, "result_url": result_url,
            "attempts": job.attempts,
            "started_at": job.started_at.isoformat() if job.started_at else None,
            "finished_at": job.finished_at.isoformat() if job.finished_at else None}


def recent_jobs(*, user, topology_pk: int, limit: int = 10) -> list[SimulationJob]:
    return list(selectors.job_list(user=user, topology_pk=topology_pk)[:limit])



# --- Sharing (issue 9) -----------------------------------------------------------------------------

def shared_owners(*, user) -> list[str]:
    """Usernames of the owners of topologies shared with ``user`` (the owner filter's choices)."""
    return sorted(set(selectors.shared_with_me(user=user)
                      .values_list("owner__username", flat=True)))


def topology_access(*, user, topology: Topology) -> dict:
    """What the topology page shows and offers to ``user``: role, allowed actions, and for the
    owner and editors the grants and the audit trail (viewers see neither: the list of who has
    access and the link history are the owner's business)."""
    role = selectors.topology_role(user, topology)
    allowed = selectors.ROLE_ACTIONS.get(role, frozenset())
    context = {"role": role, "can": {a: a in allowed for a in
                                     ("view", "fork", "run", "edit", "audit", "manage")},
               "shares": [], "audit": []}
    if "audit" in allowed:
        context["shares"] = list(selectors.share_list(user=user, topology_pk=topology.pk))
        context["audit"] = list(selectors.audit_list(user=user, topology_pk=topology.pk)[:15])
    return context


def link_editor_config(*, topology: Topology, link_url: str) -> dict:
    """Editor config for a share-link visitor: read-only, no save/build/validate endpoints."""
    config = editor_config(topology=topology, user=None, csrf_token="")
    config.update({"readonly": True, "csrf_token": "",
                   "urls": {"topology": link_url}})
    return config
