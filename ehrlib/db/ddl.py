"""Typed table definitions for the three physical layouts, and `create_tables`.

The column lists and types live in ``sql/mimic3.sql`` and ``sql/mimic4.sql`` (mimic-code's
DDL for the tables ehrlib uses). This module parses them once and derives, per layout,
a :class:`TableDef` for every logical table: the physical name, schema, typed columns and
the CSV file (and header column) each column is loaded from. The perturbed layout is the
MIMIC-III DDL renamed through :data:`ehrlib.schema.PERTURBED` (+ ``PERTURBED_EXTRA_COLUMNS``);
MIMIC-IV tables without a natural row key get a generated ``row_id`` (schema.MIMIC4).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ehrlib import schema
from ehrlib.errors import ConfigError, unknown_name

__all__ = ["ColumnDef", "TableDef", "LAYOUTS", "table_defs", "create_tables", "layout_of"]

#: Physical layouts the builder can write (a flavor such as "synthetic" maps onto one).
LAYOUTS = ("mimic3", "mimic4", "perturbed")

#: Type of the generated MIMIC-IV row key (1-based position in the source file).
ROW_ID_TYPE = "BIGINT"


@dataclass(frozen=True, slots=True)
class ColumnDef:
    """One physical column.

    ``source`` is the CSV header name it is loaded from (None for a column the builder generates, such as
    MIMIC-IV ``row_id``).
    """

    name: str
    type: str
    not_null: bool
    source: str | None


@dataclass(frozen=True, slots=True)
class TableDef:
    """One physical table of a layout and where its data comes from."""

    logical: str
    name: str
    schema: str | None
    columns: tuple[ColumnDef, ...]
    #: source file path relative to the data folder, without ``.csv``/``.csv.gz``
    source_stem: str

    @property
    def ref(self) -> str:
        """The quoted, schema-qualified name to use in SQL."""
        if self.schema:
            return f"{schema.quote_ident(self.schema)}.{schema.quote_ident(self.name)}"
        return schema.quote_ident(self.name)

    @property
    def generated_row_id(self) -> ColumnDef | None:
        """The row-id column the build numbers itself (no source column), if any."""
        return next((c for c in self.columns if c.source is None), None)

    def create_sql(self) -> str:
        """``CREATE TABLE`` statement with the typed columns."""
        cols = ",\n  ".join(
            f"{schema.quote_ident(c.name)} {c.type}{' NOT NULL' if c.not_null else ''}" for c in self.columns
        )
        return f"CREATE TABLE {self.ref} (\n  {cols}\n)"


_CREATE = re.compile(r"CREATE TABLE\s+(?:(\w+)\.)?(\w+)\s*\((.*?)\n\);", re.S | re.I)
_COLUMN = re.compile(r"^\s*(\w+)\s+(.+?)(\s+NOT NULL)?\s*,?\s*$", re.I)


def _parse(text: str) -> list[tuple[str | None, str, tuple[tuple[str, str, bool], ...]]]:
    """(schema, table, ((column, type, not_null), ...)) for each CREATE TABLE in ``text``."""
    out = []
    for m in _CREATE.finditer(text):
        cols = []
        for line in m.group(3).splitlines():
            line = line.split("--", 1)[0].strip()
            if not line:
                continue
            cm = _COLUMN.match(line)
            if not cm:
                raise ValueError(f"cannot parse DDL line {line!r} of table {m.group(2)}")
            cols.append((cm.group(1), cm.group(2).strip(), bool(cm.group(3))))
        out.append((m.group(1), m.group(2), tuple(cols)))
    return out


@cache
def _ddl(name: str) -> dict[str, tuple[str | None, tuple[tuple[str, str, bool], ...]]]:
    text = resources.files("ehrlib.db").joinpath("sql", f"{name}.sql").read_text(encoding="utf-8")
    return {table: (sch, cols) for sch, table, cols in _parse(text)}


def layout_of(flavor: str) -> str:
    """The physical layout a flavor is written in ("synthetic" uses the MIMIC-III one)."""
    if flavor in LAYOUTS:
        return flavor
    if flavor == "synthetic":
        return "mimic3"
    raise ConfigError(unknown_name("layout", flavor, LAYOUTS))


def _mimic3_defs(perturbed: bool) -> dict[str, TableDef]:
    ddl = _ddl("mimic3")
    target = schema.PERTURBED if perturbed else schema.MIMIC3
    extra = getattr(schema, "PERTURBED_EXTRA_COLUMNS", {})
    defs = {}
    for logical, src in schema.MIMIC3.tables.items():
        _, cols = ddl[src.name]
        phys = target.table(logical)
        logical_cols = set(schema.LOGICAL[logical].columns)
        columns = []
        for name, typ, not_null in cols:
            new = name
            if perturbed:
                lc = name.lower()
                mapped = phys.columns.get(lc) if lc in logical_cols else None
                if mapped:
                    new = mapped
                else:
                    new = extra.get(src.name, {}).get(name, name)
            columns.append(ColumnDef(new, typ, not_null, name))
        defs[logical] = TableDef(logical, phys.name, phys.schema, tuple(columns), src.name)
    return defs


def _mimic4_defs() -> dict[str, TableDef]:
    ddl = _ddl("mimic4")
    defs = {}
    for logical, phys in schema.MIMIC4.tables.items():
        sch, cols = ddl[phys.name]
        if sch != phys.schema:
            raise ValueError(f"mimic4.sql puts {phys.name} in {sch}, schema.MIMIC4 in {phys.schema}")
        columns = [ColumnDef(n, t, nn, n) for n, t, nn in cols]
        row_id = phys.columns.get("row_id")
        if row_id and row_id not in {c.name for c in columns}:
            columns.insert(0, ColumnDef(row_id, ROW_ID_TYPE, True, None))
        folder = "hosp" if phys.schema == "mimiciv_hosp" else "icu"
        defs[logical] = TableDef(logical, phys.name, phys.schema, tuple(columns), f"{folder}/{phys.name}")
    return defs


@cache
def table_defs(layout: str) -> dict[str, TableDef]:
    """{logical table: TableDef} for a layout (``mimic3``, ``mimic4``, ``perturbed``)."""
    layout = layout_of(layout)
    if layout == "mimic4":
        return _mimic4_defs()
    return _mimic3_defs(perturbed=layout == "perturbed")


def create_tables(con, flavor: str = "mimic3", tables: Iterable[str] | None = None) -> list[TableDef]:
    """Create empty, typed tables of one layout in an open DuckDB connection.

    A generator that fills the tables itself calls this, inserts its rows, then
    :func:`ehrlib.db.write_manifest` and :func:`ehrlib.db.finalize`, and so gets the
    same types, ordering and manifest as ``ehrlib build-db``.

    Args:
        con: a writable DuckDB connection.
        flavor: ``mimic3`` | ``mimic4`` | ``perturbed`` (``synthetic`` = ``mimic3``).
        tables: logical table names (default: every table of the layout).

    Returns:
        The definitions of the tables created.
    """
    defs = table_defs(flavor)
    wanted = list(defs) if tables is None else list(tables)
    unknown = [t for t in wanted if t not in defs]
    if unknown:
        raise ConfigError(f"the {flavor} layout has no table(s) {', '.join(unknown)}; known: {', '.join(defs)}")
    existing = {
        ((s or "main").lower(), n.lower())
        for s, n in con.execute("SELECT table_schema, table_name FROM information_schema.tables").fetchall()
    }
    created = []
    for logical in wanted:
        d = defs[logical]
        if ((d.schema or "main").lower(), d.name.lower()) in existing:
            raise ConfigError(f"table {d.ref} already exists in this database")
        if d.schema:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema.quote_ident(d.schema)}")
        con.execute(d.create_sql())
        created.append(d)
    return created
