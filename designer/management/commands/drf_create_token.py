"""``manage.py drf_create_token USER``: kept for scripts and habits; prefer ``api_token create``.

DRF's own command stored the key in clear; this one creates (or, as ``-r`` did, replaces) the
user's write token named ``api`` with the default lifetime, stored hashed, and prints the key
in DRF's words.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand

from designer import services
from designer.management.commands.api_token import _user


class Command(BaseCommand):
    help = "Create a user's API token named 'api' (same as: api_token create USER)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("-r", "--reset", action="store_true",
                            help="accepted for DRF compatibility: the token is always new")

    def handle(self, *args, username: str, **opts):
        token = services.api_token_rotate(user=_user(username))
        self.stdout.write(f"Generated token {token.key} for user {username}")
