"""A cluster built on a worker, lean: the document the engine builds is handed over to
normalization (no copy), with the stages reported to a progress callback
(docs/PERFORMANCE.md, "100,000 GPUs in the browser")."""
from __future__ import annotations

from typing import Callable

from designer.bridge.common import collector_paused, engine_errors
from designer.engine.errors import EngineError

__all__ = ["build_cluster_lean"]


def build_cluster_lean(*, name: str, template: str, hosts: int, fabric: str = "rail-optimized",
                       options: dict | None = None,
                       progress: Callable[[float, str], None] = lambda f, m="": None) -> dict:
    """The normalized cluster document :func:`designer.bridge.build_cluster_document` makes,
    built without its copies: the built nodes and links become the normalized ones
    (``engine.document.normalize_handed_over``), with the cyclic collector paused (a
    100,000-GPU document holds ~2 million dicts and no cycle).

    ``progress(fraction, message)`` is called between the stages (build, validate); it may raise
    to stop the build (a cancelled job).

    Raises
    ------
    EngineValidationError
        A bad spec or an invalid result, located (``hosts``, ``spines``…).
    """
    from designer.engine.document import normalize_handed_over
    from designer.engine.model.fabrics import build_cluster

    with collector_paused(), engine_errors():
        progress(0.05, f"building {hosts:,} hosts of {template}")
        try:
            document = build_cluster(template, hosts, fabric=fabric, name=name, **(options or {}))
        except TypeError as exc:  # an unknown option name: a user error, not a crash
            raise EngineError(f"invalid cluster option: {exc}") from exc
        progress(0.35, f"validating {len(document['nodes']):,} nodes and "
                       f"{len(document['links']):,} links")
        return normalize_handed_over(document)
