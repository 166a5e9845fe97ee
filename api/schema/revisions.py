"""Docs of ``/topologies/<id>/revisions/`` (``api.views.revisions.RevisionViewSet``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view

from api import serializers as s
from api.schema.examples import EXAMPLE_DOCUMENT
from api.schema.helpers import errors, example

__all__ = ["EXAMPLE_PATCH", "create", "viewset"]

viewset = extend_schema_view(
    list=extend_schema(summary="List a topology's revisions (newest first, no documents)",
                       responses={200: s.RevisionSerializer(many=True), **errors(400, 404)}),
    retrieve=extend_schema(summary="Get one revision with its document",
                           responses={200: s.RevisionDetailSerializer, **errors(404)}),
)

# A patch save: only what changed since base_revision, so a one-device edit of a
# 40 MB, 2,048-host design posts a few hundred bytes. Removes, then updates (whole items), then
# adds; other keys set top-level fields. Same 409 as a whole document when the base is stale.
EXAMPLE_PATCH = {
    "nodes": {"add": [{"id": "gpu2", "kind": "gpu"}], "remove": [],
              "update": [{"id": "sw0", "kind": "pcie_switch", "attrs": {"model": "PEX89144"}}]},
    "links": {"add": [{"id": "gpu2-sw0", "a": "gpu2", "b": "sw0", "tech": "pcie5x16"}],
              "remove": ["gpu1-sw0"]},
    "name": "three-gpus"}

create = extend_schema(
    summary="Save a new revision edited from base_revision",
    description=(
        "Send the whole `document`, or a `patch` against `base_revision`'s document: "
        "`nodes`, `links` and `groups` each take `remove` (ids), `update` (whole items, "
        "replacing the one with that id) and `add` (items with new ids), applied in that "
        "order; any other key sets that top-level field (`null` deletes it). The result keeps "
        "the base order (removed items drop out, added ones follow at the end) and is "
        "validated as the whole document: a problem in it is located there "
        "(`document.nodes[812].kind`), a patch that does not fit the base under `patch` "
        "(`patch.links.update[3].id`, code `invalid_patch`). A stale base is a 409 either way. "
        "The answer holds the saved revision with its whole document; send "
        "`Prefer: return=minimal` for the revision's fields only (answered with "
        "`Preference-Applied: return=minimal`)."),
    request=s.RevisionCreateSerializer,
    responses={201: s.RevisionDetailSerializer, **errors(400, 403, 404, 409, 413, 415)},
    examples=[example("save", {"document": EXAMPLE_DOCUMENT, "base_revision": 3,
                               "message": "moved nic2 to socket 1"}, request=True),
              example("save a patch", {"patch": EXAMPLE_PATCH, "base_revision": 3,
                                       "message": "added gpu2"}, request=True)])
