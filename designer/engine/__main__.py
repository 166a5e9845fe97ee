"""``python -m designer.engine COMMAND ...``: run one command, then leave without the teardown.

Why the hard exit: after a large ``simulate`` the interpreter would free, one by one, the
millions of objects its module-level caches still hold (topology, routing context) before the
process ends anyway — 0.85 s CPU after a 16,384-GPU ring (measured, docs/PERFORMANCE.md). Once
the command has returned, its output is written and closed, so flushing the standard streams and
calling :func:`os._exit` loses nothing (no command starts threads or keeps a file open past
its return). An exception still takes the normal path (traceback,
cleanup, status 1).
"""
import os
import sys

from designer.engine.cli import main


def _exit_now(status: int) -> None:
    """Flush stdout/stderr and end the process with ``status`` without freeing its heap."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # closed pipe or stream: let the normal exit report it
        sys.exit(status)
    os._exit(status)


if __name__ == "__main__":  # importing the module (the engine guard test does) runs nothing
    _exit_now(main())
