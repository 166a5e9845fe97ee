"""``manage.py api_token create|list|revoke``: API tokens from the command line.

    manage.py api_token create alice --scope read --days 30 --name ci   # prints the key, once
    manage.py api_token list [alice]                                     # never the keys
    manage.py api_token revoke alice ci          # one token by name (or --all)
"""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.http import Http404

from designer import selectors, services
from designer.choices import TokenScope
from designer.models import ApiToken
from designer.services.tokens import DEFAULT_NAME


class Command(BaseCommand):
    help = "Create, list and revoke API tokens (keys are stored hashed: shown once, at creation)."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="a new token; prints its key once")
        create.add_argument("username")
        create.add_argument("--name", default=DEFAULT_NAME,
                            help=f"label (default {DEFAULT_NAME!r}); the same name is replaced")
        create.add_argument("--scope", choices=TokenScope.values, default=TokenScope.WRITE,
                            help="read: GET/HEAD/OPTIONS only; write: everything (default)")
        create.add_argument("--days", type=int, default=None,
                            help="lifetime (default FABRICSCOPE_API_TOKEN_DAYS, 90)")
        listing = actions.add_parser("list", help="tokens, without their keys")
        listing.add_argument("username", nargs="?")
        revoke = actions.add_parser("revoke", help="delete a token by name, or --all")
        revoke.add_argument("username")
        revoke.add_argument("name", nargs="?")
        revoke.add_argument("--all", action="store_true", help="every token of the user")

    def handle(self, *args, action: str, **opts):
        getattr(self, f"_{action}")(**opts)

    def _create(self, *, username, name, scope, days, **_):
        try:
            token = services.api_token_create(user=_user(username), name=name, scope=scope,
                                              days=days)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{field}: {' '.join(msgs)}"
                                         for field, msgs in exc.message_dict.items())) from None
        self.stdout.write(f"{token.key}\n")
        self.stderr.write(f"API token {token.name!r} for {username}: {token.scope}, expires "
                          f"{token.expires_at:%Y-%m-%d %H:%M} UTC. The key above is shown only "
                          "now: store it (e.g. FABRICSCOPE_TOKEN).")

    def _list(self, *, username, **_):
        tokens = (selectors.api_tokens_list(user=_user(username)) if username
                  else ApiToken.objects.all()).select_related("user")
        for t in tokens:
            used = f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "never"
            state = "EXPIRED" if t.is_expired else "live"
            self.stdout.write(f"{t.user.get_username()}\t{t.name}\t{t.prefix}…\t{t.scope}\t"
                              f"expires {t.expires_at:%Y-%m-%d}\tused {used}\t{state}")

    def _revoke(self, *, username, name, all, **_):
        if (name is None) == (not all):
            raise CommandError("give a token name or --all (not both)")
        try:
            count = services.api_token_revoke(user=_user(username), name=name)
        except Http404 as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"revoked {count} token(s) of {username}")


def _user(username: str):
    try:
        return get_user_model().objects.get_by_natural_key(username)
    except get_user_model().DoesNotExist:
        raise CommandError(f"no user named {username!r}") from None
