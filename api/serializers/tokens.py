"""Your API tokens: what a token looks like once created (never its key), and the create
request (a name, a scope, a lifetime; a username and password when not signed in)."""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import StrictCharField
from designer.choices import TokenScope

__all__ = ["TokenSerializer", "TokenCreatedSerializer", "TokenCreateSerializer"]


class TokenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="the key's first 12 characters, to recognise it")
    scope = serializers.ChoiceField(choices=TokenScope.choices,
                                    help_text="read: GET/HEAD/OPTIONS only; write: everything")
    created = serializers.DateTimeField(source="created_at")
    expires = serializers.DateTimeField(source="expires_at")
    last_used = serializers.DateTimeField(source="last_used_at", allow_null=True,
                                          help_text="to the minute; null if never used")


class TokenCreatedSerializer(TokenSerializer):
    token = serializers.CharField(source="key",
                                  help_text="the key: shown in this answer only, store it now")


class TokenCreateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=100, required=False, default="api",
                           help_text="your label for it; a live token of the same name is "
                                     "replaced (rotation)")
    scope = serializers.ChoiceField(choices=TokenScope.choices, default=TokenScope.WRITE)
    days = serializers.IntegerField(required=False, min_value=1,
                                    help_text="lifetime (default FABRICSCOPE_API_TOKEN_DAYS, "
                                              "90; at most FABRICSCOPE_API_TOKEN_MAX_DAYS, 365); "
                                              "a token-authenticated request cannot outlast "
                                              "its own token")
    username = StrictCharField(max_length=150, required=False, write_only=True,
                               help_text="with password: sign in and get a token in one call")
    password = StrictCharField(max_length=4096, required=False, write_only=True,
                               trim_whitespace=False, style={"input_type": "password"})

    def validate(self, attrs):
        if ("username" in attrs) != ("password" in attrs):
            missing = "password" if "username" in attrs else "username"
            raise serializers.ValidationError({missing: "username and password go together"})
        return attrs
