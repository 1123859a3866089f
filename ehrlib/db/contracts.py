"""Data contracts a build must satisfy, and how a source folder is classified.

The known row counts of PhysioNet's open demos (MIMIC-III demo v1.4, MIMIC-IV demo
v2.2; see each data folder's SOURCE.md) serve two purposes: a folder whose
SHA256SUMS.txt is the demo's must load exactly these counts (else the copy is damaged),
and only a folder whose counts all match is classified ``open-demo``. Anything else is
``credentialed``: the PHI guard then keeps its text away from unsafe endpoints, which is
the safe default when unsure.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import re
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from ehrlib import schema
from ehrlib.corpus.records import YEAR_RANGE
from ehrlib.db.ddl import TableDef
from ehrlib.errors import DataError

__all__ = [
    "DEMO_ROW_COUNTS",
    "DEMO_SUMS_FINGERPRINT",
    "sums_file_is_demo",
    "classify_source",
    "check_not_null_ids",
    "check_unique_row_ids",
    "check_timestamps",
    "check_admission_times",
    "sha256_file",
]

#: Rows per logical table in PhysioNet's open demos (header excluded).
DEMO_ROW_COUNTS: Mapping[str, Mapping[str, int]] = MappingProxyType({
    "mimic3": MappingProxyType({
        "patients": 100, "admissions": 129, "icustays": 136, "chartevents": 758_355,
        "labevents": 76_074, "prescriptions": 10_398, "inputevents_mv": 13_224,
        "inputevents_cv": 34_799, "outputevents": 11_320, "procedureevents_mv": 753,
        "microbiologyevents": 2_003, "diagnoses_icd": 1_761, "procedures_icd": 506,
        "d_items": 12_487, "d_labitems": 753, "d_icd_diagnoses": 14_567, "d_icd_procedures": 3_882,
    }),
    # chartevents is not listed: the copy here lacks it and its count is not on record.
    "mimic4": MappingProxyType({
        "patients": 100, "admissions": 275, "icustays": 140, "labevents": 107_727,
        "prescriptions": 18_087, "inputevents_mv": 20_404, "outputevents": 9_362,
        "procedureevents_mv": 1_468, "microbiologyevents": 2_899, "diagnoses_icd": 4_506,
        "procedures_icd": 722, "emar": 35_835, "emar_detail": 72_018, "d_items": 4_014,
        "d_labitems": 1_622, "d_icd_diagnoses": 109_775, "d_icd_procedures": 85_257,
    }),
})

#: (file named in SHA256SUMS.txt, its sha256) that identifies each demo's checksum list.
DEMO_SUMS_FINGERPRINT: Mapping[str, tuple[str, str]] = MappingProxyType({
    "mimic3": ("PATIENTS.csv", "f65803a46bcb88127574bfd0b70d78d4123783d05bb411e70d4c9629edd7b703"),
    "mimic4": ("hosp/patients.csv.gz", "59dcc6cd8450ddf03ad32cc7d76e41caa4c9633541715987f590c74835cf6fae"),
})

def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_SUMS_LINE = re.compile(r"^([0-9a-fA-F]{64})\s+\*?(.+?)\s*$")


def read_sums(path: Path) -> dict[str, str]:
    """{relative file name: sha256} from a PhysioNet SHA256SUMS.txt."""
    out = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _SUMS_LINE.match(line)
        if m:
            out[m.group(2)] = m.group(1).lower()
    return out


def sums_file_is_demo(src: Path, flavor: str) -> bool:
    """True if ``src/SHA256SUMS.txt`` is PhysioNet's list for the open demo."""
    path = src / "SHA256SUMS.txt"
    if not path.is_file():
        return False
    name, digest = DEMO_SUMS_FINGERPRINT[flavor]
    return read_sums(path).get(name) == digest


def classify_source(src: Path, flavor: str, row_counts: Mapping[str, int]) -> str:
    """``open-demo`` or ``credentialed`` for a loaded folder (see module docstring).

    Raises DataError when the folder carries the demo's SHA256SUMS.txt but a table's
    row count differs from the demo's.
    """
    known = DEMO_ROW_COUNTS.get(flavor, {})
    diffs = [(t, row_counts[t], n) for t, n in known.items() if t in row_counts and row_counts[t] != n]
    claims_demo = sums_file_is_demo(src, flavor)
    if claims_demo and diffs:
        t, got, want = diffs[0]
        raise DataError(f"{src} carries the PhysioNet demo's SHA256SUMS.txt but table {t} has {got} rows, "
                        f"expected {want} (damaged or partial copy)")
    core_loaded = all(t in row_counts for t in ("patients", "admissions"))
    if known and core_loaded and not diffs and (claims_demo or not (src / "SHA256SUMS.txt").exists()):
        return "open-demo"
    return "credentialed"


def _id_columns(layout: str, d: TableDef) -> list[str]:
    phys = schema.schema_map(layout).table(d.logical)
    roles = schema.LOGICAL[d.logical].roles
    not_null = {c.name for c in d.columns if c.not_null}
    return [phys.columns[roles[r]] for r in ("row_id", "subject", "admission", "stay", "item")
            if r in roles and phys.columns.get(roles[r]) in not_null]


def check_not_null_ids(con, layout: str, d: TableDef) -> None:
    """No NULL in an id column the DDL declares NOT NULL (a belt-and-braces check of
    the constraint, also for tables a generator filled)."""
    for col in _id_columns(layout, d):
        n = con.execute(f"SELECT count(*) FROM {d.ref} WHERE {schema.quote_ident(col)} IS NULL").fetchone()[0]  # noqa: S608
        if n:
            raise DataError(f"{d.name}.{col}: {n} NULL value(s) in a NOT NULL id column")


def check_unique_row_ids(con, layout: str, d: TableDef) -> None:
    """The row key (MIMIC-III ROW_ID, MIMIC-IV labevent_id, ...) is unique: evidence cites it."""
    phys = schema.schema_map(layout).table(d.logical)
    col = phys.columns.get("row_id") if "row_id" in schema.LOGICAL[d.logical].columns else None
    if not col:
        return
    q = schema.quote_ident(col)
    total, distinct = con.execute(f"SELECT count({q}), count(DISTINCT {q}) FROM {d.ref}").fetchone()  # noqa: S608
    if total != distinct:
        raise DataError(f"{d.name}.{col}: {total - distinct} duplicate row key(s)")


def check_timestamps(con, layout: str, d: TableDef) -> None:
    """Every DATE/TIMESTAMP value lies in a plausible year range (MIMIC's shifted dates,
    1700-2300): DuckDB parses year 99999 happily, and every window query would then run
    over garbage. The error names the table, the column and one offending row."""
    lo, hi = YEAR_RANGE
    phys = schema.schema_map(layout).table(d.logical)
    row_col = phys.columns.get("row_id") if "row_id" in schema.LOGICAL[d.logical].columns else None
    for c in d.columns:
        if not c.type.upper().startswith(("TIMESTAMP", "DATE")):
            continue
        q = schema.quote_ident(c.name)
        key = schema.quote_ident(row_col) if row_col else "NULL"
        row = con.execute(f"SELECT count(*) OVER (), {key}, CAST({q} AS VARCHAR) FROM {d.ref} "  # noqa: S608
                          f"WHERE year({q}) NOT BETWEEN ? AND ? LIMIT 1", [lo, hi]).fetchone()
        if row:
            n, rid, value = row
            sample = f"{row_col}={rid}, " if row_col else ""
            raise DataError(f"{d.name}.{c.name}: {n} value(s) outside years {lo}..{hi}, e.g. row {sample}"
                            f"{c.name}={value}; fix or remove those rows and rebuild")


def check_admission_times(hadm_id: int, admittime: object, dischtime: object) -> None:
    """An admission's times as read back are timestamps in range, discharge not before
    admission: every note window hangs off them (a database not built by ehrlib, or
    edited after the build, may hold NULL, text or year 99999 there)."""
    for name, value in (("admittime", admittime), ("dischtime", dischtime)):
        if value is None and name == "dischtime":
            continue
        if not isinstance(value, _dt.date):
            raise DataError(f"admission hadm_id={hadm_id}: {name} is {value!r}, not a timestamp "
                            "(the database is damaged or was not built by ehrlib)")
        if not YEAR_RANGE[0] <= value.year <= YEAR_RANGE[1]:
            raise DataError(f"admission hadm_id={hadm_id}: {name} {value} is outside years "
                            f"{YEAR_RANGE[0]}..{YEAR_RANGE[1]}")
    if isinstance(dischtime, _dt.date) and type(admittime) is type(dischtime) and dischtime < admittime:
        raise DataError(f"admission hadm_id={hadm_id}: dischtime {dischtime} is before admittime {admittime}")
