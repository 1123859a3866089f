"""The perturbed MIMIC-III schema (EHR-ReasonCon paper, Appendix M.3, Table 15).

The renaming itself is declarative (:data:`ehrlib.schema.PERTURBED` applied by
:mod:`ehrlib.db.ddl`); this module holds the guarantee the paper's experiment rests on:
a model exploring the database must not be able to recover the original names, so no
table, view, column comment or manifest value may spell an original MIMIC table name.
"""
from __future__ import annotations

import re

from ehrlib import schema
from ehrlib.errors import DataError

__all__ = ["original_table_names", "find_original_names", "assert_no_original_names"]


def original_table_names() -> frozenset[str]:
    """Upper-case MIMIC-III/MIMIC-IV table names and logical names that must not leak."""
    names = {t.name for m in (schema.MIMIC3, schema.MIMIC4) for t in m.tables.values()} | set(schema.LOGICAL)
    return frozenset(n.upper() for n in names)


def find_original_names(con) -> list[str]:
    """Places in an open database that reveal an original table name ("where: name")."""
    originals = original_table_names()
    word = re.compile(r"[A-Za-z0-9_]+")
    hits = []

    def scan(where: str, text) -> None:
        if text is None:
            return
        for token in word.findall(str(text)):
            if token.upper() in originals:
                hits.append(f"{where}: {token}")

    for sch, table, _column in con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns").fetchall():
        scan("table", table)
        scan("schema", sch)
    for (sql,) in con.execute("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall():
        scan("view", sql)
    for (comment,) in con.execute(
            "SELECT comment FROM duckdb_tables() UNION ALL SELECT comment FROM duckdb_columns()").fetchall():
        scan("comment", comment)
    manifest_tables = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'ehrlib_manifest%'").fetchall()}
    for name in sorted(manifest_tables):
        for row in con.execute(f"SELECT * FROM {schema.quote_ident(name)}").fetchall():  # noqa: S608
            for value in row:
                scan(f"manifest {name}", value)
    return sorted(set(hits))


def assert_no_original_names(con) -> None:
    """Raise DataError if a perturbed database reveals an original table name."""
    hits = find_original_names(con)
    if hits:
        raise DataError(f"perturbed database reveals original names: {'; '.join(hits[:5])}")
