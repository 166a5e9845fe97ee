"""The figure dict every view returns: ``{"data", "layout", "config", "fabricscope"}``.

Pass ``data``, ``layout`` and ``config`` to ``Plotly.react``; ``fabricscope`` is ours: ``kind``,
``title``, ``table`` (``{"columns": [...], "rows": [[...]]}``, the figure's data for the CSV/JSON
buttons) and, per kind, what the browser needs for interaction. Colours of text, grid and
background are left to ``static/js/results.js``, which themes them from the page's CSS variables.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import orjson

__all__ = ["figure", "table_figure", "TABLE_TONES", "empty_figure", "axis", "figures_html", "figure_texts",
           "figures_from_texts", "FigureSet", "figures_version", "figures_key"]

# What Django's json_script escapes (so the JSON can never close the <script> element), done with
# three str.replace calls (C passes over the text): str.translate with a dict looks up every character.
_SCRIPT_ESCAPES = (("&", "\\u0026"), ("<", "\\u003C"), (">", "\\u003E"))


def figure(kind: str, title: str, data: list, layout: dict, *, table: dict | None = None,
           height: int = 420, **extra) -> dict:
    """A figure dict of ``kind`` with the house layout (``layout`` keys override it).

    Parameters
    ----------
    kind, title : str
    data : list of dict
        Plotly traces.
    layout : dict
    table : dict, optional
        ``{"columns": [...], "rows": [[...]]}``; empty when not given.
    height : int
        Pixels.
    **extra
        More ``fabricscope`` metadata (interaction data of this kind).
    """
    base = {"title": {"text": title, "x": 0.01, "xanchor": "left", "font": {"size": 15}},
            "height": height, "margin": {"l": 70, "r": 30, "t": 56, "b": 60}, "hovermode": "closest",
            "hoverlabel": {"font": {"size": 12}, "align": "left"},
            "legend": {"orientation": "h", "y": -0.18, "x": 0, "yanchor": "top"}}
    base.update(layout)
    config = {"displaylogo": False, "responsive": True,
              "toImageButtonOptions": {"format": "png", "filename": f"fabricscope-{kind}", "scale": 2},
              "modeBarButtonsToRemove": ["select2d", "lasso2d"]}
    meta = {"kind": kind, "title": title, "table": table or {"columns": [], "rows": []}, **extra}
    return {"data": data, "layout": base, "config": config, "fabricscope": meta}


# Row tones a table figure may give (static/css/results.css paints them from the page's colours).
TABLE_TONES = ("bad", "warn", "info", "good")


def table_figure(kind: str, title: str, columns: list[str], rows: list[list], *, headers: list[str] | None = None,
                 tones: list[str | None] | None = None, subtitle: str = "", shown: int | None = None) -> dict:
    """A figure that the page draws as an HTML ``<table>`` (``static/js/results.js``), not a Plotly trace.

    Text in a table should be selectable, copyable, read by screen readers and sortable; a Plotly
    ``table`` trace is none of these and needs the full plotly.js bundle. The figure dict keeps its
    usual shape (no traces): ``fabricscope.view`` is ``"table"`` and ``fabricscope.table`` is what is
    shown (and what the CSV/JSON buttons save).

    Parameters
    ----------
    kind, title : str
        Figure kind (stable: tests and the API use it) and plain-text caption.
    columns : list of str
        Column names of the data (CSV/JSON header).
    rows : list of list
        One list per row, ``len(columns)`` values each.
    headers : list of str, optional
        Column headings shown on the page (default: ``columns``).
    tones : list of str or None, optional
        Per row, one of :data:`TABLE_TONES` (row background) or None.
    subtitle : str
        A plain-text line under the caption (counts, truncation).
    shown : int, optional
        Rows drawn on the page (the first ``shown``; default all); the CSV still has every row.
    """
    if headers is not None and len(headers) != len(columns):
        raise ValueError(f"{kind}: {len(headers)} headers for {len(columns)} columns")
    if tones is not None and (len(tones) != len(rows) or not set(tones) <= {*TABLE_TONES, None}):
        raise ValueError(f"{kind}: tones must name one of {TABLE_TONES} (or None) per row")
    fig = figure(kind, title, [], {}, table={"columns": list(columns), "rows": rows}, view="table",
                 headers=list(headers or columns), subtitle=subtitle,
                 shown=len(rows) if shown is None else min(shown, len(rows)))
    if tones is not None:
        fig["fabricscope"]["tones"] = list(tones)
    return fig


def empty_figure(kind: str, title: str, message: str, *, height: int = 260) -> dict:
    """A figure that says why there is nothing to draw (instead of blank axes); ``height`` in pixels."""
    hidden = {"visible": False}
    return figure(kind, title, [], {
        "xaxis": hidden, "yaxis": hidden,
        "annotations": [{"text": message, "showarrow": False, "xref": "paper", "yref": "paper",
                         "x": 0.5, "y": 0.5, "font": {"size": 14}}]}, height=height, empty=True)


def axis(title: str, **kw) -> dict:
    """A titled, auto-margined axis layout (``kw`` adds Plotly axis attributes)."""
    return {"title": {"text": title, "standoff": 8}, "automargin": True, **kw}


def figure_texts(figs: dict[str, dict]) -> tuple[str, str | None]:
    """The page's figures as JSON text, and the path view's flow index apart (None: no index).

    The index is ~80% of a 1,024-GPU result's figure JSON and only the flow picker reads it, so the
    browser parses it after the first figures are drawn (``static/js/results.js``), not before.
    orjson (non-string keys as strings, as ``json.dumps`` writes them): ~10x faster on megabytes.
    """
    path = figs.get("path")
    index = ((path or {}).get("fabricscope") or {}).get("path_index")
    if index is None:
        return _json_text(figs), None
    slim = {**path, "fabricscope": {k: v for k, v in path["fabricscope"].items() if k != "path_index"}}
    return _json_text({**figs, "path": slim}), _json_text(index)


def figures_from_texts(figures_text: str, index_text: str | None) -> dict[str, dict]:
    """The figures dict :func:`figure_texts` wrote (the flow index back in the path figure)."""
    figs = orjson.loads(figures_text)
    if index_text is not None:
        figs["path"]["fabricscope"]["path_index"] = orjson.loads(index_text)
    return figs


def figures_html(figs: dict[str, dict], texts: tuple[str, str | None] | None = None) -> str:
    """The page's figures as ``#fs-figures``, with the path view's flow index apart in ``#fs-path-index``.

    ``texts``: :func:`figure_texts` of ``figs`` when already known (stored figures: no encoding).
    """
    figures_text, index_text = texts if texts is not None else figure_texts(figs)
    html = _script_from_text(figures_text, "fs-figures")
    return html if index_text is None else html + _script_from_text(index_text, "fs-path-index")


def _json_text(value) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _script_from_text(text: str, element_id: str) -> str:
    for char, escaped in _SCRIPT_ESCAPES:
        text = text.replace(char, escaped)
    return f'<script id="{element_id}" type="application/json">{text}</script>'


class FigureSet(Mapping):
    """Stored figures as the page reads them: keys known, JSON text parsed only if a figure is read.

    The result page only embeds the text and asks which views exist (``"timeline" in figures``), so a
    visit never builds the Python objects of a megabyte of figures; the API reads them as a dict.
    ``figs``: the figures themselves when the caller has just built them (nothing to parse back).
    """

    def __init__(self, keys: list[str], figures_text: str, index_text: str | None,
                 figs: dict | None = None):
        self.keys_list, self.texts = list(keys), (figures_text, index_text)
        self._figs: dict | None = figs

    def __contains__(self, key) -> bool:
        return key in self.keys_list

    def __iter__(self):
        return iter(self.keys_list)

    def __len__(self) -> int:
        return len(self.keys_list)

    def __getitem__(self, key: str) -> dict:
        if self._figs is None:
            self._figs = figures_from_texts(*self.texts)
        return self._figs[key]


@lru_cache(maxsize=1)
def figures_version() -> str:
    """A digest of this package's source: stored figures built by other figure code are stale.

    Hashing the code itself, not a number someone must remember to bump: any change to a figure,
    a colour or a label gives new keys, and the pages rebuild their figures once.
    """
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


def figures_key(view: str, selected: int | None = None) -> str:
    """What a stored figure set was built from: figure code version, page view, sweep entry."""
    return f"{figures_version()}:{view}:{'-' if selected is None else int(selected)}"
