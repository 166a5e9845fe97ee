"""Storing a finished job's result and the figures of its page (docs/FORMATS.md, "Stored results").

A simulation result is written as a small head and a compressed columnar body
(:meth:`designer.models.SimulationResult.parts_of`). A result never changes once written, so its
page figures are built once and kept (:class:`designer.models.ResultFigures`, keyed by the figure
code's version, the view and the sweep entry): a page visit then reads the head and one
compressed figure set, never the per-flow body nor the topology document.

Figures are written here only: :func:`figures_prebuild` when a job succeeds (the runner), and
:func:`result_page_figures` when a result page is visited whose figures are not stored yet (rows
stored before figures were, or figure code changed since); pages' selectors only read.
"""
from __future__ import annotations

import logging
import zlib
from typing import Callable

from django.db import IntegrityError, transaction

from designer.figures.base import FigureSet, figure_texts, figures_key
from designer.figures.result import page_figures, page_view
from designer.models import ResultFigures, SimulationJob, SimulationResult

__all__ = ["result_store", "result_figures", "result_page_figures", "figures_prebuild"]

logger = logging.getLogger(__name__)

_LEVEL = 6  # zlib's default: level 9 saved ~2% at twice the time


def result_store(*, job: SimulationJob, document: dict) -> SimulationResult:
    """Write (or replace) the result of ``job``; call inside the caller's transaction.

    Figures stored for an earlier result of the same job are dropped with it.
    """
    row, created = SimulationResult.objects.update_or_create(
        job=job, defaults=SimulationResult.parts_of(document))
    if not created:
        ResultFigures.objects.filter(result=row).delete()
    return row


def result_figures(*, job_id: int, key: str,
                   build: Callable[[SimulationResult], dict]) -> FigureSet | None:
    """The stored figures of ``key`` for the result of ``job_id``, built and stored on a miss.

    Parameters
    ----------
    job_id : int
        A job the caller may read (access is checked by the caller).
    key : str
        :func:`designer.figures.base.figures_key`.
    build : callable
        The stored row → its figures dict (called only on a miss; ``row.document()`` reads the
        whole document).

    Returns
    -------
    FigureSet or None
        A mapping of figure key → figure dict whose JSON text the page embeds as it is; None when
        the job has no stored result.
    """
    stored = (ResultFigures.objects.filter(result_id=job_id, key=key)
              .values_list("keys", "figures", "path_index").first())
    if stored is not None:
        keys, figures, index = stored
        try:
            return FigureSet(keys, _text(figures), None if index is None else _text(index))
        except (zlib.error, UnicodeDecodeError):
            # A damaged cache entry is dropped and rebuilt from the result: it was a 500 on
            # every visit of the page until someone deleted the row by hand.
            logger.warning("figures %s of job %s are damaged: rebuilt", key, job_id)
            ResultFigures.objects.filter(result_id=job_id, key=key).delete()
    row = SimulationResult.objects.filter(job_id=job_id).first()
    if row is None:
        return None
    figs = build(row)
    texts = figure_texts(figs)
    _figures_save(row, key, list(figs), texts)
    return FigureSet(list(figs), *texts, figs=figs)  # built here: no need to parse it back


def result_page_figures(*, job: SimulationJob, result: dict,
                        selected: int | None = None) -> FigureSet | None:
    """The figures of ``job``'s result page view (``selected``: the sweep entry to detail), read
    back when stored, else built from the whole stored document and stored (once: a result never
    changes). None when the job has no stored result.

    ``result`` is the row's ``data`` (the head is enough: it says which view the page shows).
    """
    def build(row: SimulationResult) -> dict:
        return page_figures(row.document(), topology_doc=_topology_of(job), selected=selected)

    return result_figures(job_id=job.pk, key=figures_key(page_view(result), selected), build=build)


def figures_prebuild(job: SimulationJob, data: dict) -> None:
    """Build and store the result page's figures of a job that just succeeded with ``data``, so
    the first visit reads them instead of building them. Best effort: the
    page builds them itself otherwise, and a figure bug must not touch a job that succeeded."""
    try:
        from designer.bridge.results import rows_of  # a sweep stored columnar → its records

        document = job.revision.document if page_view(data) == "result" else None
        result_figures(job_id=job.pk, key=figures_key(page_view(data)),
                       build=lambda _row: page_figures(rows_of(data), topology_doc=document))
    except Exception:
        logger.warning("job %s: figures not prebuilt", job.pk, exc_info=True)


def _topology_of(job: SimulationJob) -> dict | None:
    doc = getattr(getattr(job, "revision", None), "document", None)
    return doc if isinstance(doc, dict) else None


def _text(blob: bytes | memoryview) -> str:
    return zlib.decompress(bytes(blob)).decode()


def _figures_save(row: SimulationResult, key: str, keys: list[str], texts: tuple[str, str | None]) -> None:
    """Keep the figures under ``key``; drop sets of older figure code. A concurrent writer of the
    same key wins harmlessly (the same inputs give the same figures)."""
    version = key.split(":", 1)[0]
    figures_text, index_text = texts
    try:
        with transaction.atomic():
            ResultFigures.objects.filter(result=row).exclude(key__startswith=f"{version}:").delete()
            ResultFigures.objects.create(
                result=row, key=key, keys=keys, figures=zlib.compress(figures_text.encode(), _LEVEL),
                path_index=None if index_text is None else zlib.compress(index_text.encode(), _LEVEL))
    except IntegrityError:
        logger.info("figures %s of job %s were stored meanwhile", key, row.job_id)
