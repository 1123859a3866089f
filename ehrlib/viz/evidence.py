"""The charted content of evidence rows, for people: time, item label, value and unit.

A prediction cites its evidence as ``(table, row_id)`` pairs; a reviewer needs what the
row says. :func:`evidence_rows` reads them from the run's database through the tools'
own table readers (``ehrlib.tools.access``): a read-only connection, identifiers from
the schema map, every value bound, and every query restricted to the note's patient, so
a row id that belongs to someone else shows as not found rather than leaking.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb

from ehrlib import schema
from ehrlib.corpus.records import RowRef
from ehrlib.db.connect import connect
from ehrlib.errors import DataError
from ehrlib.schema import LOGICAL
from ehrlib.tools.access import reader
from ehrlib.tools.items import Catalog, make_key
from ehrlib.tools.lexical import catalog_for
from ehrlib.viz.values import format_value

__all__ = ["EvidenceReader", "EvidenceRow", "describe"]

#: at most this many rows are looked up per finding (the viewer says how many more)
MAX_ROWS = 20


@dataclass(frozen=True, slots=True)
class EvidenceRow:
    """One evidence row as the viewer shows it."""
    table: str
    row_id: Any
    time: str | None = None
    end: str | None = None
    item: str | None = None
    label: str | None = None
    value: str | None = None
    unit: str | None = None
    extra: Mapping[str, Any] | None = None
    found: bool = True


def describe(row: EvidenceRow) -> str:
    """One line: ``2150-01-05 08:00 · White Blood Cells · 20.1 K/uL`` (drug · dose unit · route)."""
    if not row.found:
        return f"{row.table}#{row.row_id}: not found for this patient"
    when = (row.time or "")[:16]
    if row.end:
        when += f" → {row.end[:16]}"
    extra = dict(row.extra or {})
    value = " ".join(x for x in (row.value, row.unit) if x)
    bits = [when, row.label or row.item or "", value]
    if extra.get("route"):
        bits.append(f"route {extra['route']}")
    if extra.get("rate") not in (None, ""):
        bits.append(f"rate {format_value(extra['rate'])} {extra.get('rate_unit') or ''}".strip())
    if extra.get("flag"):
        bits.append(str(extra["flag"]))
    if extra.get("interpretation"):
        bits.append(str(extra["interpretation"]))
    return " · ".join(b for b in bits if b)


def _fmt(value: Any) -> str | None:
    """A time, item id or unit as text (values go through :func:`format_value`)."""
    return None if value is None else str(value)


class EvidenceReader:
    """Looks evidence rows up in one database; ``None`` path = no database (ids only)."""

    def __init__(self, db: str | os.PathLike[str] | None) -> None:
        self._con: duckdb.DuckDBPyConnection | None = None
        self._schema: schema.SchemaMap | None = None
        self._catalog: Catalog | None = None
        self.error: str | None = None
        if db is None:
            self.error = "the run names no database"
            return
        try:
            self._con = connect(db)
        except DataError as exc:
            self.error = str(exc)
            return
        self._schema = schema.schema_map(schema.detect_flavor(self._con))
        self._catalog = None

    def close(self) -> None:
        """Close the database connection, if one is open."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> EvidenceReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _label(self, table: str, item: Any) -> str | None:
        if item is None:
            return None
        if self._catalog is None:
            if self._con is None or self._schema is None:
                return None
            self._catalog = catalog_for(self._con, self._schema)
        column = LOGICAL[table].roles.get("item") if table in LOGICAL else None
        if table == "microbiologyevents" or column is None:
            return None
        hit = self._catalog.get(make_key(table, column, item))
        return hit.label if hit is not None else None

    def rows(self, subject_id: int, refs: Iterable[RowRef]) -> list[EvidenceRow]:
        """The rows in ``refs`` order (the first MAX_ROWS); unknown tables and rows of other
        patients come back with ``found=False``.
        """
        refs = list(refs)[:MAX_ROWS]
        if self._con is None or self._schema is None:
            return [EvidenceRow(r.table, r.row_id, found=False) for r in refs]
        found: dict[tuple[str, str], EvidenceRow] = {}
        by_table: dict[str, list[Any]] = {}
        for r in refs:
            by_table.setdefault(r.table, []).append(r.row_id)
        for table, ids in by_table.items():
            if table not in LOGICAL or not self._schema.has(table):
                continue
            rd = reader(self._schema, table)
            if rd.row_id == "NULL":
                continue
            marks = ", ".join("?" for _ in ids)
            sql = (f"SELECT {rd.select_sql(packed_extras=False)} FROM {rd.ref} "  # noqa: S608 - identifiers from the schema map
                   f"WHERE {rd.subject} = ? AND {rd.row_id} IN ({marks})")
            try:
                records = self._con.execute(sql, [table, int(subject_id), *ids]).fetchall()
            except duckdb.Error:  # a table this build lacks (e.g. the MIMIC-IV demo's chartevents)
                continue
            for rec in records:
                row = rd.row(rec, packed_extras=False)
                found[(table, str(row["row_id"]))] = EvidenceRow(
                    table, row["row_id"], _fmt(row["time"]), _fmt(row.get("end")), _fmt(row["item"]),
                    self._label(table, row["item"]), format_value(row["valuenum"], row["value"]), _fmt(row["unit"]),
                    row["extra"] or None)
        return [found.get((r.table, str(r.row_id)), EvidenceRow(r.table, r.row_id, found=False)) for r in refs]
