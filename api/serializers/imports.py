"""Importing a server description (NCCL XML, ``nvidia-smi topo -m``, hwloc XML)."""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import StrictCharField, StrictRegexField

from api.serializers.topologies import TopologySerializer
from designer.bridge.facts import IMPORT_FORMATS

__all__ = ["ImportSerializer", "ImportResultSerializer", "ImportPreviewSerializer",
           "ImportPreviewResultSerializer", "ImportTextSerializer", "ImportPreviewTextSerializer"]


class ImportSerializer(serializers.Serializer):
    """An uploaded file (multipart ``file``) or its text (JSON ``text``), not both."""

    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_blank=True, default="")
    file = serializers.FileField(required=False, help_text="multipart upload")
    text = StrictCharField(required=False, trim_whitespace=False,
                                 help_text="the file content (instead of an upload in file)")
    format = serializers.ChoiceField(choices=IMPORT_FORMATS, required=False,
                                     help_text="sniffed from the content when omitted")
    host_id = StrictRegexField(r"^[A-Za-z0-9_.:-]{1,64}$", required=False, default="h0")

    def validate(self, attrs):
        if ("file" in attrs) == ("text" in attrs):
            raise serializers.ValidationError('give either "file" (multipart) or "text"')
        return attrs

    def content(self) -> str | bytes:
        upload = self.validated_data.get("file")
        return upload.read() if upload is not None else self.validated_data["text"]


class ImportPreviewSerializer(ImportSerializer):
    """Like an import, but nothing is saved: the editor inserts the host into its document."""

    name = StrictCharField(max_length=200, required=False, default="imported")


class ImportTextSerializer(ImportSerializer):
    """The schema of a JSON import body: a JSON body cannot carry a file, so ``text`` is
    required and there is no ``file`` (the view validates with :class:`ImportSerializer`)."""

    file = None
    text = StrictCharField(trim_whitespace=False, help_text="the file content")


class ImportPreviewTextSerializer(ImportPreviewSerializer):
    """:class:`ImportTextSerializer` of a preview (``name`` optional)."""

    file = None
    text = StrictCharField(trim_whitespace=False, help_text="the file content")


class ImportPreviewResultSerializer(serializers.Serializer):
    document = serializers.JSONField(help_text="a normalized fabricscope.topology/1 document")
    format = serializers.ChoiceField(choices=IMPORT_FORMATS)
    warnings = serializers.ListField(child=serializers.CharField())
    matrix = serializers.JSONField(
        allow_null=True, required=False,
        help_text="the imported host's nvidia-smi topo -m path classes: rows, labels, names, "
                  "engine (codes per row), input (the file's own matrix in the same order for "
                  "nvidia-smi input, else null), differ ([row, label, input, engine] cells)")


class ImportResultSerializer(serializers.Serializer):
    topology = TopologySerializer()
    format = serializers.ChoiceField(choices=IMPORT_FORMATS)
    warnings = serializers.ListField(child=serializers.CharField(),
                                     help_text="defaults taken for what the source did not say")
