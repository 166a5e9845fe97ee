"""Caps on a figure request (``POST /figures/<kind>/``), checked before any figure is built.

Anyone holding a share link may post a slice, and a slice is mostly references: one node name
used by a million hops is drawn a million times (a 3 MB path slice cost 70 s of CPU, 4.9 GB of
memory and a 1.4 GB response before these caps). So everything a figure multiplies is counted
from the slice first — hops, flow rows, a host's devices and links, the traces the figure will
have, the length of every string — and a slice over any cap is refused, naming the cap, before
any work. The built figure's size is checked once more before it is sent (:func:`check_response`).

Real slices are far below every cap: the largest template's host (aws-p5: 72 devices, 99 links)
is a 7.6 kB slice; a picked flow's path has about 10-20 hops. Values and their environment
variables: docs/RELIABILITY.md, "Limits".
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SliceError", "SliceTooLarge", "SliceLimits", "check_slice", "check_response"]

# Plotly traces a host figure has besides one per device kind: ten utilization bins, idle and
# failed links (designer.figures.topology._EDGE_BINS), and the links' hover markers.
_HOST_EDGE_TRACES = 13
# A path figure: one line per hop, plus the node chain and the utilization bars.
_PATH_EXTRA_TRACES = 2


class SliceError(ValueError):
    """The posted slice is not what :func:`designer.figures.interactive.figure_from_slice` expects."""


class SliceTooLarge(SliceError):
    """The slice (or the figure built from it) is over one of the :class:`SliceLimits` (HTTP 413)."""

    def __init__(self, *, kind: str, what: str, size: int, limit: int, setting: str):
        super().__init__(f"the {kind} figure request has {size:,} {what}; at most {limit:,} are "
                         f"allowed ({setting}): nothing was built")
        self.what, self.size, self.limit, self.setting = what, size, limit, setting


@dataclass(frozen=True)
class SliceLimits:
    """What one figure request may hold; each field's setting is named in the refusal."""

    max_hops: int = 64            # FABRICSCOPE_FIGURE_MAX_HOPS: hops of one path
    max_rows: int = 4096          # FABRICSCOPE_FIGURE_MAX_ROWS: flow rows of a path slice (pages send 1)
    max_nodes: int = 1024         # FABRICSCOPE_FIGURE_MAX_NODES: devices of one host
    max_links: int = 2048         # FABRICSCOPE_FIGURE_MAX_LINKS: links of one host (= table rows)
    max_traces: int = 96          # FABRICSCOPE_FIGURE_MAX_TRACES: Plotly traces of the figure
    max_string: int = 1024        # FABRICSCOPE_FIGURE_MAX_STRING: characters of any string or key
    max_response_bytes: int = 2 * 1024 * 1024  # FABRICSCOPE_FIGURE_MAX_RESPONSE_KB

    @classmethod
    def from_settings(cls, values: dict | None) -> "SliceLimits":
        """Defaults overridden by ``values`` (field name → int); unknown names are ignored."""
        names = cls.__dataclass_fields__
        return cls(**{k: int(v) for k, v in (values or {}).items() if k in names})


def _refuse(kind: str, what: str, size: int, limit: int, setting: str) -> None:
    if size > limit:
        raise SliceTooLarge(kind=kind, what=what, size=size, limit=limit, setting=setting)


def check_slice(kind: str, payload: dict, limits: SliceLimits) -> None:
    """Raise :class:`SliceTooLarge` when the slice is over a cap; a wrong shape raises the
    ``KeyError``/``TypeError``/... that :func:`figure_from_slice` reports as malformed."""
    _check_strings(kind, payload, limits)
    if kind == "path":
        _check_path(payload["index"], limits)
    else:
        _check_host(payload["details"], payload["host"], limits)


def _check_strings(kind: str, payload, limits: SliceLimits) -> None:
    """Every string value and object key at most ``max_string`` characters (one pass, no recursion)."""
    longest, stack = 0, [payload]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            longest = max(longest, len(value))
        elif isinstance(value, dict):
            longest = max([longest, *map(len, value)])
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    _refuse(kind, "characters in its longest string", longest, limits.max_string,
            "FABRICSCOPE_FIGURE_MAX_STRING")


def _check_path(index: dict, limits: SliceLimits) -> None:
    flows = index["flows"]
    _refuse("path", "flow rows", len(flows), limits.max_rows, "FABRICSCOPE_FIGURE_MAX_ROWS")
    hops = max((len(row[9]) - 1 for row in flows), default=0)
    _refuse("path", "hops in one flow", hops, limits.max_hops, "FABRICSCOPE_FIGURE_MAX_HOPS")
    _refuse("path", "traces (one per hop + 2)", hops + _PATH_EXTRA_TRACES, limits.max_traces,
            "FABRICSCOPE_FIGURE_MAX_TRACES")


def _check_host(details: dict, host: str, limits: SliceLimits) -> None:
    entry = details["hosts"][host]
    shape = details["shapes"][entry["s"]]
    nodes, links = shape["nodes"], shape["links"]
    _refuse("host", "devices", len(nodes), limits.max_nodes, "FABRICSCOPE_FIGURE_MAX_NODES")
    _refuse("host", "links", max(len(links), len(entry["l"])), limits.max_links,
            "FABRICSCOPE_FIGURE_MAX_LINKS")
    # One node trace per device kind, a second for a kind with failed devices.
    kinds = {str(n[1]) for n in nodes}
    failed = set(entry.get("f") or [])
    failed_kinds = {str(n[1]) for n in nodes if n[0] in failed}
    traces = len(kinds) + len(failed_kinds) + _HOST_EDGE_TRACES
    _refuse("host", "traces (device kinds + link bins)", traces, limits.max_traces,
            "FABRICSCOPE_FIGURE_MAX_TRACES")


def check_response(kind: str, size: int, limits: SliceLimits) -> None:
    """The serialized figure is at most ``max_response_bytes`` (the caps above keep real ones
    far below; this is the last guard before sending)."""
    _refuse(kind, "bytes of figure JSON in its answer", size, limits.max_response_bytes,
            "FABRICSCOPE_FIGURE_MAX_RESPONSE_KB")
