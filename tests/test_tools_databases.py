"""The same tool properties on every database the project builds: the synthetic hospital
in MIMIC-III, MIMIC-IV and perturbed layouts, and the real MIMIC-III/IV demos.

Each check compares a tool's answer with an independent SQL query written here through
the schema map (the test's own reading of the data), for a patient and item picked from
the data: heart rate where the database has it.
"""
from __future__ import annotations

import datetime as dt
import statistics

import duckdb
import pytest

from ehrlib.schema import LOGICAL, detect_flavor, schema_map
from ehrlib.tools import load_patient_context, make_toolset

DATABASES = ["synth_db", "synth_db_mimic4", "synth_db_perturbed", "mimic3_demo_db", "mimic4_demo_db"]
DAY = dt.timedelta(days=1)


@pytest.fixture(scope="module", params=DATABASES)
def case(request):
    """(path, layout, chosen table, itemid, subject, hadm) for one database."""
    path = request.getfixturevalue(request.param)
    con = duckdb.connect(str(path), read_only=True)
    layout = detect_flavor(con)
    sm = schema_map(layout)
    for table in ("chartevents", "labevents"):
        pt = sm.table(table)
        if not con.execute(f"SELECT count(*) FROM {pt.ref}").fetchone()[0]:
            continue   # the MIMIC-IV demo ships without chartevents
        d = sm.table("d_items" if table == "chartevents" else "d_labitems")
        hr = con.execute(f"SELECT {d.col('itemid')} FROM {d.ref} "
                         f"WHERE lower({d.col('label')}) = 'heart rate'").fetchall()
        prefer = [r[0] for r in hr] or [-1]
        row = con.execute(
            f"SELECT * FROM (SELECT {pt.col('itemid')} AS item, {pt.col('subject_id')} AS subj, "
            f"{pt.col('hadm_id')} AS hadm, count(*) AS n FROM {pt.ref} "
            f"WHERE {pt.col('valuenum')} IS NOT NULL AND {pt.col('hadm_id')} IS NOT NULL "
            f"GROUP BY 1, 2, 3 HAVING count(*) >= 5) "
            f"ORDER BY (item IN ({', '.join('?' * len(prefer))})) DESC, n DESC, subj, hadm LIMIT 1",
            prefer).fetchone()
        if row:
            con.close()
            return path, layout, table, int(row[0]), int(row[1]), int(row[2])
    con.close()
    pytest.skip(f"{request.param}: no item with 5 numeric values in one admission")


@pytest.fixture(scope="module")
def bound(case):
    path, layout, table, itemid, subject, hadm = case
    con = duckdb.connect(str(path), read_only=True)
    ctx = load_patient_context(con, schema_map(layout), subject, hadm)
    ts = make_toolset(con, ctx, row_limit=1_000_000)   # every row, to compare with SQL
    yield ts, con, schema_map(layout), table, itemid, ctx
    con.close()


#: Catalogs above this size (MIMIC-IV: 200 k ICD-9/10 titles) take 5-15 s to index for
#: lexical search; the benchmark measures them, the unit tests skip the search calls.
BIG_CATALOG = 100_000


def _skip_search_on_big_catalogs(ts) -> bool:
    return len(ts.env.catalog.items) > BIG_CATALOG


def _rows(con, sm, table, subject, itemid, lo, hi, extra="", params=()):
    pt = sm.table(table)
    t = pt.col("charttime")
    return sorted(r[0] for r in con.execute(
        f"SELECT {pt.col('row_id')} FROM {pt.ref} WHERE {pt.col('subject_id')} = ? AND {pt.col('itemid')} = ? "
        f"AND {t} >= ? AND {t} < ? {extra}", [subject, itemid, lo, hi, *params]).fetchall())


def test_lexical_search_finds_the_item_by_its_label(bound):
    ts, con, sm, table, itemid, ctx = bound
    if _skip_search_on_big_catalogs(ts):
        pytest.skip("catalog over 100 k labels: index build is benchmarked, not unit-tested")
    d = sm.table("d_items" if table == "chartevents" else "d_labitems")
    label = con.execute(f"SELECT {d.col('label')} FROM {d.ref} WHERE {d.col('itemid')} = ?", [itemid]).fetchone()[0]
    result = ts.call("Lexical_Search", {"query": label, "k": 10})
    assert f"{table}:{itemid}" in [r["key"] for r in result.rows]
    assert next(r for r in result.rows if r["key"] == f"{table}:{itemid}")["has_records"] is True


def test_status_history_equals_sql_over_the_widened_admission(bound):
    ts, con, sm, table, itemid, ctx = bound
    r = ts.call("Get_Item_Status_History", {"item": f"{table}:{itemid}"})
    expected = _rows(con, sm, table, ctx.subject_id, itemid, ctx.admittime - DAY, ctx.dischtime + DAY)
    assert sorted(x["row_id"] for x in r.rows) == expected and expected


def test_value_history_more_than_median_equals_sql(bound):
    ts, con, sm, table, itemid, ctx = bound
    r_all = ts.call("Get_Item_Status_History", {"item": f"{table}:{itemid}"})
    median = statistics.median(x["valuenum"] for x in r_all.rows if x["valuenum"] is not None)
    r = ts.call("Get_Item_Value_History", {"item": f"{table}:{itemid}", "operator": "more", "value": str(median)})
    pt = sm.table(table)
    expected = _rows(con, sm, table, ctx.subject_id, itemid, ctx.admittime - DAY, ctx.dischtime + DAY,
                     f"AND {pt.col('valuenum')} > ?", [median])
    assert sorted(x["row_id"] for x in r.rows) == expected
    assert all(x["valuenum"] > median for x in r.rows)


def test_timeline_of_a_day_equals_sql_and_stays_with_the_patient(bound):
    ts, con, sm, table, itemid, ctx = bound
    first = ts.call("Get_Item_Status_History", {"item": f"{table}:{itemid}"}).rows[0]["time"]
    day = dt.datetime.fromisoformat(first[:10])
    r = ts.call("View_General_Timeline", {"time": day.date().isoformat(), "table": table})
    pt = sm.table(table)
    n = con.execute(f"SELECT count(*) FROM {pt.ref} WHERE {pt.col('subject_id')} = ? AND {pt.col('charttime')} >= ? "
                    f"AND {pt.col('charttime')} < ?", [ctx.subject_id, day, day + DAY]).fetchone()[0]
    assert r.n_rows == n
    everything = ts.call("View_General_Timeline", {"time": "", "table": "all"})
    for t in {x["table"] for x in everything.rows}:
        ids = [x["row_id"] for x in everything.rows if x["table"] == t]
        p = sm.table(t)
        owners = con.execute(f"SELECT DISTINCT {p.col('subject_id')} FROM {p.ref} WHERE {p.col('row_id')} IN "
                             f"(SELECT unnest(?))", [ids]).fetchall()
        assert owners == [(ctx.subject_id,)], t


def test_trend_and_distribution_agree_with_sql(bound):
    ts, con, sm, table, itemid, ctx = bound
    trend = ts.call("Analyze_Value_Trend", {"item": f"{table}:{itemid}"})
    pt = sm.table(table)
    n, lo, hi = con.execute(
        f"SELECT count(*), min({pt.col('valuenum')}), max({pt.col('valuenum')}) FROM {pt.ref} "
        f"WHERE {pt.col('subject_id')} = ? AND {pt.col('itemid')} = ? AND {pt.col('valuenum')} IS NOT NULL "
        f"AND {pt.col('charttime')} >= ? AND {pt.col('charttime')} < ?",
        [ctx.subject_id, itemid, ctx.admittime - DAY, ctx.dischtime + DAY]).fetchone()
    t = trend.summary["trend"]
    assert (t["n"], t["min"], t["max"]) == (n, lo, hi)
    assert t["direction"] in ("rising", "falling", "stable")
    dist = ts.call("Get_Item_Value_Distribution", {"item": f"{table}:{itemid}"})
    total = con.execute(f"SELECT count(*) FROM {pt.ref} WHERE {pt.col('itemid')} = ? AND "
                        f"coalesce(CAST({pt.col('value')} AS VARCHAR), CAST({pt.col('valuenum')} AS VARCHAR)) "
                        "IS NOT NULL",
                        [itemid]).fetchone()[0]
    assert dist.summary["n_total"] == total
    assert len(dist.rows) <= 10


def test_every_tool_answers_without_error(bound):
    ts, con, sm, table, itemid, ctx = bound
    calls = [("Semantic_Search", {"query": "alert"}), ("Analyze_Category_Trend", {"table": table}),
             ("Analyze_Value_Trend", {"time": "admission"}), ("Get_Clinical_Criterion", {"state": "tachycardic"}),
             ("View_General_Timeline", {"time": "discharge"}), ("Lexical_Search", {"query": "WBC"})]
    for name, args in calls:
        if name.endswith("_Search") and _skip_search_on_big_catalogs(ts):
            continue
        r = ts.call(name, args)
        assert r.ok, (name, r.error)
    assert set(LOGICAL) >= {x["table"] for x in ts.call("View_General_Timeline", {"time": ""}).rows}
