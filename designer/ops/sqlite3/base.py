"""Django's SQLite backend, its debug query log bounded (``ENGINE = "designer.ops.sqlite3"``).

With ``DEBUG`` on (``manage.py up``, the embedded default) Django records every query's text
with its parameters inlined. On SQLite that inlining runs ``SELECT QUOTE(?)`` over each parameter,
so saving a 32k-GPU design (a 90 MB document) spent 1.1 s quoting it and kept a 90 MB string in
``connection.queries`` until the next request (docs/PERFORMANCE.md, "One-node save of a 32k-GPU
design"). Long text and bytes parameters are logged by their length instead; queries run as
before.
"""
from __future__ import annotations

from django.db.backends.sqlite3 import base, operations

__all__ = ["DatabaseWrapper", "DatabaseOperations", "LOGGED_PARAMETER_CHARS"]

#: A debug-logged parameter longer than this (characters or bytes) is logged as its length.
LOGGED_PARAMETER_CHARS = 1024


def _logged(value):
    if isinstance(value, (str, bytes, bytearray, memoryview)) and len(value) > LOGGED_PARAMETER_CHARS:
        return f"<{len(value):,} {'characters' if isinstance(value, str) else 'bytes'}>"
    return value


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        if isinstance(params, dict):
            params = {key: _logged(value) for key, value in params.items()}
        elif isinstance(params, (list, tuple)):
            params = tuple(_logged(value) for value in params)
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
