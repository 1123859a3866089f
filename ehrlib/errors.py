"""User-facing errors: the command line prints them as one line and exits non-zero.

Every error a user can cause derives from :class:`EhrlibError`; anything else escaping
to the command line is a bug and keeps its traceback. ``exit_code`` says how the CLI
ends: 2 for bad usage or input (the default), 1 for a run that started and failed
(:class:`RunError`). Record, time-spec, tool-argument and item-key errors are also
ValueErrors, so validation code written with ``except ValueError`` keeps working.
"""
from __future__ import annotations

import difflib
import errno
from collections.abc import Iterable

__all__ = ["EhrlibError", "DataError", "ConfigError", "PHIError", "RunError", "EndpointUnreachable", "os_reason",
           "closest", "suggestion", "unknown_name"]


class EhrlibError(Exception):
    """An expected failure caused by input or configuration, not a bug."""

    #: the command line's exit status for this error
    exit_code: int = 2


class DataError(EhrlibError):
    """Source data is missing, malformed or of the wrong flavor."""


class ConfigError(EhrlibError):
    """Parameters or configuration are invalid."""


class PHIError(EhrlibError):
    """Credentialed data would be sent to an endpoint not marked safe for it."""


class RunError(EhrlibError):
    """A run started and could not finish (an endpoint that keeps failing, say)."""

    exit_code = 1


class EndpointUnreachable(RunError):
    """The LLM endpoint refused or never answered the run's first connections: every note
    would fail the same way, so the run stops (one line) instead of failing note by note.
    Per-note handlers re-raise it; the runner records it in the run folder.
    """


_OS_REASONS = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
               errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
               errno.EPERM: "permission denied", errno.ENOTDIR: "a path component is a file, not a folder",
               errno.EEXIST: "it exists already", errno.ENOTEMPTY: "it exists already",
               errno.EXDEV: "the folder and its parent are on different file systems"}


def os_reason(exc: OSError) -> str:
    """A short reason for an OS error, in words a user can act on (one table for every
    command that writes files, so the same failure reads the same everywhere).
    """
    return _OS_REASONS.get(exc.errno or 0, exc.strerror or str(exc))


def closest(value: object, options: Iterable[str]) -> str | None:
    """The option ``value`` most likely misspells (difflib ratio at least 0.6), or None."""
    found = difflib.get_close_matches(str(value), list(options), n=1, cutoff=0.6)
    return found[0] if found else None


def suggestion(value: object, options: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the option ``value`` most likely misspells, else ``""``:
    the tail of a one-line error.
    """
    guess = closest(value, options)
    return f"; did you mean {guess!r}?" if guess else ""


def unknown_name(what: str, value: object, options: Iterable[str], *, listing: str | None = None) -> str:
    """One line for a name that is none of ``options``: the likely intended one first, then
    the choices (``listing`` names them; default ``what`` + "s"). Every enumerated setting
    words this error the same way: ``unknown backend 'ofline'; did you mean 'offline'? ...``.
    """
    offered = list(options)
    hint = suggestion(value, offered) or ";"
    return f"unknown {what} {str(value)[:60]!r}{hint} {listing or what + 's'}: {', '.join(offered)}"
