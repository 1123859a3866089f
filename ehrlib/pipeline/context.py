"""From a note and the database to a :class:`~ehrlib.pipeline.stages.NoteContext`.

The note carries only subject_id/hadm_id; admission times, sex, age, ICU stays and L_P
(the items this admission has rows for) are read from the tables through
:mod:`ehrlib.schema`, so the same code serves MIMIC-III, MIMIC-IV and the perturbed schema.
TopV(l), the global top-K values of an item, is computed once per (database, item) and
memoised, because the paper reuses the global profile for every patient.
"""
from __future__ import annotations

import datetime as _dt
import threading
from typing import Any

import duckdb

from ehrlib import schema
from ehrlib.corpus.records import ItemRef, Note, TimeSpan
from ehrlib.datafiles import load_data
from ehrlib.db.contracts import check_admission_times
from ehrlib.errors import DataError
from ehrlib.pipeline.stages import NoteContext
from ehrlib.tools.items import patient_item_keys
from ehrlib.tools.lexical import catalog_for, database_identity
from ehrlib.tools.profile import _has_profile_table, profile_for

__all__ = ["note_context", "patient_items", "ItemProfiler", "iso"]



def iso(value: Any) -> str | None:
    """A DB timestamp/date as ISO text (seconds), None stays None."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def _one(con: Any, sql: str, params: list[Any]) -> tuple | None:
    return con.execute(sql, params).fetchone()


def patient_items(con: Any, smap: schema.SchemaMap, subject_id: int) -> tuple[tuple[str, ItemRef], ...]:
    """L_P as (item key, ItemRef): every item this patient has at least one record of,
    under the tools' item keys and catalog labels (the paper's patient-specific item set).
    """
    catalog = catalog_for(con, smap)   # the labels only: the n-gram index (and NumPy, SciPy) is a search's
    out = []
    for key in sorted(patient_item_keys(con, smap, subject_id)):
        item = catalog.get(key)
        table, _, raw = key.partition(":")
        if item is not None:
            out.append((key, ItemRef(table, item.label, item.value)))
        else:
            out.append((key, ItemRef(table, raw.split(":", 1)[-1], raw)))
    return tuple(out)


def note_context(con: Any, note: Note, *, flavor: str | None = None, source_kind: str = "synthetic",
                 db_path: str | None = None, with_items: bool = True) -> NoteContext:
    """The note's context read from the DB; DataError when its admission is not there."""
    flavor = flavor or schema.detect_flavor(con)
    smap = schema.schema_map(flavor)
    adm = smap.table("admissions")
    row = _one(con, f"SELECT {adm.col('subject_id')}, {adm.col('admittime')}, {adm.col('dischtime')} "  # noqa: S608
                    f"FROM {adm.ref} WHERE {adm.col('hadm_id')} = ?", [note.hadm_id])
    if row is None:
        raise DataError(f"note {note.note_id}: admission hadm_id={note.hadm_id} is not in the database")
    if int(row[0]) != int(note.subject_id):
        raise DataError(f"note {note.note_id}: admission {note.hadm_id} belongs to subject {row[0]}, "
                        f"not {note.subject_id}")
    admittime, dischtime = row[1], row[2]
    check_admission_times(note.hadm_id, admittime, dischtime)
    pat = smap.table("patients")
    prow = _one(con, f"SELECT {pat.col('gender')}, {pat.expr('dob')} FROM {pat.ref} "  # noqa: S608
                     f"WHERE {pat.col('subject_id')} = ?", [note.subject_id])
    sex = prow[0] if prow else None
    age = None
    if prow and prow[1] is not None and isinstance(admittime, _dt.datetime):
        dob = prow[1] if isinstance(prow[1], _dt.datetime) else None
        if dob is not None:
            age = round((admittime - dob).days / 365.25, 1)
    icu: tuple[TimeSpan, ...] = ()
    if smap.has("icustays"):
        icu_t = smap.table("icustays")
        rows = con.execute(f"SELECT {icu_t.col('intime')}, {icu_t.col('outtime')} FROM {icu_t.ref} "  # noqa: S608
                           f"WHERE {icu_t.col('hadm_id')} = ? ORDER BY 1", [note.hadm_id]).fetchall()
        icu = tuple(TimeSpan(iso(a), iso(b)) for a, b in rows)
    surgery = _first_operation(con, smap, note.hadm_id)
    pairs = patient_items(con, smap, note.subject_id) if with_items else ()
    return NoteContext(
        note=note, subject_id=note.subject_id, hadm_id=note.hadm_id, admittime=iso(admittime),
        dischtime=iso(dischtime), sex=sex, chartdate=note.chartdate, flavor=flavor, source_kind=source_kind,
        patient_items=tuple(i for _, i in pairs), patient_item_keys=tuple(k for k, _ in pairs),
        db_path=db_path, age=age, icu_windows=icu, surgery_time=surgery,
    )


def _first_operation(con: Any, smap: schema.SchemaMap, hadm_id: int) -> str | None:
    """Start of the admission's first operation: the earliest procedure event whose item
    names the operating room or an operation (``operation_events`` of
    ``verification_terms.yaml``: "OR Sent", "OR Received", "Operation"); None without one.
    Billed procedure codes carry no time in every layout, so they cannot date it.
    """
    if not (smap.has("procedureevents_mv") and smap.has("d_items")):
        return None
    pe, di = smap.table("procedureevents_mv"), smap.table("d_items")
    pattern = "^(?:" + "|".join(load_data("verification_terms.yaml")["operation_events"]) + ")$"
    try:
        row = _one(con, f"SELECT min(p.{pe.col('starttime')}) FROM {pe.ref} p JOIN {di.ref} d "  # noqa: S608
                        f"ON p.{pe.col('itemid')} = d.{di.col('itemid')} "
                        f"WHERE p.{pe.col('hadm_id')} = ? AND regexp_matches(d.{di.col('label')}, ?, 'i')",
                   [hadm_id, pattern])
    except duckdb.Error:
        return None  # a layout without the columns: no table anchor
    return iso(row[0]) if row and row[0] is not None else None


class ItemProfiler:
    """TopV(l): the K most frequent values of an item over the whole database, from the
    tools' precomputed profile (``ehrlib.tools.profile``, the data behind
    Get_Item_Value_Distribution), memoised per key.
    """

    def __init__(self, con_factory: Any, flavor: str, k: int = 10) -> None:
        self._connect = con_factory
        self._smap = schema.schema_map(flavor)
        self._k = k
        self._memo: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        self._db: tuple[tuple[str, str], bool] | None = None

    def _con(self) -> Any:
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = self._connect()
        return con

    def __call__(self, key: str) -> tuple[str, ...]:
        """TopV of an item key, memoised per run."""
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        con = self._con()
        if self._db is None:  # once per profiler: both are catalog queries
            self._db = (database_identity(con), _has_profile_table(con))
        identity, present = self._db
        rows = profile_for(con, self._smap, key, identity, table_present=present)
        values = tuple(str(r["value"]) for r in rows[: self._k])
        with self._lock:
            self._memo[key] = values
        return values
