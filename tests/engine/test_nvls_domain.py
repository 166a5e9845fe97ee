"""NVLS across a whole NVLink domain: the GPUs' links carry S·(m+1)/m each way, and the NVSwitch
plane sustains a bus bandwidth per GPU that does not grow with the domain (catalog
``NVLS_BUS_GBYTES``); the all-reduce takes the slower of the two (docs/FIDELITY.md)."""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine import catalog, catalog_nvswitch
from designer.engine.benchmarks import fidelity
from designer.engine.traffic.collectives import nvls
from designer.engine.traffic.collectives.common import Group
from designer.engine.traffic.collectives.sizing import pipeline_factor

GIB16 = 16 << 30


def _busbw(gpus: int, size: int = GIB16) -> dict:
    ids = [f"h0/tray{t}/gpu{g}" for t in range(gpus // 4) for g in range(4)]
    case = {"id": "x", "split": "calibration", "topology": {"template": "gb200-nvl72", "hosts": 1},
            "pattern": {"kind": "allreduce", "participants": {"ids": ids}, "algorithm": "nvls"},
            "curve": [{"bytes": size, "metric": "busbw_gbs", "published": 1.0}], "source": "x", "url": "x"}
    row = fidelity.evaluate_curve(case, fidelity.predict_curve(case), {"bandwidth": 0.1, "latency": 0.25})[0]
    return row


def test_switch_limited_by_hand():
    """72 GPUs, 16 GiB: the bus bytes 16 GiB × 2·71/72 = 33.88 GB take 36.83 ms at 920 GB/s; links
    whose data time is 30 ms at an efficiency of 0.709 would take 42.3 ms — slower, so kept —
    and 20 ms would take 28.2 ms: the switch's 36.83 ms binds (efficiency 20 / 36.83 = 0.543)."""
    group = Group(kind="allreduce", participants=np.arange(72), size=GIB16, blocks=[], hosts=[])
    floor = GIB16 * 2 * 71 / 72 / 920e9
    assert floor == pytest.approx(36.83e-3, rel=1e-3)
    assert nvls.switch_limited(0.709, 30e-3, group, 920.0) == 0.709
    assert nvls.switch_limited(0.709, 20e-3, group, 920.0) == pytest.approx(20e-3 / floor)
    assert nvls.switch_limited(0.709, 20e-3, group, None) == 0.709          # no figure: no limit
    reduce_scatter = Group(kind="reducescatter", participants=group.participants, size=GIB16, blocks=[], hosts=[])
    assert nvls.switch_limited(0.709, 20e-3, reduce_scatter, 920.0) == 0.709


def test_a_whole_rack_reads_the_switch_and_eight_gpus_their_links(monkeypatch):
    """At 72 GPUs the bus bandwidth is the switch's 920 GB/s × the pipeline fill at 16 GiB (24
    channels × 72 heads); at 8 GPUs the links bind and the figure does not depend on it."""
    full = _busbw(72)
    fill = pipeline_factor("nvls", "Simple", GIB16, catalog.nvls_channels(4), 72, 1)
    assert full["predicted"] == pytest.approx(920.0 * fill, rel=2e-3)
    eight = _busbw(8)["predicted"]
    assert eight < 920.0 * 0.99
    monkeypatch.setattr(catalog_nvswitch, "NVLS_BUS_GBYTES", {})
    assert _busbw(8)["predicted"] == pytest.approx(eight, rel=1e-9)
    unlimited = _busbw(72)["predicted"]
    # The links alone: 2(m-1)/(m+1) grows the bus bandwidth with the domain (×1.25 from 8 to 72).
    assert unlimited / eight == pytest.approx((2 * 71 / 73) / (2 * 7 / 9), rel=0.03)
    assert unlimited > full["predicted"] * 1.05


def test_hopper_has_no_switch_figure():
    assert catalog.nvls_bus_gbytes(3) is None and catalog.nvls_bus_gbytes(None) is None
    assert catalog.nvls_bus_gbytes(4) == 920.0 and catalog.nvls_bus_gbytes(5) == 920.0


def test_the_limit_holds_when_nvls_is_the_only_algorithm_allowed():
    """``algorithms: ["nvls"]`` leaves one candidate, which is not predicted against others:
    the switch's limit still applies (its data time is solved to compare with it)."""
    from designer.engine.traffic.collectives.select import plan_pattern

    topo = fidelity.build_topology({"template": "gb200-nvl72", "hosts": 1})
    gpus = topo.nodes_of_kind("gpu")
    plans = [plan_pattern(topo, {"kind": "allreduce", "participants": gpus, "bytes": GIB16, **choice})
             for choice in ({"algorithm": "nvls"}, {"algorithms": ["nvls"]})]
    assert plans[1].efficiency == pytest.approx(plans[0].efficiency, rel=1e-12)
    assert plans[0].efficiency < catalog.nvls_efficiency(4) * 0.95      # the switch binds at 72 GPUs
