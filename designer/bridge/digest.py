"""A revision's digest: what its pages show, computed from the document once, when it is saved.

A page of a 2,048-host design must not parse its ~40 MB document (2 s) nor load it into the
engine (5 s): the topology page, the host list and the scenario builder read this instead
(``designer.models.RevisionDigest``). Two parts:

- ``summary`` (small JSON): ``hosts`` (``[{"id", "template", "parent"}]`` in document order),
  ``groups`` (``[[id, kind]]``), ``bom`` (``fabricscope.bom/1`` or None: no switch, or a document
  the BOM cannot read), ``counts`` (groups, nodes, links);
- ``targets`` (bytes): zlib of the ``id<TAB>label`` lines of every group, node and link (the
  failure picker's search space: 300k lines at 16,384 GPUs, ~1 MB compressed).
"""
from __future__ import annotations

import zlib

from designer.engine.errors import EngineError

__all__ = ["DIGEST_VERSION", "MAX_STORED_DIFF", "revision_digest", "patched_digest", "reusable_digest", "patch_diff",
           "document_diff", "compose_diffs", "reverse_diff", "target_lines", "targets_search",
           "targets_known"]

#: Bumped when the summary's shape changes (a digest of another version is recomputed).
DIGEST_VERSION = 1
# Link techs of the fabric (the BOM counts only these; see engine model.bom).
_NETWORK_FAMILIES = ("ethernet", "infiniband")
# Top-level fields the digest and the diff do not read: the name (shown apart) and the editor's
# hand-placed positions (``layout``, what moving a device saves).
_UNREAD_FIELDS = frozenset({"name", "layout"})
# Node kinds the BOM reads (switch rows, storage cables, power per GPU, NICs on fabric links).
_BOM_NODE_KINDS = frozenset({"switch", "storage", "gpu", "nic"})


def revision_digest(document: dict, *, bom: dict | None | bool = False) -> tuple[dict, bytes]:
    """The ``(summary, targets)`` of a normalized document; ``bom``: the BOM already known
    (``False``: compute it, ~0.6 s at 1,024 hosts)."""
    groups = document.get("groups") or []
    summary = {
        "version": DIGEST_VERSION,
        "hosts": [{"id": g["id"], "template": g.get("template", ""), "parent": g.get("parent", "")}
                  for g in groups if g.get("kind") == "host"],
        "groups": [[g["id"], g.get("kind", "")] for g in groups],
        "counts": {k: len(document.get(k) or []) for k in ("groups", "nodes", "links")},
        "bom": _bom(document) if bom is False else bom,
        "diff": None,   # from the previous revision (patched_digest, or set by the save)
    }
    return summary, zlib.compress(target_lines(document).encode("utf-8"), 1)


def patched_digest(base: dict, stored: tuple[dict, bytes] | None, patch: dict,
                   document: dict) -> tuple[dict, bytes]:
    """:func:`revision_digest` of ``document`` (``base`` with ``patch`` applied), reusing the
    base's stored ``(summary, targets)`` where the patch cannot change them: the BOM when no item
    is added or removed, no group nor top-level field but ``name`` and ``layout`` (a device
    moved) changes, and every updated node and link is outside the fabric before and after (a
    latency edited inside a host, the usual patch); the whole digest when, besides, no updated item changes its label (a node's kind, a link's
    tech)."""
    summary, targets = _reused_digest(base, stored, patch, document)
    return {**summary, "diff": patch_diff(base, patch, document)}, targets


def _reused_digest(base: dict, stored: tuple[dict, bytes] | None, patch: dict,
                   document: dict) -> tuple[dict, bytes]:
    summary = stored[0] if stored else None
    if not (isinstance(summary, dict) and summary.get("version") == DIGEST_VERSION):
        return revision_digest(document)
    olds, news = _updated_items(base, patch)
    if olds is None or any(_in_fabric(key, item) for key, item in olds + news):
        return revision_digest(document)
    if [_label(k, i) for k, i in olds] == [_label(k, i) for k, i in news]:
        return summary, stored[1]
    return revision_digest(document, bom=summary["bom"])


def reusable_digest(stored: tuple[dict, bytes] | None, patch: dict, olds: list,
                    news: list) -> tuple[dict, bytes] | None:
    """The base's stored ``(summary, targets)`` when ``patch`` cannot change them (as
    :func:`patched_digest` reuses them, decided from the ``(key, item)`` pairs the patch updates,
    before and after, instead of the base document), else None."""
    summary = stored[0] if stored else None
    if not (isinstance(summary, dict) and summary.get("version") == DIGEST_VERSION):
        return None
    if set(patch) - {"nodes", "links"} - _UNREAD_FIELDS or any(
            set(patch.get(key) or {}) - {"update"} for key in ("nodes", "links")):
        return None
    if any(_in_fabric(key, item) for key, item in olds + news):
        return None
    if [_label(k, i) for k, i in olds] != [_label(k, i) for k, i in news]:
        return None
    return stored


def _updated_items(base: dict, patch: dict) -> tuple[list | None, list]:
    """``(key, base item)`` and ``(key, new item)`` of every update, in the same order; None
    when the patch does more than update nodes and links (and rename)."""
    if set(patch) - {"nodes", "links"} - _UNREAD_FIELDS:
        return None, []
    olds, news = [], []
    for key in ("nodes", "links"):
        part = patch.get(key) or {}
        if set(part) - {"update"}:
            return None, []
        updates = {item["id"]: item for item in part.get("update") or []}
        if updates:
            by_id = {item["id"]: item for item in base.get(key) or [] if item.get("id") in updates}
            olds += [(key, by_id[i]) for i in updates]
            news += [(key, item) for item in updates.values()]
    return olds, news


def _label(key: str, item: dict):
    return item.get("kind") if key == "nodes" else item.get("tech")


def _in_fabric(key: str, item: dict) -> bool:
    from designer.engine.catalog import TECHS

    if key == "nodes":
        return item.get("kind") in _BOM_NODE_KINDS
    tech = TECHS.get(item.get("tech"))
    return tech is None or tech.family in _NETWORK_FAMILIES


def _bom(document: dict) -> dict | None:
    from designer.bridge.common import json_safe
    from designer.engine.model.bom import fabric_bom

    try:
        result = fabric_bom(document)
    except (EngineError, KeyError, TypeError, ValueError):
        return None
    return json_safe(result) if result["switches"] else None


_COMPARED = {"nodes": ("kind", "group", "attrs", "capacity_gbps"),
             "links": ("a", "b", "tech", "capacity_gbps", "latency_ns", "bundle"),
             "groups": ("kind", "parent", "template")}


def document_diff(old: dict, new: dict) -> dict:
    """What changed between two topology documents, by element id.

    Returns
    -------
    dict
        For each of ``nodes``, ``links``, ``groups``: ``added`` and ``removed`` (sorted ids) and
        ``changed`` (``[{"id", "fields": {name: [old, new]}}]``), plus ``total`` (count of all
        entries) and ``name`` ([old, new] when renamed, else None).

    Example: ``{"nodes": [{"id": "a"}]}`` → ``{"nodes": [{"id": "a"}, {"id": "b"}]}`` gives
    ``nodes.added == ["b"]``.
    """
    out: dict = {"name": None, "total": 0}
    if (old or {}).get("name") != (new or {}).get("name"):
        out["name"] = [(old or {}).get("name"), (new or {}).get("name")]
    for section, fields in _COMPARED.items():
        before = {e.get("id"): e for e in (old or {}).get(section) or []}
        after = {e.get("id"): e for e in (new or {}).get(section) or []}
        changed = []
        for eid in sorted(before.keys() & after.keys(), key=str):
            if before[eid] == after[eid]:   # one C-level comparison for the ~all unchanged items
                continue
            delta = {f: [before[eid].get(f), after[eid].get(f)] for f in fields
                     if before[eid].get(f) != after[eid].get(f)}
            if delta:
                changed.append({"id": eid, "fields": delta})
        out[section] = {"added": sorted(after.keys() - before.keys(), key=str),
                        "removed": sorted(before.keys() - after.keys(), key=str),
                        "changed": changed}
        out["total"] += sum(len(v) for v in out[section].values())
    return out


#: Entries (added + removed + changed items) of a patch's diff kept with its revision; a larger
#: one is computed by the diff page from the two documents.
MAX_STORED_DIFF = 5000


def patch_diff(base: dict, patch: dict, document: dict) -> dict | None:
    """:func:`document_diff` of ``base`` -> ``document`` (``base`` with ``patch`` applied),
    reading only the items the patch names; None when it has more than :data:`MAX_STORED_DIFF`
    entries or a top-level field but ``name`` and ``layout`` (which the diff does not compare)
    changes."""
    if set(patch) - {"nodes", "links", "groups"} - _UNREAD_FIELDS:
        return None
    old, new = {"name": base.get("name")}, {"name": document.get("name")}
    for key in _COMPARED:
        part = patch.get(key) or {}
        named = {i for i in part.get("remove") or []} | {x.get("id") for op in ("update", "add")
                                                          for x in part.get(op) or []}
        if len(named) > MAX_STORED_DIFF:
            return None
        old[key] = [x for x in base.get(key) or [] if x.get("id") in named] if named else []
        new[key] = [x for x in document.get(key) or [] if x.get("id") in named] if named else []
    diff = document_diff(old, new)
    return diff if diff["total"] <= MAX_STORED_DIFF else None


def compose_diffs(diffs: list[dict]) -> dict | None:
    """The diff of revisions r0 -> rN from the stored diffs r0 -> r1, ..., r(N-1) -> rN: equal
    to :func:`document_diff` of r0 and rN, without reading either document.

    None when the chain cannot tell: an id removed and later added again (the stored diffs hold
    only the compared fields of a change, not the removed item's values), or a result over
    :data:`MAX_STORED_DIFF` entries (the caller then compares the documents).
    """
    name, sections = None, {section: {} for section in _COMPARED}
    for diff in diffs:
        if diff.get("name"):
            name = [name[0] if name else diff["name"][0], diff["name"][1]]
        for section, states in sections.items():
            if not _compose_section(states, diff.get(section) or {}):
                return None
    if name and name[0] == name[1]:
        name = None
    out: dict = {"name": name, "total": 0}
    for section, states in sections.items():
        out[section] = _section_of(states)
        out["total"] += sum(len(v) for v in out[section].values())
    return out if out["total"] <= MAX_STORED_DIFF else None


def _compose_section(states: dict, step: dict) -> bool:
    """Fold one step's ``added``/``removed``/``changed`` into ``states`` (id -> ``"added"``,
    ``"removed"`` or a ``{field: [old, new]}`` dict); False when the chain cannot tell."""
    for eid in step.get("added") or []:
        if eid in states:   # removed, then added again: what changed is not in the chain
            return False
        states[eid] = "added"
    for eid in step.get("removed") or []:
        if states.get(eid) == "added":
            del states[eid]   # added, then removed: no trace between the two ends
        else:
            states[eid] = "removed"
    for entry in step.get("changed") or []:
        eid = entry["id"]
        before = states.get(eid)
        if before == "added":
            continue          # still an addition, with its latest values
        fields = dict(before) if isinstance(before, dict) else {}
        for field, (old, new) in entry["fields"].items():
            first = fields[field][0] if field in fields else old
            if first == new:
                fields.pop(field, None)   # changed back
            else:
                fields[field] = [first, new]
        if fields:
            states[eid] = fields
        else:
            states.pop(eid, None)
    return True


def _section_of(states: dict) -> dict:
    def ids(state: str) -> list:
        return sorted((eid for eid, s in states.items() if s == state), key=str)

    changed = [{"id": eid, "fields": states[eid]}
               for eid in sorted((e for e, s in states.items() if isinstance(s, dict)), key=str)]
    return {"added": ids("added"), "removed": ids("removed"), "changed": changed}


def reverse_diff(diff: dict) -> dict:
    """The diff rN -> r0 of a diff r0 -> rN (additions and removals swapped, each change's
    ``[old, new]`` turned round)."""
    out: dict = {"name": list(reversed(diff["name"])) if diff.get("name") else None,
                 "total": diff["total"]}
    for section in _COMPARED:
        part = diff[section]
        out[section] = {"added": part["removed"], "removed": part["added"],
                        "changed": [{"id": c["id"], "fields": {f: [v[1], v[0]]
                                                             for f, v in c["fields"].items()}}
                                    for c in part["changed"]]}
    return out


def target_lines(document: dict) -> str:
    """``id<TAB>label`` of every group, node and link, one a line, each line ending in ``\\n``."""
    parts = [f'{g["id"]}\tgroup · {g.get("kind", "")}\n' for g in document.get("groups") or []]
    parts += [f'{n["id"]}\t{n.get("kind", "")}\n' for n in document.get("nodes") or []]
    parts += [f'{lk["id"]}\tlink · {lk.get("tech", "")}\n' for lk in document.get("links") or []]
    return "".join(parts)


def _text(targets: bytes) -> str:
    return zlib.decompress(targets).decode("utf-8") if targets else ""


def targets_search(targets: bytes, query: str, limit: int) -> tuple[list[dict], bool]:
    """The first ``limit`` targets whose id or label holds ``query`` (case-insensitive), in
    document order (groups, nodes, links), and whether there are more: ``[{"id", "label"}]``."""
    text = _text(targets)
    haystack, needle = text.lower(), query.lower()
    found, start = [], 0
    while len(found) <= limit:
        at = haystack.find(needle, start)
        if at < 0:
            break
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        ident, _, label = text[line_start:line_end].partition("\t")
        found.append({"id": ident, "label": f"{ident} · {label}"})
        start = line_end + 1
    return found[:limit], len(found) > limit


def targets_known(targets: bytes, ids: list[str]) -> list[str]:
    """Of ``ids``, those that are no group, node nor link of the digest's document."""
    text = "\n" + _text(targets)
    if len(ids) <= 8:   # a few: one substring search each; more: one set of every id
        return [i for i in ids if f"\n{i}\t" not in text]
    known = {line.partition("\t")[0] for line in text.split("\n")}
    return [i for i in ids if i not in known]
