"""The figure dict every view returns: ``{"data", "layout", "config", "fabricscope"}``.

Pass ``data``, ``layout`` and ``config`` to ``Plotly.react``; ``fabricscope`` is ours: ``kind``,
``title``, ``table`` (``{"columns": [...], "rows": [[...]]}``, the figure's data for the CSV/JSON
buttons) and, per kind, what the browser needs for interaction. Colours of text, grid and
background are left to ``static/js/results.js``, which themes them from the page's CSS variables.
"""
from __future__ import annotations

import json

__all__ = ["figure", "empty_figure", "axis", "json_script_html", "figures_html"]

# What Django's json_script escapes (so the JSON can never close the <script> element), done with
# three str.replace calls: str.translate with a dict took 0.4 s on a 1,024-GPU page's 2 MB.
_SCRIPT_ESCAPES = (("&", "\\u0026"), ("<", "\\u003C"), (">", "\\u003E"))


def json_script_html(value, element_id: str) -> str:
    """``<script id=element_id type="application/json">`` holding ``value`` as compact JSON.

    The same element Django's ``json_script`` filter writes (``&``, ``<``, ``>`` escaped as
    ``\\uXXXX``), without spaces after separators and ~40x faster on megabytes of figures.
    Returns a plain ``str``; mark it safe where it is put into a template.
    """
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _SCRIPT_ESCAPES:
        text = text.replace(char, escaped)
    return f'<script id="{element_id}" type="application/json">{text}</script>'


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


def figures_html(figs: dict[str, dict]) -> str:
    """The page's figures as ``#fs-figures``, with the path view's flow index apart in ``#fs-path-index``.

    The index is ~80% of a 1,024-GPU result's figure JSON and only the flow picker reads it, so the
    browser parses it after the first figures are drawn (``static/js/results.js``), not before.
    """
    path = figs.get("path")
    index = ((path or {}).get("fabricscope") or {}).get("path_index")
    if index is None:
        return json_script_html(figs, "fs-figures")
    slim = {**path, "fabricscope": {k: v for k, v in path["fabricscope"].items() if k != "path_index"}}
    return json_script_html({**figs, "path": slim}, "fs-figures") + json_script_html(index, "fs-path-index")
