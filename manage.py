#!/usr/bin/env python
"""Django's command-line utility for Fabricscope (``python manage.py up`` starts everything)."""
import os
import sys

# `up` and `runserver` are the local-development launchers: they default DEBUG on so a newcomer's
# first command works without inventing a SECRET_KEY. Production entry points (wsgi.py, asgi.py,
# `celery -A designer.celery:app`) keep DEBUG off unless the environment says otherwise.
_LOCAL_COMMANDS = {"up", "runserver", "bench_workers"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    if len(sys.argv) > 1 and sys.argv[1] in _LOCAL_COMMANDS:
        os.environ.setdefault("DEBUG", "1")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
