"""Write the generated logical tables into a DuckDB file in one physical layout.

The typed, empty tables come from :func:`ehrlib.db.create_tables`, so the synthetic
hospital has exactly the types and names ``ehrlib build-db`` gives real MIMIC. Each
physical column is filled from the logical column the layout's
:class:`ehrlib.schema.SchemaMap` maps onto it, or from one of the generator's extra
columns (:data:`ehrlib.synth.tables.EXTRA_COLUMNS`) through the small per-layout table
below, or left NULL. That table is the one place the synthetic generator names physical
columns outside the logical model (MIMIC-III's INSURANCE, MIMIC-IV's specimen_id, ...);
most are NOT NULL in the mimic-code DDL.
"""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ehrlib import schema
from ehrlib.db import create_tables, table_defs
from ehrlib.db.ddl import TableDef

__all__ = ["STORYLINES_TABLE", "write_tables", "insert_staged", "linksto_values"]

#: Extra table with each admission's storyline and key event times (every layout).
STORYLINES_TABLE = "ehrlib_synth_storylines"

_STORYLINES_DDL = (
    f"CREATE TABLE {schema.quote_ident(STORYLINES_TABLE)} (subject_id INTEGER NOT NULL, "
    "hadm_id INTEGER NOT NULL, storyline VARCHAR NOT NULL, event VARCHAR NOT NULL, event_time TIMESTAMP NOT NULL)"
)

# Physical-only columns: {logical table: {physical column (lower case): SQL expression
# over the staged logical + extra columns}}. Expressions are constants of this module.
_MIMIC3_EXTRAS: Mapping[str, Mapping[str, str]] = {
    "patients": {"expire_flag": "CASE WHEN dod IS NULL THEN 0 ELSE 1 END", "dod_ssn": "dod"},
    "admissions": {"insurance": "insurance", "ethnicity": "ethnicity", "marital_status": "marital_status",
                   "language": "language", "hospital_expire_flag": "CASE WHEN deathtime IS NULL THEN 0 ELSE 1 END",
                   "has_chartevents_data": "1"},
    "icustays": {"dbsource": "dbsource", "first_wardid": "wardid", "last_wardid": "wardid"},
    "inputevents_mv": {"orderid": "orderid", "linkorderid": "orderid", "patientweight": "patientweight",
                       "storetime": "endtime + INTERVAL 12 MINUTE",
                       "ordercategorydescription": "CASE WHEN rate IS NULL THEN 'Bolus' ELSE 'Continuous Med' END"},
    "inputevents_cv": {"orderid": "orderid", "linkorderid": "orderid", "storetime": "charttime + INTERVAL 9 MINUTE"},
    "outputevents": {"storetime": "charttime + INTERVAL 15 MINUTE"},
    "procedureevents_mv": {"storetime": "endtime + INTERVAL 10 MINUTE"},
    "microbiologyevents": {"isolate_num": "isolate_num"},
}
_MIMIC4_EXTRAS: Mapping[str, Mapping[str, str]] = {
    "patients": {"anchor_age": "anchor_age", "anchor_year": "anchor_year",
                 "anchor_year_group": "['2008 - 2010', '2011 - 2013', '2014 - 2016', '2017 - 2019'][anchor_year % 4 + "
                                      "1]"},
    "admissions": {"insurance": "insurance", "race": "ethnicity", "language": "language",
                   "marital_status": "marital_status",
                   "hospital_expire_flag": "CASE WHEN deathtime IS NULL THEN 0 ELSE 1 END"},
    "labevents": {"specimen_id": "specimen_id", "ref_range_lower": "ref_range_lower",
                  "ref_range_upper": "ref_range_upper", "storetime": "charttime + INTERVAL 95 MINUTE"},
    # MIMIC-IV orders carry the minute (MIMIC-III only the date)
    "prescriptions": {"pharmacy_id": "row_id", "starttime": "order_time", "stoptime": "stop_time"},
    "inputevents_mv": {"orderid": "orderid", "linkorderid": "orderid", "patientweight": "patientweight",
                       "storetime": "endtime + INTERVAL 12 MINUTE"},
    "outputevents": {"storetime": "charttime + INTERVAL 15 MINUTE"},
    "procedureevents_mv": {"storetime": "endtime + INTERVAL 10 MINUTE"},
    "microbiologyevents": {"micro_specimen_id": "micro_specimen_id", "test_seq": "1",
                           "isolate_num": "isolate_num", "storedate": "chartdate + INTERVAL 2 DAY"},
    "procedures_icd": {"chartdate": "chartdate"},
    "emar": {"poe_id": "poe_id", "storetime": "charttime + INTERVAL 2 MINUTE"},
    # MIMIC-IV's d_items has only MetaVision items (NOT NULL abbreviation, category,
    # param_type); the same hospital keeps its CareVue stays, so their items stay in the
    # dictionary with those columns filled. (Their inputevents_cv rows have no MIMIC-IV table.)
    "d_items": {"abbreviation": "coalesce(abbreviation, label)", "category": "coalesce(category, 'CareVue')",
                "param_type": "coalesce(param_type, 'Text')"},
}



def linksto_values(layout: str) -> dict[str, str]:
    """d_items.linksto per logical table: the table's physical name in that layout, lower
    case as MIMIC prints it (``inputevents_mv`` in MIMIC-III, ``inputevents`` in MIMIC-IV).
    """
    smap = schema.schema_map(layout)
    out = {logical: t.name.lower() for logical, t in smap.tables.items()}
    for logical in schema.LOGICAL:  # MIMIC-IV has one inputevents for CareVue and MetaVision
        sibling = next((t for t in smap.tables if t.split("_")[0] == logical.split("_")[0]), None)
        if logical not in out and sibling:
            out[logical] = out[sibling]
    return out


def _stage(logical: str, df: pd.DataFrame, layout: str) -> pd.DataFrame:
    if logical == "d_items":
        links = linksto_values(layout)
        df = df.assign(linksto=df["linksto"].map(lambda v: links.get(v, v)))
    return df


def _select_list(d: TableDef, logical: str, layout: str, staged: set[str]) -> str:
    phys = schema.schema_map(layout).table(logical)
    by_physical = {p: lc for lc, p in phys.columns.items() if p is not None}
    extras = (_MIMIC4_EXTRAS if layout == "mimic4" else _MIMIC3_EXTRAS).get(logical, {})
    exprs = []
    for col in d.columns:
        lc = by_physical.get(col.name)
        if col.name.lower() in extras:
            exprs.append(extras[col.name.lower()])
        elif lc is not None and lc in staged:
            exprs.append(schema.quote_ident(lc))
        else:
            exprs.append("NULL")
    return ", ".join(exprs)


def insert_staged(con, layout: str, logical: str, relation: str, columns: set[str]) -> None:
    """``INSERT INTO`` the layout's table for ``logical`` from a relation (registered
    DataFrame, temp table or view) that has logical + extra columns ``columns``.
    """
    d = table_defs(layout)[logical]
    cols = _select_list(d, logical, layout, columns)
    con.execute(f"INSERT INTO {d.ref} SELECT {cols} FROM {schema.quote_ident(relation)}")  # noqa: S608


def write_tables(con, frames: Mapping[str, pd.DataFrame], layout: str) -> list[str]:
    """Create the layout's tables for every logical frame it has, insert the rows, and write the storyline table.

    Returns the logical tables written.
    """
    defs = table_defs(layout)
    wanted = [t for t in frames if t in defs]
    create_tables(con, layout, wanted)
    for logical in wanted:
        df = _stage(logical, frames[logical], layout)
        con.register("_ehrlib_stage", df)
        try:
            insert_staged(con, layout, logical, "_ehrlib_stage", set(df.columns))
        finally:
            con.unregister("_ehrlib_stage")
    story = frames.get(STORYLINES_TABLE)
    if story is not None:
        con.execute(_STORYLINES_DDL)
        con.register("_ehrlib_stage", story)
        try:
            con.execute(f"INSERT INTO {schema.quote_ident(STORYLINES_TABLE)} SELECT * FROM _ehrlib_stage")  # noqa: S608
        finally:
            con.unregister("_ehrlib_stage")
    return wanted
