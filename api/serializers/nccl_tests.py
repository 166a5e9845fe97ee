"""nccl-tests side by side: ``POST /topologies/<id>/nccl-tests/`` request and response shapes."""
from __future__ import annotations

from rest_framework import serializers

from designer.selectors import (
    MAX_LOG_BYTES,
    MAX_NCCL_LOGS,
    NCCL_ALGORITHMS,
    NCCL_NIC_POLICIES,
    NCCL_OPS,
    NCCL_PROTOCOLS,
    NCCL_REDOPS,
)

__all__ = ["NcclTestsRequestSerializer", "NcclTestsResultSerializer"]


class _SizeField(serializers.CharField):
    """A byte count as a number or as nccl-tests writes it (``8``, ``64K``, ``8G``); the engine
    checks the value and locates its problem under this field."""

    def to_internal_value(self, data):
        if isinstance(data, bool):
            self.fail("invalid")
        return str(data) if isinstance(data, (int, float)) else super().to_internal_value(data)


class _LogSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, help_text="the run's name (its file name): the trace's legend")
    text = serializers.CharField(trim_whitespace=False, max_length=MAX_LOG_BYTES, help_text="the run's stdout")


class NcclTestsRequestSerializer(serializers.Serializer):
    op = serializers.ChoiceField(choices=[c for c, _ in NCCL_OPS], default="all_reduce",
                                 help_text="the nccl-tests binary without _perf; every GPU is one rank")
    min_bytes = _SizeField(default="8", max_length=24, help_text="smallest size (nccl-tests -b): 8, 64K, 8M")
    max_bytes = _SizeField(default="8G", max_length=24, help_text="largest size (nccl-tests -e)")
    factor = serializers.IntegerField(default=2, min_value=2, max_value=1024, help_text="nccl-tests -f")
    algorithm = serializers.ChoiceField(choices=[c for c, _ in NCCL_ALGORITHMS], default="auto")
    log = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,
                                max_length=MAX_LOG_BYTES,
                                help_text="stdout of a real nccl-tests run to compare with (optional)")
    logs = _LogSerializer(many=True, required=False, max_length=MAX_NCCL_LOGS,
                          help_text=f"several runs of one collective (up to {MAX_NCCL_LOGS}, `log` included), "
                                    "each compared with one prediction: `runs[]` of the response")
    protocol = serializers.ChoiceField(choices=[c for c, _ in NCCL_PROTOCOLS], default="auto",
                                       help_text="auto (the engine's choice per size) or forced, as NCCL_PROTO")
    channels = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=32,
                                        help_text="channels the collective runs on (NCCL's MAXCHANNELS is 32; "
                                                  "not for alltoall, sendrecv); default the engine's count")

    root = serializers.IntegerField(default=0, min_value=0, help_text="root rank of broadcast/reduce/gather/scatter "
                                                                      "(nccl-tests -r)")
    redop = serializers.ChoiceField(choices=[c for c, _ in NCCL_REDOPS], default="sum",
                                    help_text="nccl-tests -o: echoed in the redop column; the time does not depend on it")
    nic_policy = serializers.ChoiceField(choices=[c for c, _ in NCCL_NIC_POLICIES if c], required=False,
                                         allow_null=True, default=None, help_text="default affinity")
    hosts_subset = serializers.CharField(required=False, allow_null=True, allow_blank=True, default=None,
                                         max_length=2000, help_text="host ids (h0,h3): every GPU of these hosts")
    env = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list,
                                max_length=32, help_text="NCCL knobs as NAME=VALUE (NCCL_ALGO=Ring, NCCL_PROTO=LL, "
                                                         "...); a knob the engine does not model is an error")

    def validate_logs(self, value) -> list[tuple[str, str]]:
        return [(item["name"], item["text"]) for item in value]


class _RowSerializer(serializers.Serializer):
    size_bytes = serializers.IntegerField()
    count = serializers.IntegerField()
    type = serializers.CharField()
    redop = serializers.CharField()
    root = serializers.IntegerField()
    time_us = serializers.FloatField(help_text="µs")
    algbw_gbs = serializers.FloatField(help_text="GB/s (10^9 B/s), size / time")
    busbw_gbs = serializers.FloatField(help_text="GB/s, algbw × nccl-tests' factor")
    algorithm = serializers.CharField(allow_null=True)
    protocol = serializers.CharField(allow_null=True)


class _ComparisonSerializer(serializers.Serializer):
    size_bytes = serializers.IntegerField()
    measured = serializers.DictField(help_text="time_us, algbw_gbs, busbw_gbs of the run (out-of-place)")
    predicted = serializers.DictField(help_text="time_us, algbw_gbs, busbw_gbs")
    algorithm = serializers.CharField(allow_null=True)
    error_pct = serializers.FloatField(allow_null=True, help_text="100 × (predicted − measured) / measured busbw")
    time_error_pct = serializers.FloatField(allow_null=True)


class _CurveSerializer(serializers.Serializer):
    sizes = serializers.IntegerField(help_text="compared sizes with an error")
    within = serializers.IntegerField(help_text="sizes whose busbw error is within ±tolerance_pct")
    tolerance_pct = serializers.FloatField()
    median_abs_error_pct = serializers.FloatField(allow_null=True, help_text="median |busbw error| over the sizes")
    worst_abs_error_pct = serializers.FloatField(allow_null=True)
    worst_size_bytes = serializers.IntegerField(allow_null=True, help_text="size of the worst |busbw error|")
    median_abs_time_error_pct = serializers.FloatField(allow_null=True)


class _RunSerializer(serializers.Serializer):
    name = serializers.CharField()
    measured = serializers.ListField(child=serializers.DictField())
    measured_op = serializers.CharField(allow_null=True)
    measured_ranks = serializers.IntegerField(allow_null=True)
    comparison = _ComparisonSerializer(many=True)
    curve = _CurveSerializer()


class NcclTestsResultSerializer(serializers.Serializer):
    op = serializers.CharField()
    ranks = serializers.IntegerField()
    algorithm = serializers.CharField()
    protocol = serializers.CharField()
    channels = serializers.IntegerField(allow_null=True)
    root = serializers.IntegerField(help_text="root rank asked for (rooted ops)")
    redop = serializers.CharField()
    env = serializers.ListField(child=serializers.CharField(), help_text="the NCCL knobs applied")
    runs = _RunSerializer(many=True, help_text="each run of `log` and `logs`, in that order")
    rows = _RowSerializer(many=True)
    measured = serializers.ListField(child=serializers.DictField(), allow_null=True,
                                     help_text="the run's rows: size_bytes, count, type, out_of_place, in_place")
    measured_op = serializers.CharField(allow_null=True)
    measured_ranks = serializers.IntegerField(allow_null=True)
    comparison = _ComparisonSerializer(many=True)
    curve = _CurveSerializer(allow_null=True, help_text="the whole curve against the first run (null without a log)")
