"""A saved edit's bill of materials told from the stored one: fabric links and switches added or
removed, without counting the whole document again.

Counting a 100,000-GPU design's BOM reads its 1.2 M links (most of a whole save's ~17 s). The
count keeps, besides the BOM, its **tallies** (:func:`designer.engine.model.bom.fabric_bom_tallied`):
per switch the ports its cables use, the capacity below and above it and its
tier, storage mark and role; the injection and the capacity into the top tier that the
bisection halves. An edit adds its links and switches to them, or takes them out, with the very
functions the count uses (``bom._count_link`` with a sign, ``fabric_summary.link_side``), so the
answer is the whole count's — ``tests/designer/test_digest_fabric_edits.py`` checks it over random
edits. (A switch row keeps the spelling of its first switch's radix and port speed: ``400`` and
``400.0`` are one row, equal either way.)

It cannot be told (None: count the whole document) when a sum could round differently in
another order (a capacity that is not a whole number of Gb/s), when the top tier changes (the
first core switch added, the last one removed), or when the edit leaves no switch. GPUs added or
removed change the count the power per GPU divides by.
"""
from __future__ import annotations

from designer.engine.catalog import TECHS
# The count's own steps (one module's privates, shared so that both ways count alike).
from designer.engine.model.bom import _NETWORK, _add_switch, _count_link, _finished_rows, _port_totals, _row_key, _totals
from designer.engine.model.bom import (TALLIES_VERSION, bom_rows_ordered, capacities_integral, link_rows,
                                       oversubscription, power, switch_groups, switch_meta)
from designer.engine.model.fabric_summary import bisection_gbps, link_gbps, link_side, top_role

__all__ = ["bom_after_fabric_edit"]

class _Unknown(Exception):
    """The edit cannot be told from the tallies."""


def bom_after_fabric_edit(bom: dict, tallies: dict | None, edit: dict, node_of, group_of) -> tuple[dict, dict] | None:
    """``(bom, tallies)`` after an edit that adds or removes fabric links and switches, or None.

    Parameters
    ----------
    bom, tallies : dict
        The stored BOM and its tallies (:func:`~designer.engine.model.bom.fabric_bom`).
    edit : dict
        ``nodes_removed``, ``nodes_added``, ``links_removed``, ``links_added``: item lists.
    node_of : callable
        Node id → the node after the edit (before it, for one the edit removed), or None.
    group_of : callable
        Group id → the group (the edit changes none), or None.
    """
    links = edit["links_removed"] + edit["links_added"]
    ends = {i: node_of(i) for link in links for i in (link.get("a"), link.get("b"))}
    if not _usable(bom, tallies) or None in ends.values() or not capacities_integral(links, ends):
        return None
    state = _State(bom, tallies, node_of, group_of)
    try:
        for link in edit["links_removed"]:
            state.link(link, -1)
        for node in edit["nodes_removed"]:
            state.node(node, -1)
        for node in edit["nodes_added"]:
            state.node(node, 1)
        for link in edit["links_added"]:
            state.link(link, 1)
        return state.result()
    except (_Unknown, KeyError, TypeError, ValueError):
        return None


def _usable(bom, tallies) -> bool:
    return (isinstance(bom, dict) and isinstance(tallies, dict) and tallies.get("version") == TALLIES_VERSION
            and tallies.get("integral") is True and bom_rows_ordered(bom))


class _State:
    """The BOM's rows and the tallies, as dicts an edit adds to and takes from."""

    def __init__(self, bom: dict, tallies: dict, node_of, group_of):
        self.bom, self.node_of = bom, node_of
        self.groups = switch_groups(bom)
        self.rows = {(r["kind"], r["tech"], r["reach"]): dict(r) for r in bom["links"]}
        self.used, self.down, self.up = (dict(tallies[k]) for k in ("used", "down", "up"))
        self.meta = {sid: list(m) for sid, m in tallies["switches"].items()}
        self.injection, self.top_in, self.top = tallies["injection"], tallies["top_in"], tallies["top"]
        self.gpus = bom["power"]["gpus"]
        self.parents = (_Parents(group_of), _Racks(group_of))

    def link(self, link: dict, sign: int) -> None:
        """Count one link in (``sign`` 1) or out (-1), as the whole count does."""
        a, b = self.node_of(link["a"]), self.node_of(link["b"])
        if a is None or b is None:
            raise _Unknown(link.get("id"))
        storage = any((n.get("attrs") or {}).get("storage") for n in (a, b))
        side = link_side(a["kind"], b["kind"], _role(a), _role(b), self.top, storage)
        if side == "injection":
            self.injection += sign * link_gbps(link)
        elif side == "top":
            self.top_in += sign * link_gbps(link)
        tech = TECHS.get(link.get("tech"))
        if tech is None or tech.family not in _NETWORK:
            return
        switches = {n["id"]: n for n in (a, b) if n["kind"] == "switch"}
        before = {sid: self.used.get(sid, 0) for sid in switches}
        _count_link(link, tech, {a["id"]: a, b["id"]: b}, self.parents, (self.used, self.down, self.up),
                    self.rows, sign)
        for sid, node in switches.items():
            row = self.groups.get(_row_key(node))
            if row is None:
                raise _Unknown(sid)   # a switch without its row: not this BOM's document
            row["ports_used"] += self.used[sid] - before[sid]
            for tally in (self.used, self.down, self.up):
                if tally.get(sid, 1) == 0:
                    del tally[sid]   # as the whole count, which has no entry for a switch without cables

    def node(self, node: dict, sign: int) -> None:
        """A node added (``sign`` 1) or removed (-1): a switch moves its row and the top tier, a
        GPU the power per GPU."""
        if node.get("kind") == "gpu":
            self.gpus += sign
        if node.get("kind") != "switch":
            return   # NICs, storage servers and the rest count only through their links
        sid = node["id"]
        if sign < 0:
            if sid in self.used or sid in self.down or sid in self.up or self.groups.get(_row_key(node)) is None:
                raise _Unknown(sid)   # cables left at a removed switch: not what a valid edit leaves
            del self.meta[sid]
        else:
            self.meta[sid] = switch_meta({sid: node})[sid]
        _add_switch(self.groups, node, 0, sign)

    def result(self) -> tuple[dict, dict] | None:
        top = top_role({role for _, storage, role in self.meta.values() if not storage})
        if top != self.top or not self.groups:
            return None   # the bisection's top tier changed, or no switch is left: counted whole
        switches = _finished_rows(self.groups)
        bom = {**self.bom, "switches": switches, "ports": _port_totals(switches), "links": link_rows(self.rows),
               "cables": _totals(self.rows, "cables"), "transceivers": _totals(self.rows, "transceivers"),
               "oversubscription": oversubscription(self.meta, self.down, self.up),
               "injection_gbps": self.injection, "bisection_gbps": bisection_gbps(self.injection, self.top_in, top),
               "power": power(switches, self.gpus)}
        tallies = {"version": TALLIES_VERSION, "integral": True, "used": self.used, "down": self.down,
                   "up": self.up, "switches": self.meta, "injection": self.injection, "top_in": self.top_in,
                   "top": top}
        return bom, tallies


def _role(node: dict):
    return (node.get("attrs") or {}).get("role") if node.get("kind") == "switch" else None


class _Parents:
    """``model.bom._same_rack``'s group → parent map, answered by ``group_of``."""

    def __init__(self, group_of):
        self._group_of = group_of

    def get(self, group_id):
        group = self._group_of(group_id) if group_id is not None else None
        return group.get("parent") if group else None


class _Racks:
    """``model.bom._same_rack``'s set of rack groups, answered by ``group_of``."""

    def __init__(self, group_of):
        self._group_of = group_of

    def __contains__(self, group_id) -> bool:
        group = self._group_of(group_id) if group_id is not None else None
        return bool(group) and group.get("kind") == "rack"
