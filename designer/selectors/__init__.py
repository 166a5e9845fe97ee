"""Every read in Fabricscope, filtered by what the requesting user may see.

The visibility rule lives in :mod:`designer.selectors.access` only; everything else (revisions,
scenarios, jobs, results) is visible through its topology. Objects a user may not see raise
``Http404`` (never 403: their existence is not disclosed). List querysets defer large JSON.

Who may do what
---------------
A topology is visible to its owner, to users holding a grant on it, and to members of groups
holding one (:class:`~designer.models.TopologyShare`). :func:`topology_role` says which role
applies (``owner`` > ``editor`` > ``viewer``) and :data:`ROLE_ACTIONS` what each role may do;
pages and the API's permission classes ask :func:`topology_can` / :func:`topology_require`
and nothing else. A share-link visitor (:class:`ShareLinkVisitor`, no account) passes through the
same selectors: it sees the linked topology (role ``link``: view only), or, for a result link,
that one job and its result and nothing else.

Modules
-------
- :mod:`designer.selectors.access`: the visibility rule, roles and permission checks.
- :mod:`designer.selectors.reads`: topologies, revisions, scenarios, jobs, results, grants, links,
  the audit trail, tokens and the lists the pages show.
- :mod:`designer.selectors.inline`: engine answers computed inside a request (nccl-tests, goodput,
  NCCL log checks, physical plans), with their size bounds.
"""
from __future__ import annotations

from designer.selectors import access, inline, reads
from designer.selectors.access import *  # noqa: F401,F403
from designer.selectors.inline import *  # noqa: F401,F403
from designer.selectors.reads import *  # noqa: F401,F403

__all__ = [*access.__all__, *reads.__all__, *inline.__all__]
