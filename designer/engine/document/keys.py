"""The fields a ``fabricscope.topology/1`` document may hold, and the located refusal of any other.

A misspelled field used to be stored without a word: a link's ``"degrade": 0.5`` looked like a
degraded link and changed nothing, a ``"latency": 300`` left the catalog latency in place. Every
level the document owns — the top level, each group, node and link — now lists its fields, and
any other key is a problem located at that key (``links[12].degrade``) with the closest known
field as a suggestion.

User data still has a place, free-form and never checked beyond its nesting depth: ``attrs`` on
the document, on every group, node and link. ``fabric`` (what the cluster generator decided) and
``layout`` (the editor's positions) are the product's own free-form blocks.
:func:`designer.engine.document.normalizer.migrate_unknown_keys` moves the unknown fields of a
document stored before this rule into ``attrs``, so it can be read again.
"""
from __future__ import annotations

import json

import difflib
from typing import Callable

from designer.engine.document.rules import DIRECTION_KEYS

__all__ = ["KNOWN_KEYS", "FREE_FORM_KEYS", "unknown_keys", "check_unknown_keys"]

# Fields whose content is the user's or the product's own (free-form objects; depth bounded).
FREE_FORM_KEYS = frozenset({"attrs", "fabric", "layout"})

# Level -> every field it may hold (docs/FORMATS.md, Topology document).
KNOWN_KEYS = {
    "document": frozenset({"format", "name", "groups", "nodes", "links", "capacity_basis",
                           "attrs", "fabric", "layout"}),
    "group": frozenset({"id", "kind", "parent", "template", "attrs"}),
    "node": frozenset({"id", "kind", "group", "capacity_gbps", "attrs"}),
    "link": frozenset({"id", "a", "b", "tech", "capacity_gbps", "capacity_basis", "latency_ns",
                       *DIRECTION_KEYS, "bundle", "status", "attrs"}),
}

# Keys users put on a link or node meaning a failure, which belongs to the scenario instead.
_FAILURE_WORDS = frozenset({"degrade", "degraded", "factor", "failed", "failure", "failures", "down",
                            "mode"})
_FAILURE_HINT = ('a failure belongs in the scenario\'s "failures" '
                 '({"target": "<id>", "mode": "down" | "degrade", "factor": 0.5}), '
                 'not in the topology')

_LEVEL_NAMES = {"document": "the document", "group": "a group", "node": "a node", "link": "a link"}


def unknown_keys(item: dict, level: str) -> list:
    """The keys of ``item`` that ``level`` (``document``, ``group``, ``node``, ``link``) does not
    know, in the item's order."""
    known = KNOWN_KEYS[level]
    return [] if known.issuperset(item) else [k for k in item if k not in known]


def unknown_key_message(key, level: str) -> str:
    """What is wrong with ``key`` on ``level``: the key, the closest known field or the failure
    hint, and where user data goes instead."""
    shown = f'"{key}"' if isinstance(key, str) else repr(key)
    text = f"unknown field {shown} of {_LEVEL_NAMES[level]}"
    if isinstance(key, str) and key.lower() in _FAILURE_WORDS and level in ("link", "node"):
        return f"{text}: {_FAILURE_HINT}"
    guess = _closest(key, KNOWN_KEYS[level])
    if guess is not None:
        text += f'; did you mean "{guess}"?'
    return f"{text} (known: {', '.join(sorted(KNOWN_KEYS[level]))}; your own data goes under \"attrs\")"


def _closest(key, known: frozenset) -> str | None:
    if not isinstance(key, str):
        return None
    matches = difflib.get_close_matches(key.lower(), sorted(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def check_unknown_keys(add: Callable[[str, str], None], doc: dict, lists: dict,
                       shapes: dict | None = None) -> None:
    """Report every unknown key of ``doc`` through ``add(path, message)``.

    Parameters
    ----------
    add : callable
        The validator's problem collector.
    doc : dict
        The document (its top-level keys are checked).
    lists : dict
        ``{"groups": [...], "nodes": [...], "links": [...]}``: the lists the validator accepted as
        lists (non-dict items are the item walk's problem, skipped here).
    shapes : dict, optional
        ``{"nodes": set of key tuples, "links": ...}`` read by the column-wise acceptance: when
        none of them holds an unknown key, the list is not walked again (191k links at 16,384
        GPUs).
    """
    for key in unknown_keys(doc, "document"):
        add(key_path("", key), unknown_key_message(key, "document"))
    for name, level in (("groups", "group"), ("nodes", "node"), ("links", "link")):
        known_shapes = (shapes or {}).get(name)
        if known_shapes is not None and all(KNOWN_KEYS[level].issuperset(s) for s in known_shapes):
            continue
        _check_items(add, name, level, lists.get(name) or [])


def _check_items(add: Callable[[str, str], None], name: str, level: str, items: list) -> None:
    known = KNOWN_KEYS[level]
    for i, item in enumerate(items):
        if item.__class__ is dict and not known.issuperset(item):
            for key in unknown_keys(item, level):
                add(key_path(f"{name}[{i}]", key), unknown_key_message(key, level))


def key_path(prefix: str, key) -> str:
    """``prefix.key``, or ``prefix["key"]`` when the key is empty or holds a dot, bracket or
    space (the path must still point at one field: ``[""]``, never an empty path)."""
    text = str(key)
    if text and not any(c in text for c in '.[]" '):
        return f"{prefix}.{text}" if prefix else text
    return f"{prefix}[{json.dumps(text, ensure_ascii=False)}]"
