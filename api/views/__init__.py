"""API views: parse input with a serializer, call one service or selector, render.

Visibility is the selectors' job (another user's object is a 404); edit rights are
``api.permissions``; business rules are the services'. Engine errors, conflicts and everything
else become the one error shape in ``api.exception_handlers``. The OpenAPI docs of each view
live in the :mod:`api.schema` module of the same name.

One module per resource: topologies (+ imports mixed in), export, revisions, scenarios, jobs,
templates_catalog, tokens, sharing, nccl_tests, goodput, diagnose, plan, explore (the last five imported by
name in api/urls.py); ``base`` holds :class:`ApiMixin` and the request helpers, ``job_submit``
the base of the views that queue a job on a topology (diagnose, explore).
"""
from __future__ import annotations

from api.views.base import ApiMixin
from api.views.export import GraphMLRenderer, TopologyExportView
from api.views.jobs import JobViewSet
from api.views.revisions import RevisionViewSet
from api.views.scenarios import ScenarioViewSet
from api.views.sharing import ShareLinkViewSet, ShareViewSet
from api.views.templates_catalog import CatalogView, TemplateViewSet, ValidateView
from api.views.tokens import AuthTokenDetailView, AuthTokenView
from api.views.topologies import TopologyViewSet

__all__ = ["TopologyViewSet", "TopologyExportView", "RevisionViewSet", "ScenarioViewSet",
           "JobViewSet", "TemplateViewSet", "CatalogView", "ValidateView", "AuthTokenView",
           "AuthTokenDetailView",
           "ShareViewSet", "ShareLinkViewSet", "ApiMixin", "GraphMLRenderer"]
