"""Goodput plan: ``POST /topologies/<id>/goodput/`` request shape (docs/FORMATS.md, "Goodput plan").

The serializer checks the shape (objects where the plan has objects, a bounded Monte Carlo); the
engine checks every value and locates its problem (``rates.nic.afr: must be a finite number >=
0``), answered as a 400 with those paths.
"""
from __future__ import annotations

from rest_framework import serializers

__all__ = ["GoodputRequestSerializer", "GoodputResultSerializer", "MAX_API_SIMULATED_DAYS"]

#: Monte Carlo days one request may simulate (runs × days_per_run): ~0.01 s CPU per 10,000 days
#: at 8 interruptions a day (docs/PERFORMANCE.md, "Goodput plan").
MAX_API_SIMULATED_DAYS = 100_000


class _ObjectField(serializers.JSONField):
    """A JSON object (the engine checks its fields)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            self.fail("invalid")
        return value

    default_error_messages = {"invalid": "must be a JSON object"}


class _MonteCarloSerializer(serializers.Serializer):
    runs = serializers.IntegerField(min_value=1, max_value=10_000, default=200)
    days_per_run = serializers.FloatField(min_value=0.001, max_value=100_000, default=54.0)
    seed = serializers.IntegerField(min_value=0, max_value=2 ** 32 - 1, default=0)
    timeline_days = serializers.FloatField(min_value=0, max_value=365, default=7.0)

    def validate(self, attrs):
        if attrs["runs"] * attrs["days_per_run"] > MAX_API_SIMULATED_DAYS:
            raise serializers.ValidationError({"runs": [f"runs × days_per_run must be at most "
                                                        f"{MAX_API_SIMULATED_DAYS:,}"]})
        return attrs


class GoodputRequestSerializer(serializers.Serializer):
    job = _ObjectField(required=False, help_text='{"gpus": N} or {"hosts": [...]}, '
                                                 "exposed_communication_fraction")
    rates = _ObjectField(required=False, help_text="per failure class: afr (per unit-year), repair_hours, "
                                                   "slowdown, effect")
    models = _ObjectField(required=False, help_text="per catalog model (attrs.model): per class afr")
    checkpoint = _ObjectField(required=False, help_text="bytes or parameters; write_s / read_s (else "
                                                        "simulated on the design's storage); restart_overhead_s; "
                                                        "interval_s")
    spares = _ObjectField(required=False, help_text="availability in (0, 1)")
    monte_carlo = _MonteCarloSerializer(required=False, help_text="runs, days_per_run, seed, timeline_days "
                                                                  "(default 200 × 54 days, seed 0)")
    traffic = serializers.JSONField(required=False, help_text="the collective the blast radius is measured with "
                                                              "(pattern, bytes, algorithm, routing, max_hosts, "
                                                              "samples), or false for the rule-based blast radius")
    against = serializers.IntegerField(required=False, min_value=1, help_text=(
        "a second topology you may view: the same plan on both, answered as "
        "fabricscope.goodput-compare/1 {a, b}"))


class GoodputResultSerializer(serializers.Serializer):
    format = serializers.CharField(help_text="fabricscope.goodput/1")
    design = serializers.DictField(help_text="gpus, job_gpus, storage_servers")
    classes = serializers.ListField(child=serializers.DictField(), help_text="one row per failure class")
    cluster = serializers.DictField()
    job = serializers.DictField(help_text="interruptions_per_day, mttf_hours, degraded_loss")
    checkpoint = serializers.DictField(help_text="sizes, times (s), intervals, ETTR, curve")
    goodput = serializers.FloatField()
    spares = serializers.DictField()
    monte_carlo = serializers.DictField(allow_null=True)
