"""Read-only connections to an ehrlib-built database."""
from __future__ import annotations

import os
from pathlib import Path

import duckdb

from ehrlib import schema
from ehrlib.errors import DataError

__all__ = ["connect"]


def connect(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open an ehrlib database read-only (tools never write to the EHR).

    Raises DataError if the file is missing, is not a DuckDB file, or has no ehrlib
    manifest (a DuckDB file ehrlib did not build: its layout and provenance are unknown).
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"database {p} does not exist (build one with `ehrlib build-db SRC_DIR {p}`)")
    try:
        con = duckdb.connect(str(p), read_only=True)
    except duckdb.Error as exc:
        raise DataError(f"{p} is not a readable DuckDB database ({' '.join(str(exc).split())[:200]})") from None
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?",
        [schema.MANIFEST_TABLE],
    ).fetchone()
    if row is None or not row[0]:
        con.close()
        raise DataError(f"{p} is not an ehrlib database (no {schema.MANIFEST_TABLE} table); "
                        "build it with `ehrlib build-db`")
    return con
