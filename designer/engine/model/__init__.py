"""The model: what a cluster is made of, built from documents and templates.

Modules
-------
- :mod:`.topology`: :class:`~.topology.Topology`, the compiled graph (node and link arrays, resource
  numbering: one resource per link direction, plus node capacities);
- :mod:`.templates`: host templates (DGX, HGX, AWS, AMD, commodity) instantiated into groups, nodes
  and links; :mod:`.racks`: rack-scale builders (GB200 NVL72);
- :mod:`.fabrics`: leaf/spine/core fabrics (rail-optimized, rail-only, planes) around hosts;
  :mod:`.clos`: the port arithmetic and wiring of two- and three-tier Clos networks;
- :mod:`.bom`: the bill of materials (switches, ports, cables, power);
- :mod:`.tiers`: the tier of each link (NVLink, PCIe, host–leaf, leaf–spine, …);
- :mod:`.pathclass`: NCCL-style path classes (NVL, PIX, PXB, PHB, SYS, NET) between nodes.

Hardware figures come from :mod:`designer.engine.catalog`, below this layer.
"""
