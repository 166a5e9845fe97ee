"""AWS's region tuner: the (algorithm, protocol) aws-ofi-nccl makes NCCL run on p5, p5e and p5en.

The plugin does not model time: it holds polygons in the plane (log2 bytes, log2 ranks), measured
per instance type and ranks per node, each naming the pair that ran fastest there, and gives the
first polygon holding the collective's point a cost of 0 in NCCL's table — so NCCL runs that pair
(``region_get_coll_info_internal_v3``). A polygon whose pair NCCL cannot run is passed over; a
point in none, a collective the tables do not cover, or two nodes or fewer ("the regions are not
well defined", aws/aws-ofi-nccl#778) leave the choice to NCCL's own model.

The polygons are data (``aws_regions.json``, with the plugin commit they were read from); this
module only places a point: on an edge counts as inside, as the plugin's ``is_inside_region``
returns 0 there and any ``in_out >= 0`` chooses.
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
    table = platform_tables().get(platform, {}).get(str(ranks // nodes))
    if not table or kind not in table:
        return None
    point = _log2_point(size, ranks)
    for region in _polygons(platform, str(ranks // nodes), kind):
        algorithm, protocol, vertices = region
        if runs(algorithm, protocol) and _inside_or_on(point, vertices):
            return algorithm, protocol
    return None


@lru_cache(maxsize=None)
def _polygons(platform: str, per_node: str, kind: str) -> tuple:
    """``(algorithm, protocol, vertices in log2)`` of each polygon, in the plugin's order."""
    table = platform_tables()[platform][per_node]
    limit = _data()["limit"]
    points = {name: _extend(_log2_vertex(a, limit), _log2_vertex(b, limit),
                            _log2_point(limit["max_size"], limit["max_ranks"]))
              for name, (a, b) in (table.get("points") or {}).items()}
    return tuple((r["algorithm"], r["protocol"],
                  tuple(_resolve(v, points, limit) for v in r["vertices"])) for r in table[kind])


def _resolve(vertex, points: dict, limit: dict) -> tuple[float, float]:
    if isinstance(vertex, str):
        return points[vertex]
    x, y = (_coordinate(c, axis, points, limit) for axis, c in enumerate(vertex))
    return _log2(x), _log2(y)


def _coordinate(value, axis: int, points: dict, limit: dict) -> float:
    """A vertex coordinate in bytes or ranks: a number, a limit, or one coordinate of a point."""
    if not isinstance(value, str):
        return float(value)
    if value in limit:
        return float(limit[value])
    name, _, which = value.partition(".")
    return 2.0 ** points[name][0 if which == "x" else 1]


def _log2(v: float) -> float:
    return math.log2(v if v > 0 else _ZERO)


def _log2_point(size: float, ranks: float) -> tuple[float, float]:
    return _log2(size), _log2(ranks)


def _log2_vertex(vertex, limit: dict) -> tuple[float, float]:
    return tuple(_log2(_coordinate(c, axis, {}, limit)) for axis, c in enumerate(vertex))


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
    edges = list(zip(vertices, vertices[1:] + vertices[:1]))
    if any(_on_segment(p, a, b) for a, b in edges):
        return True
    # Even-odd ray casting towards the plugin's far point (twice the limits).
    far = _log2_point(2.0 * _data()["limit"]["max_size"], 2.0 * _data()["limit"]["max_ranks"])
    return sum(_crosses(p, far, a, b) for a, b in edges) % 2 == 1


def _on_segment(p, a, b) -> bool:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    if length2 == 0.0:
        return math.dist(p, a) < _EPS
    t = min(1.0, max(0.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
    return math.dist(p, (a[0] + t * dx, a[1] + t * dy)) < _EPS


def _crosses(p, far, a, b) -> bool:
    """Whether the segment ``p → far`` crosses edge ``a → b`` strictly inside the edge (a hit
    at an edge's end counts for neither edge, as in the plugin)."""
    rx, ry = far[0] - p[0], far[1] - p[1]
    ex, ey = b[0] - a[0], b[1] - a[1]
    denom = ex * ry - ey * rx
    if abs(denom) < _EPS:
        return False                         # parallel
    along_edge = ((p[0] - a[0]) * ry - (p[1] - a[1]) * rx) / denom
    if along_edge < _EPS or along_edge > 1 - _EPS:
        return False
    along_ray = ((p[0] - a[0]) * ey - (p[1] - a[1]) * ex) / denom
    return 0.0 <= along_ray <= 1.0
