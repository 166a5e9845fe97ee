"""Traffic: what moves over the model, as flows the router and solver can take.

Modules
-------
- :mod:`.flows`: :class:`~.flows.Flows`, traffic as parallel arrays (what routing takes);
- :mod:`.workloads`: traffic patterns (collectives, point-to-point, storage, offload, listed
  flows) → :class:`~.flows.Flows`; :mod:`.groups`: the communicator groups of a pattern;
- :mod:`.collectives`: NCCL-style algorithms (ring, tree, NVLS, CollNet, PAT, …), protocols and
  the choice between them;
- :mod:`.jobs`: training and inference jobs (layouts, model templates, phases) → a step DAG;
- :mod:`.scenario`: a scenario (topology + patterns or job + failures + routing options),
  validated and normalized; :mod:`.failures`: failure specs resolved to a failure set.
"""
