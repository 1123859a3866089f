"""The build manifest every ehrlib database carries.

Two tables: ``ehrlib_manifest`` (key/value rows: source, source_kind, flavor, layout,
version, built_at, ehrlib_version, ...) and ``ehrlib_manifest_tables`` (one row per table
of the layout: status, row count, source file and its sha256, a content checksum).
Other modules read it: ``schema.detect_flavor`` reads ``layout``; the PHI guard reads
``source_kind``. In a perturbed database the manifest names no original MIMIC table:
logical names and source file names are left NULL (the layout key is enough to map the
physical tables back through ``ehrlib.schema.PERTURBED``).
"""
from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb

import ehrlib
from ehrlib import schema
from ehrlib.db.ddl import LAYOUTS, TableDef, table_defs
from ehrlib.db.skipped import MANIFEST_KEY as SKIPPED_KEY
from ehrlib.errors import ConfigError

__all__ = [
    "TableInfo",
    "SOURCE_KINDS",
    "MANIFEST_TABLES_TABLE",
    "CHECKSUM_ALGORITHM",
    "write_manifest",
    "read_manifest",
    "refresh_table_stats",
    "table_stats",
    "table_exists",
]

MANIFEST_TABLES_TABLE = "ehrlib_manifest_tables"
SOURCE_KINDS = ("credentialed", "open-demo", "synthetic")
#: Order-independent: the sum over rows of DuckDB's 64-bit hash of the whole row.
#: Equal content gives an equal checksum whatever the physical row order.
CHECKSUM_ALGORITHM = "duckdb-sum-hash-row-v1"


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the builder knows about one table's source (row counts are measured)."""

    logical: str
    status: str = "loaded"  # loaded | missing
    source_file: str | None = None
    source_sha256: str | None = None


def table_exists(con, d: TableDef) -> bool:
    """Whether the physical table of ``d`` exists in the database."""
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [d.schema or "main", d.name],
    ).fetchone()
    return bool(row and row[0])


def table_stats(con, d: TableDef) -> tuple[int, str]:
    """(row count, content checksum) of one table."""
    n, h = con.execute(f"SELECT count(*), coalesce(sum(hash(t)), 0) FROM {d.ref} AS t").fetchone()  # noqa: S608
    return int(n), f"{int(h) % (1 << 64):016x}"


def write_manifest(con, *, source: str, source_kind: str, flavor: str, layout: str, version: str,
                   tables_info: Mapping[str, TableInfo] | Iterable[TableInfo] | None = None,
                   extra: Mapping[str, str] | None = None) -> None:
    """(Re)write both manifest tables; row counts and checksums are measured now.

    Args:
        con: a writable connection to the database being described.
        source: where the data came from (a folder path, or e.g. "ehrlib.synth seed=7").
        source_kind: ``credentialed`` | ``open-demo`` | ``synthetic``. The PHI guard treats
            anything but open-demo/synthetic as credentialed, so pass credentialed when unsure.
        flavor: the data's origin (``mimic3``, ``mimic4``, ``synthetic``).
        layout: the physical layout (``mimic3`` | ``mimic4`` | ``perturbed``).
        version: the dataset version ("1.4", "2.2", ...).
        tables_info: per logical table, its source file/status; default: every table
            of the layout, ``loaded`` if present in the database, else ``missing``.
        extra: further key/value rows.
    """
    if source_kind not in SOURCE_KINDS:
        raise ConfigError(f"source_kind must be one of {', '.join(SOURCE_KINDS)}, not {source_kind!r}")
    if layout not in LAYOUTS:
        raise ConfigError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    defs = table_defs(layout)
    if tables_info is None:
        infos = {}
    elif isinstance(tables_info, Mapping):
        infos = dict(tables_info)
    else:
        infos = {i.logical: i for i in tables_info}
    unknown = set(infos) - set(defs)
    if unknown:
        raise ConfigError(f"tables_info names tables the {layout} layout lacks: {sorted(unknown)}")
    perturbed = layout == "perturbed"
    keys = {
        "source": source,
        "source_kind": source_kind,
        "flavor": flavor,
        "layout": layout,
        "version": version,
        "built_at": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "ehrlib_version": ehrlib.__version__,
        "duckdb_version": duckdb.__version__,
        "checksum_algorithm": CHECKSUM_ALGORITHM,
        **dict(extra or {}),
    }
    rows = []
    for logical, d in defs.items():
        present = table_exists(con, d)
        info = infos.get(logical) or TableInfo(logical, "loaded" if present else "missing")
        n, checksum = table_stats(con, d) if present else (0, None)
        rows.append((
            d.name, d.schema or "main", None if perturbed else logical, info.status, n,
            None if perturbed else info.source_file, info.source_sha256, checksum,
        ))
    con.execute(f"CREATE OR REPLACE TABLE {schema.MANIFEST_TABLE} (key VARCHAR NOT NULL, value VARCHAR)")
    con.executemany(f"INSERT INTO {schema.MANIFEST_TABLE} VALUES (?, ?)",  # noqa: S608 - constant
                    [(k, None if v is None else str(v)) for k, v in keys.items()])
    con.execute(
        f"CREATE OR REPLACE TABLE {MANIFEST_TABLES_TABLE} (table_name VARCHAR NOT NULL, "
        "table_schema VARCHAR NOT NULL, logical_name VARCHAR, status VARCHAR NOT NULL, "
        "row_count BIGINT NOT NULL, source_file VARCHAR, source_sha256 VARCHAR, content_checksum VARCHAR)"
    )
    con.executemany(f"INSERT INTO {MANIFEST_TABLES_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)  # noqa: S608


def refresh_table_stats(con, layout: str) -> bool:
    """Re-measure row counts and checksums in an existing manifest; False if none."""
    if not _has_table(con, MANIFEST_TABLES_TABLE):
        return False
    for d in table_defs(layout).values():
        if table_exists(con, d):
            n, checksum = table_stats(con, d)
            con.execute(
                f"UPDATE {MANIFEST_TABLES_TABLE} SET row_count = ?, content_checksum = ? "  # noqa: S608
                "WHERE table_name = ? AND table_schema = ?",
                [n, checksum, d.name, d.schema or "main"],
            )
    return True


def _has_table(con, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?", [name]
    ).fetchone()
    return bool(row and row[0])


def read_manifest(con) -> dict:
    """The manifest as a dict: every key/value row, plus ``tables``: a list of dicts
    (table_name, table_schema, logical_name, status, row_count, source_file,
    source_sha256, content_checksum), and ``skipped_files`` (a build's source files no
    table reads, as a list of {file, reason}). Raises LookupError if there is no manifest.
    """
    if not _has_table(con, schema.MANIFEST_TABLE):
        raise LookupError("this database has no ehrlib manifest (not built by ehrlib)")
    rows = con.execute(f"SELECT key, value FROM {schema.MANIFEST_TABLE}").fetchall()  # noqa: S608
    out: dict = dict(rows)
    if sum(1 for k, _ in rows if k == "source_kind") > 1:
        # a key given twice ("credentialed", then "open-demo") must not let the last one win:
        # the PHI guard fails closed
        out["source_kind"] = "credentialed"
    if _has_table(con, MANIFEST_TABLES_TABLE):
        cur = con.execute(f"SELECT * FROM {MANIFEST_TABLES_TABLE}")  # noqa: S608
        names = [c[0] for c in cur.description]
        out["tables"] = [dict(zip(names, r, strict=True)) for r in cur.fetchall()]
    else:
        out["tables"] = []
    if isinstance(out.get(SKIPPED_KEY), str):   # a JSON list of {file, reason} (ehrlib.db.skipped)
        try:
            out[SKIPPED_KEY] = json.loads(out[SKIPPED_KEY])
        except ValueError:
            out[SKIPPED_KEY] = []
    return out
