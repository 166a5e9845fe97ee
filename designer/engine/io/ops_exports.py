"""One entry point for the exports to packet-level simulators and operations tools.

=================  ==========================================  =====================================
format             files                                        module
=================  ==========================================  =====================================
``astra-sim``      ``network.yml``, ``system.json``              :mod:`.astrasim_out`
``htsim``          ``topology.topo``                             :mod:`.htsim_out`
``slurm-tree``     ``topology.conf``                             :mod:`.slurm_out`
``slurm-block``    ``topology.yaml``                             :mod:`.slurm_out`
``dot-air``        ``topology.dot``                              :mod:`.dot_out`
``netbox``         ``devices.csv``, ``interfaces.csv``,          :mod:`.netbox_out`
                   ``cables.csv``
=================  ==========================================  =====================================

A format with one file is answered as that text; a format with several as a *bundle*, the JSON
object ``{"format": "fabricscope.export-bundle/1", "export": <format>, "files": {name: text}}``
(the CLI writes the files into a directory instead when given ``-o DIR``). docs/FORMATS.md,
"Exports for simulators and operations", says what each format keeps and loses.
"""
from __future__ import annotations

import json

from designer.engine.errors import InvalidTopology, Problem

__all__ = ["OPS_FORMATS", "BUNDLE_FORMAT", "export_files", "bundle_text", "is_bundle"]

BUNDLE_FORMAT = "fabricscope.export-bundle/1"
#: Format -> file names it writes (their order is the bundle's).
OPS_FORMATS = {"astra-sim": ("network.yml", "system.json"), "htsim": ("topology.topo",),
               "slurm-tree": ("topology.conf",), "slurm-block": ("topology.yaml",),
               "dot-air": ("topology.dot",), "netbox": ("devices.csv", "interfaces.csv", "cables.csv")}


def is_bundle(fmt: str) -> bool:
    """True when ``fmt`` writes several files (answered as a bundle)."""
    return len(OPS_FORMATS.get(fmt, ())) > 1


def export_files(doc: dict, fmt: str) -> dict[str, str]:
    """The files of export ``fmt`` of topology document ``doc``, by name.

    Raises
    ------
    InvalidTopology
        Unknown format, an invalid document, or a design the format cannot describe (located).
    """
    if fmt == "astra-sim":
        from designer.engine.io.astrasim_out import astrasim_files

        return astrasim_files(doc)
    if fmt == "netbox":
        from designer.engine.io.netbox_out import netbox_csv

        return netbox_csv(doc)
    return {OPS_FORMATS[_known(fmt)][0]: _single(doc, fmt)}


def _known(fmt: str) -> str:
    if fmt not in OPS_FORMATS:
        raise InvalidTopology(f"unknown export format {fmt!r}",
                              [Problem("format", f"choose from {', '.join(OPS_FORMATS)}")])
    return fmt


def _single(doc: dict, fmt: str) -> str:
    if fmt == "htsim":
        from designer.engine.io.htsim_out import htsim_topology as write
    elif fmt == "slurm-tree":
        from designer.engine.io.slurm_out import slurm_tree_conf as write
    elif fmt == "slurm-block":
        from designer.engine.io.slurm_out import slurm_block_yaml as write
    else:
        from designer.engine.io.dot_out import air_dot as write
    return write(doc)


def bundle_text(fmt: str, files: dict[str, str]) -> str:
    """The bundle JSON of ``files`` (see the module docstring)."""
    return json.dumps({"format": BUNDLE_FORMAT, "export": fmt, "files": files}, indent=1) + "\n"
