"""Host templates, and validating a document without saving it."""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import DocumentField

__all__ = ["ValidateSerializer", "ValidationReportSerializer", "TemplateSerializer",
           "HostDocumentSerializer"]


class ValidateSerializer(serializers.Serializer):
    document = DocumentField()


class _ProblemSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="location in the document, e.g. links[3].b")
    message = serializers.CharField()


class ValidationReportSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    problems = _ProblemSerializer(many=True)


class TemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    details = serializers.CharField()
    params = serializers.DictField(child=serializers.DictField(),
                                   help_text="parameter -> {default, help}")


class HostDocumentSerializer(serializers.Serializer):
    template = serializers.CharField()
    host_id = serializers.CharField()
    document = DocumentField(help_text="a normalized document holding one host group")
