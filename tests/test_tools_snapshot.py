"""The admission snapshot answers the temporal tools with exactly the rows SQL gives.

Known answers on the hand-written hospital (every layout), with rows added for the edges
where Python and DuckDB could disagree (NaN values, non-ASCII text, a row before the
span); the same equality on the synthetic hospital and the MIMIC-III demo; the bound and
the fallbacks; the value conditions against DuckDB itself.
"""
from __future__ import annotations

import datetime as dt
import gc
import math

import duckdb
import pytest
from test_tools_testdb import ADMIT, DISCH, HA, LAYOUTS, A, T, tiny_rows, write_tables

from ehrlib.errors import ConfigError
from ehrlib.schema import detect_flavor, schema_map
from ehrlib.tools import PatientContext, load_patient_context, make_toolset, snapshot
from ehrlib.tools.env import value_condition
from ehrlib.tools.snapshot import DEFAULT_MAX_ROWS, ROWS_ENV, _in_sql_order, max_rows_setting, predicate


def _edge_rows() -> dict:
    rows = tiny_rows()
    ce = rows["chartevents"]

    def chart(itemid: int, when: dt.datetime, value: str, num: float | None) -> None:
        ce.append(dict(row_id=len(ce) + 1, subject_id=A, hadm_id=HA, icustay_id=301, itemid=itemid, charttime=when,
                       value=value, valuenum=num, valueuom="bpm"))

    chart(220045, T(13, 8), "NaN", math.nan)                   # DuckDB orders NaN above every number
    chart(220045, T(12, 8), "101", 101.0)                      # same time as row 11: order by row id
    chart(226104, T(12, 9), "  alert ", None)                  # trim() takes spaces only
    chart(226104, T(12, 10), "\talert", None)
    chart(220045, dt.datetime(2129, 12, 1, 8), "70", 70.0)     # a month before: outside the span
    return rows


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def edge_db(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("snap") / f"{request.param}.duckdb"
    con = duckdb.connect(str(path))
    try:
        write_tables(con, LAYOUTS[request.param], _edge_rows())
    finally:
        con.close()
    return path


def _ctx() -> PatientContext:
    return PatientContext(A, HA, ADMIT, DISCH, T(15), "F", {"surgery": T(11, 9)})


def _same(path, ctx, calls, snapshot_rows=None, errors_allowed=False):
    """Each call's result and trace with the snapshot, checked equal to SQL's; the snapshot's stats."""
    snapshot.release_recent()
    gc.collect()   # a snapshot lives while a toolset of its admission does: start from a fresh one
    with make_toolset(path, ctx, snapshot_rows=0) as sql, make_toolset(path, ctx, snapshot_rows=snapshot_rows) as mem:
        for name, args in calls:
            want, got = sql.call(name, args), mem.call(name, args)
            assert errors_allowed or want.error is None, (name, args, want.error)
            assert repr(got) == repr(want), (name, args)
        strip = [[(r.tool, r.args, r.n_rows, r.error) for r in ts.tracer.records] for ts in (sql, mem)]
        assert strip[0] == strip[1]
        assert sql.env.snapshot.stats == {}
        return dict(mem.env.snapshot.stats)


def _rows(result):
    return [(r["table"], r["row_id"]) for r in result.rows]


def test_status_history_known_rows_from_memory(edge_db):
    snapshot.release_recent()
    gc.collect()
    with make_toolset(edge_db, _ctx()) as ts:
        got = ts.call("Get_Item_Status_History", {"item": "chartevents:220045", "time": ""})
        assert [r["row_id"] for r in got.rows] == [1, 2, 3, 4, 5, 24, 23, 6]   # NaN row 23 at 13 08:00
        assert got.rows[6]["valuenum"] is None and got.rows[6]["value"] == "NaN"
        day = ts.call("Get_Item_Status_History", {"item": "chartevents:220045", "time": "2130-01-12"})
        assert [r["row_id"] for r in day.rows] == [5, 24]
        assert ts.env.snapshot.stats["answered"] == 2
        assert ts.env.snapshot.stats["tables loaded"] == 1


CALLS = [
    ("Get_Item_Status_History", {"item": "chartevents:220045", "time": ""}),
    ("Get_Item_Status_History", {"item": "chartevents:220045", "time": "2130-01-12 08:00"}),
    ("Get_Item_Status_History", {"item": "chartevents:220045", "time": "POD 1"}),
    ("Get_Item_Status_History", {"item": "Heart rate", "time": "HD 2 to HD 3"}),
    ("Get_Item_Status_History", {"item": "labevents:51222", "time": "admission"}),       # the outpatient lab
    ("Get_Item_Status_History", {"item": "prescriptions:Furosemide", "time": "2130-01-14"}),
    ("Get_Item_Status_History", {"item": "inputevents_mv:221906", "time": "2130-01-11 19:30"}),
    ("Get_Item_Status_History", {"item": "microbiologyevents:org:ESCHERICHIA COLI", "time": "01-10"}),
    ("Get_Item_Status_History", {"item": "microbiologyevents:spec:BLOOD CULTURE", "time": ""}),
    ("Get_Item_Status_History", {"item": "diagnoses_icd:5849", "time": "2130-01-12"}),
    ("Get_Item_Value_History", {"item": "chartevents:220045", "operator": "more", "value": "100", "time": ""}),
    ("Get_Item_Value_History", {"item": "chartevents:220045", "operator": "at_most", "value": "101", "time": ""}),
    ("Get_Item_Value_History", {"item": "chartevents:220045", "operator": "between", "value": "112",
                                "value2": "99", "time": ""}),
    ("Get_Item_Value_History", {"item": "chartevents:220045", "operator": "equals", "value": "101", "time": ""}),
    ("Get_Item_Value_History", {"item": "chartevents:226104", "operator": "equals", "value": "ALERT", "time": ""}),
    ("Get_Item_Value_History", {"item": "chartevents:226104", "operator": "contains", "value": "onf", "time": ""}),
    ("Get_Item_Value_History", {"item": "labevents:50912", "operator": "less", "value": "1.5",
                                "time": "HD 1 to HD 4"}),
    ("Analyze_Value_Trend", {"item": "labevents:50912", "time": ""}),
    ("Analyze_Value_Trend", {"item": "chartevents:220045", "time": "", "operator": "more", "value": "90"}),
    ("Analyze_Value_Trend", {"time": "during admission"}),
    ("Analyze_Value_Trend", {"time": "", "operator": "at_least", "value": "100"}),
    ("View_General_Timeline", {"time": "2130-01-11"}),
    ("View_General_Timeline", {"time": "", "table": "all"}),
    ("View_General_Timeline", {"time": "", "table": "microbiologyevents"}),
    ("View_General_Timeline", {"time": "", "table": "diagnoses_icd"}),
    ("View_General_Timeline", {"time": "2130-01-11 10:00", "table": "inputevents_mv"}),
]


def test_every_call_equals_sql_and_comes_from_memory(edge_db):
    stats = _same(edge_db, _ctx(), CALLS)
    assert stats["answered"] == len(CALLS)
    assert not [k for k in stats if k.startswith("sql")]


def test_windows_outside_the_span_and_non_ascii_text_go_to_sql(edge_db):
    calls = [("Get_Item_Status_History", {"item": "chartevents:220045", "time": "2129-12-01"}),
             ("Get_Item_Value_History", {"item": "chartevents:226104", "operator": "contains", "value": "alért",
                                         "time": ""}),
             ("Get_Item_Status_History", {"item": "chartevents:220045", "time": "2130-01-12"})]
    stats = _same(edge_db, _ctx(), calls)
    assert stats["sql: window outside span"] == 1
    assert stats["sql: condition"] == 1
    assert stats["answered"] == 1


def test_a_table_over_the_bound_goes_to_sql(edge_db):
    n_chart, n_lab = 21, 12   # patient A's rows in the span (not B's, not the one a month before)
    stats = _same(edge_db, _ctx(), CALLS[:1] + CALLS[4:6], snapshot_rows=n_chart + n_lab + 1)
    assert stats["rows loaded"] == n_chart + n_lab and stats["tables loaded"] == 2   # chartevents, labevents
    assert stats["not held: over the bound"] == 1                                    # 2 prescriptions, room for 1
    assert stats["sql: table not held"] == 1 and stats["answered"] == 2
    small = _same(edge_db, _ctx(), CALLS[:1], snapshot_rows=n_chart - 1)
    assert small == {"not held: over the bound": 1, "sql: table not held": 1}


def test_toolsets_of_one_admission_share_one_snapshot(edge_db):
    snapshot.release_recent()
    gc.collect()
    with make_toolset(edge_db, _ctx()) as one, make_toolset(edge_db, _ctx()) as two:
        assert one.env.snapshot is two.env.snapshot
        one.call("Get_Item_Status_History", {"item": "chartevents:220045", "time": ""})
        two.call("Get_Item_Status_History", {"item": "chartevents:220179", "time": ""})
        assert one.env.snapshot.stats["tables loaded"] == 1
    with make_toolset(edge_db, _ctx(), snapshot_rows=5) as other:
        assert other.env.snapshot.stats == {}


@pytest.mark.parametrize("op,value,value2", [
    ("more", "100", ""), ("less", "100", ""), ("at_least", "101", ""), ("at_most", "101", ""),
    ("between", "99", "112"), ("equals", "101", ""), ("equals", "alert", ""), ("equals", "NaN", ""),
    ("contains", "ler", ""), ("contains", "na", ""),
])
def test_conditions_agree_with_duckdb(op, value, value2):
    cond = value_condition(op, value, value2)
    values = [(None, None), (101.0, "101"), (99.5, " 99.5"), (math.nan, "NaN"), (math.inf, "inf"),
              (-math.inf, None), (None, "Alert"), (None, "  alert  "), (None, "\talert"), (None, "ALERTED"),
              (0.0, ""), (112.0, "112 "), (None, "na")]
    con = duckdb.connect()
    got = [bool(h) for (h,) in con.execute(
        f"SELECT {cond.sql} FROM (SELECT unnest(?::DOUBLE[]) AS num, unnest(?::VARCHAR[]) AS txt)",  # noqa: S608
        [*cond.params, *[list(c) for c in zip(*values, strict=True)]]).fetchall()]
    test = predicate(cond)
    assert test is not None
    assert [test(n, t) for n, t in values] == got


def test_the_bound_setting(monkeypatch):
    monkeypatch.delenv(ROWS_ENV, raising=False)
    assert max_rows_setting() == DEFAULT_MAX_ROWS
    monkeypatch.setenv(ROWS_ENV, "250")
    assert max_rows_setting() == 250 and max_rows_setting(7) == 7
    for bad in ("many", "-1", "1.5"):
        monkeypatch.setenv(ROWS_ENV, bad)
        with pytest.raises(ConfigError, match=ROWS_ENV):
            max_rows_setting()


def _patient_calls(path, subject, hadm, n_items=12):
    con = duckdb.connect(str(path), read_only=True)
    try:
        from ehrlib.schema import detect_flavor, schema_map
        ctx = load_patient_context(con, schema_map(detect_flavor(con)), subject, hadm)
    finally:
        con.close()
    with make_toolset(path, ctx, snapshot_rows=0) as ts:
        keys = sorted(ts.env.patient_keys)[:: max(1, len(ts.env.patient_keys) // n_items)]
    day = (ctx.admittime + dt.timedelta(days=1)).strftime("%Y-%m-%d")
    calls = []
    for key in keys:
        calls += [("Get_Item_Status_History", {"item": key, "time": ""}),
                  ("Get_Item_Status_History", {"item": key, "time": day}),
                  ("Analyze_Value_Trend", {"item": key, "time": "", "operator": "more", "value": "0"})]
    calls += [("View_General_Timeline", {"time": day}), ("Analyze_Value_Trend", {"time": ""})]
    return ctx, calls


def _admissions(path, n):
    con = duckdb.connect(str(path), read_only=True)
    try:
        from ehrlib.schema import detect_flavor, schema_map
        adm = schema_map(detect_flavor(con)).table("admissions")
        return con.execute(f"SELECT {adm.col('subject_id')}, {adm.col('hadm_id')} FROM {adm.ref} "  # noqa: S608
                           f"ORDER BY 2 LIMIT {int(n)}").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("layout", ["synth_db", "synth_db_mimic4", "synth_db_perturbed"])
def test_synthetic_hospital_equals_sql(layout, request):
    path = request.getfixturevalue(layout)
    for subject, hadm in _admissions(path, 3):
        ctx, calls = _patient_calls(path, subject, hadm)
        stats = _same(path, ctx, calls, errors_allowed=True)   # a key with two spaces does not resolve
        assert stats.get("answered", 0) >= len(calls) // 2


@pytest.mark.parametrize("demo", ["mimic3_demo_db", "mimic4_demo_db"])
def test_mimic_demo_equals_sql(demo, request):
    path = request.getfixturevalue(demo)
    for subject, hadm in _admissions(path, 2):
        ctx, calls = _patient_calls(path, subject, hadm)
        stats = _same(path, ctx, calls, errors_allowed=True)
        assert stats.get("answered", 0) >= len(calls) // 2


def test_a_table_that_fails_to_read_is_left_to_sql(tmp_path):
    path = tmp_path / "bad.duckdb"
    con = duckdb.connect(str(path))
    try:
        write_tables(con, LAYOUTS["mimic3"], _edge_rows())
        ce = LAYOUTS["mimic3"].table("chartevents")
        con.execute(f"ALTER TABLE {ce.ref} ALTER {ce.col('charttime')} TYPE VARCHAR")
        con.execute(f"UPDATE {ce.ref} SET {ce.col('charttime')} = 'not a time' WHERE {ce.col('row_id')} = 3")
    finally:
        con.close()
    snapshot.release_recent()
    gc.collect()
    with make_toolset(path, _ctx(), snapshot_rows=0) as sql, make_toolset(path, _ctx()) as mem:
        args = {"item": "chartevents:220045", "time": ""}
        want, got = sql.call("Get_Item_Status_History", args), mem.call("Get_Item_Status_History", args)
        assert want.error is not None and want.error.startswith("database error")
        assert repr(got) == repr(want)
        assert mem.env.snapshot.stats == {"not held: read failed": 1, "sql: table not held": 1}
        labs = {"item": "labevents:50912", "time": ""}
        assert repr(mem.call("Get_Item_Status_History", labs)) == repr(
            sql.call("Get_Item_Status_History", labs))
        assert mem.env.snapshot.stats["answered"] == 1


def test_repeated_calls_equal_sql_and_each_gets_its_own_rows(edge_db):
    # a repeated call is answered from the toolset's memo (the snapshot is not asked again), a
    # second toolset of the admission from the snapshot's row dicts: SQL's rows either way, and a
    # caller changing a row it got (the tools add label and key) changes no later call's rows
    stats = _same(edge_db, _ctx(), CALLS + CALLS)
    assert stats["answered"] == len(CALLS)
    snapshot.release_recent()
    gc.collect()
    with make_toolset(edge_db, _ctx()) as ts, make_toolset(edge_db, _ctx()) as other:
        args = {"item": "chartevents:220045", "time": ""}
        first = ts.call("Get_Item_Status_History", args)
        want = repr(first)
        first.rows[0]["value"] = "changed"
        first.rows[0]["extra"]["note"] = "added"
        first.summary["item"]["label"] = "changed"
        for again in (ts.call("Get_Item_Status_History", args), other.call("Get_Item_Status_History", args)):
            assert repr(again) == want
        assert ts.env.snapshot.stats["answered"] == 2
        assert len(ts.tracer.records) == 2   # the memo's answer is traced like any call


def test_held_rows_take_the_sql_order_whatever_order_the_scan_gives():
    t1, t2 = dt.datetime(2130, 1, 10, 8), dt.datetime(2130, 1, 10, 9)
    ordered = [(1, t1, None, None, "a"), (3, t1, None, None, "b"), (2, t2, None, None, "c")]
    assert _in_sql_order("chartevents", ordered) is ordered            # storage order kept: no sort
    shuffled = [ordered[2], ordered[1], ordered[0]]
    assert _in_sql_order("chartevents", shuffled) == ordered            # time, then row id
    timeless = [(5, None, None, None, "x"), (4, None, None, None, "y")]
    assert [r[0] for r in _in_sql_order("diagnoses_icd", timeless)] == [4, 5]
    # NULL times and NULL row ids go last, as DuckDB's ORDER BY puts them
    mixed = [(None, t1, None, None, "n"), (7, None, None, None, "t"), (8, t2, None, None, "u"),
             (6, t1, None, None, "v")]
    assert [r[4] for r in _in_sql_order("chartevents", mixed)] == ["v", "n", "u", "t"]


def test_an_item_column_of_another_type_reads_its_text_from_sql(edge_db, tmp_path):
    # the held rows make an item's text with str() only for integer and text columns; any other
    # type is read again with DuckDB's own cast (str(220045.0) would not be guaranteed to match)
    path = tmp_path / "double_items.duckdb"
    path.write_bytes(edge_db.read_bytes())
    with duckdb.connect(str(path)) as con:
        ce = schema_map(detect_flavor(con)).table("chartevents")
        con.execute(f"ALTER TABLE {ce.ref} ALTER {ce.col('itemid')} TYPE DOUBLE")
    calls = [("View_General_Timeline", {"time": "2130-01-12", "table": "chartevents"}),
             ("View_General_Timeline", {"time": "", "table": "microbiologyevents"})]
    stats = _same(path, _ctx(), calls)
    assert stats["answered"] == 2 and stats["tables loaded"] == 2
    assert stats["read again: item text cast in SQL"] == 1     # chartevents; microbiology's names are text
