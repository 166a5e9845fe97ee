"""The one error shape, ``{"error": {"code", "message", "details"}}``, for the schema."""
from __future__ import annotations

from rest_framework import serializers

__all__ = ["ErrorSerializer"]


class _ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable: invalid, invalid_topology, "
                                           "not_found, conflict, payload_too_large, throttled…")
    message = serializers.CharField(help_text="one line for humans")
    details = serializers.JSONField(
        help_text='[{"path", "message"}] for input problems (paths locate them in the request, '
                  "e.g. document.links[3].b); an object for other errors "
                  '({"current_revision": 7} on a revision conflict)')


class ErrorSerializer(serializers.Serializer):
    error = _ErrorDetailSerializer()
