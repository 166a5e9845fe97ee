"""API tokens (``Authorization: Bearer <key>``): named, scoped, expiring, stored hashed.

A key is ``fsk_`` + 43 URL-safe characters (``secrets.token_urlsafe(32)``: 256 random bits). The
prefix makes a leaked key recognisable (log redaction, secret scanners); the first 12
characters are stored as a lookup prefix, the whole key only as its SHA-256, and the key is
returned once, by :func:`api_token_create`.

Why plain SHA-256 and not a password hash or an HMAC: a slow hash (PBKDF2, bcrypt, Argon2) exists
to make guessing low-entropy passwords expensive, but a 256-bit random key cannot be guessed
whatever the hash, and a slow hash would cost tens of milliseconds on every API request. An
HMAC under a server secret would protect only against someone who has the database but not the
secret and wants to reverse a digest, which is already infeasible at 256 bits (and at the 160
bits of the converted DRF keys); it would also tie every token to SECRET_KEY, so rotating that
key would silently break every script. SHA-256 of a random key is what the share links use too.

Lookup: the prefix narrows the search (an index; one row in practice); the digest is then
compared with :func:`hmac.compare_digest`, so the time taken does not say how much of a forged
key was right. The prefix itself is not secret (the tokens list shows it), so that its lookup
time varies tells an attacker nothing.

Limits (settings, from the environment): ``FABRICSCOPE_API_TOKEN_DAYS`` (default lifetime, 90),
``FABRICSCOPE_API_TOKEN_MAX_DAYS`` (365), ``FABRICSCOPE_API_TOKEN_MAX_PER_USER`` (50 live
tokens), ``FABRICSCOPE_API_TOKEN_LAST_USED_S`` (60: ``last_used_at`` is rewritten at most that
often per token).
"""
from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from designer.choices import TokenScope
from designer.models import ApiToken

__all__ = ["api_token_create", "api_token_rotate", "api_token_revoke", "api_token_authenticate",
           "api_token_digest", "ApiTokenRejected", "KEY_PREFIX", "LOOKUP_CHARS", "DEFAULT_NAME",
           "MAX_KEY_CHARS", "token_limits"]

logger = logging.getLogger(__name__)

KEY_PREFIX = "fsk_"
LOOKUP_CHARS = 12
DEFAULT_NAME = "api"
# Longer than any key issued (47) or converted (40): refused before any hashing or query.
MAX_KEY_CHARS = 128
_NAME_CHARS = 100


class ApiTokenRejected(Exception):
    """A key that opens nothing; ``code`` is ``invalid_token`` or ``token_expired``."""

    def __init__(self, message: str, code: str):
        super().__init__(message)
        self.code = code


def token_limits() -> dict:
    """The limits in force (settings, with the documented defaults)."""
    return {"days": int(getattr(settings, "FABRICSCOPE_API_TOKEN_DAYS", 90)),
            "max_days": int(getattr(settings, "FABRICSCOPE_API_TOKEN_MAX_DAYS", 365)),
            "max_per_user": int(getattr(settings, "FABRICSCOPE_API_TOKEN_MAX_PER_USER", 50)),
            "last_used_s": float(getattr(settings, "FABRICSCOPE_API_TOKEN_LAST_USED_S", 60.0))}


def api_token_digest(key: str) -> str:
    """SHA-256 hex of a key: the only form in which keys are stored."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def api_token_create(*, user: AbstractBaseUser, name: str = DEFAULT_NAME,
                     scope: str = TokenScope.WRITE, days: int | None = None,
                     within: ApiToken | None = None) -> ApiToken:
    """Create a token; the returned row carries the key in ``.key`` (never stored: show it now).

    A live token of the same ``name`` is replaced (that is how a token is rotated); the user's
    expired tokens are deleted. ``within``: the token that authenticated the request asking, if
    any; the new token can neither outlive it nor have a wider scope, so a leaked key cannot
    extend its own life. Bad input raises ``ValidationError`` (by field) and changes nothing.
    """
    name, scope, expires = _checked(name=name, scope=scope, days=days, within=within)
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        ApiToken.objects.filter(user=user, expires_at__lte=now).delete()
        ApiToken.objects.filter(user=user, name=name).delete()
        _check_room(user)
        token = ApiToken.objects.create(user=user, name=name, prefix=key[:LOOKUP_CHARS],
                                        digest=api_token_digest(key), scope=scope,
                                        created_at=now, expires_at=expires)
    logger.info("API token %r (%s) created for user %s, %s, expires %s", name, token.prefix,
                user.pk, scope, f"{expires:%Y-%m-%d}")
    token.key = key
    return token


def api_token_rotate(*, user: AbstractBaseUser) -> ApiToken:
    """A fresh write token named ``api`` with the default lifetime, replacing the previous one."""
    return api_token_create(user=user)


def api_token_revoke(*, user: AbstractBaseUser, pk: int | None = None,
                     name: str | None = None) -> int:
    """Delete one of the user's tokens (by ``pk`` or ``name``), or all of them; returns how many.

    A ``pk`` or ``name`` the user has no token under is an Http404 (another user's token id
    included: its existence is not disclosed).
    """
    tokens = ApiToken.objects.filter(user=user)
    if pk is not None:
        tokens = tokens.filter(pk=pk)
    if name is not None:
        tokens = tokens.filter(name=name)
    deleted, _ = tokens.delete()
    if not deleted and (pk is not None or name is not None):
        what = f"id {pk}" if pk is not None else f"named {name!r}"
        raise Http404(f"{user.get_username()} has no API token {what}")
    if deleted:
        logger.info("%d API token(s) of user %s revoked", deleted, user.pk)
    return deleted


def api_token_authenticate(key: str) -> ApiToken:
    """The live token ``key`` opens (with its user), or ApiTokenRejected.

    Records ``last_used_at`` (at most once per FABRICSCOPE_API_TOKEN_LAST_USED_S per token).
    """
    if not key or len(key) > MAX_KEY_CHARS:
        raise ApiTokenRejected("invalid token", "invalid_token")
    token = _matching(key)
    if token is None or not token.user.is_active:
        raise ApiTokenRejected("invalid token", "invalid_token")
    now = timezone.now()
    if token.expires_at <= now:
        raise ApiTokenRejected(f"token expired on {token.expires_at:%Y-%m-%d %H:%M} UTC: create "
                               "a new one (profile page, or manage.py api_token create)",
                               "token_expired")
    _touch(token, now)
    return token


def _matching(key: str) -> ApiToken | None:
    digest = api_token_digest(key)
    found = None
    for candidate in ApiToken.objects.select_related("user").filter(prefix=key[:LOOKUP_CHARS]):
        if hmac.compare_digest(candidate.digest, digest):
            found = candidate
    return found


def _touch(token: ApiToken, now) -> None:
    stale = now - timedelta(seconds=token_limits()["last_used_s"])
    if token.last_used_at is None or token.last_used_at < stale:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def _checked(*, name, scope, days, within):
    limits = token_limits()
    errors = {}
    name = name.strip() if isinstance(name, str) else ""
    if not name or len(name) > _NAME_CHARS or not name.isprintable():
        errors["name"] = f"a name of 1 to {_NAME_CHARS} printable characters"
    if scope not in TokenScope.values:
        errors["scope"] = f"{scope!r} is not a scope: use one of {', '.join(TokenScope.values)}"
    if days is None:
        days = limits["days"]
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= limits["max_days"]:
        errors["days"] = (f"a whole number of days from 1 to {limits['max_days']} "
                          "(FABRICSCOPE_API_TOKEN_MAX_DAYS)")
    if errors:
        raise ValidationError(errors)
    expires = timezone.now() + timedelta(days=days)
    if within is not None:
        expires = min(expires, within.expires_at)
        scope = TokenScope.READ if within.scope == TokenScope.READ else scope
    return name, scope, expires


def _check_room(user) -> None:
    limit = token_limits()["max_per_user"]
    if limit and ApiToken.objects.filter(user=user).count() >= limit:
        raise ValidationError({"name": f"you already have {limit} API tokens (the limit, "
                                       "FABRICSCOPE_API_TOKEN_MAX_PER_USER): revoke one first"})
