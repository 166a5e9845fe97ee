"""Structured logs carrying a request id.

Every log record gets ``request_id`` from a context variable: the web middleware sets it per
request (from ``X-Request-ID`` or a fresh one), the worker sets it per task from the job row, so
one id follows a submission from the HTTP request to the worker that ran it.

Two formats (``LOG_FORMAT``): ``kv`` (default, ``key=value`` pairs, readable and greppable) and
``json`` (one JSON object per line, for log shippers).
"""
from __future__ import annotations

import contextvars
import json
import logging
import re
import uuid
from datetime import datetime, timezone

__all__ = ["request_id_var", "current_request_id", "new_request_id", "clean_request_id",
           "RequestIdFilter", "KeyValueFormatter", "JsonFormatter"]

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")

# A client-supplied id is echoed back and written to logs: keep it short and inert.
_SAFE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")

# Attributes every LogRecord has; anything else was passed with ``extra=`` and is logged too.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request_id"}


def current_request_id() -> str:
    return request_id_var.get()


def new_request_id() -> str:
    return uuid.uuid4().hex


def clean_request_id(value: str | None) -> str:
    """The client's ``X-Request-ID`` when it is safe to log, else a fresh id."""
    value = (value or "").strip()
    return value if _SAFE_ID.match(value) else new_request_id()


class RequestIdFilter(logging.Filter):
    """Adds ``record.request_id`` (``-`` outside a request or job)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = request_id_var.get() or "-"
        _redact_share_tokens(record)
        return True


_SHARE_TOKEN = re.compile(r"(/s/|[?&]share=)[A-Za-z0-9_\-]{16,}")


def _redact_share_tokens(record: logging.LogRecord) -> None:
    # Share-link tokens are bearer secrets (stored only hashed): Django's own request warnings
    # would otherwise print them with the path of every 4xx under /s/<token>/ or ?share=.
    message = record.getMessage()
    if "/s/" in message or "share=" in message:
        record.msg, record.args = _SHARE_TOKEN.sub(r"\1<token>", message), None


def _fields(record: logging.LogRecord) -> dict:
    out = {
        "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
        "level": record.levelname,
        "logger": record.name,
        "process": record.processName,
        "request_id": getattr(record, "request_id", "-"),
        "msg": record.getMessage(),
    }
    out.update({k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")})
    return out


def _kv_value(value) -> str:
    text = str(value)
    if text == "" or any(c in text for c in ' "=\n\t'):
        return json.dumps(text, ensure_ascii=False)
    return text


class KeyValueFormatter(logging.Formatter):
    """``ts=... level=INFO logger=... request_id=... msg="..." key=value ...`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line = " ".join(f"{k}={_kv_value(v)}" for k, v in _fields(record).items())
        if record.exc_info:
            line += " exc=" + json.dumps(self.formatException(record.exc_info))
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line (``exc`` holds a traceback when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        fields = _fields(record)
        if record.exc_info:
            fields["exc"] = self.formatException(record.exc_info)
        return json.dumps(fields, default=str, ensure_ascii=False)
