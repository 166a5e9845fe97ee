"""``nvidia-smi topo -m`` import: the imported host's topo_matrix IS the input matrix."""
from __future__ import annotations

import pytest

from designer.engine.errors import ImportFormatError
from designer.engine.io import import_text
from designer.engine.io.nvidia_smi import parse_matrix
from tests.engine._import_helpers import kinds, matrix_by_id, read


def assert_reproduced(text, result):
    """Every GPU-row cell of the input equals the imported host's class for the same pair."""
    parsed = parse_matrix(text if isinstance(text, str) else text.decode())
    got = matrix_by_id(result.document)
    cells = [(r, c) for (r, c) in parsed["matrix"] if r.startswith("GPU")]
    assert cells
    for r, c in cells:
        assert got[(result.ids[r], result.ids[c])] == parsed["matrix"][(r, c)], (r, c)
    assert not any("not reproduced" in w for w in result.warnings)


def test_dgx_a100_matrix_with_ansi_legend_crlf():
    """DGX A100 (NPS4: GPU pairs per NUMA node 3/1/7/5), NV12 between all GPUs, NIC0-7 PXB to
    their GPU pair, storage NICs 8-9 on NUMA 1 under another host bridge (NODE)."""
    text = read("dgx-a100-topo-m.txt")
    assert b"\x1b[4m" in text and b"\r\n" in text
    result = import_text(text)
    assert result.format == "nvidia-smi"
    assert_reproduced(text, result)
    k = kinds(result.document)
    assert (k["gpu"], k["nic"], k["nvswitch"]) == (8, 10, 1)
    assert k["cpu"] == 4 + 2                                          # 4 NUMA nodes + 2 root complexes
    nic8 = result.document["nodes"][[n["id"] for n in result.document["nodes"]].index(result.ids["NIC8"])]
    assert nic8["attrs"]["name"] == "mlx5_8"
    gpu0 = next(n for n in result.document["nodes"] if n["id"] == result.ids["GPU0"])
    assert gpu0["attrs"]["socket"] == 3                              # NUMA Affinity column
    for needle in ("NVLink generation", "PCIe generation", "NIC port speed"):
        assert any(needle in w for w in result.warnings)


COMMODITY = """\
        GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      SYS     PHB     SYS     0-15    0               N/A
GPU1    SYS      X      SYS     PIX     16-31   1               N/A
NIC0    PHB     SYS      X      SYS
NIC1    SYS     PIX     SYS      X

Legend:

  X    = Self
  PIX  = Connection traversing at most a single PCIe bridge

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
"""

HGX4 = "\tGPU0\tGPU1\tGPU2\tGPU3\tmlx5_0\tCPU Affinity\tNUMA Affinity\n" + "\n".join(
    f"GPU{i}\t" + "\t".join(" X " if i == j else "NV4" for j in range(4)) + f"\t{'PXB' if i < 2 else 'NODE'}\t0-63\t0"
    for i in range(4)) + "\nmlx5_0\tPXB\tPXB\tNODE\tNODE\t X \n"

MIXED = """\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity
GPU0\t X \tPIX\tPXB\tNODE\t0-7\t0
GPU1\tPIX\t X \tPXB\tNODE\t0-7\t0
GPU2\tPXB\tPXB\t X \tNODE\t0-7\t0
GPU3\tNODE\tNODE\tNODE\t X \t0-7\t0
"""


@pytest.mark.parametrize("text", [COMMODITY, COMMODITY.replace("\n", "\r\n"), HGX4, MIXED,
                                  COMMODITY.replace("    ", "\t")])
def test_matrices_reproduced(text):
    result = import_text(text)
    assert_reproduced(text, result)


def test_direct_nvlink_mesh_without_switch():
    """4 GPUs, NV4 to each other: 12 links a GPU fits A100's 12, so direct links, no NVSwitch."""
    result = import_text(HGX4)
    assert "nvswitch" not in kinds(result.document)
    assert sum(1 for l in result.document["links"] if l.get("tech") == "nvlink3x4") == 6


def test_single_gpu_no_nics():
    result = import_text("\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-7\t\tN/A\n")
    assert kinds(result.document)["gpu"] == 1


@pytest.mark.parametrize("text, needle", [
    ("hello world", "cannot tell"),
    ("\tGPU0\tGPU1\nGPU0\t X \tFOO\nGPU1\tFOO\t X \n", "unknown relation"),
    ("\tGPU0\tGPU1\nGPU0\t X \n", "cells"),
])
def test_garbage_is_a_clear_error(text, needle):
    with pytest.raises(ImportFormatError) as info:
        import_text(text)
    assert needle in info.value.message
