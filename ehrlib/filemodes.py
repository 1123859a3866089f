"""File modes for files ehrlib writes through a temp file and a rename.

``tempfile.mkstemp`` creates its file with mode 0600 whatever the umask, and the rename
keeps that mode: figures, viewers and metrics written that way were unreadable to
collaborators on a shared server. :func:`as_umask_allows` gives the temp file the mode a
plain ``open(path, "w")`` would have given it (0666 minus the umask).
"""
from __future__ import annotations

import os
import threading

__all__ = ["as_umask_allows", "current_umask"]

_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _LOCK:  # elsewhere: set and restore (the only portable way to read it)
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def as_umask_allows(fd: int) -> None:
    """Give an open file (a fresh temp file) the mode the umask allows for new files."""
    os.fchmod(fd, 0o666 & ~current_umask())
