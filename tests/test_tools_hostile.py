"""Hostile arguments: SQL injection attempts, absurd numbers, non-dates, unicode.

Each string goes into every text argument of every tool. The database content must be
unchanged afterwards (checksum over every table), no call may raise, and no returned row
may belong to another patient.
"""
from __future__ import annotations

import duckdb
import pytest
from test_tools_testdb import ADMIT, DISCH, HA, LAYOUTS, A, T, build_tiny_hospital

from ehrlib.schema import LOGICAL, schema_map
from ehrlib.tools import PatientContext, make_toolset

HOSTILE = [
    "'", '"', "''", "';", "\\", "%", "_", "%%", "*", "?", "$1", ":item", "NULL", "null", "None", "true",
    "' OR 1=1 --", "\" OR \"1\"=\"1", "1 OR 1=1", "1; DROP TABLE CHARTEVENTS; --", "'; DROP TABLE chartevents; --",
    "x'); DELETE FROM labevents; --", "labevents:50912; DROP TABLE labevents", "chartevents:220045 OR 1=1",
    "chartevents:' OR '1'='1", "microbiologyevents:org:' OR ''='", "prescriptions:%", "diagnoses_icd:%' --",
    "UNION SELECT * FROM patients", "1 UNION ALL SELECT subject_id FROM admissions", "ATTACH 'x.db' AS x",
    "COPY chartevents TO '/tmp/leak.csv'", "PRAGMA database_list", "INSTALL httpfs", "CALL pragma_version()",
    "/* comment */", "-- comment", "; ; ;", "\x00", "\n\r\t", "🙂 fever 🔥", "Ünïcödé 体温", "\u202e1 = 1",
    "9" * 400, "1e308", "-1e308", "1e309", "nan", "inf", "-0", "999999999999999999999999999999",
    "2130-99-99", "0000-00-00", "9999-12-31 23:59:59", "HD -99999999", "POD 1e9", "1970-01-01 to 9999-01-01",
    "admission; DROP TABLE admissions", "a" * 5000, " ", "",
]
assert len(HOSTILE) >= 50

_STRING_ARGS = {
    "Lexical_Search": ["query"], "Semantic_Search": ["query"], "Get_Item_Value_Distribution": ["item"],
    "Analyze_Category_Trend": ["table", "category"], "Get_Item_Status_History": ["item", "time"],
    "Get_Item_Value_History": ["item", "operator", "value", "value2", "time"],
    "Analyze_Value_Trend": ["item", "time", "operator", "value", "value2"],
    "View_General_Timeline": ["time", "table"], "Get_Clinical_Criterion": ["state"],
}
#: otherwise-valid arguments, so each hostile string is tested in one slot at a time
_BASE = {
    "Lexical_Search": {"query": "WBC"}, "Semantic_Search": {"query": "alert"},
    "Get_Item_Value_Distribution": {"item": "labevents:50912"}, "Analyze_Category_Trend": {"table": "all"},
    "Get_Item_Status_History": {"item": "chartevents:220045", "time": ""},
    "Get_Item_Value_History": {"item": "chartevents:220045", "operator": "more", "value": "0", "time": ""},
    "Analyze_Value_Trend": {"item": "chartevents:220045"}, "View_General_Timeline": {"time": "", "table": "all"},
    "Get_Clinical_Criterion": {"state": "fever"},
}


def _checksum(con, layout) -> dict[str, tuple[int, int]]:
    out = {}
    for name, pt in schema_map(layout).tables.items():
        n, h = con.execute(f"SELECT count(*), coalesce(sum(hash(t)), 0) FROM {pt.ref} AS t").fetchone()
        out[name] = (n, h)
    return out


def _other_patients_rows(con, layout) -> set[tuple[str, object]]:
    rows = set()
    for name, pt in schema_map(layout).tables.items():
        if LOGICAL[name].kind != "event" or not pt.has("subject_id") or not pt.has("row_id"):
            continue
        for (rid,) in con.execute(f"SELECT {pt.col('row_id')} FROM {pt.ref} WHERE {pt.col('subject_id')} <> ?",
                                  [A]).fetchall():
            rows.add((name, rid))
    return rows


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_hostile_arguments_change_nothing_and_leak_nothing(tmp_path, layout):
    path = build_tiny_hospital(tmp_path / "h.duckdb", layout)
    with duckdb.connect(str(path), read_only=True) as con:
        before = _checksum(con, layout)
        foreign = _other_patients_rows(con, layout)
    assert foreign
    ctx = PatientContext(A, HA, ADMIT, DISCH, T(15), "F", {"surgery": T(11, 9)})
    n_calls = n_errors = 0
    with make_toolset(path, ctx) as ts:
        for tool, slots in _STRING_ARGS.items():
            for slot in slots:
                for s in HOSTILE:
                    result = ts.call(tool, {**_BASE[tool], slot: s})   # must not raise
                    n_calls += 1
                    n_errors += result.error is not None
                    leaked = {(r["table"], r["row_id"]) for r in result.rows if "row_id" in r} & foreign
                    assert not leaked, (tool, slot, s, leaked)
        # non-string junk in typed slots
        for junk in (-5, 10**12, 3.5, "ten", None, [], {}, True):
            assert ts.call("Lexical_Search", {"query": "WBC", "k": junk}).error
        assert ts.call("Lexical_Search", {"query": ["WBC"]}).error
        assert ts.call("Get_Item_Status_History", {"item": {"$ne": 1}}).error
    assert n_errors > 0 and n_errors < n_calls        # hostile text is refused, or matched as plain text
    with duckdb.connect(str(path), read_only=True) as con:
        assert _checksum(con, layout) == before
