"""A tiny hand-written hospital, written in any physical layout, for the tool tests.

Two patients on overlapping dates (so a leak of the other patient's rows shows), every
event table, and values chosen so known answers are easy to state: patient 101's heart
rate crosses 100, creatinine rises then falls, WBC falls. ``build_tiny_hospital`` writes
it through an ehrlib.schema map, so the same content exists in MIMIC-III, MIMIC-IV and
perturbed layouts; the tests in this file check that the builder did what it says.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest

from ehrlib.schema import LOGICAL, MIMIC3, MIMIC4, PERTURBED, SchemaMap, detect_flavor

LAYOUTS = {"mimic3": MIMIC3, "mimic4": MIMIC4, "perturbed": PERTURBED}
A, B = 101, 202          # subjects
HA, HB = 1001, 2002      # their admissions
ADMIT = dt.datetime(2130, 1, 10, 14, 0)
DISCH = dt.datetime(2130, 1, 15, 12, 0)


def T(day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    return dt.datetime(2130, 1, day, hour, minute)


_DOUBLE = {"valuenum", "amount", "rate", "originalamount", "originalrate", "los", "dose_given", "infusion_rate"}
_INT = {"row_id", "subject_id", "hadm_id", "icustay_id", "itemid", "seq_num", "spec_itemid", "org_itemid",
        "ab_itemid", "emar_seq", "icd_version"}
_TIME = {"dob", "dod", "admittime", "dischtime", "deathtime", "edregtime", "edouttime", "intime", "outtime",
         "charttime", "storetime", "startdate", "enddate", "starttime", "endtime", "chartdate", "scheduletime"}


def _type(table: str, col: str) -> str:
    if col == "value" and table in ("outputevents", "procedureevents_mv"):
        return "DOUBLE"
    if col in _DOUBLE:
        return "DOUBLE"
    if col in _INT:
        return "BIGINT"
    if col in _TIME:
        return "TIMESTAMP"
    return "VARCHAR"


def tiny_rows() -> dict[str, list[dict[str, Any]]]:
    """Logical table -> rows (logical column names)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    rows["patients"] = [dict(row_id=1, subject_id=A, gender="F", dob=dt.datetime(2070, 1, 1)),
                        dict(row_id=2, subject_id=B, gender="M", dob=dt.datetime(2060, 1, 1))]
    rows["admissions"] = [dict(row_id=1, subject_id=A, hadm_id=HA, admittime=ADMIT, dischtime=DISCH),
                          dict(row_id=2, subject_id=B, hadm_id=HB, admittime=ADMIT, dischtime=DISCH)]
    rows["icustays"] = [dict(row_id=1, subject_id=A, hadm_id=HA, icustay_id=301, intime=ADMIT, outtime=DISCH)]
    rows["d_items"] = [
        dict(row_id=1, itemid=220045, label="Heart Rate", abbreviation="HR", category="Routine Vital Signs",
             unitname="bpm", linksto="chartevents"),
        dict(row_id=2, itemid=220179, label="Non Invasive Blood Pressure systolic", abbreviation="NBPs",
             category="Routine Vital Signs", unitname="mmHg", linksto="chartevents"),
        dict(row_id=3, itemid=220210, label="Respiratory Rate", abbreviation="RR", category="Respiratory",
             unitname="insp/min", linksto="chartevents"),
        dict(row_id=4, itemid=223761, label="Temperature Fahrenheit", abbreviation="Temperature F",
             category="Routine Vital Signs", unitname="°F", linksto="chartevents"),
        dict(row_id=5, itemid=220277, label="O2 saturation pulseoxymetry", abbreviation="SpO2",
             category="Respiratory", unitname="%", linksto="chartevents"),
        dict(row_id=6, itemid=226104, label="Level of Consciousness", abbreviation="LOC", category="Neurological",
             linksto="chartevents"),
        dict(row_id=7, itemid=221906, label="Norepinephrine", abbreviation="Norepinephrine", category="Medications",
             unitname="mcg/kg/min", linksto="inputevents_mv"),
        dict(row_id=8, itemid=226559, label="Foley", abbreviation="Foley", category="Output", unitname="mL",
             linksto="outputevents"),
        dict(row_id=9, itemid=225792, label="Invasive Ventilation", abbreviation="Invasive Ventilation",
             category="Ventilation", linksto="procedureevents_mv"),
        dict(row_id=10, itemid=224639, label="Daily Weight", abbreviation="Daily Weight", category="General",
             unitname="kg", linksto="chartevents"),
    ]
    rows["d_labitems"] = [
        dict(row_id=1, itemid=51301, label="White Blood Cells", fluid="Blood", category="Hematology"),
        dict(row_id=2, itemid=50912, label="Creatinine", fluid="Blood", category="Chemistry"),
        dict(row_id=3, itemid=51222, label="Hemoglobin", fluid="Blood", category="Hematology"),
        dict(row_id=4, itemid=50971, label="Potassium", fluid="Blood", category="Chemistry"),
        dict(row_id=5, itemid=50813, label="Lactate", fluid="Blood", category="Blood Gas"),
    ]
    rows["d_icd_diagnoses"] = [
        dict(row_id=1, icd9_code="5849", short_title="Acute kidney failure NOS",
             long_title="Acute kidney failure, unspecified"),
        dict(row_id=2, icd9_code="0389", short_title="Septicemia NOS", long_title="Unspecified septicemia"),
    ]
    rows["d_icd_procedures"] = [dict(row_id=1, icd9_code="9604", short_title="Insert endotracheal tube",
                                     long_title="Insertion of endotracheal tube")]
    ce: list[dict[str, Any]] = []

    def chart(subject: int, hadm: int, itemid: int, when: dt.datetime, value: Any, unit: str | None) -> None:
        num = float(value) if isinstance(value, (int, float)) else None
        ce.append(dict(row_id=len(ce) + 1, subject_id=subject, hadm_id=hadm, icustay_id=301 if subject == A else None,
                       itemid=itemid, charttime=when, value=str(value), valuenum=num, valueuom=unit))

    for when, hr in [(T(10, 15), 95), (T(10, 16), 105), (T(10, 18), 112), (T(11, 8), 99), (T(12, 8), 101),
                     (T(14, 8), 80)]:
        chart(A, HA, 220045, when, hr, "bpm")
    for when, hr in [(T(10, 15), 130), (T(10, 16), 140), (T(11, 8), 150), (T(12, 8), 125)]:
        chart(B, HB, 220045, when, hr, "bpm")
    for when, sbp in [(T(10, 15), 85), (T(11, 8), 118), (T(13, 8), 124)]:
        chart(A, HA, 220179, when, sbp, "mmHg")
    for when, t in [(T(10, 16), 101.2), (T(11, 8), 99.0), (T(13, 8), 98.4)]:
        chart(A, HA, 223761, when, t, "°F")
    for when, s in [(T(10, 16), 89), (T(11, 8), 95)]:
        chart(A, HA, 220277, when, s, "%")
    chart(A, HA, 226104, T(10, 16), "Alert", None)
    chart(A, HA, 226104, T(11, 8), "Confused", None)
    chart(B, HB, 226104, T(11, 8), "Alert", None)
    chart(A, HA, 224639, T(10, 16), 80, "kg")
    rows["chartevents"] = ce
    le: list[dict[str, Any]] = []

    def lab(subject: int, hadm: int | None, itemid: int, when: dt.datetime, value: float, unit: str,
            flag: str | None = None) -> None:
        le.append(dict(row_id=len(le) + 1, subject_id=subject, hadm_id=hadm, itemid=itemid, charttime=when,
                       value=f"{value:g}", valuenum=value, valueuom=unit, flag=flag))

    for when, cr in [(T(10, 16), 1.0), (T(11, 6), 1.4), (T(12, 6), 1.9), (T(13, 6), 1.6), (T(14, 6), 1.2)]:
        lab(A, HA, 50912, when, cr, "mg/dL", "abnormal" if cr > 1.1 else None)
    for when, wbc in [(T(10, 16), 15.2), (T(11, 6), 13.0), (T(12, 6), 11.1), (T(13, 6), 9.0)]:
        lab(A, HA, 51301, when, wbc, "K/uL", "abnormal" if wbc > 11 else None)
    lab(A, None, 51222, T(9, 18), 10.1, "g/dL", "abnormal")          # outpatient lab the day before admission
    lab(A, HA, 51222, T(11, 6), 9.4, "g/dL", "abnormal")
    lab(A, HA, 50813, T(10, 16), 3.1, "mmol/L", "abnormal")
    for when, cr in [(T(10, 16), 4.0), (T(11, 6), 4.4)]:
        lab(B, HB, 50912, when, cr, "mg/dL", "abnormal")
    rows["labevents"] = le
    rows["prescriptions"] = [
        dict(row_id=1, subject_id=A, hadm_id=HA, startdate=T(10), enddate=T(13), drug_type="MAIN",
             drug="Vancomycin", dose_val_rx="1000", dose_unit_rx="mg", route="IV"),
        dict(row_id=2, subject_id=A, hadm_id=HA, startdate=T(12), enddate=T(14), drug_type="MAIN",
             drug="Furosemide", dose_val_rx="40", dose_unit_rx="mg", route="IV"),
        dict(row_id=3, subject_id=B, hadm_id=HB, startdate=T(10), enddate=T(15), drug_type="MAIN",
             drug="Piperacillin-Tazobactam", dose_val_rx="4.5", dose_unit_rx="g", route="IV"),
    ]
    rows["inputevents_mv"] = [
        dict(row_id=1, subject_id=A, hadm_id=HA, icustay_id=301, starttime=T(11, 2), endtime=T(11, 20),
             itemid=221906, amount=2.5, amountuom="mg", rate=0.1, rateuom="mcg/kg/min"),
        dict(row_id=2, subject_id=B, hadm_id=HB, starttime=T(11, 2), endtime=T(12, 20), itemid=221906,
             amount=5.0, amountuom="mg", rate=0.2, rateuom="mcg/kg/min"),
    ]
    rows["outputevents"] = [
        dict(row_id=1, subject_id=A, hadm_id=HA, icustay_id=301, charttime=T(11, 6), itemid=226559, value=300.0,
             valueuom="mL"),
        dict(row_id=2, subject_id=A, hadm_id=HA, icustay_id=301, charttime=T(12, 6), itemid=226559, value=150.0,
             valueuom="mL"),
    ]
    rows["procedureevents_mv"] = [
        dict(row_id=1, subject_id=A, hadm_id=HA, icustay_id=301, starttime=T(10, 20), endtime=T(12, 10),
             itemid=225792, value=38.0, valueuom="hour"),
    ]
    rows["microbiologyevents"] = [
        dict(row_id=1, subject_id=A, hadm_id=HA, chartdate=T(10), charttime=None, spec_itemid=70012,
             spec_type_desc="BLOOD CULTURE", org_itemid=80002, org_name="ESCHERICHIA COLI", ab_itemid=90004,
             ab_name="CIPROFLOXACIN", interpretation="S"),
        dict(row_id=2, subject_id=B, hadm_id=HB, chartdate=T(11), charttime=T(11, 9), spec_itemid=70079,
             spec_type_desc="URINE", org_itemid=80023, org_name="STAPH AUREUS COAG +", ab_itemid=None,
             ab_name=None, interpretation=None),
    ]
    rows["diagnoses_icd"] = [dict(row_id=1, subject_id=A, hadm_id=HA, seq_num=1, icd9_code="0389"),
                             dict(row_id=2, subject_id=A, hadm_id=HA, seq_num=2, icd9_code="5849"),
                             dict(row_id=3, subject_id=B, hadm_id=HB, seq_num=1, icd9_code="0389")]
    rows["procedures_icd"] = [dict(row_id=1, subject_id=A, hadm_id=HA, seq_num=1, icd9_code="9604")]
    return rows


def write_tables(con: duckdb.DuckDBPyConnection, schema: SchemaMap, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Create every table of the layout and insert the logical rows, renamed to physical names."""
    for logical, phys in schema.tables.items():
        if phys.schema:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {phys.schema}")
        cols = [c for c in LOGICAL[logical].columns if phys.has(c)]
        ddl = ", ".join(f"{phys.col(c)} {_type(logical, c)}" for c in cols)
        con.execute(f"CREATE TABLE {phys.ref} ({ddl})")
        data = rows.get(logical, [])
        if not data:
            continue
        frame = pd.DataFrame([[r.get(c) for c in cols] for r in data], columns=cols, dtype=object)
        con.register("_frame", frame)
        select = ", ".join(f"CAST({'_frame.' + chr(34) + c + chr(34)} AS {_type(logical, c)})" for c in cols)
        con.execute(f"INSERT INTO {phys.ref} SELECT {select} FROM _frame")
        con.unregister("_frame")


def build_tiny_hospital(path: Path, layout: str = "mimic3") -> Path:
    con = duckdb.connect(str(path))
    try:
        write_tables(con, LAYOUTS[layout], tiny_rows())
    finally:
        con.close()
    return path


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_tiny_hospital_is_detected_in_its_layout(tmp_path, layout):
    path = build_tiny_hospital(tmp_path / f"{layout}.duckdb", layout)
    con = duckdb.connect(str(path), read_only=True)
    assert detect_flavor(con) == layout
    ce = LAYOUTS[layout].table("chartevents")
    n = con.execute(f"SELECT count(*) FROM {ce.ref}").fetchone()[0]
    assert n == len(tiny_rows()["chartevents"])


def lactate_hospital(folder: Path, lactates: list[tuple[Any, float]]) -> Path:
    """The tiny hospital (MIMIC-III layout) plus patient A's lactates ``(charttime, value)``, as
    a DuckDB file in ``folder``.
    """
    rows = tiny_rows()
    n = len(rows["labevents"])
    for i, (when, v) in enumerate(lactates):
        rows["labevents"].append(dict(row_id=n + i + 1, subject_id=A, hadm_id=HA, itemid=50813, charttime=when,
                                      value=f"{v:g}", valuenum=v, valueuom="mmol/L", flag="abnormal"))
    path = folder / "tiny.duckdb"
    con = duckdb.connect(str(path))
    try:
        write_tables(con, LAYOUTS["mimic3"], rows)
    finally:
        con.close()
    return path
