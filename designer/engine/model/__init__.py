"""The model: what a cluster is made of, built from documents and templates.

Modules
-------
- :mod:`.topology`: :class:`~.topology.Topology`, the compiled graph (node and link arrays, resource
  numbering: one resource per link direction, plus node capacities);
- :mod:`.templates`: host templates (DGX, HGX, AWS, AMD, commodity) instantiated into groups, nodes
  and links — the registry, parameters and user templates; :mod:`.servers`: the built-in server
  builders; :mod:`.servers_more`: more of them (GH200, H800/H20 with NVLink parameters, Google
  Cloud A3/A4, Azure ND v5/v6); :mod:`.racks`: rack-scale builders (GB200 NVL72); :mod:`.host_spec`: the
  host-template spec format, its builder and its instances;
- :mod:`.fabrics`: leaf/spine/core fabrics (rail-optimized, rail-only, planes) around hosts;
  :mod:`.rail_only`: the sizing of a rail-only fabric (one network per rail, no spine across rails);
  :mod:`.clos`: the port arithmetic and wiring of two- and three-tier Clos networks;
  :mod:`.storage_fabric`: storage servers on a storage fabric of their own (the hosts' storage
  NICs) or on leaves of the compute spines;
  :mod:`.pods`: the pod groups of a three-tier fabric; :mod:`.fabric_out`: what a generator
  writes into (the document, or only the fabric and counts of hosts for a BOM preview);
- :mod:`.bom`: the bill of materials (switches, ports, cables, power), of a document or counted
  from a build spec without building it;
- :mod:`.physical_plan`: the physical plan (racks, cable schedule, costed BOM, flags) joining
  :mod:`.floorplan` (devices into racks and rows, cable lengths), :mod:`.cabling` (one row per
  cable: ports, breakouts, medium by reach) and :mod:`.plan_request` (the overrides, checked);
  :mod:`.placement_edits` moves devices placed by hand (``placements``) over the automatic plan;
- :mod:`.tiers`: the tier of each link (NVLink, PCIe, host–leaf, leaf–spine, …);
- :mod:`.pathclass`: NCCL-style path classes (NVL, PIX, PXB, PHB, SYS, NET) between nodes;
- :mod:`.hop_latency`: the latency of one message, collective step or round trip along a path
  (per-hop forwarding, the initiator's control path, receive completion).

Hardware figures come from :mod:`designer.engine.catalog`, below this layer.
"""
