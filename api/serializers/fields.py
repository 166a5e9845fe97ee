"""JSON fields whose *shape* the serializer checks and whose content the engine checks."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

__all__ = ["DocumentField", "JsonListField", "JsonObjectField", "BoundedObjectField", "StrictBooleanField",
           "StrictCharField", "StrictRegexField"]


@extend_schema_field({"type": "object", "additionalProperties": True,
                      "description": "A fabricscope.topology/1 document (docs/FORMATS.md, Topology document)"})
class DocumentField(serializers.JSONField):
    """A JSON object; the engine, not the serializer, says what is wrong inside it.

    Anything else is refused here: the engine's loader reads a *string* as JSON text or as a
    file path, and a path from a request must never reach it.
    """

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be a JSON object (a topology document)")
        return super().to_internal_value(data)


@extend_schema_field({"type": "array", "items": {"type": "object", "additionalProperties": True}})
class JsonListField(serializers.JSONField):
    def to_internal_value(self, data):
        if not isinstance(data, list):
            raise serializers.ValidationError("must be a list")
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": True})
class JsonObjectField(serializers.JSONField):
    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be an object")
        return super().to_internal_value(data)


class BoundedObjectField(serializers.JSONField):
    """A JSON object of at most 1,000 keys whose fields the engine checks (a plan's overrides, an
    explorer's grid)."""

    default_error_messages = {"invalid": "must be a JSON object"}

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict) or len(value) > 1000:
            self.fail("invalid")
        return value


class StrictCharField(serializers.CharField):
    """A string field that refuses JSON numbers and booleans instead of converting them.

    DRF's ``CharField`` turns ``{"name": 0}`` into ``"0"``; the schema says ``type: string``, so
    a number is a 400 here (form and multipart values are always strings and pass as before).
    """

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictRegexField(serializers.RegexField):
    """:class:`StrictCharField` with a pattern: ``{"host_id": 0}`` is a 400, not the id "0"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON ``true``/``false`` only: DRF's ``BooleanField`` also takes ``0``, ``1``, ``"yes"``
    and ``"off"``, which the schema's ``type: boolean`` does not allow (a JSON body only: this
    API's boolean fields are not read from forms)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data
