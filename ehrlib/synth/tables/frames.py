"""Rows of one build -> typed DataFrames in the logical model, with stable row ids.

Also owns the generator's extra columns per table, which the renderer turns into
physical-only columns.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ehrlib import schema

__all__ = ["EXTRA_COLUMNS", "LOGICAL_TABLES", "to_frame", "number_rows", "chart_frame"]


#: Columns the generator fills beyond the logical model, per logical table; the
#: renderer (:mod:`ehrlib.synth.render`) turns them into physical-only columns
#: (insurance, MIMIC-IV specimen ids, ...) and otherwise drops them.
EXTRA_COLUMNS: dict[str, tuple[str, ...]] = {
    "patients": ("anchor_age", "anchor_year"),
    "admissions": ("insurance", "ethnicity", "marital_status", "language"),
    "icustays": ("dbsource", "wardid"),
    "labevents": ("specimen_id", "ref_range_lower", "ref_range_upper"),
    "inputevents_mv": ("orderid", "patientweight"),
    "inputevents_cv": ("orderid",),
    "microbiologyevents": ("isolate_num", "micro_specimen_id"),
    "prescriptions": ("order_time", "stop_time"),
    "procedures_icd": ("chartdate",),
    "emar": ("poe_id",),
}


LOGICAL_TABLES = ("chartevents", "labevents", "prescriptions", "inputevents_mv", "inputevents_cv", "outputevents",
                   "procedureevents_mv", "microbiologyevents", "diagnoses_icd", "procedures_icd", "emar",
                   "emar_detail")


def to_frame(name: str, records: list[dict]) -> pd.DataFrame:
    """Records -> DataFrame with the logical columns (+ extras) in order; row ids 1..n
    in (subject, admission, time) order, so they are stable for a seed.
    """
    cols = list(schema.LOGICAL[name].columns) + list(EXTRA_COLUMNS.get(name, ()))
    df = pd.DataFrame.from_records(records, columns=cols) if records else pd.DataFrame(columns=cols)
    for c in cols:  # typed even when empty, so SQL time arithmetic binds
        if c.endswith(("time", "date")) or c in ("dob", "dod"):
            df[c] = pd.to_datetime(df[c])
    return number_rows(name, df)


def number_rows(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Row ids 1..n in (subject, admission, time, item) order."""
    roles = schema.LOGICAL[name].roles
    keys = [roles[r] for r in ("subject", "admission", "time", "start", "item") if r in roles]
    if name == "emar_detail":
        keys = ["subject_id", "emar_seq"]
    df = df.sort_values(keys, kind="stable").reset_index(drop=True) if len(df) else df
    df["row_id"] = np.arange(1, len(df) + 1)
    return df


def chart_frame(chunks: list[dict]) -> pd.DataFrame:
    """Concatenate chart chunks column by column (one DataFrame, not one per chunk)."""
    cols = list(schema.LOGICAL["chartevents"].columns)
    sizes = [len(c["charttime"]) for c in chunks]
    data = {}
    for col in cols:
        if col == "row_id":
            continue
        parts = [c[col] if isinstance(c[col], np.ndarray) else np.full(n, c[col], dtype=object)
                 for c, n in zip(chunks, sizes, strict=False)]
        arr = np.concatenate(parts) if parts else np.array([], dtype=object)
        if col in ("subject_id", "hadm_id", "icustay_id", "itemid"):
            arr = arr.astype("int64")
        elif col in ("warning", "error"):
            arr = pd.array(arr, dtype="Int64")
        data[col] = arr
    df = pd.DataFrame(data)
    df.insert(0, "row_id", 0)
    return df
