"""API tokens (``Authorization: Bearer <key>``): one per user, rotated or revoked by its owner."""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token

__all__ = ["api_token_rotate", "api_token_revoke"]


def api_token_rotate(*, user: AbstractBaseUser) -> Token:
    """Create the user's API token, replacing (revoking) any previous one."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def api_token_revoke(*, user: AbstractBaseUser) -> bool:
    """Delete the user's API token; True when there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
