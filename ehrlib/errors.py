"""User-facing errors: the command line prints them as one line and exits non-zero."""
from __future__ import annotations

__all__ = ["EhrlibError", "DataError", "ConfigError", "PHIError"]


class EhrlibError(Exception):
    """An expected failure caused by input or configuration, not a bug."""


class DataError(EhrlibError):
    """Source data is missing, malformed or of the wrong flavor."""


class ConfigError(EhrlibError):
    """Parameters or configuration are invalid."""


class PHIError(EhrlibError):
    """Credentialed data would be sent to an endpoint not marked safe for it."""
