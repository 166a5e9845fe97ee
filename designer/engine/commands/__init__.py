"""CLI commands, one module each: ``add_arguments(parser)`` and ``run(args) -> int`` (see ``cli.py``).

Modules
-------
- topologies: :mod:`.build`, :mod:`.validate`, :mod:`.bom`, :mod:`.catalog`, :mod:`.topo_matrix`,
  :mod:`.import_`, :mod:`.export`;
- scenarios: :mod:`.simulate`, :mod:`.sweep`, :mod:`.compare`, :mod:`.nccl_tests`, :mod:`.solve`,
  :mod:`.import_workload`; :mod:`._scenario_io`: the reading and writing they share;
- :mod:`.bench`: the benchmarks of :mod:`designer.engine.benchmarks`.
"""
