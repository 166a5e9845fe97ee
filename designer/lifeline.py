"""Child processes that die with their parent (Linux ``PR_SET_PDEATHSIG``).

``manage.py up`` starts Redis, a Celery worker and the web server in sessions of their own, so a
Ctrl-C in the terminal reaches only ``up``, which then stops them in order. Own sessions also
mean that nothing kills them when ``up`` itself is killed (SIGKILL, OOM killer, a closed
terminal): they would be orphaned, holding the port and the Redis socket. The kernel can signal a
child when its parent dies; :func:`die_with_parent` arms that in the child before it runs its
program (the setting survives ``exec``).

The signal is sent when the *thread* that started the child ends, so start long-lived children
from the main thread. Elsewhere than Linux this is a no-op.

This module imports neither Django nor Celery.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Callable

__all__ = ["die_with_parent"]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def die_with_parent(signum: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child gets ``signum`` when we die.

    Parameters
    ----------
    signum : int
        Signal the kernel sends the child when the calling thread (its parent) ends.

    Returns
    -------
    callable or None
        Pass it as ``preexec_fn``; None where the platform has no parent-death signal.
    """
    # libc is loaded here, in the parent: loading a library between fork and exec is not safe.
    libc = _libc()
    if libc is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        # The parent may have died between fork and prctl: then no signal will ever come.
        if os.getppid() != parent:
            os.kill(os.getpid(), signum)
    return arm
