"""Known answers for the note context read from the tables (ehrlib.pipeline.context)."""
from __future__ import annotations

import duckdb

from ehrlib import schema
from ehrlib.pipeline.context import _first_operation


def _db(events: list[tuple[int, str, str]]) -> duckdb.DuckDBPyConnection:
    """A MIMIC-IV-layout database with only procedure events and their dictionary."""
    con = duckdb.connect()
    con.execute("CREATE SCHEMA mimiciv_icu")
    con.execute("CREATE TABLE mimiciv_icu.d_items (itemid INTEGER, label VARCHAR)")
    con.execute("CREATE TABLE mimiciv_icu.procedureevents (hadm_id INTEGER, itemid INTEGER, starttime TIMESTAMP)")
    con.execute("INSERT INTO mimiciv_icu.d_items VALUES (1, 'OR Received'), (2, 'Arterial Line'), (3, 'OR Sent'),"
                " (4, 'Operation'), (5, 'Colors')")
    labels = {"OR Received": 1, "Arterial Line": 2, "OR Sent": 3, "Operation": 4, "Colors": 5}
    for hadm, label, when in events:
        con.execute("INSERT INTO mimiciv_icu.procedureevents VALUES (?, ?, ?)", [hadm, labels[label], when])
    return con


def test_the_first_operation_is_the_earliest_or_event_of_the_admission():
    con = _db([(7, "Arterial Line", "2150-01-02 08:00:00"), (7, "OR Received", "2150-01-03 14:10:00"),
               (7, "OR Sent", "2150-01-03 09:30:00"), (7, "Operation", "2150-01-06 10:00:00"),
               (8, "OR Sent", "2150-01-01 07:00:00")])
    assert _first_operation(con, schema.schema_map("mimic4"), 7) == "2150-01-03 09:30:00"


def test_no_operation_event_gives_no_anchor():
    con = _db([(7, "Arterial Line", "2150-01-02 08:00:00"), (7, "Colors", "2150-01-02 09:00:00")])
    assert _first_operation(con, schema.schema_map("mimic4"), 7) is None
