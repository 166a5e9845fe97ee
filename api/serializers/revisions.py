"""Revisions: list rows, one revision with its document, saving a new one."""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import DocumentField, JsonObjectField, StrictCharField

__all__ = ["RevisionSerializer", "RevisionDetailSerializer", "RevisionCreateSerializer"]


class RevisionSerializer(serializers.Serializer):
    number = serializers.IntegerField(read_only=True)
    message = serializers.CharField(read_only=True)
    author = serializers.SerializerMethodField()
    checksum = serializers.CharField(read_only=True, help_text="sha256 of the canonical JSON")
    created_at = serializers.DateTimeField(read_only=True)

    def get_author(self, revision) -> str | None:
        return revision.author.get_username() if revision.author_id else None


class RevisionDetailSerializer(RevisionSerializer):
    document = DocumentField(read_only=True)


class RevisionCreateSerializer(serializers.Serializer):
    """A new revision: the whole ``document``, or a ``patch`` against ``base_revision``'s."""

    document = DocumentField(required=False, help_text="the whole new document; or send patch")
    patch = JsonObjectField(
        required=False,
        help_text="instead of document: what changed since base_revision, by element id — "
                  '{"nodes"|"links"|"groups": {"remove": [ids], "update": [whole items], '
                  '"add": [items]}, other top-level field: new value (null deletes it)}; '
                  "applied in that order, then validated as the whole result would be; the "
                  "revision reads as a whole document (stored as a patch on its base: "
                  "docs/FORMATS.md, Revisions stored as patches)")
    base_revision = serializers.IntegerField(
        min_value=0, help_text="the revision number you edited (0 when there is none yet); "
                               "a stale one is a 409 carrying the current number")
    message = StrictCharField(required=False, allow_blank=True, default="", max_length=500)

    def validate(self, attrs):
        if ("document" in attrs) == ("patch" in attrs):
            raise serializers.ValidationError({"document": ["give either document or patch"]})
        return attrs
