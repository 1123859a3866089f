"""Physical ordering of event tables, the last step of every build.

DuckDB prunes row groups by their min/max statistics. Storing an event table sorted
by (subject_id, hadm_id, time) makes the per-patient queries the tools issue read a
handful of row groups instead of the whole table.
"""
from __future__ import annotations

from ehrlib import schema
from ehrlib.db.ddl import TableDef, layout_of, table_defs
from ehrlib.db.manifest import refresh_table_stats, table_exists
from ehrlib.tools.profile import build_item_profile

__all__ = ["finalize", "order_keys", "order_event_tables"]

_TIME_ROLES = ("time", "start", "date")


def order_keys(layout: str, logical: str) -> list[str]:
    """Physical columns an event table is sorted by: subject, admission, time, row id."""
    phys = schema.schema_map(layout_of(layout)).table(logical)
    roles = schema.LOGICAL[logical].roles
    wanted = ["subject", "admission", next((r for r in _TIME_ROLES if r in roles), None), "row_id"]
    keys = []
    for role in wanted:
        col = roles.get(role) if role else None
        if col and phys.columns.get(col):
            keys.append(phys.columns[col])
    return keys


def _reorder(con, d: TableDef, keys: list[str]) -> None:
    """Recreate one table in sorted order, keeping its exact DDL (types, NOT NULL)."""
    sch = d.schema or "main"
    row = con.execute(
        "SELECT sql FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?", [sch, d.name]
    ).fetchone()
    tmp = f"{d.name}__ehrlib_reorder"
    tmp_ref = f"{schema.quote_ident(sch)}.{schema.quote_ident(tmp)}"
    order = ", ".join(f"{schema.quote_ident(k)} NULLS LAST" for k in keys)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"ALTER TABLE {d.ref} RENAME TO {schema.quote_ident(tmp)}")
        con.execute(row[0])
        con.execute(f"INSERT INTO {d.ref} SELECT * FROM {tmp_ref} ORDER BY {order}")  # noqa: S608
        con.execute(f"DROP TABLE {tmp_ref}")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def order_event_tables(con, layout: str) -> list[str]:
    """Sort every event table of the layout present in ``con``; returns their names."""
    done = []
    for logical, d in table_defs(layout).items():
        if schema.LOGICAL[logical].kind != "event" or not table_exists(con, d):
            continue
        keys = order_keys(layout, logical)
        if keys:
            _reorder(con, d, keys)
            done.append(d.name)
    return done


def finalize(con, layout: str) -> None:
    """Order the event tables, precompute the tools' item value profile (global top-K
    values per item, so Get_Item_Value_Distribution never scans an event table at query
    time), then refresh the manifest's row counts and checksums (if
    :func:`ehrlib.db.write_manifest` ran already; the checksum does not depend on row
    order, so the two calls may come in either order), then checkpoint."""
    order_event_tables(con, layout)
    defs = table_defs(layout)
    if all(table_exists(con, d) for logical, d in defs.items() if schema.LOGICAL[logical].kind == "event"):
        build_item_profile(con, schema.schema_map(layout_of(layout)))
    # else: a partial database (tests, custom subsets); the tools profile it on first use
    refresh_table_stats(con, layout_of(layout))
    con.execute("CHECKPOINT")
