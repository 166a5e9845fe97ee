"""django-filter FilterSets for the API lists (applied to selector querysets, never to
``Model.objects``, so they can only narrow what the user may see)."""
from __future__ import annotations

import datetime

import django_filters
from django import forms

from designer.choices import JobKind, JobState, ScenarioMode
from designer.models import Scenario, SimulationJob, Topology
from designer.params import MAX_ID, InvalidParam, parse_int

__all__ = ["TopologyFilter", "ScenarioFilter", "JobFilter"]


class _BoundedIntegerField(forms.IntegerField):
    """Only 1-19 ASCII digits within bounds (``designer.params.parse_int``); the decimal field
    used before also took ``1e3``."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        try:
            return parse_int(str(value).strip(), name="value", minimum=self.min_value or 0,
                             maximum=self.max_value)
        except InvalidParam as exc:
            raise forms.ValidationError(exc.message, code="invalid") from None


class _IntegerFilter(django_filters.NumberFilter):
    field_class = _BoundedIntegerField


def _number(field_name: str, lookup_expr: str = "exact", maximum: int = MAX_ID):
    """A bounded integer filter: out-of-range values are a 400, never a database overflow."""
    return _IntegerFilter(field_name=field_name, lookup_expr=lookup_expr, min_value=0,
                          max_value=maximum)


class _UtcDateTimeField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 date and time, converted to UTC before it reaches the database: PostgreSQL
    refuses a UTC offset beyond ±15:59 (``-23:24`` is valid ISO 8601 and was a 500 there), and a
    time near year 9999 whose offset moves it past the calendar is a 400, not an overflow."""

    def to_python(self, value):
        parsed = super().to_python(value)
        if parsed is None:
            return None
        try:
            return parsed.astimezone(datetime.timezone.utc)
        except (OverflowError, ValueError):
            raise forms.ValidationError("must be a date and time between years 1 and 9999 in UTC "
                                        "(its offset moves it past that)", code="invalid") from None


class _UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = _UtcDateTimeField


def _after(field_name: str):
    """``field >= value`` for an ISO 8601 date and time (compared in UTC)."""
    return _UtcDateTimeFilter(field_name=field_name, lookup_expr="gte")


class TopologyFilter(django_filters.FilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")
    min_gpus = _number("gpu_count", "gte", 2 ** 31 - 1)
    max_gpus = _number("gpu_count", "lte", 2 ** 31 - 1)
    updated_after = _after("updated_at")
    shared = django_filters.ChoiceFilter(choices=[("me", "shared with me")], method="_shared",
                                         help_text="me: only topologies others shared with you")
    role = django_filters.ChoiceFilter(choices=[("owner", "owner"), ("editor", "editor"),
                                                ("viewer", "viewer")], field_name="my_role",
                                       help_text="your role")
    owner = django_filters.CharFilter(field_name="owner__username", help_text="owner's username")

    class Meta:
        model = Topology
        fields = ["name", "min_gpus", "max_gpus", "updated_after", "shared", "role", "owner"]

    def _shared(self, queryset, name, value):
        user = self.request.user if self.request is not None else None
        if value == "me" and user is not None and user.is_authenticated:
            return queryset.exclude(owner=user)
        return queryset


class ScenarioFilter(django_filters.FilterSet):
    topology = _number("topology_id")
    mode = django_filters.ChoiceFilter(choices=ScenarioMode.choices)
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Scenario
        fields = ["topology", "mode", "name"]


class JobFilter(django_filters.FilterSet):
    state = django_filters.MultipleChoiceFilter(choices=JobState.choices)
    kind = django_filters.ChoiceFilter(choices=JobKind.choices)
    topology = _number("topology_id")
    scenario = _number("scenario_id")
    created_after = _after("created_at")

    class Meta:
        model = SimulationJob
        fields = ["state", "kind", "topology", "scenario", "created_after"]
