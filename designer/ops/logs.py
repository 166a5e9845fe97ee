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
           "RequestIdFilter", "RedactSecretsFilter", "redact", "REDACTED", "KeyValueFormatter",
           "JsonFormatter"]

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
        return True


# --- Secrets out of the logs ------------------------------------------------------------------------
# Share-link tokens and API keys are bearer secrets stored only as hashes: a log line holding one
# would hand whoever reads the logs (a shipper, a dashboard, a support ticket) the access the
# hash protects. Each rule keeps the name of what it hides and replaces the value.
REDACTED = "<redacted>"
_VALUE = r"[^/?#&;\s'\"<>]+"  # one path segment or query value, up to its delimiter
_RULES = [  # (substrings of the lower-cased text one of which the rule needs, pattern, replacement)
    # /s/<share token>/...: every segment after /s/, however short (a truncated token still is
    # most of a secret). A rate like "GB/s/GPU" would be caught too: harmless, and rare.
    (("/s/",), re.compile(r"(/s/)" + _VALUE), r"\1" + REDACTED),
    # ?share=, ?token=, ?key=, ?access_token=, ?api_key= (also after & or ;).
    (("share=", "token=", "key="),
     re.compile(r"([?&;](?:share|token|key|access_token|api_key)=)[^&;#\s'\"<>]*", re.I),
     r"\1" + REDACTED),
    # The headers themselves, as ``Authorization: ...``, ``'HTTP_AUTHORIZATION': '...'`` (a
    # request.META dump) or ``"x-share-token": "..."``: the whole value, scheme included.
    (("authorization", "share_token", "share-token"),
     re.compile(r"((?:http_)?(?:authorization|x[-_]share[-_]token)['\"]?\s*[:=]\s*['\"]?)"
                r"[^'\"\r\n,}]+", re.I), r"\1" + REDACTED),
    # A credential after its scheme word wherever it appears; 16+ characters so that prose
    # ("Token expired") stays, while every issued key (43+ characters) and most of one go.
    (("bearer", "token"),
     re.compile(r"\b(bearer|token)\s+[A-Za-z0-9._~+/\-]{16,}=*", re.I), r"\1 " + REDACTED),
    # Our own keys carry a recognisable prefix (api_token_create): caught anywhere. The public
    # 8-character lookup prefix the tokens list shows is shorter than 20 and stays readable.
    (("fsk_",), re.compile(r"fsk_[A-Za-z0-9_\-]{20,}"), REDACTED),
]
# A bare secret (an exception message quoting a token, with no header or path around it) has
# only its shape: 32+ URL-safe characters mixing letters and digits or cases. Kept: hex runs
# (request ids are 32, content checksums 64) except the 40 of a legacy DRF key, and long
# single-case identifiers.
_BARE = re.compile(r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{32,}(?![A-Za-z0-9_\-])")
_HEX_LIKE = re.compile(r"[0-9a-fA-F\-]+")


def _bare_secret(match: re.Match) -> str:
    run = match.group(0)
    if _HEX_LIKE.fullmatch(run):
        return REDACTED if len(run) == 40 and "-" not in run else run
    classes = (any(c.isdigit() for c in run) + any(c.islower() for c in run)
               + any(c.isupper() for c in run))
    return REDACTED if classes >= 2 else run


def redact(text: str) -> str:
    """``text`` with share-link tokens and API keys replaced by ``<redacted>``."""
    lowered = text.lower()
    for needs, pattern, replacement in _RULES:
        if any(hint in lowered for hint in needs):  # a substring test is ~100x cheaper
            text = pattern.sub(replacement, text)
    return _BARE.sub(_bare_secret, text)


class RedactSecretsFilter(logging.Filter):
    """Redacts secrets everywhere a handler may print them: the message and its arguments
    (merged), ``extra=`` attributes (Django's ``request``, whose repr holds the full path with
    its query string), the exception text and the stack. Attach it to every handler: a filter
    on a logger does not see records propagated from its children.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        _redact_message(record)
        _redact_extras(record)
        if record.exc_info and not record.exc_text:
            # Formatters print exc_text when it is set (ours and logging's alike).
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def _redact_message(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception as exc:  # bad %-arguments: log what we can instead of failing the caller
        message = f"{record.msg!s} (log arguments {record.args!r} did not fit: {exc})"
    redacted = redact(message)
    if redacted != message or record.args:
        record.msg, record.args = redacted, None


def _redact_extras(record: logging.LogRecord) -> None:
    for name, value in list(vars(record).items()):
        if name in _STANDARD or name.startswith("_") or isinstance(value, (int, float, bool)):
            continue
        text = value if isinstance(value, str) else _safe_str(value)
        redacted = redact(text)
        if redacted != text:
            # The object itself (e.g. the HttpRequest) is replaced by its redacted text: every
            # handler downstream of this one sees the same record.
            setattr(record, name, redacted)


def _safe_str(value) -> str:
    try:
        return str(value)
    except Exception:  # a repr that fails must not take the log call down with it
        return "<unprintable>"


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


def _exception_text(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    # exc_text first: RedactSecretsFilter leaves the redacted traceback there.
    return record.exc_text or formatter.formatException(record.exc_info)


class KeyValueFormatter(logging.Formatter):
    """``ts=... level=INFO logger=... request_id=... msg="..." key=value ...`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        line = " ".join(f"{k}={_kv_value(v)}" for k, v in _fields(record).items())
        if record.exc_info or record.exc_text:
            line += " exc=" + json.dumps(_exception_text(self, record))
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line (``exc`` holds a traceback when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        fields = _fields(record)
        if record.exc_info or record.exc_text:
            fields["exc"] = _exception_text(self, record)
        return json.dumps(fields, default=str, ensure_ascii=False)
