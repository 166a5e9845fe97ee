"""Host-memory copies: engine (SM / copy engine), direction (write / read), the GPU's host link
and a Grace's shared NVLink-C2C port (designer.engine.catalog_copies, designer.engine.traffic.copies).

Hand derivations (PCI Express Base Specification framing, NVIDIA/nccl-tests#149 payload sizes):

- PCIe Gen5 x16, one direction: 32 GT/s × 16 lanes / 8 × 128/130 = 63.015 GB/s of symbols.
  SM write (128-byte payload, 24 bytes of STP + 4-DW header + LCRC): 63.015 × 128/152 = 53.07 GB/s;
  copy-engine write (256 B): 63.015 × 256/280 = 57.61 GB/s; a read answered in 64-byte
  completions (20 bytes each): 63.015 × 64/84 = 48.01 GB/s.
- NVLink-C2C, 450 GB/s a direction, 32 bytes a 128-byte packet: SM 450 × 128/160 = 360 GB/s,
  copy engine 450 × 256/288 = 400 GB/s. A Grace's port (450 a direction) is shared by its two GPUs.
"""
from __future__ import annotations

import numpy as np
import pytest

from designer.engine.analysis.simulate import simulate
from designer.engine.benchmarks.fidelity import build_topology
from designer.engine.catalog_copies import copy_payload_gbytes, pcie_symbol_gbytes
from designer.engine.errors import InvalidWorkload
from designer.engine.traffic.copies import copy_caps_gbps


def _topo(template, **params):
    return build_topology({"template": template, "hosts": 1, **({"params": params} if params else {})})


def _rate_gbytes(topo, ids, direction, engine="sm", nbytes=2**29):
    pattern = {"id": "o", "kind": "host_offload", "direction": direction, "participants": {"ids": ids},
               "bytes": nbytes, "engine": engine}
    result = simulate({"topology": topo, "workload": [pattern]})
    return nbytes / result["summary"]["patterns"]["o"]["completion_s"] / 1e9


def test_pcie_gen5_payload_rates_by_engine_and_direction():
    """Gen5 x16: symbols 63.015; SM write 53.07, CE write 57.61, 64-byte read completions 48.01."""
    assert pcie_symbol_gbytes("pcie5x16") == pytest.approx(32 * 16 / 8 * 128 / 130)
    assert copy_payload_gbytes("pcie5x16", "write", "sm") == pytest.approx(53.07, abs=0.01)
    assert copy_payload_gbytes("pcie5x16", "write", "ce") == pytest.approx(57.61, abs=0.01)
    assert copy_payload_gbytes("pcie5x16", "read", "ce") == pytest.approx(48.01, abs=0.01)
    assert copy_payload_gbytes("pcie4x16", "write", "sm") == pytest.approx(26.53, abs=0.01)
    assert copy_payload_gbytes("ddr5x8", "write", "sm") is None


def test_one_gpu_gen5_d2h_sm_and_ce_caps():
    """[h0/gpu0]--pcie5x16--[h0/pcie0]--pcie5x16--[h0/rc0]--[h0/cpu0]--[h0/mem0] (DGX H100).

    Per-flow caps: SM D2H 53.07 GB/s, CE D2H 57.61, CE H2D 48.01, SM H2D the measured
    non-posted-read 35.2 (nvbandwidth#24). The link's 48 GB/s planning rate still binds the
    writes, so the simulated D2H copy reads 48 for either engine; the CE read 48.0."""
    topo = _topo("dgx-h100")
    gpu, mem = topo.node_index["h0/gpu0"], topo.node_index["h0/mem0"]
    caps = lambda engine: copy_caps_gbps(topo, [gpu, mem], [mem, gpu], engine) / 8  # noqa: E731
    assert caps("sm") == pytest.approx([53.07, 35.2], abs=0.01)
    assert caps("ce") == pytest.approx([57.61, 48.01], abs=0.01)
    assert _rate_gbytes(topo, ["h0/gpu0"], "to_host", "sm") == pytest.approx(48.0)
    assert _rate_gbytes(topo, ["h0/gpu0"], "from_host", "sm") == pytest.approx(35.2)
    assert _rate_gbytes(topo, ["h0/gpu0"], "from_host", "ce") == pytest.approx(48.0)


def test_gb200_tray_c2c_copy_one_gpu():
    """GB200 tray: [gpu0]--nvlink-c2c--[cpu0 Grace]--[mem0]. One GPU copying to host: SM 360 GB/s
    (450 × 128/160), copy engine 400 (450 × 256/288); the link alone gave 450."""
    topo = _topo("gb200-nvl72", trays=1)
    assert _rate_gbytes(topo, ["h0/tray0/gpu0"], "to_host", "sm") == pytest.approx(360.0)
    assert _rate_gbytes(topo, ["h0/tray0/gpu0"], "to_host", "ce") == pytest.approx(400.0)
    assert _rate_gbytes(topo, ["h0/tray0/gpu0"], "from_host", "sm") == pytest.approx(360.0)


def test_gb200_gpus_copying_at_once_share_their_grace_port():
    """[gpu0]--+                       [gpu2]--+
               +--C2C 450/dir--[cpu0]          +--C2C 450/dir--[cpu1]
       [gpu1]--+                       [gpu3]--+

    Two GPUs of one Grace copying to host at once split its 450 GB/s: 225 each (each alone: 360);
    all four: 225 each, 900 for the tray. A GPU of the other Grace is not slowed."""
    topo = _topo("gb200-nvl72", trays=1)
    ids = ["h0/tray0/gpu0", "h0/tray0/gpu1"]
    assert _rate_gbytes(topo, ids, "to_host") == pytest.approx(225.0)
    assert _rate_gbytes(topo, [f"h0/tray0/gpu{k}" for k in range(4)], "to_host") == pytest.approx(225.0)
    idx = [topo.node_index[i] for i in ("h0/tray0/gpu0", "h0/tray0/gpu2")]
    mem = [topo.node_index[i] for i in ("h0/tray0/mem0", "h0/tray0/mem1")]
    assert np.allclose(copy_caps_gbps(topo, idx, mem) / 8, 360.0)


def test_unknown_engine_is_a_located_error():
    topo = _topo("dgx-h100")
    pattern = {"id": "o", "kind": "host_offload", "direction": "to_host", "participants": {"ids": ["h0/gpu0"]},
               "bytes": 1024, "engine": "dma"}
    with pytest.raises(InvalidWorkload) as err:
        simulate({"topology": topo, "workload": [pattern]})
    assert any(p.path.endswith(".engine") and "dma" in p.message for p in err.value.problems)
