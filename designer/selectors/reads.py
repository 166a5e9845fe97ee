"""Reads of topologies and everything under them, always for the requesting user.

Objects a user may not see raise ``Http404`` (never 403: their existence is not disclosed). List
querysets defer large JSON.
"""
from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import CharField, Q, QuerySet, Value
from django.http import Http404
from django.utils import timezone

from designer.models import (
    AuditEvent, Scenario, ShareLink, SimulationJob, SimulationResult, Topology, TopologyRevision,
    TopologyShare)
from designer.selectors.access import (
    ROLE_ACTIONS, _link_of, _role_annotation, checked_topology, is_checked_for, topology_require,
    topology_role, visible_topologies)

__all__ = [
    "topology_list", "topology_get", "revision_list", "revision_get",
    "scenario_list", "scenario_get", "job_list", "job_get", "result_get",
    "topology_get_for", "share_list", "share_get", "share_link_list", "share_link_get",
    "share_link_resolve", "share_link_hash", "audit_list", "shared_with_me",
    "revision_document_parsed", "revision_document_text",
]


def topology_list(*, user) -> QuerySet[Topology]:
    """Topologies visible to ``user``, most recently changed first (no documents loaded).

    Each row carries ``my_role`` (``owner``, ``editor``, ``viewer`` or ``link``).
    """
    return (visible_topologies(user).select_related("owner")
            .annotate(my_role=_role_annotation(user)))


def shared_with_me(*, user, role: str | None = None, owner: str | None = None
                   ) -> QuerySet[Topology]:
    """Visible topologies ``user`` does not own, optionally by role and owner's username."""
    rows = topology_list(user=user).exclude(owner=user) if user.is_authenticated else (
        Topology.objects.none())
    if role:
        rows = rows.filter(my_role=role)
    if owner:
        rows = rows.filter(owner__username=owner)
    return rows


def topology_get(*, user, pk: int) -> Topology:
    """One visible topology (with ``my_role``), or Http404.

    The row is read by its key and the rule applied to it in memory (:func:`topology_role`: the
    owner without a query, grants by one): the SQL of :func:`topology_list` costs ~1.4 ms of CPU
    to build and compile for ~0.03 ms of running (docs/PERFORMANCE.md, "Many users"). The
    topology comes back marked as checked for ``user``: pass it on (``topology=``) to the
    selectors below instead of its pk, and nothing is fetched or checked twice.
    """
    return checked_topology(user, Topology.objects.select_related("owner").filter(pk=pk).first())


def topology_get_for(*, user, pk: int, action: str) -> Topology:
    """One visible topology on which ``user`` may do ``action``: 404 unseen, 403 not allowed."""
    return _topology_for(user, pk, None, action)


def _topology_for(user, topology_pk: int | None, topology: Topology | None,
                  action: str = "view") -> Topology:
    """The topology ``topology_pk`` names, or ``topology`` when :func:`topology_get` checked
    it for this requester earlier in the request (anything else is fetched and checked again),
    once ``user`` may do ``action`` on it."""
    if topology is None or not is_checked_for(user, topology):
        topology = topology_get(user=user, pk=topology_pk if topology is None else topology.pk)
    topology_require(user, topology, action)
    return topology


def revision_list(*, user, topology_pk: int | None = None, topology: Topology | None = None
                  ) -> QuerySet[TopologyRevision]:
    """Revisions of a visible topology (by pk, or one already checked: see
    :func:`_topology_for`), newest first, without their documents."""
    topology = _topology_for(user, topology_pk, topology)
    return (TopologyRevision.objects.filter(topology=topology).defer("stored_document", "patch")
            .select_related("author").order_by("-number"))


def revision_get(*, user, topology_pk: int, number: int, with_document: bool = True) -> TopologyRevision:
    """One revision by number (with its document unless ``with_document=False``: a reader that
    serves the stored text itself), or Http404."""
    revisions = TopologyRevision.objects.select_related("topology", "author")
    if not with_document:
        revisions = revisions.defer("stored_document", "patch")
    revision = revisions.filter(topology_id=topology_pk, number=number).first()
    if revision is None or not _revision_visible(user, revision):
        raise Http404("no such revision")
    return revision


def _revision_visible(user, revision: TopologyRevision) -> bool:
    """Revisions of visible topologies; a result link also sees its job's revision (figures)."""
    link = _link_of(user)
    if link is not None and link.job_id is not None:
        return link.job.revision_id == revision.pk
    return _visible(user, revision.topology)


def _visible(user, topology: Topology) -> bool:
    """Whether ``user`` may see ``topology`` (marked as checked when so)."""
    try:
        checked_topology(user, topology)
    except Http404:
        return False
    return True


def revision_document_parsed(**lookup) -> dict | None:
    """The document of the revision matching ``lookup`` (``pk=`` or ``topology_id=, number=``),
    parsed by orjson from its stored text (~3x faster than the ``json.loads`` a JSONField read
    does: 0.4 s, not 1.2 s, at 2,048 hosts) — for a revision stored as a patch, its base's with
    the patch applied — or None. No visibility check: the caller holds a revision the user may
    see (or is a service acting for one)."""
    row = _stored_row(lookup)
    if row is None:
        return None
    text, base_id, patch = row
    if text is None:
        from designer.bridge.deltas import compose_document

        return compose_document(revision_document_parsed(pk=base_id), patch)
    return _parsed(text)


def revision_document_text(**lookup) -> bytes | None:
    """The JSON text (UTF-8) of the revision matching ``lookup``, or None: the stored text as the
    database holds it, never decoded and encoded again; a revision stored as a patch is composed:
    from its base's item store when this machine has one (its canonical JSON, the checksum's
    text), else its base parsed, the patch applied and written by orjson."""
    row = _stored_row(lookup)
    if row is None:
        return None
    text, base_id, patch = row
    if text is not None:
        return text.encode()
    composed = _composed_text(base_id, patch)
    if composed is not None:
        return composed
    from designer.bridge.common import DocumentJSONEncoder
    from designer.bridge.deltas import compose_document

    document = compose_document(revision_document_parsed(pk=base_id), patch)
    return DocumentJSONEncoder().encode(document).encode()


def _composed_text(base_id: int, patch: dict) -> bytes | None:
    """A patched revision's canonical text from its base's item store (``designer.item_store``:
    0.3 s instead of parsing 259 MB at 100,000 GPUs), or None when this machine has none."""
    from designer import item_store
    from designer.bridge.deltas import composed_text

    checksum = TopologyRevision.objects.values_list("checksum", flat=True).filter(pk=base_id).first()
    store = item_store.store_open(base_id, checksum) if checksum else None
    if store is None:
        return None
    try:
        return composed_text(store, patch)
    finally:
        store.close()


def _stored_row(lookup: dict) -> tuple | None:
    """``(stored text or None, base id, patch)`` of the revision matching ``lookup``."""
    from django.db.models import TextField
    from django.db.models.functions import Cast

    return (TopologyRevision.objects.filter(**lookup)
            .annotate(text=Cast("stored_document", output_field=TextField()))
            .values_list("text", "base_id", "patch").first())


def _parsed(text: str) -> dict:
    import json

    import orjson

    try:   # callers pause the collector around big documents (bridge.common.collector_paused)
        return orjson.loads(text)
    except orjson.JSONDecodeError:  # what orjson refuses (an integer beyond 64 bits): json reads it
        return json.loads(text)


def _job_scope(prefix: str, user) -> Q:
    """Jobs on visible topologies; a result link sees its one job."""
    scope = Q(**{f"{prefix}topology__in": visible_topologies(user)})
    link = _link_of(user)
    if link is not None and link.job_id is not None:
        scope |= Q(**{f"{prefix}pk": link.job_id})
    return scope


def scenario_list(*, user, topology_pk: int | None = None, topology: Topology | None = None
                  ) -> QuerySet[Scenario]:
    """Scenarios on visible topologies (optionally of one topology, by pk or checked)."""
    if topology is not None:  # every scenario of a topology one may see is visible
        rows = Scenario.objects.filter(topology=_topology_for(user, None, topology))
    else:
        rows = Scenario.objects.filter(topology__in=visible_topologies(user))
    if topology_pk is not None:
        rows = rows.filter(topology_id=topology_pk)
    return rows.select_related("topology", "revision").defer("revision__stored_document", "revision__patch")


def scenario_get(*, user, pk: int) -> Scenario:
    return _get(scenario_list(user=user), pk)


def job_list(*, user, topology_pk: int | None = None, scenario_pk: int | None = None,
             state: str | None = None, topology: Topology | None = None
             ) -> QuerySet[SimulationJob]:
    """Jobs on visible topologies (optionally of one topology, by pk or checked), newest
    first; never loads inputs or results."""
    if topology is not None:  # every job on a topology one may see is visible
        rows = SimulationJob.objects.filter(topology=_topology_for(user, None, topology))
    else:
        rows = SimulationJob.objects.filter(_job_scope("", user))
    if topology_pk is not None:
        rows = rows.filter(topology_id=topology_pk)
    if scenario_pk is not None:
        rows = rows.filter(scenario_id=scenario_pk)
    if state is not None:
        rows = rows.filter(state=state)
    return (rows.select_related("topology", "scenario", "revision")
            .only(*_JOB_LIST_FIELDS).order_by("-created_at", "-pk"))


_JOB_LIST_FIELDS = (
    "pk", "kind", "state", "progress", "message", "created_at", "started_at", "finished_at",
    "attempts", "cancel_requested", "topology__id", "topology__name", "scenario__id",
    "scenario__name", "revision__id", "revision__number", "submitted_by_id", "chunks_total",
    "topology_id", "scenario_id", "revision_id",
)


def job_get(*, user, pk: int) -> SimulationJob:
    """One visible job with everything but its result, or Http404. Read by its key, then
    checked in memory as :func:`topology_get` is (its topology comes back marked as checked);
    a result link's visitor sees its one job."""
    job = (SimulationJob.objects.select_related("topology", "scenario", "revision")
           .defer("revision__stored_document", "revision__patch").filter(pk=pk).first())
    link = _link_of(user)
    if job is not None and link is not None and link.job_id is not None:
        visible = link.job_id == job.pk
    else:
        visible = job is not None and _visible(user, job.topology)
    if not visible:
        raise Http404(f"no such {SimulationJob._meta.verbose_name}")
    return job


def result_get(*, user, job_pk: int) -> SimulationResult:
    """The result of a visible job, or Http404 (also while the job has none yet)."""
    return _get(SimulationResult.objects.filter(_job_scope("job__", user)), job_pk)


def _get(rows: QuerySet, pk):
    obj = rows.filter(pk=pk).first()
    if obj is None:
        raise Http404(f"no such {rows.model._meta.verbose_name}")
    return obj


# --- Sharing: grants, links, audit ---------------------------------------------------------------

def share_list(*, user, topology_pk: int | None = None, topology: Topology | None = None
               ) -> QuerySet[TopologyShare]:
    """Grants on a topology (by pk or checked) whose grant list ``user`` may read (owner,
    editors)."""
    topology = _topology_for(user, topology_pk, topology, "audit")
    return (TopologyShare.objects.filter(topology=topology)
            .select_related("user", "group", "created_by").order_by("pk"))


def share_get(*, user, topology_pk: int, pk: int, action: str = "audit") -> TopologyShare:
    topology = topology_get_for(user=user, pk=topology_pk, action=action)
    return _get(TopologyShare.objects.filter(topology=topology).select_related("user", "group"),
                pk)


def share_link_list(*, user, topology_pk: int | None = None, topology: Topology | None = None
                    ) -> QuerySet[ShareLink]:
    """Share links of a topology (by pk or checked; owner only: links are bearer secrets)."""
    topology = _topology_for(user, topology_pk, topology, "manage")
    return ShareLink.objects.filter(topology=topology).select_related("job", "created_by")


def share_link_get(*, user, topology_pk: int, pk: int) -> ShareLink:
    return _get(share_link_list(user=user, topology_pk=topology_pk), pk)


def share_link_hash(token: str) -> str:
    """sha256 hex of a share token: the only form in which tokens are stored."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def share_link_resolve(token: str | None) -> ShareLink:
    """The active link a token opens; Http404 for an unknown, revoked or expired token (the
    three are not told apart: a guesser learns nothing)."""
    if not token or len(token) > 128:
        raise Http404("no such share link")
    link = (ShareLink.objects.select_related("topology", "job")
            .filter(token_hash=share_link_hash(token), revoked_at__isnull=True)
            .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now())).first())
    if link is None:
        raise Http404("this share link does not exist, has expired or was revoked")
    return link


def audit_list(*, user, topology_pk: int | None = None, topology: Topology | None = None
               ) -> QuerySet[AuditEvent]:
    """The audit trail of a topology (by pk or checked), newest first (owner and editors;
    viewers get 403)."""
    topology = _topology_for(user, topology_pk, topology, "audit")
    return AuditEvent.objects.filter(topology=topology).select_related("actor")


# --- API tokens (added by the REST API task) -------------------------------------------------------

def api_tokens_list(*, user):
    """The user's API tokens (``designer.models.ApiToken``), newest first; never their keys."""
    from designer.models import ApiToken

    return ApiToken.objects.filter(user=user)


__all__ += ["api_tokens_list"]


# --- Users and teams named in a request (sharing, transfer) ----------------------------------------
# Not filtered by the requester: any active account or team may be named as a grantee or a new
# owner; the requester's rights on the topology are checked separately (topology_get_for).

def user_by_username(*, username: str):
    """The active user with this username, or None (inactive accounts cannot be named).

    Parameters
    ----------
    username : str
        Exact username (case-sensitive, as Django stores it).

    Returns
    -------
    User or None
    """
    return get_user_model().objects.filter(username=username, is_active=True).first()


def group_by_name(*, name: str) -> Group | None:
    """The team (Django group) with this exact name, or None."""
    return Group.objects.filter(name=name).first()


__all__ += ["user_by_username", "group_by_name"]


# --- Lists and summaries the pages show -----------------------------------------------------------

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
    username; both go through :func:`shared_with_me`, so nothing unshared can appear.
    """
    if tab == "mine":
        rows = _owned(user)
    else:
        rows = shared_with_me(user=user, role=role or None, owner=owner or None)
    if q:
        rows = rows.filter(Q(name__icontains=q) | Q(description__icontains=q))
    return rows.order_by(*TOPOLOGY_SORTS.get(sort, TOPOLOGY_SORTS["updated"])[1])


def _owned(user) -> QuerySet[Topology]:
    """The topologies ``user`` owns, as :func:`topology_list` rows (``my_role`` "owner").

    Owning is the first clause of the visibility rule, so the grant subqueries (whose building
    and compiling was most of this list's query cost) cannot add a row here and are left out.
    """
    if _link_of(user) is not None or not getattr(user, "is_authenticated", False):
        return Topology.objects.none()
    return (Topology.objects.filter(owner=user).select_related("owner")
            .annotate(my_role=Value("owner", output_field=CharField())))


def shared_owners(*, user) -> list[str]:
    """Usernames of the owners of topologies shared with ``user`` (the owner filter's choices)."""
    return sorted(set(shared_with_me(user=user).values_list("owner__username", flat=True)))


def topology_access(*, user, topology: Topology) -> dict:
    """What the topology page shows and offers to ``user``: role, allowed actions, and for the
    owner and editors the grants and the audit trail (viewers see neither: the list of who has
    access and the link history are the owner's business)."""
    role = topology_role(user, topology)
    allowed = ROLE_ACTIONS.get(role, frozenset())
    context = {"role": role, "can": {a: a in allowed for a in
                                     ("view", "fork", "run", "edit", "audit", "manage")},
               "shares": [], "audit": []}
    if "audit" in allowed:
        context["shares"] = list(share_list(user=user, topology=topology))
        context["audit"] = list(audit_list(user=user, topology=topology)[:15])
    return context


def recent_jobs(*, user, topology_pk: int | None = None, topology: Topology | None = None,
                limit: int = 10) -> list[SimulationJob]:
    """The topology's (by pk or checked) latest jobs ``user`` may see, newest first."""
    if topology is not None:
        return list(job_list(user=user, topology=topology)[:limit])
    return list(job_list(user=user, topology_pk=topology_pk)[:limit])


__all__ += ["TOPOLOGY_SORTS", "topology_search", "shared_owners", "topology_access", "recent_jobs"]
