"""The imported host's path matrix next to what the file says, for the user to compare.

After an import the engine classifies every GPU × (GPU, NIC) pair of the new host the way
``nvidia-smi topo -m`` does (:func:`designer.engine.model.pathclass.topo_matrix`). An
``nvidia-smi topo -m`` file *is* such a matrix, so both are returned cell by cell, in the
engine's row/column order, with the cells that differ counted. NCCL and hwloc XML files hold no
matrix: only the engine's is returned (``input`` is None), to check against the server's own
``nvidia-smi topo -m``.
"""
from __future__ import annotations

__all__ = ["import_matrix"]


def import_matrix(doc: dict, host_id: str, ids: dict, *, parsed: dict | None = None) -> dict:
    """Engine matrix of ``host_id`` in ``doc`` and, given ``parsed``, the file's.

    Parameters
    ----------
    doc : dict
        The imported ``fabricscope.topology/1`` document.
    host_id : str
        The imported host group.
    ids : dict
        Source names (``GPU0``, ``NIC1``, bus ids) -> node ids, as :func:`import_text` fills it.
    parsed : dict, optional
        :func:`designer.engine.io.nvidia_smi.parse_matrix` of the file, when it was a matrix.

    Returns
    -------
    dict
        ``rows`` and ``labels`` (engine labels ``GPU0``…, ``NIC0``…), ``source`` (label -> the
        file's name of that device: ``GPU3``, ``NIC1``, a bus id), ``names`` (the same with NIC
        legend names, e.g. ``mlx5_0``, for display), ``engine`` (codes per row), ``input``
        (the file's codes in the same order, ``None`` where it has no such cell, or ``input``
        None for XML files) and ``differ`` (list of ``[row, label, input, engine]``).
    """
    from designer.engine.model.pathclass import topo_matrix
    from designer.engine.model.topology import Topology

    engine = topo_matrix(Topology.compile(doc), host_id)
    source_of = {node: name for name, node in ids.items()}
    names = {label: source_of.get(node, label) for label, node in engine["ids"].items()}
    out = {"rows": engine["rows"], "labels": engine["labels"], "names": names, "source": names,
           "engine": engine["matrix"], "input": None, "differ": []}
    if parsed is None:
        return out
    legend = parsed.get("legend", {})
    out["names"] = {label: legend.get(name, name) for label, name in names.items()}
    grid = []
    for i, row in enumerate(engine["rows"]):
        cells = []
        for j, col in enumerate(engine["labels"]):
            code = parsed["matrix"].get((names[row], names[col]))
            code = "SYS" if code == "SOC" else code    # pre-2017 name of the same class
            cells.append(code)
            if code is not None and code != engine["matrix"][i][j]:
                out["differ"].append([row, col, code, engine["matrix"][i][j]])
        grid.append(cells)
    out["input"] = grid
    return out
