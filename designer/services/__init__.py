"""Every write in Fabricscope, one module per concept (docs/ARCHITECTURE.md, "The web app's rooms").

Services are keyword-only, atomic, and the only place business rules live; views, the API and
Celery tasks call them. The engine is reached only through ``designer.bridge``.

Modules, each importing only those listed before it (no cycles):

- ``queue``: publishing job/chunk messages, revoking them, locking a job row (the bottom).
- ``audit``: the audit trail's writer (topologies, jobs and sharing all append to it).
- ``results``: storing a result, and the figures of its page (built once).
- ``scenarios``: scenario create/update/delete and validation (engine checks + flow limit).
- ``placement``: where a new job should go among a saved scenario's jobs (a ranking, no write).
- ``runs/``: one run of a job or chunk: progress, heartbeat, cancellation, terminal write.
- ``sweeps``: splitting a sweep into chunk tasks, running chunks, merging their rankings.
- ``jobs``: submitting and cancelling jobs; the scenario page's save-and-run and a viewer's run.
- ``diagnose``: submitting a diagnosis (measured nccl-tests runs explained on a worker).
- ``explore``: submitting a design-space exploration (a grid of designs × a job mix, in chunks).
- ``reaper``: re-queueing or failing runs whose worker was lost.
- ``topologies``: topologies and their revisions.
- ``builds``: the New page's topology, a large cluster built by a job (kind ``build``) on a worker.
- ``runner``: :func:`job_run`, a queued job to a terminal state.
- ``sharing``: grants, share links, ownership transfer, forks.
- ``tokens``: API tokens.
- ``plan``: floor-plan placements moved by hand, saved with the topology.

Callers import from ``designer.services``. The modules' other public names (``queue.lock_job``,
``runs.job_finish``, ``sweeps.sweep_settle`` ...) are their interface to each other, imported
from the module itself. A patch must target the module that looks the name up
(``designer.services.queue._send``, ``designer.services.jobs.revoke``).
"""
from designer.services.audit import audit_record
from designer.services.jobs import (
    MAX_SWEEP_CHUNKS, NIC_POLICIES, job_cancel, job_submit_compare, job_submit_simulate,
    job_submit_sweep, scenario_run, scenario_submit)
from designer.services.diagnose import job_submit_diagnose
from designer.services.explore import job_submit_explore
from designer.services.reaper import job_reap_stale
from designer.services.results import result_page_figures
from designer.services.runner import job_run
from designer.services.placement import scenario_place
from designer.services.plan import plan_device_move, plan_placements_reset, plan_placements_save
from designer.services.scenarios import scenario_create, scenario_delete, scenario_update
from designer.services.sharing import (
    share_grant, share_link_create, share_link_revoke, share_revoke, share_update,
    topology_fork, topology_transfer)
from designer.services.sweeps import sweep_chunk_run
from designer.services.builds import topology_build_submit, topology_start
from designer.services.tokens import (
    api_token_authenticate, api_token_create, api_token_revoke, api_token_rotate)
from designer.services.topologies import (
    revision_save, topology_build, topology_build_preview, topology_create, topology_delete,
    topology_new, topology_update)

__all__ = [
    "topology_create", "topology_build", "topology_build_preview", "topology_new",
    "topology_update", "topology_delete", "revision_save", "topology_start", "topology_build_submit",
    "scenario_create", "scenario_update", "scenario_submit", "scenario_run", "scenario_place",
    "job_submit_simulate", "job_submit_sweep", "job_submit_compare", "job_submit_diagnose", "job_submit_explore",
    "job_cancel",
    "result_page_figures", "job_run", "sweep_chunk_run", "job_reap_stale",
    "scenario_delete", "api_token_rotate", "api_token_revoke", "api_token_create",
    "api_token_authenticate",
    "audit_record", "share_grant", "share_update", "share_revoke", "share_link_create",
    "share_link_revoke", "topology_transfer", "topology_fork",
    "NIC_POLICIES", "MAX_SWEEP_CHUNKS",
    "plan_placements_save", "plan_device_move", "plan_placements_reset",
]
