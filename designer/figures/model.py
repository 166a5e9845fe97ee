"""What the figures read from a topology document and a result: hosts, loads, failures.

Plain data in, plain data out; the engine catalog is read only for a link's default capacity.
"""
from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache

from designer.figures.style import num, rnd

__all__ = ["natural", "Doc", "Loads", "catalog_capacity", "failed_targets", "LINK_HOVER", "link_customdata"]


@lru_cache(maxsize=1 << 16)  # a 1,024-GPU page sorts the same ~6,000 ids some 30,000 times
def natural(s: str) -> tuple:
    """Sort key that orders ``gpu2`` before ``gpu10``."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(s)))


class Doc:
    """What the figures need from a ``fabricscope.topology/1`` document: hosts, rows, links."""

    def __init__(self, doc: dict):
        self.doc = doc
        groups = {g["id"]: g for g in doc.get("groups") or []}
        self.nodes = {n["id"]: n for n in doc.get("nodes") or []}
        self.links = list(doc.get("links") or [])
        self.host_of = {nid: self._host(n.get("group"), groups) for nid, n in self.nodes.items()}
        self.hosts = sorted({h for h in self.host_of.values() if h}, key=natural)
        self.templates = {h: (groups.get(h) or {}).get("template") for h in self.hosts}
        self.positions = ((doc.get("layout") or {}).get("positions") or {})

    @staticmethod
    def _host(group, groups):
        seen = set()
        while group and group not in seen:
            seen.add(group)
            g = groups.get(group) or {}
            if g.get("kind") == "host":
                return group
            group = g.get("parent")
        return None

    def kind(self, nid: str) -> str:
        return (self.nodes.get(nid) or {}).get("kind", "other")

    def role(self, nid: str) -> str | None:
        return ((self.nodes.get(nid) or {}).get("attrs") or {}).get("role")

    def members(self) -> dict[str, list[str]]:
        """Node ids of every host, in document order."""
        out = defaultdict(list)
        for nid, h in self.host_of.items():
            if h:
                out[h].append(nid)
        return out


@lru_cache(maxsize=256)
def catalog_capacity(tech):
    """Default (effective) capacity of link technology ``tech`` in Gb/s, ``None`` when unknown."""
    try:
        # Imported here, not at the top: result pages must not pay the engine's numpy start-up
        # unless a link lacks its capacity.
        from designer.bridge.facts import link_capacity_gbps
        return link_capacity_gbps(tech)
    except Exception:  # pragma: no cover - catalog import problems must not break a page
        return None


class Loads:
    """Per link direction and per capacity node: load, capacity, utilization from ``resources``."""

    def __init__(self, result: dict):
        self.dirs: dict[str, dict] = defaultdict(dict)
        self.nodes: dict[str, dict] = {}
        self.by_id: dict[str, dict] = {}
        self._memo: dict[str, dict] = {}
        for r in result.get("resources") or []:
            self.by_id[r["id"]] = r
            if r.get("link"):
                self.dirs[r["link"]][r.get("dir") or "a>b"] = r
            else:
                self.nodes[r["id"]] = r

    def link(self, link: dict) -> dict:
        """``{"u": max util, "ab": (load, cap, util), "ba": (...), "cap": capacity}`` (Gb/s).

        Memoized by link id: a page asks for every link several times (heat, edges, host details).
        """
        memo = self._memo.get(link["id"])
        if memo is None:
            memo = self._memo[link["id"]] = self._link(link)
        return memo

    def _link(self, link: dict) -> dict:
        d = self.dirs.get(link["id"], {})
        cap = num(link.get("capacity_gbps")) or catalog_capacity(link.get("tech"))
        out = {"cap": cap}
        for key, name in (("ab", "a>b"), ("ba", "b>a")):
            r = d.get(name)
            out[key] = ((num(r.get("load_gbps"), 0.0), num(r.get("capacity_gbps")) or cap,
                         num(r.get("utilization"), 0.0)) if r else (0.0, cap, 0.0))
        out["u"] = max(out["ab"][2], out["ba"][2])
        if d:
            out["cap"] = max((x[1] or 0.0) for x in (out["ab"], out["ba"]))
        return out


def failed_targets(result: dict) -> dict[str, str]:
    """``{target id: mode}`` of the failures the result's scenario applied."""
    return {f.get("target"): f.get("mode", "down") for f in (result.get("scenario") or {}).get("failures") or []
            if f.get("target")}


# Hover of a link, filled by Plotly from each point's ``customdata`` (:func:`link_customdata`):
# the page ships numbers per link and this template once per trace, not a formatted string per
# link (a 1,024-GPU topology has ~1,000 drawn links; their strings were ~40% of the figure JSON).
LINK_HOVER = ("<b>%{customdata[0]}</b>%{customdata[9]}<br>tech %{customdata[1]}<br>"
              "%{customdata[2]} → %{customdata[3]}: %{customdata[4]:.3~r} / %{customdata[5]:.3~r} Gb/s "
              "(%{customdata[6]:.0%})<br>%{customdata[3]} → %{customdata[2]}: %{customdata[7]:.3~r} / "
              "%{customdata[8]:.3~r} Gb/s (%{customdata[10]:.0%})<extra></extra>")


def link_customdata(lid: str, tech, a: str, b: str, ab: tuple, ba: tuple, note: str = "",
                    failed: str | None = None) -> list:
    """``customdata`` of one link point for :data:`LINK_HOVER`.

    Parameters
    ----------
    lid, tech, a, b : str
        Link id, technology, end nodes (as drawn).
    ab, ba : tuple
        ``(load, capacity, utilization)`` of each direction (Gb/s, Gb/s, fraction), as
        :meth:`Loads.link` returns them.
    note : str
        Extra line(s) after the title (HTML, ``""`` for none), e.g. how many links are aggregated.
    failed : str, optional
        Failure mode when the link is failed.

    Returns
    -------
    list
        ``[id, tech, a, b, load a>b, cap a>b, util a>b, load b>a, cap b>a, note, util b>a]``;
        loads and capacities rounded to 0.01 Gb/s, utilizations to 0.001.
    """
    if failed:
        note = f"{note}<br><b>FAILED ({failed})</b>"
    return [lid, tech or "—", a, b, rnd(ab[0], 2), rnd(ab[1], 2), rnd(ab[2], 3), rnd(ba[0], 2), rnd(ba[1], 2),
            note, rnd(ba[2], 3)]
