"""Exceptions raised by services, for views and the API to map to responses.

- :class:`RevisionConflict`  -> HTTP 409 (stale base revision; carries the current number).
- :class:`EngineValidationError` (a Django ``ValidationError``) -> HTTP 400 with located details.
- :class:`IllegalTransition` -> HTTP 409 (e.g. cancelling a finished job).
"""
from __future__ import annotations

from django.core.exceptions import ValidationError

__all__ = ["RevisionConflict", "EngineValidationError", "IllegalTransition", "JobCancelled",
           "ImmutableRevision"]


class RevisionConflict(Exception):
    """A save was based on a revision that is no longer the topology's current one."""

    code = "revision_conflict"

    def __init__(self, *, current_number: int, base_number: int | None):
        self.current_number = current_number
        self.base_number = base_number
        super().__init__(
            f"revision conflict: you edited revision {base_number}, but the topology is now at "
            f"revision {current_number}; reload and apply your changes again")

    def as_dict(self) -> dict:
        return {"code": self.code, "message": str(self),
                "details": {"current_number": self.current_number,
                            "base_number": self.base_number}}


class EngineValidationError(ValidationError):
    """The engine refused a document, scenario or job input.

    ``code`` is the engine error's code (``invalid_topology``…), ``details`` the located problems
    as ``[{"path": "links[3].b", "message": "..."}]``, ``engine_message`` its one-line message.
    """

    def __init__(self, *, code: str, message: str, details: list[dict], field: str | None = None):
        lines = [f"{d['path']}: {d['message']}" if d.get("path") else d["message"]
                 for d in details] or [message]
        super().__init__({field: lines} if field else lines, code=code)
        self.engine_code = code
        self.engine_message = message
        self.details = details

    def as_dict(self) -> dict:
        return {"code": self.engine_code, "message": self.engine_message, "details": self.details}


class IllegalTransition(Exception):
    """A job state change that the state machine does not allow."""

    code = "illegal_transition"

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new
        super().__init__(f"a job cannot go from {old} to {new}")


class JobCancelled(Exception):
    """Raised inside a running job (from its progress callback) to stop it."""


class ImmutableRevision(Exception):
    """Revisions are append-only: an existing one is never updated."""
