"""CLI commands, one module each: ``add_arguments(parser)`` and ``run(args) -> int`` (see ``cli.py``).

Modules
-------
- topologies: :mod:`.build`, :mod:`.validate`, :mod:`.bom`, :mod:`.plan` (floor plan, cables, cost, as-built), :mod:`.catalog`, :mod:`.topo_matrix`,
  :mod:`.import_`, :mod:`.export`;
- scenarios: :mod:`.simulate` (:mod:`.expand`: a grouped result back to records), :mod:`.sweep`, :mod:`.compare`, :mod:`.nccl_tests`, :mod:`.nccl_log`, :mod:`.solve`,
  :mod:`.import_workload`, :mod:`.place` (placements of the next job on a shared cluster); :mod:`._scenario_io`: the reading and writing they share;
- from predictions: :mod:`.tuner` (NCCL tuner-plugin CSV), :mod:`.acceptance` (acceptance spec
  and its check of nccl-tests logs); :mod:`._design_source`: the design options they share;
- from measurements: :mod:`.diagnose` (nccl-tests runs → the ranked faults that explain them);
- design space: :mod:`.explore` (a grid of fabric options × a job mix, priced and simulated, the
  Pareto frontier);
- :mod:`.bench`: the benchmarks of :mod:`designer.engine.benchmarks`.
"""
