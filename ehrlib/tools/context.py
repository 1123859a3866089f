"""The patient a toolset is bound to: who, which admission, and the times notes refer to."""
from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ehrlib.errors import DataError
from ehrlib.schema import SchemaMap

__all__ = ["PatientContext", "load_patient_context", "as_datetime"]


def as_datetime(value: Any) -> _dt.datetime | None:
    """A date, datetime or ISO string as a naive datetime (dates at midnight)."""
    if value is None or value == "":
        return None
    if isinstance(value, _dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, _dt.date):
        return _dt.datetime.combine(value, _dt.time())
    if isinstance(value, str):
        return _dt.datetime.fromisoformat(value.strip().replace("T", " "))
    raise TypeError(f"not a date or time: {value!r}")


@dataclass(frozen=True, slots=True)
class PatientContext:
    """One admission of one patient, as the note being verified sees it.

    ``anchors`` name events narrative time refers to ("surgery" for "POD 2",
    "intubation"); ``note_date`` resolves "today" and "note date".
    """

    subject_id: int
    hadm_id: int
    admittime: _dt.datetime
    dischtime: _dt.datetime | None = None
    note_date: _dt.datetime | None = None
    sex: str | None = None
    anchors: Mapping[str, _dt.datetime] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "admittime", as_datetime(self.admittime))
        object.__setattr__(self, "dischtime", as_datetime(self.dischtime))
        object.__setattr__(self, "note_date", as_datetime(self.note_date))
        object.__setattr__(self, "anchors", MappingProxyType(
            {str(k).strip().lower(): as_datetime(v) for k, v in dict(self.anchors).items()}))
        if self.admittime is None:
            raise ValueError("PatientContext needs an admission time")


def load_patient_context(con: Any, schema: SchemaMap, subject_id: int, hadm_id: int, *,
                         note_date: Any = None, anchors: Mapping[str, Any] | None = None) -> PatientContext:
    """Read admit/discharge times and sex for one admission from the database."""
    adm = schema.table("admissions")
    row = con.execute(
        f"SELECT {adm.col('admittime')}, {adm.col('dischtime')} FROM {adm.ref} "  # noqa: S608 - identifiers from schema
        f"WHERE {adm.col('subject_id')} = ? AND {adm.col('hadm_id')} = ?",
        [int(subject_id), int(hadm_id)]).fetchone()
    if row is None:
        raise DataError(f"no admission {hadm_id} for subject {subject_id} in this database")
    sex = None
    if schema.has("patients"):
        pat = schema.table("patients")
        got = con.execute(f"SELECT {pat.col('gender')} FROM {pat.ref} WHERE {pat.col('subject_id')} = ?",  # noqa: S608
                          [int(subject_id)]).fetchone()
        sex = got[0] if got else None
    return PatientContext(int(subject_id), int(hadm_id), row[0], row[1], note_date, sex, anchors or {})
