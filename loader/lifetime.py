"""Processes that end with the process that started them, even when it is killed with kill -9."""

import ctypes
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent(signal_number: int = signal.SIGTERM) -> None:
    """Ask the kernel to send this process `signal_number` when its parent dies (Linux; the
    parent is the thread that forked it). Elsewhere this does nothing."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal_number)
    except (OSError, AttributeError):  # no prctl: not Linux
        pass
