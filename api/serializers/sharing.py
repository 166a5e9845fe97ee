"""Sharing: grants, read-only links, fork, transfer and the audit trail.

Users and teams named in a request are looked up by :mod:`designer.selectors`; an unknown one
is a located 400.
"""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import StrictCharField

from designer import selectors
from designer.choices import ShareRole

__all__ = ["ForkSerializer", "TransferSerializer", "ShareSerializer", "ShareCreateSerializer",
           "ShareUpdateSerializer", "ShareLinkSerializer", "ShareLinkCreateSerializer",
           "AuditEventSerializer"]


def _user_named(username: str):
    user = selectors.user_by_username(username=username)
    if user is None:
        raise serializers.ValidationError(f"no active user named {username!r}")
    return user


class ForkSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200, required=False, allow_blank=True,
                                 help_text='default "<name> (fork)"')


class TransferSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150, help_text="the new owner")

    def validate(self, attrs):
        return {"user": _user_named(attrs["username"])}


class ShareSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    user = serializers.CharField(source="user.get_username", read_only=True, allow_null=True,
                                 default=None)
    group = serializers.CharField(source="group.name", read_only=True, allow_null=True,
                                  default=None)
    role = serializers.ChoiceField(choices=ShareRole.choices, read_only=True)
    created_at = serializers.DateTimeField(read_only=True)


class ShareCreateSerializer(serializers.Serializer):
    """Exactly one of ``username`` and ``group`` (a Django group = a team)."""

    username = StrictCharField(max_length=150, required=False)
    group = StrictCharField(max_length=150, required=False, help_text="team (group) name")
    role = serializers.ChoiceField(choices=ShareRole.choices)

    def validate(self, attrs):
        if ("username" in attrs) == ("group" in attrs):
            raise serializers.ValidationError('give either "username" or "group"')
        if "username" in attrs:
            return {"user": _user_named(attrs["username"]), "role": attrs["role"]}
        group = selectors.group_by_name(name=attrs["group"])
        if group is None:
            raise serializers.ValidationError({"group": [f"no team named {attrs['group']!r}"]})
        return {"group": group, "role": attrs["role"]}


class ShareUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=ShareRole.choices)


class ShareLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    job = serializers.IntegerField(source="job_id", allow_null=True, read_only=True,
                                   help_text="set: the link opens this job's result only")
    label = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)
    revoked_at = serializers.DateTimeField(read_only=True, allow_null=True)
    active = serializers.BooleanField(source="is_active", read_only=True)


class ShareLinkCreateSerializer(serializers.Serializer):
    job = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    label = StrictCharField(max_length=200, required=False, allow_blank=True, default="")


class AuditEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.CharField()
    summary = serializers.CharField()
    actor = serializers.SerializerMethodField()
    details = serializers.JSONField()
    created_at = serializers.DateTimeField()

    def get_actor(self, event) -> str | None:
        return event.actor.get_username() if event.actor_id else None
