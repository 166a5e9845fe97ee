"""What the pages show beyond :mod:`designer.selectors`: revision diffs, host matrices, the
editor's configuration, the scenario builder's pick lists, the job status JSON, and the template
contexts of the result and compare pages.

Read only (nothing here writes: a result page's stored figures come from
``services.result_page_figures``). Database reads go through :mod:`designer.selectors` with the
requesting user, or take objects already fetched that way; the engine is reached only through
:mod:`designer.bridge`.
"""
from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from django.utils.safestring import mark_safe

from designer import bridge, selectors
from designer.bridge import digest, facts
from designer.bridge.common import collector_paused
from designer.choices import TERMINAL_STATES
from designer.exceptions import EngineValidationError
from designer.figures import figures_for_compare
from designer.figures.base import figures_html
from designer.figures.headline import bom_value, compare_row
from designer.figures.headline import headline as figure_headline
from designer.figures.result import page_figures, page_view
from designer.figures.shared import shared_rows
from designer.figures.style import style_json
from designer.models import RevisionDigest, SimulationJob, Topology, TopologyRevision

__all__ = [
    "document_diff", "revision_diff", "host_list", "host_units", "host_matrix", "template_choices",
    "editor_config", "link_editor_config", "editor_config_script", "scenario_targets",
    "scenario_target_search", "unknown_targets", "revision_head", "revision_digest", "revision_bom",
    "units_of",
    "TARGET_SEARCH_LIMIT",
    "job_overview", "job_status", "result_context", "compare_context", "compare_bom_context",
]


# --- Revision diff -------------------------------------------------------------------------------

document_diff = digest.document_diff   # pure: it lives with the digest, which stores a patch's


def revision_diff(*, user, topology_pk: int, a: int, b: int) -> dict:
    """Diff of revisions ``a`` → ``b`` of a visible topology (Http404 for an unknown number).

    Composed from the diffs stored with the revisions between them (each revision keeps its
    diff from the previous one: ``bridge.digest``), so no document is read; the two documents
    are compared only where the chain cannot tell (a revision saved before digests, a diff too
    large to keep, an item removed and added again)."""
    old, new = (_revision_without_document(user, topology_pk, n) for n in (a, b))
    diff = _composed_diff(old, new)
    if diff is None:
        documents = {pk: selectors.revision_document_parsed(pk=pk) for pk in (old.pk, new.pk)}
        diff = document_diff(documents[old.pk], documents[new.pk])
    return {"old": old, "new": new, "diff": diff}


def _composed_diff(old: TopologyRevision, new: TopologyRevision) -> dict | None:
    low, high = sorted((old.number, new.number))
    if low == high:
        return digest.compose_diffs([])
    stored = dict(RevisionDigest.objects
                  .filter(revision__topology_id=old.topology_id, revision__number__gt=low,
                          revision__number__lte=high)
                  .values_list("revision__number", "summary__diff"))
    chain = [stored.get(n) for n in range(low + 1, high + 1)]
    if any(step is None for step in chain):
        return None
    diff = digest.compose_diffs(chain)
    return diff if diff is None or old.number < new.number else digest.reverse_diff(diff)


def _revision_without_document(user, topology_pk: int, number: int) -> TopologyRevision:
    """Revision ``number`` of a topology ``user`` sees, its document not read (Http404 else)."""
    topology = selectors.topology_get(user=user, pk=topology_pk)
    revision = (selectors.revision_list(user=user, topology_pk=topology.pk)
                .filter(number=number).first())
    if revision is None:
        raise Http404("no such revision")
    return revision


# --- Hosts ---------------------------------------------------------------------------------------

def host_list(revision: TopologyRevision | None) -> list[dict]:
    """Host groups of a revision: ``[{"id", "template", "parent"}]`` in document order (from its
    digest: the document is not read)."""
    if revision is None:
        return []
    return revision_digest(revision)[0]["hosts"]


def picker_hosts(revision: TopologyRevision | None, limit: int) -> dict:
    """The scenario builder's host picker (jobs placed on hosts): ``{"hosts": [ids], "total"}``,
    the ids only when the revision has at most ``limit`` hosts (else the page takes typed ids)."""
    hosts = host_list(revision)
    return {"hosts": [h["id"] for h in hosts] if len(hosts) <= limit else [], "total": len(hosts)}


def host_units(revision: TopologyRevision | None) -> dict:
    """What a revision's host groups are, for its page to say racks and trays, not "144 hosts"
    (from its digest): ``racks`` (NVLink domains: a GB200 NVL72 rack), ``trays`` (hosts inside
    one: its compute trays) and ``servers`` (every other host)."""
    if revision is None:
        return {"racks": 0, "trays": 0, "servers": 0}
    return units_of(revision_digest(revision)[0])


def units_of(summary: dict) -> dict:
    """:func:`host_units` from a digest's summary already read."""
    domains = {gid for gid, kind in summary.get("groups") or [] if kind == "nvlink_domain"}
    trays = sum(1 for h in summary["hosts"] if h.get("parent") in domains)
    return {"racks": len(domains), "trays": trays, "servers": len(summary["hosts"]) - trays}


def revision_bom(revision: TopologyRevision | None) -> dict | None:
    """The BOM of a revision (``fabricscope.bom/1``) from its digest, or None (no revision, no
    switch, or a document the BOM cannot read)."""
    if revision is None:
        return None
    return revision_digest(revision)[0]["bom"]


def host_matrix(revision_id: int, host: str) -> dict:
    """``nvidia-smi topo -m`` of one host of a revision (engine ``pathclass.topo_matrix``).

    The document is read as text and parsed by orjson with the cyclic collector paused (a
    2,048-host design: 40 MB, ~300k dicts; a full collection in a long-lived process rescans
    them all, which doubled this page's CPU in a long test run).

    Raises ``Http404`` when the revision has no such host.
    """
    try:
        with collector_paused():
            matrix = bridge.topo_matrix(selectors.revision_document_parsed(pk=revision_id) or {}, host)
    except EngineValidationError as exc:
        raise Http404(exc.engine_message) from exc
    rows = [{"label": label, "id": matrix["ids"][label], "numa": numa,
             "cells": [{"code": code, "css": _class_css(code)} for code in cells]}
            for label, numa, cells in zip(matrix["rows"], matrix["numa"], matrix["matrix"])]
    legend = [(code, text) for code, text in matrix["legend"].items() if not code.startswith("NIC")]
    return {"host": host, "labels": matrix["labels"], "rows": rows, "ids": matrix["ids"],
            "legend": [{"code": c, "text": t, "css": _class_css(c)} for c, t in legend],
            "nics": [(lab, matrix["ids"][lab]) for lab in matrix["labels"] if lab.startswith("NIC")],
            "c2c": matrix.get("c2c", [])}


def _class_css(code: str) -> str:
    """CSS class of a path class: NV12/NV18 share ``pc-nv``; '-' (no path) is ``pc-none``."""
    if code.startswith("NV"):
        return "pc-nv"
    return "pc-" + ("none" if code in ("-", "") else code.lower())


# --- Editor and scenario builder -----------------------------------------------------------------

def template_choices() -> list[tuple[str, str]]:
    """(name, one-line description) of every host template the engine offers."""
    return facts.template_choices()


def editor_config(*, topology: Topology, user, csrf_token: str,
                  document_url: str | None = None) -> dict:
    """The JSON config ``templates/designer/editor.html`` reads (``editor-config``).

    With ``document_url`` (the editor view's ``?document=<revision id>``) the current revision's
    document is not in the config, and not read here: ``document`` is null and the page fetches
    ``document_url`` beside it (``designer/editor_document.py``). A topology without a revision
    always carries its blank document inline.
    """
    if document_url is not None and topology.current_revision_id is not None:
        number, document = topology.revision_number, None
    else:
        revision, document_url = topology.current_revision, None
        number = revision.number if revision is not None else None
        document = (revision.document if revision is not None else
                    {"format": "fabricscope.topology/1", "name": topology.name,
                     "groups": [], "nodes": [], "links": []})
    api = "/api/v1/"
    return {
        "topology_id": topology.pk,
        "revision": number,
        "document": document,
        "document_url": document_url,
        "catalog": facts.catalog(),
        "templates": [{"name": n, "label": f"{n} — {d}"} for n, d in template_choices()],
        "readonly": not selectors.topology_can(user, topology, "edit"),
        "urls": {"save": f"{api}topologies/{topology.pk}/revisions/",
                 "build": f"{api}topologies/build-preview/",
                 "validate": f"{api}validate/",
                 "template_host": f"{api}templates/{{name}}/host/",
                 "import_host": f"{api}topologies/import-preview/",
                 "topology": reverse("topology_detail", args=[topology.pk])},
        "csrf_token": csrf_token,
        # Kind colours and shapes shared with the result views (editor.html prints it as #fs-style).
        "style": style_json(),
    }


def scenario_targets(revision: TopologyRevision) -> dict:
    """What the scenario builder lists of a revision: the groups (``[(id, "id · kind")]``, the
    pattern form's group suggestions) and how many groups, nodes and links the failure picker
    searches (``counts``). Nodes and links are not listed: the picker asks
    :func:`scenario_target_search` (a 2,048-host design has 300k of them)."""
    summary, _ = revision_digest(revision)
    return {"groups": [(gid, f"{gid} · {kind}") for gid, kind in summary["groups"]],
            "counts": summary["counts"], "revision_id": revision.pk}


#: Targets one search of the failure picker answers (more are announced, not sent).
TARGET_SEARCH_LIMIT = 50
#: Characters of a search query (an id is at most 256).
TARGET_QUERY_MAX = 256


def scenario_target_search(revision: TopologyRevision, query: str) -> dict:
    """Failure targets of a revision whose id or label holds ``query``: ``{"results": [{"id",
    "label"}], "more": bool, "limit": TARGET_SEARCH_LIMIT}`` (an empty query: the first ones)."""
    query = "".join(ch for ch in (query or "")[:TARGET_QUERY_MAX] if ch not in "\t\n\r")
    _, targets = revision_digest(revision)
    results, more = digest.targets_search(targets, query, TARGET_SEARCH_LIMIT)
    return {"results": results, "more": more, "limit": TARGET_SEARCH_LIMIT}


def unknown_targets(revision: TopologyRevision, ids: list[str]) -> list[str]:
    """Of ``ids``, those that name no group, node nor link of the revision."""
    _, targets = revision_digest(revision)
    return digest.targets_known(targets, ids)


def revision_head(revision_id: int | None) -> TopologyRevision | None:
    """A revision without its document (a page that shows its number must not parse 40 MB)."""
    if revision_id is None:
        return None
    return TopologyRevision.objects.defer("stored_document", "patch").filter(pk=revision_id).first()


def revision_digest(revision: TopologyRevision) -> tuple[dict, bytes]:
    """The revision's ``(summary, targets)`` (``designer.bridge.digest``), as stored when it was
    saved; a revision saved before digests existed (or of an older digest version) has it
    computed from its document here — slow on a big design, and not stored: a page never writes."""
    row = (RevisionDigest.objects.filter(revision_id=revision.pk)
           .values_list("summary", "targets").first())
    if row is not None and (row[0] or {}).get("version") == digest.DIGEST_VERSION:
        return row[0], bytes(row[1])
    return digest.revision_digest(selectors.revision_document_parsed(pk=revision.pk))


def job_status(job: SimulationJob) -> dict:
    """The small JSON the job page polls every second."""
    done = job.state in TERMINAL_STATES
    result_url = None
    if job.state == "succeeded":  # a build's result is its topology
        result_url = (reverse("topology_detail", args=[job.topology_id]) if job.kind == "build"
                      else reverse("job_result", args=[job.pk]))
    return {"id": job.pk, "state": job.state, "state_label": job.get_state_display(),
            "progress": job.progress, "message": job.message, "error": job.error if done else "",
            "terminal": done, "cancel_requested": job.cancel_requested, "result_url": result_url,
            "attempts": job.attempts,
            "started_at": job.started_at.isoformat() if job.started_at else None,
            "finished_at": job.finished_at.isoformat() if job.finished_at else None}


def job_overview(workload: dict | None) -> dict | None:
    """What the scenario page's job workload holds (phases, ranks, steps), or None without one."""
    return bridge.job_overview(workload) if workload else None


def link_editor_config(*, topology: Topology, link_url: str, document_url: str | None = None) -> dict:
    """Editor config for a share-link visitor: read-only, no save/build/validate endpoints; the
    document fetched from ``document_url`` beside the page, as in :func:`editor_config`."""
    config = editor_config(topology=topology, user=None, csrf_token="", document_url=document_url)
    config.update({"readonly": True, "csrf_token": "",
                   "urls": {"topology": link_url}})
    return config


# --- Result and compare pages ---------------------------------------------------------------------
# Figures come from designer.figures (plain Python: no engine, no numpy at import time).

def _topology_of(job) -> dict | None:
    revision = getattr(job, "revision", None)
    doc = getattr(revision, "document", None)
    return doc if isinstance(doc, dict) else None


def result_context(*, job=None, result: dict, topology_doc: dict | None = None,
                   selected: int | None = None, figures=None) -> dict:
    """Template context of ``designer/result.html`` for any job kind (simulate, sweep, compare).

    Parameters
    ----------
    job : SimulationJob, optional
        Its revision's document is the topology when ``topology_doc`` is not given.
    result : dict
        ``fabricscope.result/1``, ``fabricscope.sweep/1`` or a policy comparison; of a stored
        job, ``SimulationResult.data`` (the head: the page reads no flow) is enough.
    topology_doc : dict, optional
    selected : int, optional
        Sweep ranking entry to detail (the page's ``?failure=<index>``).
    figures : FigureSet, optional
        The job's stored figures (``services.result_page_figures``, which builds and stores them
        on a first visit); without them the figures are built here, in memory (previews, tests).

    Returns
    -------
    dict
        ``figures`` (key → figure dict; the ``figures.base.FigureSet`` given: test keys with
        ``in``, reading a figure parses them), ``view`` (``"result"``, ``"sweep"``
        or ``"policies"``), ``headline`` (numbers printed as text), ``result_data``,
        ``failure_index``, ``has_topology``, ``figure_style`` (:func:`designer.figures.style_json`,
        for ``json_script``), ``shared`` (a shared cluster's rows, :func:`designer.figures.shared.shared_rows`,
        or None). The view adds ``job`` (optional).
    """
    result = result or {}
    view = page_view(result)
    if view == "result":
        headline = figure_headline(result)
    else:
        headline = {"text": result.get("headline"), "baseline": result.get("baseline") or {},
                    "evaluated": result.get("evaluated"), "over": result.get("over") or []}
    if figures is not None:
        figs, has_topology = figures, getattr(job, "revision_id", None) is not None
    else:
        doc = topology_doc if topology_doc is not None else _topology_of(job)
        figs, has_topology = page_figures(result, topology_doc=doc, selected=selected), bool(doc)
    # figures_script: #fs-figures (+ #fs-path-index) pre-serialized: compact, fast escaping
    # (json_script escapes through Python), the flow index apart so the browser parses it last.
    return {"figures": figs, "view": view, "headline": headline, "result_data": result,
            "shared": shared_rows(result) if view == "result" else None,
            "failure_index": selected, "has_topology": has_topology, "figure_style": style_json(),
            "figures_script": mark_safe(figures_html(figs, getattr(figs, "texts", None)))}


def compare_context(*, a: dict, b: dict) -> dict:
    """Template context of ``designer/compare.html``.

    Returns
    -------
    dict
        ``figures``, ``headline_a``, ``headline_b``, ``rows`` (per pattern: A, B and the change,
        printed as a table), ``figure_style``. The view adds ``job_a`` / ``job_b``.
    """
    a, b = a or {}, b or {}
    pa = (a.get("summary") or {}).get("patterns") or {}
    pb = (b.get("summary") or {}).get("patterns") or {}
    rows = [compare_row(p, pa, pb) for p in list(pa) + [p for p in pb if p not in pa]]
    return {"figures": figures_for_compare(a, b), "headline_a": figure_headline(a), "headline_b": figure_headline(b),
            "rows": rows, "figure_style": style_json()}


def compare_bom_context(*, revision_a: TopologyRevision | None,
                        revision_b: TopologyRevision | None) -> dict:
    """The compare page's bill-of-materials table: the two designs the jobs ran on, side by side.

    Returns
    -------
    dict
        ``bom_a`` / ``bom_b`` (``fabricscope.bom/1`` or None: no switch), ``bom_rows``
        (``engine.bom.compare_boms`` rows with ``a_text``, ``b_text``, ``change`` printed and
        ``css``: ``fs-good`` / ``fs-bad`` when B is better / worse, ``fs-changed`` when only
        different), ``same_design`` (both jobs ran on one revision), ``bom_label_a`` /
        ``bom_label_b`` (``pod-2 rev 3``).
    """
    same = revision_a is not None and revision_b is not None and revision_a.pk == revision_b.pk
    bom_a = bridge.revision_bom(revision_a)
    bom_b = bom_a if same else bridge.revision_bom(revision_b)  # one design: one BOM to compute
    return {"bom_a": bom_a, "bom_b": bom_b, "bom_rows": _bom_rows(bom_a, bom_b), "same_design": same,
            "bom_label_a": _revision_label(revision_a), "bom_label_b": _revision_label(revision_b)}


def _bom_rows(bom_a: dict | None, bom_b: dict | None) -> list[dict]:
    rows = []
    if bom_a or bom_b:
        for row in bridge.compare_boms(bom_a, bom_b):
            css = {"B": "fs-good", "A": "fs-bad"}.get(row["better"]) or ("fs-changed" if row["differs"] else "")
            rows.append({**row, "a_text": bom_value(row["a"], row["unit"]),
                         "b_text": bom_value(row["b"], row["unit"]), "css": css,
                         "change": "" if not row["differs"] or row["delta"] is None
                         # a ratio's change is a number ("+1"), not a ratio ("+1:1")
                         else bom_value(row["delta"], "" if row["unit"] == ":1" else row["unit"],
                                         signed=True)})
    return rows


def _revision_label(revision: TopologyRevision | None) -> str:
    return "" if revision is None else f"{revision.topology.name} rev {revision.number}"


def editor_config_script(config: dict) -> str:
    """``<script id="editor-config" type="application/json">``, as Django's ``json_script`` writes
    it (``&``, ``<``, ``>`` as ``\\uXXXX``) but compact and through orjson: a 32k-GPU design's
    85 MB configuration encodes several times faster and is smaller to parse
    (docs/PERFORMANCE.md, "Editor: open a 32k-GPU design collapsed"). Safe to print in a template."""
    import orjson

    text = orjson.dumps(config, option=orjson.OPT_NON_STR_KEYS).decode()
    for char, escaped in (("&", "\\u0026"), ("<", "\\u003C"), (">", "\\u003E")):
        text = text.replace(char, escaped)
    return mark_safe(f'<script id="editor-config" type="application/json">{text}</script>')


# --- Compare: two designs' BOMs, and the pickers of the other side ------------------------------

#: Entries a compare picker lists (newest first); more would make a select no one scrolls.
COMPARE_CHOICES_LIMIT = 50


def design_revision(*, user, topology_pk: int, number: int | None) -> TopologyRevision:
    """Revision ``number`` of a visible design (its current one when None), without its
    document; Http404 when unseen or when the design has no revision yet."""
    if number is None:
        number = selectors.topology_get(user=user, pk=topology_pk).revision_number
        if not number:
            raise Http404("this design has no revision yet")
    return selectors.revision_get(user=user, topology_pk=topology_pk, number=number, with_document=False)


def compare_designs_context(*, revision_a: TopologyRevision, revision_b: TopologyRevision) -> dict:
    """Two designs (or two revisions of one) compared by their bills of materials, no job needed.

    The BOMs come from the revisions' digests (stored at save: no document is read, so two
    40 MB designs compare as fast as two small ones).

    Returns
    -------
    dict
        As :func:`compare_bom_context`, plus ``revision_a`` / ``revision_b``.
    """
    same = revision_a.pk == revision_b.pk
    bom_a = revision_bom(revision_a)
    bom_b = bom_a if same else revision_bom(revision_b)
    return {"revision_a": revision_a, "revision_b": revision_b, "bom_a": bom_a, "bom_b": bom_b,
            "bom_rows": _bom_rows(bom_a, bom_b), "same_design": same,
            "bom_label_a": _revision_label(revision_a), "bom_label_b": _revision_label(revision_b)}


def compare_result_choices(*, user, job: SimulationJob) -> list[tuple[int, str]]:
    """Finished jobs of ``job``'s kind that ``user`` may see, other than ``job``, newest first:
    ``(job id, "job 12 · pod-2 r3 · ring-16")`` for the result picker."""
    rows = (selectors.job_list(user=user, state="succeeded").filter(kind=job.kind)
            .exclude(pk=job.pk)[:COMPARE_CHOICES_LIMIT])
    return [(j.pk, " · ".join(filter(None, (f"job {j.pk}", f"{j.topology.name} r{j.revision.number}" if j.revision_id else j.topology.name,
                                            j.scenario.name if j.scenario_id else "")))) for j in rows]


def compare_design_choices(*, user, revision: TopologyRevision) -> list[tuple[str, list[tuple[str, str]]]]:
    """The design picker's groups: the other revisions of ``revision``'s design, then the other
    designs ``user`` may see (their current revision); empty groups left out. Values are ``db``
    parameters (``12:3``, ``14``)."""
    topology = revision.topology
    own = [(f"{topology.pk}:{r.number}", f"r{r.number} · {r.message or '(no message)'}"[:90])
           for r in selectors.revision_list(user=user, topology_pk=topology.pk)[:COMPARE_CHOICES_LIMIT]
           if r.number != revision.number]
    others = [(str(t.pk), f"{t.name} (r{t.revision_number})")
              for t in selectors.topology_list(user=user).exclude(pk=topology.pk)
              .filter(current_revision__isnull=False)[:COMPARE_CHOICES_LIMIT]]
    groups = [(f"Other revisions of {topology.name}", own), ("Other designs (current revision)", others)]
    return [(label, options) for label, options in groups if options]


__all__ += ["COMPARE_CHOICES_LIMIT", "design_revision", "compare_designs_context", "compare_result_choices",
            "compare_design_choices"]
