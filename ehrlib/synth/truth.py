"""A read-only view of one admission as the tables hold it, in logical names.

This is the "truth" the note writer and the tests may use: nothing from the generator's
internals, only rows read back through :mod:`ehrlib.schema` (so the same call works on
the MIMIC-III, MIMIC-IV and perturbed renderings, and on real MIMIC), plus the storyline
rows of ``ehrlib_synth_storylines`` when the database has them.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import duckdb
import pandas as pd

from ehrlib import schema
from ehrlib.errors import DataError
from ehrlib.synth.render import STORYLINES_TABLE

__all__ = ["AdmissionView", "admission_view", "read_storylines"]


@dataclass(frozen=True, slots=True)
class AdmissionView:
    """Every row of one admission: ``tables`` maps a logical table to a DataFrame with
    the logical columns (columns the layout lacks are NULL); ``storyline`` is the
    synthetic storyline name (None on real data), ``events`` its key event times.
    """

    flavor: str
    subject_id: int
    hadm_id: int
    tables: Mapping[str, pd.DataFrame]
    storyline: str | None
    events: Mapping[str, pd.Timestamp]


def read_storylines(con, hadm_id: int | None = None) -> list[tuple]:
    """(subject_id, hadm_id, storyline, event, event_time) rows in time order, for one admission or all.

    The only generator knowledge a database carries; everything else is in the MIMIC tables.
    """
    where, params = ("WHERE hadm_id = ? ", [hadm_id]) if hadm_id is not None else ("", [])
    return con.execute(
        f"SELECT subject_id, hadm_id, storyline, event, event_time FROM {schema.quote_ident(STORYLINES_TABLE)} "  # noqa: S608
        f"{where}ORDER BY subject_id, hadm_id, event_time, event", params
    ).fetchall()


def _has_table(con, name: str) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchone()
    return bool(row and row[0])


def admission_view(db: str | os.PathLike | duckdb.DuckDBPyConnection, hadm_id: int) -> AdmissionView:
    """Read one admission's rows from every table that has an admission column.

    Args:
        db: a DuckDB path (opened read-only) or an open connection.
        hadm_id: the admission.

    Returns:
        The admission's rows per logical table (``emar_detail`` through ``emar``).
    """
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else duckdb.connect(str(db), read_only=True)
    try:
        flavor = schema.detect_flavor(con)
        smap = schema.schema_map(flavor)
        adm = smap.table("admissions")
        row = con.execute(f"SELECT {adm.col('subject_id')} FROM {adm.ref} WHERE {adm.col('hadm_id')} = ?",  # noqa: S608
                          [hadm_id]).fetchone()
        if row is None:
            raise DataError(f"admission {hadm_id} is not in this database")
        tables: dict[str, pd.DataFrame] = {}
        for name, lt in schema.LOGICAL.items():
            if not smap.has(name) or "admission" not in lt.roles:
                continue
            t = smap.table(name)
            order = [lt.roles[r] for r in ("time", "start", "row_id") if r in lt.roles and t.has(lt.roles[r])]
            sql = (f"SELECT {smap.select_list(name, alias='t')} FROM {t.ref} t "
                   f"WHERE t.{t.col(lt.roles['admission'])} = ?")
            if order:
                sql += " ORDER BY " + ", ".join(f"t.{t.col(c)}" for c in order)
            tables[name] = con.execute(sql, [hadm_id]).df()  # noqa: S608 - identifiers from schema
        if smap.has("emar_detail") and "emar" in tables:
            det, emar = smap.table("emar_detail"), smap.table("emar")
            tables["emar_detail"] = con.execute(
                f"SELECT {smap.select_list('emar_detail', alias='d')} FROM {det.ref} d JOIN {emar.ref} e "  # noqa: S608
                f"ON d.{det.col('emar_id')} = e.{emar.col('emar_id')} WHERE e.{emar.col('hadm_id')} = ? "
                f"ORDER BY d.{det.col('row_id')}", [hadm_id]).df()
        storyline, events = None, {}
        if _has_table(con, STORYLINES_TABLE):
            rows = read_storylines(con, hadm_id)
            storyline = rows[0][2] if rows else None
            events = {event: pd.Timestamp(when) for _, _, _, event, when in rows}
        return AdmissionView(flavor, int(row[0]), int(hadm_id), tables, storyline, events)
    finally:
        if con is not db:
            con.close()
