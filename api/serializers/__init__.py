"""Request and response shapes of the API, one module per resource.

Serializers check the *shape* of input (types, required fields, choices); the engine checks the
*content* (documents, scenarios) inside the services, and its located problems come back through
``api.exception_handlers``. No serializer writes to the database: views call services.

Import from here (``from api import serializers as s``); the submodules are an implementation
detail: fields, errors, topologies, imports, revisions, scenarios, jobs, templates_catalog,
tokens, sharing.
"""
from __future__ import annotations

from api.serializers.errors import ErrorSerializer
from api.serializers.fields import DocumentField, JsonListField, JsonObjectField
from api.serializers.imports import (
    ImportPreviewResultSerializer, ImportPreviewSerializer, ImportPreviewTextSerializer,
    ImportResultSerializer, ImportSerializer, ImportTextSerializer)
from api.serializers.jobs import (
    BuildResultSerializer, JobCreateSerializer, JobListSerializer, JobSerializer)
from api.serializers.revisions import (
    RevisionCreateSerializer, RevisionDetailSerializer, RevisionSerializer)
from api.serializers.scenarios import PlaceRequestSerializer, ScenarioSerializer
from api.serializers.sharing import (
    AuditEventSerializer, ForkSerializer, ShareCreateSerializer, ShareLinkCreateSerializer,
    ShareLinkSerializer, ShareSerializer, ShareUpdateSerializer, TransferSerializer)
from api.serializers.templates_catalog import (
    HostDocumentSerializer, TemplateSerializer, ValidateSerializer, ValidationReportSerializer)
from api.serializers.tokens import TokenCreatedSerializer, TokenCreateSerializer, TokenSerializer
from api.serializers.topologies import (
    BUILD_JOB_PATH, MAX_BUILD_HOSTS, BuildPreviewSerializer, BuildSpecSerializer, TopologyCreateSerializer,
    TopologySerializer, TopologyUpdateSerializer, max_build_hosts)

__all__ = [
    "BUILD_JOB_PATH", "MAX_BUILD_HOSTS", "BuildSpecSerializer", "TopologySerializer", "TopologyCreateSerializer",
    "TopologyUpdateSerializer", "BuildPreviewSerializer", "ImportSerializer",
    "ImportResultSerializer", "ImportPreviewSerializer", "ImportPreviewResultSerializer",
    "ImportTextSerializer", "ImportPreviewTextSerializer",
    "RevisionSerializer", "RevisionDetailSerializer",
    "RevisionCreateSerializer", "ScenarioSerializer", "PlaceRequestSerializer", "JobCreateSerializer", "JobSerializer",
    "JobListSerializer", "BuildResultSerializer", "ValidateSerializer", "ValidationReportSerializer",
    "TemplateSerializer", "HostDocumentSerializer", "TokenSerializer", "TokenCreatedSerializer",
    "TokenCreateSerializer", "ErrorSerializer",
    "max_build_hosts", "ForkSerializer", "TransferSerializer", "AuditEventSerializer",
    "ShareSerializer", "ShareCreateSerializer", "ShareUpdateSerializer", "ShareLinkSerializer",
    "ShareLinkCreateSerializer",
    # The JSON fields were reachable as api.serializers.<Field> before the split.
    "DocumentField", "JsonListField", "JsonObjectField",
]
