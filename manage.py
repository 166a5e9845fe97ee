#!/usr/bin/env python
"""Django's command-line utility for Fabricscope (``python manage.py up`` starts everything)."""
import os
import sys

# `runserver` is the development server: it defaults DEBUG on so a newcomer's first command works
# without inventing a SECRET_KEY. `up` runs with DEBUG off unless `up --debug` (or DEBUG=1) asks:
# it serves out of the box anyway (designer/management/commands/up.py). Production entry points
# (wsgi.py, asgi.py, `celery -A designer.celery:app`) keep DEBUG off unless the environment says so.
_LOCAL_COMMANDS = {"runserver", "bench_workers"}


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "designer.settings")
    if len(sys.argv) > 1 and sys.argv[1] in _LOCAL_COMMANDS:
        os.environ.setdefault("DEBUG", "1")
    if sys.argv[1:2] == ["up"] and "--debug" in sys.argv[2:]:
        os.environ["DEBUG"] = "1"  # settings read DEBUG before the command parses its options
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
