"""How the schema documents django-filter query parameters (``api.filters``).

django-filter treats an empty value (``?name=``) as "no filter", so the schema says so with
``allowEmptyValue``; without it an empty ``?updated_after=`` reads as an invalid date-time that
the API wrongly accepts. Multiple-choice filters are the exception: an empty choice is a 400.
"""
from __future__ import annotations

from drf_spectacular.contrib.django_filters import DjangoFilterExtension

__all__ = ["EmptyIsAbsentFilterExtension"]


class EmptyIsAbsentFilterExtension(DjangoFilterExtension):
    priority = 1  # above drf-spectacular's own extension for the same backend

    def get_schema_operation_parameters(self, auto_schema, *args, **kwargs):
        parameters = super().get_schema_operation_parameters(auto_schema, *args, **kwargs)
        for parameter in parameters:
            # Multiple-choice filters (``?state=a&state=b``) refuse an empty choice: a 400.
            if parameter.get("schema", {}).get("type") != "array":
                parameter["allowEmptyValue"] = True
        return parameters
