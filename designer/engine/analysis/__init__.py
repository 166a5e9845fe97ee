"""Analysis: answers about a scenario, computed from routed and solved traffic.

Modules
-------
- :mod:`.simulate`: one scenario end to end (route, solve, timeline) → the result document;
- :mod:`.completion`, :mod:`.bottlenecks`, :mod:`.diff`: completion times, the critical
  resources, and the difference between two runs;
- :mod:`.whatif`: failure what-ifs and N-1 sweeps; :mod:`.job_sweep`: a step-time sweep of a job;
- :mod:`.latency`: per-hop and end-to-end latency (GPU-initiated vs CPU-proxied);
- :mod:`.nccl_tests`: predicted nccl-tests tables and the comparison with a measured log;
- :mod:`.listed_flows`: node ids along paths for listed-flow output;
- :mod:`.result_columns`: the columnar packing of stored results.
"""
