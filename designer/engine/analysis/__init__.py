"""Analysis: answers about a scenario, computed from routed and solved traffic.

Modules
-------
- :mod:`.simulate`: one scenario end to end (route, solve, timeline) → the result document;
  :mod:`.flow_rates`: per-flow rates, bottlenecks and completions from the sub-flows' answer;
  :mod:`.result_summary`: the result's summary fields (patterns, bottlenecks, tiers, classes);
- :mod:`.completion`, :mod:`.bottlenecks`, :mod:`.diff`: completion times, the critical
  resources, and the difference between two runs;
- :mod:`.whatif`: failure what-ifs, N-1 sweeps and policy comparisons; :mod:`.whatif_states`:
  the nominal and failed states they compare; :mod:`.whatif_local`: a failed state re-solved only
  where its failure reaches (the max-min certificate of :mod:`designer.engine.solve.local`);
  :mod:`.job_sweep`: a step-time sweep of a job;
- :mod:`.shared_cluster`: a shared cluster's ``jobs`` section (per-job step, slowdown against
  alone, bottleneck, interference matrix, shared links); :mod:`.place`: where the next job
  should go (candidate placements ranked) and placement policies compared for a job mix;
- :mod:`.explore`: the design-space explorer (a grid of fabric options × a job mix → $/GPU,
  W/GPU, step per job, bisection, blast radius; the Pareto frontier; chunks merged like
  sweeps); :mod:`.explore_grid`: its request, checked, and the grid's points;
- :mod:`.latency`: the result's latency section (GPU-initiated vs CPU-proxied), over the model
  of :mod:`designer.engine.model.hop_latency`;
- :mod:`.nccl_tests`: predicted nccl-tests tables and the comparison with a measured log;
- :mod:`.diagnose`: measured nccl-tests curves → ranked faults that explain them;
  :mod:`.diagnose_input` (the runs, checked), :mod:`.diagnose_candidates` (candidate faults and
  their symmetry classes), :mod:`.diagnose_search` (curves, fits, coarse pass, pairs);
- :mod:`.nccl_log_check`: an ``NCCL_DEBUG=INFO`` log (and graph dump) checked against the design:
  NICs, GDR, transports and ring hops against the path classes;
  :mod:`.nccl_tests_ops`: nccl-tests' binaries, sizes and busbw factors; :mod:`.nccl_tests_ranks`:
  GPU / host subsets and each rank's device; :mod:`.nccl_env`: NCCL environment knobs → engine
  settings;
- :mod:`.tuner_export`: an NCCL tuner-plugin CSV (ext-tuner/example format) of the engine's
  algorithm / protocol / channel choices per size range; :mod:`.acceptance`: the acceptance
  spec of a design (least busbw, most time per size) and the check of real nccl-tests logs;
- :mod:`.listed_flows`: which flows a result lists, and their records (node ids along paths);
- :mod:`.result_columns`: the columnar packing of stored results; :mod:`.result_groups`: a
  large result's resources grouped by symmetry, and expanded back on demand;
  :mod:`.sweep_columns`: a sweep's ranking stored as one array per field, and its rows back;
- :mod:`.goodput`: goodput and reliability planning (failure rates × the design → interruptions,
  blast radius, checkpoint interval, ETTR, spares, Monte Carlo).
"""
