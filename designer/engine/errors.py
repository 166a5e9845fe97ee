"""One exception hierarchy for the engine; the API maps every EngineError to HTTP 400.

An error carries a list of *problems*, each located by a path into the input document
(``links[12].b``) so a user can find what to fix without reading a traceback.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Problem", "EngineError", "InvalidTopology", "InvalidWorkload", "InvalidScenario",
    "Unroutable", "ImportFormatError", "LimitExceeded",
]


@dataclass(frozen=True)
class Problem:
    """One located problem: ``path`` into the input (``links[3].b``), and what is wrong there."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def as_dict(self) -> dict:
        return {"path": self.path, "message": self.message}


class EngineError(Exception):
    """Base of every error the engine raises on bad input.

    Parameters
    ----------
    message : str
        One line saying what went wrong.
    problems : list of Problem, optional
        Every located problem found (validation reports all of them, not the first).
    """

    code = "engine_error"

    def __init__(self, message: str, problems: list[Problem] | None = None):
        super().__init__(message)
        self.message = message
        self.problems = list(problems or [])

    def lines(self) -> list[str]:
        """The message, or one line per problem when there are several."""
        return [str(p) for p in self.problems] or [self.message]

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message,
                "details": [p.as_dict() for p in self.problems]}


class InvalidTopology(EngineError):
    code = "invalid_topology"


class InvalidWorkload(EngineError):
    code = "invalid_workload"


class InvalidScenario(EngineError):
    code = "invalid_scenario"


class Unroutable(EngineError):
    code = "unroutable"


class ImportFormatError(EngineError):
    code = "import_error"


class LimitExceeded(EngineError):
    code = "limit_exceeded"
