"""Who may see and do what: the visibility rule, roles and the checks pages and the API ask.

The visibility rule lives in :func:`visible_topologies` (SQL, for lists) and :func:`topology_role`
(one topology in hand, for single-object reads and every permission check); they say the same
thing (``tests/sharing/test_checked_once.py`` checks that they agree for every kind of requester).
"""
from __future__ import annotations

import functools

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import Case, CharField, Q, QuerySet, Value, When
from django.db.models.expressions import RawSQL
from django.http import Http404

from designer.models import ShareLink, SimulationJob, Topology, TopologyShare

__all__ = ["ShareLinkVisitor", "ROLE_ACTIONS", "visible_topologies", "topology_role",
           "topology_can", "topology_require", "job_cancel_action", "object_require",
           "checked_topology", "is_checked_for"]

# What each role may do on a topology and everything under it. "link" is a share-link visitor.
#   view   read pages, API GETs, figures, exports
#   fork   copy into one's own space (needs an account)
#   run    submit simulate/sweep/compare jobs on existing scenarios; cancel one's own jobs
#   edit   save revisions, create/edit/delete scenarios, rename, cancel anyone's job
#   audit  read the full audit trail and the list of grants
#   manage grant/change/revoke access, create/revoke links, transfer ownership, delete
ROLE_ACTIONS: dict[str, frozenset[str]] = {
    "owner": frozenset({"view", "fork", "run", "edit", "audit", "manage"}),
    "editor": frozenset({"view", "fork", "run", "edit", "audit"}),
    "viewer": frozenset({"view", "fork", "run"}),
    "link": frozenset({"view"}),
}


class ShareLinkVisitor(AnonymousUser):
    """The requester of a page or API call made with a share-link token (no account)."""

    def __init__(self, link: ShareLink):
        super().__init__()
        self.link = link

    def __str__(self) -> str:
        return f"share link {self.link.pk}"


def _link_of(user) -> ShareLink | None:
    return user.link if isinstance(user, ShareLinkVisitor) else None


def _grants_of(user) -> QuerySet[TopologyShare]:
    """Grants held by ``user`` directly or through one of their groups."""
    return TopologyShare.objects.filter(Q(user=user) | Q(group__in=user.groups.all()))


def visible_topologies(user) -> QuerySet[Topology]:
    """The one place that says which topologies ``user`` may read.

    Owner, or a user grant, or a grant to one of the user's groups; a topology link's visitor
    sees that topology. A subquery (not a join) keeps one row per topology, so counts are exact.
    """
    link = _link_of(user)
    if link is not None:
        if link.job_id is not None:
            return Topology.objects.none()
        return Topology.objects.filter(pk=link.topology_id)
    if user is None or not user.is_authenticated:
        return Topology.objects.none()
    return Topology.objects.filter(Q(owner=user) | Q(pk__in=_granted_ids(user)))


def _granted_ids(user, role: str | None = None) -> RawSQL:
    """SQL of the ids of topologies ``user`` holds a grant on (of ``role`` only, if given),
    directly or through a group: :func:`_grants_of`'s rows, as parameterized SQL text.

    Written out rather than built from querysets because this filter is in every list: the ORM
    spent ~0.5 ms of CPU building and compiling the nested querysets each time, for the same
    text (docs/PERFORMANCE.md, "Many users"). ``tests/sharing/test_checked_once.py`` checks it
    against :func:`topology_role`, which keeps the ORM form.
    """
    sql, role_sql = _grant_sql()
    if role is None:
        return RawSQL(sql, (user.pk, user.pk))
    return RawSQL(role_sql, (user.pk, user.pk, role))


@functools.cache
def _grant_sql() -> tuple[str, str]:
    """(grants of a user, the same of one role): table and column names from the models."""
    quote = connection.ops.quote_name
    share = {f.name: quote(f.column) for f in TopologyShare._meta.concrete_fields}
    members = get_user_model().groups.through._meta  # the user-to-group table
    member = {f.related_model: quote(f.column) for f in members.concrete_fields
              if f.related_model is not None}
    held = (f"({share['user']} = %s OR {share['group']} IN (SELECT {member[Group]} FROM "
            f"{quote(members.db_table)} WHERE {member[get_user_model()]} = %s))")
    sql = f"SELECT {share['topology']} FROM {quote(TopologyShare._meta.db_table)} WHERE {held}"
    return sql, f"{sql} AND {share['role']} = %s"


def _role_annotation(user):
    """SQL for the requesting user's role on each row (owner, editor, viewer)."""
    link = _link_of(user)
    if link is not None or not getattr(user, "is_authenticated", False):
        return Value("link" if link is not None else None, output_field=CharField())
    # The strongest role first: owner, then any editor grant, then any grant (viewer).
    return Case(When(owner_id=user.pk, then=Value("owner")),
                When(pk__in=_granted_ids(user, "editor"), then=Value("editor")),
                When(pk__in=_granted_ids(user), then=Value("viewer")),
                default=Value(None), output_field=CharField())


def topology_role(user, topology: Topology) -> str | None:
    """``owner``, ``editor``, ``viewer``, ``link`` (share-link visitor) or None (no access).

    A topology that :func:`checked_topology` marked for this same requester and owner answers
    from that mark (no query: a page asks for the role several times); any other is checked
    here, the owner in memory and grants by one query.
    """
    mark = getattr(topology, _MARK, None)
    if mark is not None and mark[:2] == (_requester(user), topology.owner_id):
        return mark[2]
    link = _link_of(user)
    if link is not None:
        return "link" if link.job_id is None and link.topology_id == topology.pk else None
    if user is None or not user.is_authenticated:
        return None
    if topology.owner_id == user.pk:
        return "owner"
    roles = set(_grants_of(user).filter(topology=topology).values_list("role", flat=True))
    return "editor" if "editor" in roles else ("viewer" if roles else None)


#: Attribute holding ``(requester, owner id, role)`` on a topology checked in this request.
_MARK = "_fabricscope_role_checked"


def _requester(user) -> tuple | None:
    """Who asks, as a mark compares it: a link visitor by link, an account by its pk."""
    link = _link_of(user)
    if link is not None:
        return ("link", link.pk)
    if user is None or not user.is_authenticated:
        return None
    return ("user", user.pk)


def checked_topology(user, topology: Topology | None) -> Topology:
    """``topology`` once ``user`` may see it (``Http404`` otherwise, also for None), marked
    with the role so later checks in the same request need no query.

    The mark names the requester and the owner id it was computed for: a topology handed to
    another user, or whose owner changed in memory (a transfer), is checked again. It lives on
    this Python object only, which a request builds and drops (never cached across requests),
    so a grant revoked meanwhile counts from the next request on, as a SQL check would.
    """
    role = topology_role(user, topology) if topology is not None else None
    if role is None:
        raise Http404("no such topology")
    setattr(topology, _MARK, (_requester(user), topology.owner_id, role))
    topology.my_role = role  # as topology_list annotates it
    return topology


def is_checked_for(user, topology: Topology) -> bool:
    """Whether :func:`checked_topology` marked ``topology`` for this requester and owner."""
    mark = getattr(topology, _MARK, None)
    return mark is not None and mark[:2] == (_requester(user), topology.owner_id)


def topology_can(user, topology: Topology, action: str) -> bool:
    """Whether ``user`` may do ``action`` (see :data:`ROLE_ACTIONS`) on ``topology``."""
    return action in ROLE_ACTIONS.get(topology_role(user, topology), frozenset())


def topology_require(user, topology: Topology, action: str) -> str:
    """The user's role if it allows ``action``; ``Http404`` without any access (the topology's
    existence is not disclosed), ``PermissionDenied`` (403) when visible but not allowed."""
    role = topology_role(user, topology)
    if role is None:
        raise Http404("no such topology")
    if action not in ROLE_ACTIONS[role]:
        raise PermissionDenied(_DENIED.get(action, "your role on this topology does not allow "
                                                   "this"))
    return role


_DENIED = {
    "edit": "you may view this topology but not change it (ask its owner for the editor role)",
    "run": "share links are read-only: sign in to run simulations",
    "fork": "sign in to fork this topology into your own space",
    "audit": "only the owner and editors may read the audit trail",
    "manage": "only the owner may change sharing, transfer or delete this topology",
}


def job_cancel_action(user, job: SimulationJob) -> str:
    """The action cancelling ``job`` needs: ``run`` for one's own job, ``edit`` for anyone's."""
    return "run" if job.submitted_by_id is not None and job.submitted_by_id == user.pk else "edit"


def object_require(user, obj, action: str) -> str:
    """:func:`topology_require` for an object under a topology (revision, scenario, job); a
    result link's visitor may view its own job (the topology itself stays unseen)."""
    link = _link_of(user)
    if (link is not None and link.job_id is not None and action == "view"
            and isinstance(obj, SimulationJob) and obj.pk == link.job_id):
        return "link"
    return topology_require(user, getattr(obj, "topology", obj), action)
