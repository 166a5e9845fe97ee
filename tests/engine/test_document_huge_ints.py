"""An integer beyond float range where a quantity is expected (a capacity, a latency) is a located
problem, not an OverflowError from compiling a document that passed (found in review)."""
import pytest

from designer.engine.errors import InvalidTopology
from designer.engine.model.fabrics import build_cluster
from designer.engine.model.topology import Topology


@pytest.mark.parametrize("where, key, sign, digits", [
    ("links", "capacity_ab_gbps", 1, 400),
    ("links", "capacity_ba_gbps", 1, 400),
    ("links", "capacity_gbps", 1, 400),
    ("links", "latency_ns", -1, 400),
    ("nodes", "capacity_gbps", 1, 400),
    ("links", "latency_ns", 1, 100_000),   # beyond str()'s digit limit too
])
def test_an_integer_beyond_float_range_is_located(where, key, sign, digits):
    doc = build_cluster("dgx-h100", 2, fabric="rail-optimized")
    doc[where][3][key] = sign * 10 ** digits
    with pytest.raises(InvalidTopology) as err:
        Topology.from_document(doc)
    assert [(p.path, "beyond float range" in p.message) for p in err.value.problems] == [(f"{where}[3].{key}", True)]
