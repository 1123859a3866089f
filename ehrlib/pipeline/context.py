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

from ehrlib import schema
from ehrlib.corpus.records import ItemRef, Note, TimeSpan
from ehrlib.errors import DataError
from ehrlib.pipeline.stages import NoteContext, item_key, split_item_key

__all__ = ["note_context", "patient_items", "ItemProfiler", "iso"]

# value column preference per table for TopV(l): what a note would quote about the item
_PROFILE_ROLES = ("value", "valuenum", "amount", "dose", "organism", "interpretation", "location", "route")


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


def patient_items(con: Any, smap: schema.SchemaMap, hadm_id: int) -> tuple[ItemRef, ...]:
    """L_P: every item with at least one row in this admission, labelled from its dictionary."""
    out: list[ItemRef] = []
    for name in schema.EVENT_TABLES:
        logical = schema.LOGICAL[name]
        item_col, adm_col = logical.role("item"), logical.role("admission")
        if not smap.has(name) or item_col is None or adm_col is None:
            continue
        table = smap.table(name)
        if not (table.has(item_col) and table.has(adm_col)):
            continue
        dict_name = logical.dictionary
        if dict_name and smap.has(dict_name):
            dtable = smap.table(dict_name)
            dlogical = schema.LOGICAL[dict_name]
            key = logical.dictionary_key or item_col
            label_col = dlogical.role("label")
            if dtable.has(key) and label_col and dtable.has(label_col):
                sql = (f"SELECT DISTINCT e.{table.col(item_col)}, d.{dtable.col(label_col)} "  # noqa: S608
                       f"FROM {table.ref} e LEFT JOIN {dtable.ref} d ON d.{dtable.col(key)} = e.{table.col(item_col)} "
                       f"WHERE e.{table.col(adm_col)} = ? AND e.{table.col(item_col)} IS NOT NULL")
                rows = con.execute(sql, [hadm_id]).fetchall()
                # an item id may have several dictionary rows (MIMIC-IV ICD versions): keep the first label
                seen: dict[Any, str] = {}
                for item, label in sorted(rows, key=lambda r: (str(r[0]), str(r[1]))):
                    seen.setdefault(item, label if label is not None else str(item))
                out.extend(ItemRef(name, label, item) for item, label in seen.items())
                continue
        sql = (f"SELECT DISTINCT {table.col(item_col)} FROM {table.ref} "  # noqa: S608 - identifiers from schema
               f"WHERE {table.col(adm_col)} = ? AND {table.col(item_col)} IS NOT NULL")
        for (item,) in sorted(con.execute(sql, [hadm_id]).fetchall(), key=lambda r: str(r[0])):
            out.append(ItemRef(name, str(item), item))
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
    items = patient_items(con, smap, note.hadm_id) if with_items else ()
    return NoteContext(
        note=note, subject_id=note.subject_id, hadm_id=note.hadm_id, admittime=iso(admittime),
        dischtime=iso(dischtime), sex=sex, chartdate=note.chartdate, flavor=flavor, source_kind=source_kind,
        patient_items=items, patient_item_keys=tuple(item_key(i.table, i.itemid) for i in items),
        db_path=db_path, age=age, icu_windows=icu,
    )


class ItemProfiler:
    """TopV(l): the K most frequent values of an item over the whole database (memoised).

    Prefers the tools' precomputed distribution when a toolset provides
    ``item_value_distribution(key, k)``; otherwise one grouped query per item.
    """

    def __init__(self, con_factory: Any, flavor: str, k: int = 10) -> None:
        self._connect = con_factory
        self._smap = schema.schema_map(flavor)
        self._k = k
        self._memo: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    def _con(self) -> Any:
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = self._connect()
        return con

    def __call__(self, key: str) -> tuple[str, ...]:
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        values = self._compute(key)
        with self._lock:
            self._memo[key] = values
        return values

    def _compute(self, key: str) -> tuple[str, ...]:
        try:
            name, item = split_item_key(key)
        except ValueError:
            return ()
        if name not in schema.LOGICAL or not self._smap.has(name):
            return ()
        logical = schema.LOGICAL[name]
        table = self._smap.table(name)
        item_col = logical.role("item")
        col = next((logical.role(r) for r in _PROFILE_ROLES
                    if logical.role(r) and table.has(logical.role(r))), None)
        if item_col is None or col is None or not table.has(item_col):
            return ()
        sql = (f"SELECT CAST({table.col(col)} AS VARCHAR) AS v, count(*) AS n FROM {table.ref} "  # noqa: S608
               f"WHERE CAST({table.col(item_col)} AS VARCHAR) = ? AND {table.col(col)} IS NOT NULL "
               f"GROUP BY v ORDER BY n DESC, v LIMIT ?")
        rows = self._con().execute(sql, [item, self._k]).fetchall()
        return tuple(str(v) for v, _ in rows)
