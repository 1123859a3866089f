"""Read-only, hardened connections to an ehrlib-built database.

Tools and model-written SQL read the EHR through these connections, so they are locked
down at the engine too, not only in the SQL we write: no file system access (no
``read_text``/``read_csv``/``glob``/``ATTACH``/``COPY`` of host files), no extension
installed or loaded behind the user's back (DuckDB would otherwise download one from
the internet, e.g. when handed a SQLite file), no Python-variable replacement scans, and
the configuration locked so a ``SET`` cannot undo any of it (:mod:`ehrlib.tools.lockdown`).
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from ehrlib import schema
from ehrlib.errors import DataError

# the lockdown lives with the tools (the layer below), which harden connections they are handed
from ehrlib.tools.lockdown import NO_EXTENSIONS, check_duckdb_file, harden

__all__ = ["connect", "harden", "check_duckdb_file", "check_tables", "damaged_database", "first_reads",
           "NO_EXTENSIONS"]

_HEADER_BYTES = 3 * 4096     # DuckDB's file header and two database headers precede the blocks


def _check_size(con: Any, path: Path) -> None:
    """A file shorter than its own block count says was truncated (a copy cut short, a
    full disk): refuse it now rather than fail on the first query that reaches the gap.
    """
    block_size, blocks = con.execute("SELECT block_size, total_blocks FROM pragma_database_size() "
                                     "WHERE database_name = current_database()").fetchone()
    want, have = _HEADER_BYTES + int(block_size) * int(blocks), path.stat().st_size
    if have < want:
        raise DataError(f"{path} is truncated ({have} of {want} bytes); copy or build the database again")


def damaged_database(path: str | os.PathLike, exc: BaseException) -> DataError:
    """The one-line error for a database DuckDB cannot read (a corrupted block, say)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return DataError(f"damaged database: {path}: {(lines[0] if lines else type(exc).__name__)[:300]}; "
                     "copy or build it again")


@contextlib.contextmanager
def first_reads(path: str | os.PathLike) -> Iterator[None]:
    """Around the first whole-table reads of a database (the connection checks, the item
    catalog behind the ontology): a DuckDB error there means the file is damaged, and
    becomes :func:`damaged_database` instead of a traceback.
    """
    try:
        yield
    except duckdb.Error as exc:
        raise damaged_database(path, exc) from None


def connect(path: str | os.PathLike) -> duckdb.DuckDBPyConnection:
    """Open an ehrlib database read-only (tools never write to the EHR) and harden it.

    Raises DataError if the file is missing, is not a DuckDB file, or has no ehrlib
    manifest (a DuckDB file ehrlib did not build: its layout and provenance are unknown).
    """
    p = Path(path)
    if not p.is_file():
        raise DataError(f"database {p} does not exist (build one with `ehrlib build-db SRC_DIR {p}`)")
    check_duckdb_file(p)
    with first_reads(p):
        con = duckdb.connect(str(p), read_only=True)
    try:
        with first_reads(p):
            harden(con)
            _check_size(con, p)
            row = con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?",
                [schema.MANIFEST_TABLE],
            ).fetchone()
    except DataError:
        con.close()
        raise
    if row is None or not row[0]:
        con.close()
        raise DataError(f"{p} is not an ehrlib database (no {schema.MANIFEST_TABLE} table); "
                        "build it with `ehrlib build-db`")
    return con


def check_tables(con: Any, flavor: str) -> None:
    """Every table of the layout exists (a build creates them all, empty if the source
    lacked one): a missing one means the file was edited or damaged, and would otherwise
    surface as a Catalog Error in the middle of a run.
    """
    smap = schema.schema_map(flavor)
    have = {(s or "main", t.lower()) for s, t in con.execute(
        "SELECT table_schema, table_name FROM information_schema.tables").fetchall()}
    missing = [t.ref for t in smap.tables.values() if ((t.schema or "main"), t.name.lower()) not in have]
    if missing:
        raise DataError(f"the database lacks table(s) {', '.join(missing)} of the {flavor} layout; "
                        "it was damaged or edited: build it again with `ehrlib build-db`")
