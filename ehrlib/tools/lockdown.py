"""Engine-level lockdown of DuckDB connections that tools and model-written SQL read.

Applied with ``SET`` after opening rather than as ``connect(config=...)``: DuckDB refuses a
second connection to one file with a different config, and other readers in the same
process (tests, benchmarks) open the file plainly. :mod:`ehrlib.db.connect` applies it to
every connection it opens; the toolset to any connection it is handed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ehrlib.errors import DataError

__all__ = ["NO_EXTENSIONS", "harden", "check_duckdb_file"]

#: settings that keep DuckDB from installing or loading extensions on its own
NO_EXTENSIONS = ("SET autoinstall_known_extensions = false", "SET autoload_known_extensions = false",
                 "SET allow_community_extensions = false")
_LOCKDOWN = ("SET enable_external_access = false", *NO_EXTENSIONS, "SET python_enable_replacements = false",
             "SET lock_configuration = true")
_MAGIC = b"DUCK"      # bytes 8..12 of every DuckDB database file


def harden(con: Any) -> None:
    """Lock a read-only connection down (idempotent; the settings hold for the whole database
    instance, i.e. every connection to that file in this process)."""
    locked = con.execute("SELECT current_setting('lock_configuration'), "
                         "current_setting('enable_external_access')").fetchone()
    if locked[0]:
        if locked[1]:
            raise DataError("the database connection is locked with external access enabled; "
                            "open it with ehrlib.db.connect")
        return
    for statement in _LOCKDOWN:
        con.execute(statement)


def check_duckdb_file(path: str | os.PathLike) -> None:
    """Refuse a file that is not a DuckDB database before DuckDB sees it (a SQLite or
    Parquet file would make DuckDB try to install an extension)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise DataError(f"cannot read database {p}: {exc.strerror or exc}") from None
    if head[8:12] != _MAGIC:
        kind = ("a SQLite database" if head.startswith(b"SQLite format 3") else
                "empty" if not head else "truncated" if len(head) < 12 else "not a DuckDB file")
        raise DataError(f"{p} is not a DuckDB database ({kind}); build one with `ehrlib build-db SRC_DIR {p}`")


