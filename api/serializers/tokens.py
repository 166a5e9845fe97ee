"""Your own API token."""
from __future__ import annotations

from rest_framework import serializers

__all__ = ["TokenSerializer"]


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(allow_null=True, help_text="null when you have none")
    created = serializers.DateTimeField(allow_null=True)
