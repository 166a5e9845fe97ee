"""Request bodies the server takes in one of two forms, said with ``oneOf`` in the schema; and a
build job's spec, which takes no key but its own (``additionalProperties: false``).

A serializer's ``validate`` refuses a body with both alternatives or neither (a 400); JSON
Schema says the same with ``oneOf`` of ``required`` lists, so a client (or a fuzzer) reading the
schema knows that ``{"base_revision": 3}`` alone is not a revision. drf-spectacular registers
these extensions when this module is imported (api/schema/__init__.py does).
"""
from __future__ import annotations

from drf_spectacular.extensions import OpenApiSerializerExtension

__all__ = ["RevisionCreateBody", "ShareCreateBody", "ImportBody", "ImportPreviewBody", "NcclLogBody",
           "BuildJobSpecBody"]


class _ExactlyOneOf(OpenApiSerializerExtension):
    """The serializer's own request schema, plus ``oneOf`` one of ``alternatives`` required."""

    alternatives: tuple[str, ...] = ()

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["oneOf"] = [{"required": [name]} for name in self.alternatives]
        return schema


class RevisionCreateBody(_ExactlyOneOf):
    target_class = "api.serializers.revisions.RevisionCreateSerializer"
    alternatives = ("document", "patch")


class ShareCreateBody(_ExactlyOneOf):
    target_class = "api.serializers.sharing.ShareCreateSerializer"
    alternatives = ("username", "group")


class ImportBody(_ExactlyOneOf):
    """Multipart imports: the upload (``file``) or its content as a form field (``text``)."""

    target_class = "api.serializers.imports.ImportSerializer"
    alternatives = ("file", "text")


class ImportPreviewBody(ImportBody):
    target_class = "api.serializers.imports.ImportPreviewSerializer"


class NcclLogBody(_ExactlyOneOf):
    """One log holding every rank's lines (``log``) or one file per rank (``logs``)."""

    target_class = "api.serializers.nccl_log.NcclLogRequestSerializer"
    alternatives = ("log", "logs")


class BuildJobSpecBody(OpenApiSerializerExtension):
    """A build job's ``build``: an unknown key is a 400 at it (``BuildJobSpecSerializer``), so the
    schema closes the object; a fuzzer then adds keys only to data it expects refused."""

    target_class = "api.serializers.topologies.BuildJobSpecSerializer"

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema["additionalProperties"] = False
        return schema
