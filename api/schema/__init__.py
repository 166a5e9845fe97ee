"""OpenAPI documentation of the API (drf-spectacular), kept out of the views.

- :mod:`api.schema.helpers`: ``errors(...)`` and ``example(...)``, the building blocks;
- :mod:`api.schema.examples`: example bodies shared by several endpoints;
- one module per resource (topologies, imports, export, revisions, scenarios, jobs,
  templates_catalog, tokens, sharing): ready-made ``extend_schema`` / ``extend_schema_view``
  decorators, each named after the view method (or view) it documents;
- :mod:`api.schema.security`: which operations list the share-link scheme, and
  :mod:`api.schema.filters`: empty filter values mean "no filter" (both imported here so
  drf-spectacular registers their extensions);
- :mod:`api.schema.bodies`: ``oneOf`` of the request bodies taken in one of two forms, and a
  build job's closed spec (also imported here for its extensions);
- :mod:`api.schema.redoc`: the air-gapped Redoc page.
"""
from __future__ import annotations

from api.schema import bodies, filters, security  # noqa: F401  (register their extensions)
from api.schema.helpers import errors, example
from api.schema.redoc import OfflineRedocView

__all__ = ["errors", "example", "OfflineRedocView"]
