"""Processes that end with the process that started them, even when it is killed with kill -9."""

import ctypes
import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def die_with_parent(signal_number: int = signal.SIGTERM) -> None:
    """Ask the kernel to send this process `signal_number` when its parent dies (Linux; the
    parent is the thread that forked it). Elsewhere this does nothing."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal_number)
    except (OSError, AttributeError):  # no prctl: not Linux
        pass


def adopt_orphans() -> None:
    """Make this process the one its orphaned descendants are re-parented to, instead of PID 1
    (Linux 3.4+; elsewhere this does nothing), so that it can reap them itself: a container's
    PID 1 may reap its adopted zombies only seconds later, and a zombie still counts as a
    member of its process group."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    except (OSError, AttributeError):  # no prctl: not Linux
        pass
