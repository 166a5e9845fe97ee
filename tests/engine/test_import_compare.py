"""The imported host's path matrix next to the file's (designer/engine/io/compare.py).

DGX A100 ``topo -m`` (tests/engine/data/import/dgx-a100-topo-m.txt): 8 GPUs, NV12 between
every pair, NIC0/NIC1 PXB to GPU0/GPU1, GPU0 SYS to GPUs' NICs under other NUMA nodes::

    GPU0  X  NV12 … | PXB PXB SYS SYS …      (18 columns: GPU0-7, NIC0-9)
"""
from __future__ import annotations

from designer.engine.io import import_text
from tests.engine._import_helpers import read


def test_nvidia_smi_file_and_engine_matrices_agree_cell_by_cell():
    result = import_text(read("dgx-a100-topo-m.txt"))
    m = result.matrix
    assert m["rows"] == [f"GPU{i}" for i in range(8)]
    assert m["labels"] == m["rows"] + [f"NIC{i}" for i in range(10)]
    assert m["input"] == m["engine"] and m["differ"] == []
    assert m["input"][0][:10] == ["X"] + ["NV12"] * 7 + ["PXB", "PXB"]
    assert m["names"]["NIC0"] == "mlx5_0" and m["source"]["NIC0"] == "NIC0"


def test_an_inconsistent_matrix_shows_where_the_engine_differs():
    """GPU0-NIC0 said PIX on GPU0's row but PXB on NIC0's: no PCIe tree gives both, so the
    engine's tree differs from the file somewhere, and says where."""
    text = read("dgx-a100-topo-m.txt").decode()
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if "GPU0\x1b[0m\t X " in line)
    cells = lines[at].split("\t")
    cells[9] = "PIX"                                   # GPU0 row, NIC0 column (was PXB)
    lines[at] = "\t".join(cells)
    result = import_text("\n".join(lines))
    m = result.matrix
    assert m["differ"]                                  # some cell cannot be reproduced
    for row, col, said, got in m["differ"]:
        i, j = m["rows"].index(row), m["labels"].index(col)
        assert (m["input"][i][j], m["engine"][i][j]) == (said, got) and said != got
        assert any(f"{row}/{col}: {said} in the input, {got} imported" in w for w in result.warnings)
    # Every other cell agrees.
    same = sum(a == b for ra, rb in zip(m["input"], m["engine"]) for a, b in zip(ra, rb))
    assert same == 8 * 18 - len(m["differ"])


def test_xml_files_have_no_matrix_of_their_own():
    result = import_text(read("dgx-h200-nccl-topo.xml"))
    m = result.matrix
    assert m["input"] is None and m["differ"] == []
    assert m["engine"][0] == ["X", "NV18", "NV18", "NV18", "PIX", "SYS"]
    assert m["names"]["GPU0"] == "0000:18:00.0"       # the file names devices by bus id
