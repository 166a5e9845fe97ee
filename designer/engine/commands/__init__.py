"""CLI commands, one module each: ``add_arguments(parser)`` and ``run(args) -> int`` (see ``cli.py``)."""
