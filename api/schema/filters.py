"""How the schema documents django-filter query parameters (``api.filters``).

django-filter treats an empty value (``?name=``) as "no filter", so the schema says so with
``allowEmptyValue``; without it an empty ``?updated_after=`` reads as an invalid date-time that
the API wrongly accepts. Multiple-choice filters are the exception: an empty choice is a 400.

Free-text parameters (``search``, ``name``, ``owner``) refuse a NUL character with a 400 (Django's
form fields and DRF's search field do: NUL cannot be stored in PostgreSQL text, and no stored
name holds one), so their schema says ``pattern: ^[^\x00]*$``.
"""
from __future__ import annotations

from drf_spectacular.contrib.django_filters import DjangoFilterExtension
from drf_spectacular.extensions import OpenApiFilterExtension

__all__ = ["EmptyIsAbsentFilterExtension", "SearchFilterExtension", "NO_NUL"]

NO_NUL = "^[^\\x00]*$"   # a string without a NUL character


def _refuse_nul(parameter: dict) -> None:
    """Document the NUL refusal on a free-text (unformatted string) parameter."""
    schema = parameter.get("schema", {})
    if schema.get("type") == "string" and not ({"format", "enum", "pattern"} & set(schema)):
        schema["pattern"] = NO_NUL


class EmptyIsAbsentFilterExtension(DjangoFilterExtension):
    priority = 1  # above drf-spectacular's own extension for the same backend

    def get_schema_operation_parameters(self, auto_schema, *args, **kwargs):
        parameters = super().get_schema_operation_parameters(auto_schema, *args, **kwargs)
        for parameter in parameters:
            # Multiple-choice filters (``?state=a&state=b``) refuse an empty choice: a 400.
            if parameter.get("schema", {}).get("type") != "array":
                parameter["allowEmptyValue"] = True
            _refuse_nul(parameter)
        return parameters


class SearchFilterExtension(OpenApiFilterExtension):
    """DRF's ``?search=``: as DRF documents it, plus the NUL refusal."""

    target_class = "rest_framework.filters.SearchFilter"

    def get_schema_operation_parameters(self, auto_schema, *args, **kwargs):
        parameters = self.target.get_schema_operation_parameters(auto_schema.view)
        for parameter in parameters:
            _refuse_nul(parameter)
        return parameters
