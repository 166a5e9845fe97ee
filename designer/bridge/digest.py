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

__all__ = ["DIGEST_VERSION", "MAX_STORED_DIFF", "DocumentLookup", "revision_digest", "patched_digest", "digest_after_edit", "patch_diff",
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
# A link with an end of these kinds may be counted by the BOM whatever its tech.
_LINK_END_KINDS = frozenset({"switch", "storage", "nic"})


def revision_digest(document: dict, *, bom: dict | None | bool = False) -> tuple[dict, bytes]:
    """The ``(summary, targets)`` of a normalized document; ``bom``: the BOM already known
    (``False``: compute it, ~0.6 s at 1,024 hosts)."""
    groups = document.get("groups") or []
    bom, tallies = _bom(document) if bom is False else (bom, None)
    summary = {
        "version": DIGEST_VERSION,
        "hosts": [{"id": g["id"], "template": g.get("template", ""), "parent": g.get("parent", "")}
                  for g in groups if g.get("kind") == "host"],
        "groups": [[g["id"], g.get("kind", "")] for g in groups],
        "counts": {k: len(document.get(k) or []) for k in ("groups", "nodes", "links")},
        "bom": bom,
        "bom_tallies": tallies,   # what a saved edit adds its fabric items to (model.bom_edit)
        "diff": None,   # from the previous revision (patched_digest, or set by the save)
    }
    return summary, zlib.compress(target_lines(document).encode("utf-8"), 1)


def patched_digest(base: dict, stored: tuple[dict, bytes] | None, patch: dict,
                   document: dict) -> tuple[dict, bytes]:
    """:func:`revision_digest` of ``document`` (``base`` with ``patch`` applied), reusing the
    base's stored ``(summary, targets)`` where the patch leaves them or they can be told from the
    edited items (:func:`digest_after_edit`): the BOM kept, moved between its rows or told from
    its tallies, the counts and failure targets' lines edited; else the whole digest."""
    summary, targets = _reused_digest(base, stored, patch, document)
    return {**summary, "diff": patch_diff(base, patch, document)}, targets


def _reused_digest(base: dict, stored: tuple[dict, bytes] | None, patch: dict,
                   document: dict) -> tuple[dict, bytes]:
    edited = digest_after_edit(stored, patch, _edits(base, patch, document), DocumentLookup(base, document))
    return edited if edited is not None else revision_digest(document)


def _edits(base: dict, patch: dict, document: dict) -> dict:
    """:func:`digest_after_edit`'s ``edits`` of ``patch`` on ``base`` (``document``: the result)."""
    edits = {}
    for key in ("nodes", "links"):
        part = patch.get(key) if isinstance(patch.get(key), dict) else {}
        named = {op: _ids(part.get(op)) for op in ("remove", "update", "add")}
        if any(named.values()):
            edits[key] = _edits_of(base.get(key) or [], document.get(key) or [], named)
    return edits


def _ids(items) -> list:
    """The ids a patch operation names, in its order (ids, or items with an id)."""
    return [x.get("id") if isinstance(x, dict) else x for x in items or []]


def _edits_of(before: list, after: list, named: dict) -> dict:
    """One collection's edits, found by id in the lists before and after the patch."""
    wanted = set(named["remove"]) | set(named["update"])
    found = {item.get("id"): (i, item) for i, item in enumerate(before) if item.get("id") in wanted}
    news = {item.get("id"): item for item in after if item.get("id") in set(named["update"]) | set(named["add"])}
    return {"removed": [found[i] for i in named["remove"] if i in found],
            "updated": [(*found[i], news[i]) for i in named["update"] if i in found and i in news],
            "added": [news[i] for i in named["add"] if i in news]}


def digest_after_edit(stored: tuple[dict, bytes] | None, patch: dict,
                      edits: dict, lookup=None) -> tuple[dict, bytes] | None:
    """The digest after ``patch``, told from the base's stored ``(summary, targets)`` and the
    edited items alone — or None when it cannot be (then it is made from the whole document).

    It can when no group and no top-level field the digest reads changes (``name`` and
    ``layout`` may), so hosts and groups stay, and the BOM can be told: every node and link
    updated keeps what the BOM reads of it (``engine.model.bom.bom_reads``: a GPU's or NIC's
    attrs, a cable's latency) or is a switch whose model, radix or port speed changed (its rows
    moved, ``bom_after_switch_update``); fabric cables, switches, NICs and GPUs added or removed
    are added to or taken from the stored BOM's tallies (``engine.model.bom_edit``; a device
    removed and added again under its id is an update). Then the stored digest as it is when
    nothing is added or removed and no label changes (a latency edited, the usual edit), else
    with the counts and the failure targets' lines edited in place.

    ``lookup`` answers ``node(id)`` and ``node_kind(id)`` (after the edit, or before it for a
    node it removed), ``group(id)`` and ``links_at(id)`` (the links at a node after it):
    :class:`DocumentLookup`, or the indexed edit itself. A link is of the fabric when its tech
    is a network's or an end is a switch, NIC or storage server; without ``lookup`` every link
    is taken to be, and no fabric item may be added or removed.

    ``edits``: per ``nodes``/``links``, ``{"removed": [(position, item)], "updated":
    [(position, old item, new item)], "added": [items]}``, positions in the document the patch
    was applied to.
    """
    summary = stored[0] if stored else None
    if not (isinstance(summary, dict) and summary.get("version") == DIGEST_VERSION):
        return None
    if set(patch) - {"nodes", "links"} - _UNREAD_FIELDS:
        return None
    after = _bom_after(summary, edits, lookup)
    if after is None:
        return None
    bom, tallies = after
    if bom is not summary.get("bom") or tallies is not summary.get("bom_tallies"):
        summary = {**summary, "bom": bom, "bom_tallies": tallies}
        stored = (summary, stored[1])
    if not any(e["removed"] or e["added"] for e in edits.values()) and all(
            _label(key, old) == _label(key, new) for key, e in edits.items() for _, old, new in e["updated"]):
        return stored
    return _edited_targets(summary, stored[1], edits)


def _bom_after(summary: dict, edits: dict, lookup) -> tuple[dict | None, dict | None] | None:
    """The BOM and its tallies after the edits, told from the stored ones (see
    :func:`digest_after_edit`), or None when the whole document must be counted."""
    from designer.engine.model.bom import bom_rows_ordered

    bom, tallies = summary.get("bom"), summary.get("bom_tallies")
    if isinstance(bom, dict) and not bom_rows_ordered(bom):
        return None   # counted before the rows' order was total: counted again, once
    fabric = _fabric_items(edits, lookup)
    if fabric is None:
        return None
    if any(removed or added for removed, added in fabric.values()):
        return _bom_after_fabric_edit(bom, tallies, edits, fabric, lookup)
    for key, e in edits.items():
        for _, old, new in e["updated"]:
            bom = _bom_updated(bom, key, old, new, lookup)
            if bom is _RECOUNT:
                return None
    return bom, tallies


def _fabric_items(edits: dict, lookup) -> dict | None:
    """Per ``nodes``/``links``: the fabric items removed and added. A node removed and added again
    under its id (a device replaced) is an update: taken out of both when the BOM reads the same
    of both versions (its links the edit leaves alone still count alike), else None (counted
    whole)."""
    from designer.engine.model.bom import bom_reads

    fabric = {}
    for key, e in edits.items():
        removed = {i.get("id"): i for _, i in e["removed"]}
        replaced = set(removed) & {i.get("id") for i in e["added"]} if key == "nodes" else set()
        for item in e["added"]:
            if item.get("id") in replaced and bom_reads(key, removed[item.get("id")]) != bom_reads(key, item):
                return None
        fabric[key] = ([i for i in removed.values() if i.get("id") not in replaced and _of_fabric(key, i, lookup)],
                       [i for i in e["added"] if i.get("id") not in replaced and _of_fabric(key, i, lookup)])
    return fabric


def _bom_after_fabric_edit(bom, tallies, edits: dict, fabric: dict, lookup):
    """Fabric links or switches added or removed (``model.bom_edit``); an update in the same edit
    must leave what the BOM reads as it was."""
    from designer.bridge.common import json_safe
    from designer.engine.model.bom_edit import bom_after_fabric_edit

    if lookup is None or any(_bom_updated(bom, key, old, new, lookup) is not bom
                             for key, e in edits.items() for _, old, new in e["updated"]):
        return None
    no_items = ([], [])
    done = bom_after_fabric_edit(bom, tallies, {
        "nodes_removed": fabric.get("nodes", no_items)[0], "nodes_added": fabric.get("nodes", no_items)[1],
        "links_removed": fabric.get("links", no_items)[0], "links_added": fabric.get("links", no_items)[1]},
        lookup.node, lookup.group)
    if done is None or json_safe(list(done)) != list(done):
        return None   # (a non-finite figure, which the database's JSON refuses: the whole count answers)
    return done


#: :func:`_bom_updated`'s answer when the BOM must be counted from the whole document.
_RECOUNT = object()


def _bom_updated(bom, key: str, old: dict, new: dict, lookup):
    """``bom`` after one item updated from ``old`` to ``new``, or :data:`_RECOUNT`."""
    from designer.bridge.common import json_safe
    from designer.engine.model.bom import bom_after_switch_update, bom_reads, switch_ports_used

    if bom_reads(key, old) == bom_reads(key, new) or (
            key == "links" and not (_of_fabric(key, old, lookup) or _of_fabric(key, new, lookup))):
        return bom
    # Only a switch's model, radix or port speed is moved between rows; any other change of what
    # the BOM reads (a node's kind, group or storage mark, a fabric link's ends) is counted again.
    if key != "nodes" or lookup is None or not isinstance(bom, dict):
        return _RECOUNT
    try:
        moved = bom_after_switch_update(bom, old, new, switch_ports_used(new["id"], lookup.links_at(new["id"])))
    except (TypeError, ValueError, KeyError):   # what the BOM cannot count (a radix "64")
        return _RECOUNT
    # (a non-finite figure, which the database's JSON refuses: the whole count answers)
    return _RECOUNT if moved is None or json_safe(moved) != moved else moved


def _of_fabric(key: str, item: dict, lookup) -> bool:
    """Whether the BOM may read ``item``: a node of a kind it counts; a link of a network tech or
    with an end the BOM counts (the fabric summary's injection is any NIC⇄switch link)."""
    if key == "nodes":
        return _in_fabric(key, item) or bool((item.get("attrs") or {}).get("storage"))
    if _in_fabric(key, item) or lookup is None:
        return True
    return any(lookup.node_kind(item.get(end)) in _LINK_END_KINDS for end in ("a", "b"))


class DocumentLookup:
    """:func:`digest_after_edit`'s ``lookup`` answered from the whole documents before and after."""

    def __init__(self, before: dict, after: dict):
        self._before, self._after, self._nodes, self._groups = before, after, None, None

    def node(self, node_id) -> dict | None:
        """The node after the edit, or before it for one the edit removed."""
        if self._nodes is None:   # built on the first question: most edits never ask one
            self._nodes = {n.get("id"): n for n in self._before.get("nodes") or []}
            self._nodes.update((n.get("id"), n) for n in self._after.get("nodes") or [])
        return self._nodes.get(node_id)

    def node_kind(self, node_id):
        node = self.node(node_id)
        return node.get("kind") if node is not None else None

    def group(self, group_id) -> dict | None:
        """The group after the edit."""
        if self._groups is None:
            self._groups = {g.get("id"): g for g in self._after.get("groups") or []}
        return self._groups.get(group_id)

    def links_at(self, node_id) -> list[dict]:
        return [lk for lk in self._after.get("links") or [] if node_id in (lk.get("a"), lk.get("b"))]


def _edited_targets(summary: dict, targets: bytes, edits: dict) -> tuple[dict, bytes] | None:
    """The counts and the targets' lines after ``edits`` (see :func:`digest_after_edit`). The
    text is cut at its newlines by byte offset and only the edited lines are made: at 100,000
    GPUs it holds 1.9 M lines, which splitting into strings and joining again took ~0.4 s."""
    import numpy as np

    counts = dict(summary.get("counts") or {})
    sizes = [counts.get(k, 0) for k in ("groups", "nodes", "links")]
    raw = zlib.decompress(targets) if targets else b""
    ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0x0A)
    if len(ends) != sum(sizes) or (raw and not raw.endswith(b"\n")):
        return None   # a digest that does not hold one line per item: made again whole

    def start(line: int) -> int:   # byte offset where line ``line`` starts (len(raw) past the last)
        return int(ends[line - 1]) + 1 if line else 0

    pieces, first = [], 0
    for key, size in zip(("groups", "nodes", "links"), sizes):
        e = edits.get(key) or {"removed": [], "updated": [], "added": []}
        made = {position: _line(key, new).encode("utf-8") + b"\n" for position, _, new in e["updated"]}
        made.update((position, b"") for position, _ in e["removed"])
        kept = first
        for position in sorted(made):
            pieces += [raw[start(kept):start(first + position)], made[position]]
            kept = first + position + 1
        pieces.append(raw[start(kept):start(first + size)])
        pieces += [_line(key, item).encode("utf-8") + b"\n" for item in e["added"]]
        if key != "groups":
            counts[key] = size - len(e["removed"]) + len(e["added"])
        first += size
    return {**summary, "counts": counts}, zlib.compress(b"".join(pieces), 1)


def _line(key: str, item: dict) -> str:
    """An item's ``id<TAB>label`` line of the failure targets (without its newline)."""
    if key == "groups":
        return f'{item["id"]}\tgroup · {item.get("kind", "")}'
    if key == "nodes":
        return f'{item["id"]}\t{item.get("kind", "")}'
    return f'{item["id"]}\tlink · {item.get("tech", "")}'


def _label(key: str, item: dict):
    return item.get("kind") if key == "nodes" else item.get("tech")


def _in_fabric(key: str, item: dict) -> bool:
    from designer.engine.catalog import TECHS

    if key == "nodes":
        return item.get("kind") in _BOM_NODE_KINDS
    tech = TECHS.get(item.get("tech"))
    return tech is None or tech.family in _NETWORK_FAMILIES


def _bom(document: dict) -> tuple[dict | None, dict | None]:
    """The document's BOM and its tallies, or ``(None, None)``: no switch, or a document the
    BOM cannot read."""
    from designer.bridge.common import json_safe
    from designer.engine.model.bom import fabric_bom_tallied

    try:
        result, tallies = fabric_bom_tallied(document)
    except (EngineError, KeyError, TypeError, ValueError):
        return None, None
    return (json_safe(result), json_safe(tallies)) if result["switches"] else (None, None)


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
    return "".join(f"{_line(key, item)}\n" for key in ("groups", "nodes", "links")
                   for item in document.get(key) or [])


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
