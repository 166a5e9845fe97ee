"""A shared cluster's result views (the result's ``jobs`` section, docs/FORMATS.md, Jobs with
placements): each job's step alone vs shared, the interference matrix, and who occupies which GPU.

The vendored Plotly bundle registers only ``scatter``, ``bar`` and ``box`` (static/vendor/VERSIONS.md;
a ``heatmap`` trace would be drawn as a scatter), so the grids here are **tiles of horizontal
bars**: a cell (row r, column c) is a bar of length 1 from ``base`` c on row r, coloured by its
value through a colour scale (the interference matrix) or by job (the occupancy picture). Cells
hold their numbers in ``table`` too, for the page's CSV/JSON buttons and for reading without the
picture.
"""
from __future__ import annotations

from collections import defaultdict

from designer.figures.base import axis, figure
from designer.figures.style import IDLE_COLOR, PALETTE, fmt_time, num, rnd

__all__ = ["MAX_OCCUPANCY_ROWS", "MAX_MATRIX_JOBS", "MAX_SHARED_LISTED", "shared_figures",
           "shared_steps_figure", "interference_figure", "occupancy_figure", "job_colors", "shared_rows"]

#: Rows of the occupancy picture: hosts up to this many, else racks (then runs of racks).
MAX_OCCUPANCY_ROWS = 256
#: Jobs drawn in the interference grid (the most slowed first); the table keeps the rest.
MAX_MATRIX_JOBS = 64
_ROW_PX, _CHROME_PX = 22, 150
_MAX_CELL_PX, _GRID_PX = 64, 360   # interference cells: up to 64 px, the grid ~360 px when it can
# Interference as a % slowdown: white at 0 %, red from 100 % (×2) on.
_SLOW_SCALE = [[0.0, "#f7f7f7"], [0.1, "#fde0c5"], [0.4, "#f59e5b"], [1.0, "#b2182b"]]
_SLOW_MAX_PCT = 100.0


def job_colors(ids: list[str]) -> dict[str, str]:
    """One palette colour per job id, in the section's job order (repeats past the palette)."""
    return {j: PALETTE[k % len(PALETTE)] for k, j in enumerate(ids)}


def shared_figures(result: dict, topology_doc: dict | None = None) -> dict[str, dict]:
    """``shared_steps``, ``interference`` and ``occupancy`` of a result with ``jobs`` ({} without)."""
    section = (result or {}).get("jobs")
    if not isinstance(section, dict) or not section.get("jobs"):
        return {}
    return {"shared_steps": shared_steps_figure(section), "interference": interference_figure(section),
            "occupancy": occupancy_figure(section, topology_doc)}


def shared_steps_figure(section: dict) -> dict:
    """Step time alone vs shared per job (ms), grouped bars; a step that never completes is a
    hatched stub named in its hover."""
    jobs = section["jobs"]
    ids = [j["id"] for j in jobs]
    alone = [num(j.get("alone_step_time_s")) for j in jobs]
    shared = [num(j.get("step_time_s")) for j in jobs]
    top = max([v for v in alone + shared if v is not None] or [0.0]) * 1e3
    data = [_step_bars("alone on an empty cluster", ids, alone, PALETTE[9], top),
            _step_bars("shared", ids, shared, PALETTE[1], top, jobs)]
    rows = [[j["id"], rnd(a, 9), rnd(s, 9), rnd(num(j.get("slowdown")), 6)]
            for j, a, s in zip(jobs, alone, shared)]
    worst = max(jobs, key=lambda j: num(j.get("slowdown"), 0.0))
    title = (f"Step time alone vs shared · most slowed: {worst['id']} ×{num(worst.get('slowdown'), 1.0):.2f}"
             if worst.get("slowdown") is not None else "Step time alone vs shared")
    return figure("shared_steps", title, data,
                  {"barmode": "group", "xaxis": axis("job", type="category"), "yaxis": axis("step time (ms)")},
                  table={"columns": ["job", "alone_s", "shared_s", "slowdown"], "rows": rows})


def _step_bars(name: str, ids: list, values: list, color: str, top_ms: float, jobs: list | None = None) -> dict:
    stub = 0.03 * top_ms or 1.0
    x = [v * 1e3 if v is not None else stub for v in values]
    text = []
    for k, v in enumerate(values):
        extra = ""
        if jobs is not None and jobs[k].get("bottleneck"):
            b = jobs[k]["bottleneck"]
            extra = (f"<br>bottleneck {b.get('resource')} ({b.get('tier')})"
                     + (f", shared with {', '.join(b['shared_with'])}" if b.get("shared_with") else ""))
        text.append(f"{ids[k]} {name}: {fmt_time(v) if v is not None else 'does not complete'}{extra}")
    patterns = ["/" if v is None else "" for v in values]
    return {"type": "bar", "name": name, "x": ids, "y": x, "hovertext": text, "hoverinfo": "text",
            "marker": {"color": color, "pattern": {"shape": patterns}}}


def interference_figure(section: dict) -> dict:
    """The job × job interference grid: row i, column j = how much j alone slows i, in %
    (``matrix[i][j]`` × 100, docs/ENGINE.md, Shared cluster); grey: the job itself, or a pair not
    solved (past the engine's pair limit). Bar tiles (module docstring)."""
    inter = section.get("interference") or {}
    ids, matrix = list(inter.get("jobs") or []), inter.get("matrix") or []
    keep = _most_slowed(section, ids)
    cells = {"x": [], "y": [], "base": [], "color": [], "text": [], "label": []}
    grey = {"x": [], "y": [], "base": [], "text": []}
    rows = []
    for r in keep:
        for c_pos, c in enumerate(keep):
            v = matrix[r][c] if r < len(matrix) and c < len(matrix[r]) else None
            rows.append([ids[r], ids[c], rnd(num(v), 6)])
            if r == c or v is None:
                _tile(grey, ids[r], c_pos, f"{ids[r]} · {ids[c]}: " + ("itself" if r == c else "not solved"))
                continue
            pct = 100.0 * float(v)
            _tile(cells, ids[r], c_pos, f"{ids[c]} slows {ids[r]} by {pct:.1f} %")
            cells["color"].append(min(pct, _SLOW_MAX_PCT))
            cells["label"].append(f"{pct:.0f}%" if pct >= 0.5 else "0")
    labels = [ids[c] for c in keep]
    data = [{"type": "bar", "orientation": "h", "name": "slowdown (%)", "y": cells["y"], "x": cells["x"],
             "base": cells["base"], "width": 0.96, "hovertext": cells["text"], "hoverinfo": "text",
             "text": cells["label"] if len(keep) <= 16 else None, "textposition": "inside",
             "insidetextanchor": "middle", "showlegend": False,
             "marker": {"color": cells["color"], "colorscale": _SLOW_SCALE, "cmin": 0, "cmax": _SLOW_MAX_PCT,
                        "showscale": True, "line": {"width": 0},
                        "colorbar": {"title": {"text": "slowed by (%)"}, "thickness": 12}}},
            {"type": "bar", "orientation": "h", "name": "itself / not solved", "y": grey["y"], "x": grey["x"],
             "base": grey["base"], "width": 0.96, "hovertext": grey["text"], "hoverinfo": "text",
             "marker": {"color": IDLE_COLOR}, "showlegend": False}]
    cell = max(_ROW_PX, min(_MAX_CELL_PX, _GRID_PX // max(len(keep), 1)))   # a few jobs: big cells
    height = _CHROME_PX + 40 + cell * len(keep)
    shown = "" if len(keep) == len(ids) else f" · the {len(keep)} most slowed of {len(ids)} jobs"
    layout = {"barmode": "overlay",
              "xaxis": axis("slowed by job (column)", range=[0, len(keep)], tickmode="array", showgrid=False,
                            zeroline=False, tickvals=[c + 0.5 for c in range(len(keep))], ticktext=labels, side="top"),
              "yaxis": axis("job slowed (row)", type="category", autorange="reversed", showgrid=False,
                            categoryorder="array", categoryarray=labels),
              "margin": {"l": 90, "r": 30, "t": 110, "b": 30}}
    return figure("interference", f"Interference: row slowed by column, % of its step alone{shown}", data, layout,
                  height=height, table={"columns": ["job", "slowed_by", "interference"], "rows": rows},
                  jobs=labels, pairs_solved=inter.get("pairs_solved"))


def _tile(cells: dict, row: str, col: int, text: str) -> None:
    cells["y"].append(row)
    cells["x"].append(1)
    cells["base"].append(col)
    cells["text"].append(text)


def _most_slowed(section: dict, ids: list[str]) -> list[int]:
    """Row/column positions drawn: all jobs, or the :data:`MAX_MATRIX_JOBS` most slowed (in order)."""
    if len(ids) <= MAX_MATRIX_JOBS:
        return list(range(len(ids)))
    slow = {j["id"]: num(j.get("slowdown"), 0.0) for j in section["jobs"]}
    top = sorted(range(len(ids)), key=lambda k: -slow.get(ids[k], 0.0))[:MAX_MATRIX_JOBS]
    return sorted(top)


def occupancy_figure(section: dict, topology_doc: dict | None = None) -> dict:
    """Who holds which GPU: one row per host and one tile per GPU, coloured by job (grey: free),
    up to :data:`MAX_OCCUPANCY_ROWS` hosts; beyond, one row per rack (a host's ``parent``; runs
    of racks past the same limit) with each job's GPUs there as stacked bars."""
    owner = {g: j["id"] for j in section["jobs"] for g in (j.get("placement") or {}).get("gpus") or []}
    hosts = _host_gpus(topology_doc, owner)
    colors = job_colors([j["id"] for j in section["jobs"]])
    if len(hosts) <= MAX_OCCUPANCY_ROWS:
        return _occupancy_hosts(hosts, owner, colors)
    return _occupancy_racks(_racks(topology_doc, hosts), hosts, owner, colors)


def _host_gpus(doc: dict | None, owner: dict) -> dict[str, list[str]]:
    """Host id → its GPU ids in local index order: from the document, else from the placements."""
    hosts: dict[str, list] = defaultdict(list)
    if doc:
        for n in doc.get("nodes") or []:
            if n.get("kind") == "gpu" and n.get("group"):
                hosts[n["group"]].append((num((n.get("attrs") or {}).get("index"), 0), n["id"]))
    else:
        for g in owner:
            hosts[g.split("/", 1)[0]].append((len(hosts[g.split("/", 1)[0]]), g))
    return {h: [g for _, g in sorted(v)] for h, v in hosts.items()}


def _occupancy_hosts(hosts: dict, owner: dict, colors: dict) -> dict:
    traces: dict[str, dict] = {}
    width = max((len(g) for g in hosts.values()), default=0)
    for h, gpus in hosts.items():
        for k, g in enumerate(gpus):
            who = owner.get(g)
            t = traces.setdefault(who or "", {"type": "bar", "orientation": "h", "name": who or "free",
                                              "y": [], "x": [], "base": [], "hovertext": [], "hoverinfo": "text",
                                              "width": 0.9, "marker": {"color": colors.get(who, IDLE_COLOR),
                                                                       "line": {"width": 0}}})
            _tile({"y": t["y"], "x": t["x"], "base": t["base"], "text": t["hovertext"]}, h, k,
                  f"{g}: {'job ' + who if who else 'free'}")
    data = [traces[j] for j in [*colors, ""] if j in traces]
    height = _CHROME_PX + _ROW_PX * max(len(hosts), 3)
    rows = [[g, owner.get(g)] for gpus in hosts.values() for g in gpus]
    layout = {"barmode": "overlay",
              "xaxis": axis("GPU (local index)", range=[0, width], tickmode="array", showgrid=False, zeroline=False,
                            tickvals=[k + 0.5 for k in range(width)], ticktext=[str(k) for k in range(width)]),
              "yaxis": axis("host", type="category", autorange="reversed", showgrid=False,
                            categoryorder="array", categoryarray=list(hosts)),
              "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
              "margin": {"l": 90, "r": 30, "t": 90, "b": 50}}
    used = sum(1 for g in rows if g[1])
    return figure("occupancy", f"Occupancy: {used:,} of {len(rows):,} GPUs held by {len(colors)} job(s)", data,
                  layout, height=height, table={"columns": ["gpu", "job"], "rows": rows}, level="host")


def _racks(doc: dict | None, hosts: dict) -> dict[str, list[str]]:
    """Row label → hosts: one row per rack (a host's ``parent``; a host without one is its own
    rack), merged into runs of consecutive racks when there are more than :data:`MAX_OCCUPANCY_ROWS`."""
    parent = {g["id"]: g.get("parent") or g["id"] for g in (doc or {}).get("groups") or []
              if g.get("kind") == "host"}
    racks: dict[str, list] = {}
    for h in hosts:
        racks.setdefault(parent.get(h, h), []).append(h)
    if len(racks) <= MAX_OCCUPANCY_ROWS:
        return racks
    names, per = list(racks), -(-len(racks) // MAX_OCCUPANCY_ROWS)
    return {f"{names[k]}…{names[min(k + per, len(names)) - 1]}": [h for r in names[k:k + per] for h in racks[r]]
            for k in range(0, len(names), per)}


def _occupancy_racks(racks: dict, hosts: dict, owner: dict, colors: dict) -> dict:
    count: dict[str, dict[str, int]] = {}
    for r, members in racks.items():
        c = count.setdefault(r, defaultdict(int))
        for h in members:
            for g in hosts[h]:
                c[owner.get(g) or ""] += 1
    labels = list(racks)
    data = [{"type": "bar", "orientation": "h", "name": j or "free", "y": labels,
             "x": [count[r].get(j, 0) for r in labels], "marker": {"color": colors.get(j, IDLE_COLOR)},
             "hovertemplate": f"%{{y}}: %{{x}} GPUs {'of ' + j if j else 'free'}<extra></extra>"}
            for j in [*colors, ""] if any(count[r].get(j) for r in labels)]
    rows = [[r, j or None, n] for r in labels for j, n in count[r].items()]
    height = _CHROME_PX + _ROW_PX * max(len(labels), 3)
    layout = {"barmode": "stack", "xaxis": axis("GPUs"),
              "yaxis": axis("rack", type="category", autorange="reversed", categoryorder="array",
                            categoryarray=labels),
              "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
              "margin": {"l": 110, "r": 30, "t": 90, "b": 50}}
    return figure("occupancy", f"Occupancy by rack: {len(hosts):,} hosts in {len(labels):,} rows", data, layout,
                  height=height, table={"columns": ["rack", "job", "gpus"], "rows": rows}, level="rack")


#: Shared resources listed on the page (the result keeps the engine's list; its total is named).
MAX_SHARED_LISTED = 50


def shared_rows(result: dict) -> dict | None:
    """What the result page prints of a shared cluster (None without ``jobs``): ``jobs`` (one
    row per job: id, GPUs, placement policy, step alone and shared as text, slowdown, its
    bottleneck and tier, the jobs it shares it with, fragmentation score), ``shared`` (the
    resources carrying two jobs or more, at most :data:`MAX_SHARED_LISTED`), ``shared_total``,
    ``headline``."""
    section = (result or {}).get("jobs")
    if not isinstance(section, dict) or not section.get("jobs"):
        return None
    rows = [_job_row(j) for j in section["jobs"]]
    shared = [{"resource": r.get("resource"), "tier": r.get("tier"), "jobs": r.get("jobs") or [],
               "utilization": f"{100 * num(r.get('utilization'), 0.0):.0f} %"}
              for r in (section.get("shared_resources") or [])[:MAX_SHARED_LISTED]]
    return {"jobs": rows, "shared": shared, "headline": section.get("headline") or "",
            "shared_total": section.get("shared_resources_total", len(section.get("shared_resources") or []))}


def _job_row(j: dict) -> dict:
    """One job's row of :func:`shared_rows` (times as text)."""
    b, slow = j.get("bottleneck") or {}, num(j.get("slowdown"))
    alone = num(j.get("alone_step_time_s"))
    return {"id": j["id"], "gpus": j.get("gpus"), "policy": (j.get("placement") or {}).get("policy") or "explicit",
            "alone": fmt_time(alone) if alone is not None else "—",
            "shared": fmt_time(num(j.get("step_time_s"))) if j.get("complete") else "does not complete",
            "slowdown": f"×{slow:.3f}" if slow is not None else "—", "slowed": bool(slow and slow > 1 + 1e-9),
            "bottleneck": b.get("resource") or "—", "tier": b.get("tier") or "",
            "shared_with": b.get("shared_with") or [],
            "fragmentation": rnd(num((j.get("fragmentation") or {}).get("score")), 3)}
