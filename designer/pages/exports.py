"""The topology page's Export menu: every format of ``GET /api/v1/topologies/{id}/export/``, each
with what the target tool does not keep (docs/FORMATS.md, "Exports for simulators and
operations").

The menu downloads through that API endpoint (session auth; ``static/js/export_menu.js``), so the
page and the API share one export and its limits; this module only names and describes the formats.
"""
from __future__ import annotations

from django.urls import reverse

__all__ = ["EXPORT_FORMATS", "export_menu"]

#: ``(format, label, what the target keeps and loses)`` in menu order: the design's own formats
#: first, then simulators, schedulers and operations tools.
EXPORT_FORMATS = (
    ("json", "Fabricscope JSON", "The revision's topology document as stored: nothing is lost."),
    ("graphml", "GraphML", "Nodes (kind, host) and links (tech, Gb/s, ns) for graph tools: racks, other "
                           "groups and attributes are lost."),
    ("astra-sim", "ASTRA-sim 2.0", "Network YAML + system JSON (a bundle): loses the PCIe tree, CPUs, tiers, "
                                   "oversubscription and rails; needs equal GPU counts per NVLink domain."),
    ("htsim", "htsim fat-tree", "csg-htsim .topo: loses what is inside a server and which spine a bundle "
                                "reaches; fabrics its generator cannot rebuild are refused."),
    ("slurm-tree", "Slurm topology.conf (tree)", "Each server under the leaf of its first NIC: the other rails' "
                                                 "leaves and the link speeds are lost."),
    ("slurm-block", "Slurm topology.yaml (block)", "A block per NVLink domain (an NVL72 rack): designs "
                                                   "without NVLink domains are refused."),
    ("dot-air", "NVIDIA Air DOT", "Servers, switches and cables with ports; rates and latencies are lost "
                                  "(Air does not model them)."),
    ("netbox", "NetBox CSV", "Devices, interfaces and cables (a bundle), status planned; no cable lengths "
                             "or rack positions."),
    ("simai-topo", "SimAI topology", "GPUs, NVSwitches, switches and links with rates; designs with NICs, "
                                     "CPUs or PCIe switches are refused (SimAI has no host interior)."),
)


def export_menu(topology_pk: int) -> list[dict]:
    """The menu's entries for a topology: ``format``, ``label``, ``note`` and the API ``url``
    that answers the current revision in that format."""
    base = reverse("topology-export", kwargs={"topology_pk": topology_pk})
    return [{"format": fmt, "label": label, "note": note, "url": f"{base}?format={fmt}"}
            for fmt, label, note in EXPORT_FORMATS]
