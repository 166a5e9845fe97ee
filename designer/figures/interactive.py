"""Figures the result page asks for after a click: the path of a picked flow, a host's internals.

The page already holds the compact data (a topology's ``fabricscope.hosts``, the path view's
``fabricscope.path_index``); on a click the browser posts the slice of it that one figure needs
and draws what comes back, so the server stays the only place that builds a figure. The input
comes from the browser: anything malformed raises :class:`SliceError`, never a 500, and a slice
over a cap of :class:`SliceLimits` raises :class:`SliceTooLarge` before any work
(:mod:`designer.figures.slice_limits`).
"""
from __future__ import annotations

from designer.figures.paths import path_figure_from_index
from designer.figures.slice_limits import SliceError, SliceLimits, SliceTooLarge, check_slice
from designer.figures.topology import expand_host

__all__ = ["SliceError", "SliceTooLarge", "SliceLimits", "INTERACTIVE_KINDS", "figure_from_slice"]

INTERACTIVE_KINDS = ("path", "host")


def figure_from_slice(kind: str, payload: dict, limits: SliceLimits | None = None) -> dict:
    """Build the figure of ``kind`` from the data slice the browser posted.

    Parameters
    ----------
    kind : {"path", "host"}
    payload : dict
        ``path``: ``{"index": <path_index holding the flow>, "flow": flow id}``;
        ``host``: ``{"details": <topology fabricscope.hosts holding the host>, "host": host id}``.
    limits : SliceLimits, optional
        The caps checked before building (default: :class:`SliceLimits`' defaults).

    Raises
    ------
    SliceError
        Unknown ``kind`` or a payload of the wrong shape.
    SliceTooLarge
        The slice is over one of ``limits`` (nothing was built).
    """
    if kind not in INTERACTIVE_KINDS:
        raise SliceError(f"unknown figure kind {kind!r} (expected one of {', '.join(INTERACTIVE_KINDS)})")
    if not isinstance(payload, dict):
        raise SliceError("the request body must be a JSON object")
    try:
        check_slice(kind, payload, limits or SliceLimits())
        if kind == "path":
            index = payload["index"]
            # JSON object keys are strings; the index is keyed by node position.
            node_res = {int(k): v for k, v in (index.get("node_res") or {}).items()}
            return path_figure_from_index({**index, "node_res": node_res}, payload.get("flow"))
        return expand_host(payload["details"], payload["host"])
    except SliceError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        # Whatever shape the slice has, it only ever reaches list/dict indexing here.
        raise SliceError(f"malformed {kind} data: {type(exc).__name__}: {exc}") from exc
