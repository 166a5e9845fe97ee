"""Every write in Fabricscope, one module per concept (DESIGN.md §1).

Services are keyword-only, atomic, and the only place business rules live; views, the API and
Celery tasks call them. The engine is reached only through ``designer.bridge``.

Modules, each importing only those listed before it (no cycles):

- ``queue``: publishing job/chunk messages, revoking them, locking a job row (the bottom).
- ``audit``: the audit trail's writer (topologies, jobs and sharing all append to it).
- ``scenarios``: scenario create/update/delete, engine-validated.
- ``runs``: one run of a job or chunk: progress, heartbeat, cancellation, terminal write.
- ``sweeps``: splitting a sweep into chunk tasks, running chunks, merging their rankings.
- ``runner``: :func:`job_run`, a queued job to a terminal state.
- ``jobs``: submitting and cancelling jobs.
- ``reaper``: re-queueing or failing runs whose worker was lost.
- ``topologies``: topologies and their revisions.
- ``sharing``: grants, share links, ownership transfer, forks.
- ``tokens``: API tokens.

Callers import from ``designer.services`` as before. A few private names are re-exported for
tests that call them. Names tests *replace* (``_send``, ``_revoke``) are deliberately not
re-exported: a patch must target the module that looks the name up (``designer.services.queue
._send``), and without the re-export a stale ``designer.services._send`` patch fails loudly
instead of silently patching nothing.
"""
from designer.services.audit import audit_record
from designer.services.jobs import (
    MAX_SWEEP_CHUNKS, NIC_POLICIES, job_cancel, job_submit_compare, job_submit_simulate,
    job_submit_sweep)
from designer.services.reaper import job_reap_stale
from designer.services.runner import job_run
from designer.services.scenarios import scenario_create, scenario_delete, scenario_update
from designer.services.sharing import (
    share_grant, share_link_create, share_link_revoke, share_revoke, share_update,
    topology_fork, topology_transfer)
from designer.services.sweeps import sweep_chunk_run
from designer.services.tokens import api_token_revoke, api_token_rotate
from designer.services.topologies import (
    revision_save, topology_build, topology_build_preview, topology_create, topology_delete,
    topology_update)

__all__ = [
    "topology_create", "topology_build", "topology_build_preview", "topology_update",
    "topology_delete", "revision_save",
    "scenario_create", "scenario_update", "job_submit_simulate", "job_submit_sweep",
    "job_submit_compare", "job_cancel", "job_run", "sweep_chunk_run", "job_reap_stale",
    "scenario_delete", "api_token_rotate", "api_token_revoke",
    "audit_record", "share_grant", "share_update", "share_revoke", "share_link_create",
    "share_link_revoke", "topology_transfer", "topology_fork",
    "NIC_POLICIES", "MAX_SWEEP_CHUNKS",
]

# Private names some tests call directly (not part of the API, so not in __all__).
from designer.services.jobs import _jobs_cancel_for_delete  # noqa: E402,F401
from designer.services.runs import _error_text, _job_finish  # noqa: E402,F401
from designer.services.sweeps import _sweep_settle  # noqa: E402,F401
