"""AWS's region tuner: the (algorithm, protocol) aws-ofi-nccl makes NCCL run on p5, p5e and p5en.

The plugin does not model time: it holds polygons in the plane (log2 bytes, log2 ranks), measured
per instance type and ranks per node, each naming the pair that ran fastest there, and gives the
first polygon holding the collective's point a cost of 0 in NCCL's table — so NCCL runs that pair
(``region_get_coll_info_internal_v3``). A polygon whose pair NCCL cannot run is passed over; a
point in none, a collective the tables do not cover, or two nodes or fewer ("the regions are not
well defined", aws/aws-ofi-nccl#778) leave the choice to NCCL's own model.

The polygons are data (``aws_regions.json``, with the plugin commit they were read from); this
module only places a point, with the plugin's own geometry (``is_inside_region``, ``intersect``,
``distance``, ``extend_region``): a point on an edge counts as inside (``in_out >= 0`` chooses).
"""
from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

__all__ = ["REGIONS_PATH", "platform_tables", "region_choice"]

REGIONS_PATH = Path(__file__).with_name("aws_regions.json")
_EPS = 1e-10          # the plugin's comparison tolerance, in log2 units
_ZERO = 1e-6          # the plugin maps a 0 coordinate to this before log2


@lru_cache(maxsize=1)
def _data() -> dict:
    return json.loads(REGIONS_PATH.read_text())


def platform_tables() -> dict:
    """Instance type → ranks per node (str) → its polygons, as stored."""
    return _data()["platforms"]


def region_choice(platform: str | None, kind: str, size: float, ranks: int, nodes: int,
                  runs) -> tuple[str, str] | None:
    """The (algorithm, protocol) the plugin forces for ``kind`` of ``size`` bytes over ``ranks``
    ranks on ``nodes`` hosts of ``platform`` (``"p5/p5e"``, ``"p5en"``), or None (NCCL chooses).

    ``runs(algorithm, protocol)``: whether NCCL could run the pair here (the plugin skips a
    polygon whose pair NCCL's table marks ignored)."""
    if platform is None or nodes <= 2 or ranks % nodes:
        return None
    point = _log2_point(size, ranks)
    for algorithm, protocol, vertices in _polygons(platform, str(ranks // nodes), kind):
        if runs(algorithm, protocol) and _inside_or_on(point, vertices):
            return algorithm, protocol
    return None


@lru_cache(maxsize=None)
def _polygons(platform: str, per_node: str, kind: str) -> tuple:
    """``(algorithm, protocol, vertices in log2)`` of each polygon, in the plugin's order; none for
    a platform, ranks per node or collective its tables do not hold."""
    table = platform_tables().get(platform, {}).get(per_node) or {}
    limit = _data()["limit"]
    points = {name: _extend(_resolve(a, {}, limit), _resolve(b, {}, limit), _far(1.0))
              for name, (a, b) in (table.get("points") or {}).items()}
    return tuple((r["algorithm"], r["protocol"],
                  tuple(_resolve(v, points, limit) for v in r["vertices"])) for r in table.get(kind, ()))


def _resolve(vertex, points: dict, limit: dict) -> tuple[float, float]:
    if isinstance(vertex, str):
        return points[vertex]
    x, y = (_coordinate(c, points, limit) for c in vertex)
    return _log2(x), _log2(y)


def _coordinate(value, points: dict, limit: dict) -> float:
    """A vertex coordinate in bytes or ranks: a number, a limit, or one coordinate of a point
    (``name.x``, ``name.y``); anything else is a data error, said as such."""
    if not isinstance(value, str):
        return float(value)
    if value in limit:
        return float(limit[value])
    name, _, which = value.partition(".")
    if name not in points or which not in ("x", "y"):
        raise ValueError(f"{REGIONS_PATH.name}: {value!r} is neither a limit nor name.x / name.y of a point")
    return 2.0 ** points[name][0 if which == "x" else 1]


def _log2(v: float) -> float:
    return math.log2(v if v > 0 else _ZERO)


def _log2_point(size: float, ranks: float) -> tuple[float, float]:
    return _log2(size), _log2(ranks)


def _extend(a, b, z) -> tuple[float, float]:
    """The line through ``a`` and ``b`` carried to ``z``'s x or y, whichever it meets first
    (the plugin's ``extend_region``, in log2 space)."""
    if a[0] == b[0]:
        return a[0], z[1]
    if a[1] == b[1]:
        return z[0], a[1]
    slope = (a[1] - b[1]) / (a[0] - b[0])
    intercept = b[1] - slope * b[0]
    at_zx = slope * z[0] + intercept
    if at_zx < z[1]:
        return z[0], at_zx
    return (z[1] - intercept) / slope, z[1]


def _inside_or_on(p, vertices) -> bool:
    """The plugin's ``is_inside_region`` ≥ 0: on an edge (its ``distance`` below the tolerance),
    or inside by even-odd ray casting towards a point beyond both limits."""
    edges = list(zip(vertices, vertices[1:] + vertices[:1]))
    if any(_distance(p, a, b) < _EPS for a, b in edges):
        return True
    return sum(_intersect(p, _far(2.0), a, b)[0] == 1 for a, b in edges) % 2 == 1


@lru_cache(maxsize=2)
def _far(scale: float) -> tuple[float, float]:
    """The limits (``max_size``, ``max_ranks``) times ``scale``, in log2: 1 is where extended
    vertices stop, 2 the plugin's ray-casting target beyond every polygon."""
    limit = _data()["limit"]
    return _log2_point(scale * limit["max_size"], scale * limit["max_ranks"])


def _cross(a, b) -> float:
    return a[0] * b[1] - a[1] * b[0]


def _intersect(x0, x1, y0, y1) -> tuple[int, tuple[float, float]]:
    """Whether segment ``x0 → x1`` crosses edge ``y0 → y1``, as the plugin's ``intersect``: 1
    crossing, −1 not, 0 parallel or at the edge's very end (counted for neither edge); and the
    point where the lines meet along the edge (the origin when parallel, as the plugin leaves it)."""
    dx = (x1[0] - x0[0], x1[1] - x0[1])
    dy = (y1[0] - y0[0], y1[1] - y0[1])
    d = _cross(dy, dx)
    if abs(d) < _EPS:
        return 0, (0.0, 0.0)
    along_edge = (_cross(x0, dx) - _cross(y0, dx)) / d
    meet = (y0[0] + along_edge * dy[0], y0[1] + along_edge * dy[1])
    if along_edge < -_EPS or along_edge > 1 + _EPS:
        return -1, meet
    if along_edge < _EPS or along_edge > 1 - _EPS:
        return 0, meet
    along_segment = (_cross(x0, dy) - _cross(y0, dy)) / d
    return (-1 if along_segment < 0 or along_segment > 1 else 1), meet


def _distance(p, a, b) -> float:
    """The plugin's ``distance``: from ``p`` to the foot of its perpendicular on edge ``a → b``,
    infinite when the foot is off the edge — or behind ``p`` along the perpendicular it casts
    (one side of the edge), which makes an edge hold points from one side only, as there."""
    perpendicular = (p[0] + (b[1] - a[1]), p[1] - (b[0] - a[0]))
    code, meet = _intersect(p, perpendicular, a, b)
    return math.inf if code == -1 else math.dist(meet, p)
