"""The table-exploration tools: known answers on a hand-written hospital in every layout,
and the same properties, checked against independent SQL, on any database fixture."""
from __future__ import annotations

import datetime as dt
import json

import duckdb
import pytest
from test_tools_testdb import ADMIT, DISCH, HA, LAYOUTS, A, B, T, build_tiny_hospital

from ehrlib.errors import ConfigError
from ehrlib.schema import detect_flavor, schema_map
from ehrlib.tools import (
    PROFILE_TABLE,
    TOOL_NAMES,
    PatientContext,
    Tracer,
    build_item_profile,
    load_patient_context,
    make_toolset,
)


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def tiny(request, tmp_path_factory):
    """(path, layout) of the tiny hospital in one layout."""
    path = build_tiny_hospital(tmp_path_factory.mktemp("tiny") / f"{request.param}.duckdb", request.param)
    return path, request.param


@pytest.fixture(scope="module")
def tools(tiny):
    path, _ = tiny
    ctx = PatientContext(A, HA, ADMIT, DISCH, T(15), "F", {"surgery": T(11, 9)})
    with make_toolset(path, ctx) as ts:
        yield ts


def _ids(result):
    return sorted((r["table"], r["row_id"]) for r in result.rows)


def _sql(con, layout, table, cols, where, params):
    """Independent physical SQL through the schema map (the test's own reading of the data)."""
    pt = schema_map(layout).table(table)
    return con.execute(f"SELECT {', '.join(pt.col(c) for c in cols)} FROM {pt.ref} WHERE {where(pt)}",
                       params).fetchall()


# --- alignment -----------------------------------------------------------------------

@pytest.mark.parametrize("query,key", [
    ("WBC", "labevents:51301"), ("HR", "chartevents:220045"), ("Heart rate", "chartevents:220045"),
    ("lasix", "prescriptions:Furosemide"), ("vanco", "prescriptions:Vancomycin"), ("Cr", "labevents:50912"),
    ("creatinin", "labevents:50912"), ("Hgb", "labevents:51222"), ("E. coli",
                                                                   "microbiologyevents:org:ESCHERICHIA COLI"),
    ("levophed", "inputevents_mv:221906"), ("blood cultures", "microbiologyevents:spec:BLOOD CULTURE"),
    ("acute kidney failure", "diagnoses_icd:5849"), ("SBP", "chartevents:220179"),
])
def test_lexical_search_finds_the_item_first(tools, query, key):
    result = tools.call("Lexical_Search", {"query": query})
    assert result.ok, result.error
    assert result.rows[0]["key"] == key, result.text


def test_lexical_search_marks_items_this_patient_has(tools):
    rows = {r["key"]: r for r in tools.call("Lexical_Search", {"query": "potassium creatinine", "k": 20}).rows}
    assert rows["labevents:50912"]["has_records"] is True
    assert rows["labevents:50971"]["has_records"] is False      # nobody has potassium
    only = tools.call("Lexical_Search", {"query": "piperacillin", "patient_only": True})
    assert all(r["has_records"] for r in only.rows)
    assert "prescriptions:Piperacillin-Tazobactam" not in {r["key"] for r in only.rows}   # patient B's drug


@pytest.mark.parametrize("query,key", [
    ("alert", "chartevents:226104"), ("AAOx3", "chartevents:226104"), ("pressors", "inputevents_mv:221906"),
    ("diuresed", "prescriptions:Furosemide"), ("oliguric", "outputevents:226559"),
    ("afebrile", "chartevents:223761"), ("desatted to the 80s", "chartevents:220277"),
])
def test_semantic_search_links_concepts(tools, query, key):
    result = tools.call("Semantic_Search", {"query": query, "k": 5})
    assert result.ok, result.error
    assert key in [r["key"] for r in result.rows[:3]], result.text


def test_semantic_search_uses_a_ranker_hook(tiny):
    path, _ = tiny
    seen = {}

    def ranker(query, candidates, k):
        seen["query"], seen["n"] = query, len(candidates)
        return [("labevents:51222", 0.99)]

    ctx = PatientContext(A, HA, ADMIT, DISCH)
    with make_toolset(path, ctx, semantic_ranker=ranker, embeddings=False) as ts:
        result = ts.call("Semantic_Search", {"query": "blood count"})
    assert seen["query"] == "blood count" and seen["n"] > 0
    assert result.rows[0]["key"] == "labevents:51222" and result.rows[0]["matched"] == "llm"


def test_semantic_search_embedding_backend_with_a_fake_encoder(tiny):
    """The embedding path (cosine over normalised label vectors) with a deterministic encoder."""
    import numpy as np

    from ehrlib.tools.env import ToolEnv
    from ehrlib.tools.exploration import semantic_search
    from ehrlib.tools.semantic import EmbeddingIndex

    class BagOfLetters:
        def encode(self, sentences, **kwargs):
            out = np.zeros((len(sentences), 26), dtype=np.float32)
            for i, s in enumerate(sentences):
                for ch in s.lower():
                    if "a" <= ch <= "z":
                        out[i, ord(ch) - 97] += 1
            return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    path, layout = tiny
    con = duckdb.connect(str(path), read_only=True)
    env = ToolEnv(con, schema_map(layout), PatientContext(A, HA, ADMIT, DISCH))
    emb = EmbeddingIndex(env.index.catalog.items, BagOfLetters())
    assert emb.search("Rate Heart", 1)[0][0] == "chartevents:220045"   # same letters, other order
    result = semantic_search(env, {}, "raet thear", 5, False, embeddings=emb, ranker=None)
    assert result.rows[0]["key"] == "chartevents:220045" and result.rows[0]["matched"] == "embedding"


# --- profiling -----------------------------------------------------------------------

def test_value_distribution_numeric_and_categorical(tools, tiny):
    path, layout = tiny
    hr = tools.call("Get_Item_Value_Distribution", {"item": "chartevents:220045"})
    assert hr.summary["kind"] == "numeric"
    con = duckdb.connect(str(path), read_only=True)
    n = len(_sql(con, layout, "chartevents", ["row_id"], lambda pt: f"{pt.col('itemid')} = ?", [220045]))
    assert hr.summary["n_total"] == n
    loc = tools.call("Get_Item_Value_Distribution", {"item": "Level of Consciousness"})
    assert loc.summary["kind"] == "categorical"
    assert [(r["value"], r["count"]) for r in loc.rows] == [("Alert", 2), ("Confused", 1)]


def test_item_profile_table_matches_the_in_memory_profile(tiny, tmp_path):
    path, layout = tiny
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(path.read_bytes())
    con = duckdb.connect(str(copy))
    n = build_item_profile(con)
    assert n > 0
    keys = {r[0] for r in con.execute(f"SELECT DISTINCT item_key FROM {PROFILE_TABLE}").fetchall()}
    assert {"chartevents:220045", "labevents:50912", "microbiologyevents:spec:BLOOD CULTURE"} <= keys
    con.close()
    ctx = PatientContext(A, HA, ADMIT, DISCH)
    for db in (path, copy):   # without the table (computed in memory) and with it
        with make_toolset(db, ctx) as ts:
            r = ts.call("Get_Item_Value_Distribution", {"item": "labevents:50912"})
            assert r.summary["n_total"] == 7 and r.summary["kind"] == "numeric"
            assert r.rows[0]["count"] == 1


def test_category_trend_lists_categories_and_items(tools):
    overview = tools.call("Analyze_Category_Trend", {"table": "chartevents"})
    cats = {r["category"]: r for r in overview.rows}
    assert cats["Routine Vital Signs"]["n_items"] == 3
    assert cats["Respiratory"]["n_patient_items"] == 1        # SpO2 yes, respiratory rate no
    neuro = tools.call("Analyze_Category_Trend", {"table": "chartevents", "category": "neuro"})
    assert [r["key"] for r in neuro.rows] == ["chartevents:226104"]
    mine = tools.call("Analyze_Category_Trend", {"table": "labevents", "patient_only": True})
    assert sum(r["n_items"] for r in mine.rows) == 4          # potassium excluded
    bad = tools.call("Analyze_Category_Trend", {"table": "labevents", "category": "no such thing"})
    assert bad.error and "categories" in bad.error


# --- temporal ------------------------------------------------------------------------

def test_status_history_admission_window(tools):
    r = tools.call("Get_Item_Status_History", {"item": "labevents:50912", "time": "admission"})
    # admission 01-10 14:00, widened ±1 day -> 01-09 14:00 .. 01-11 14:00
    assert [x["valuenum"] for x in r.rows] == [1.0, 1.4]
    assert r.summary["window"]["start"] == "2130-01-09 14:00:00"


def test_status_history_whole_admission_includes_outpatient_lab_the_day_before(tools):
    r = tools.call("Get_Item_Status_History", {"item": "Hemoglobin"})
    assert [x["valuenum"] for x in r.rows] == [10.1, 9.4]     # hadm_id NULL row found by subject + time
    assert r.summary["resolved"].startswith("resolved 'Hemoglobin'")


def test_value_history_more_100_equals_independent_sql(tools, tiny):
    path, layout = tiny
    r = tools.call("Get_Item_Value_History", {"item": "HR", "operator": "more", "value": 100, "time": "HD 1"})
    assert r.ok, r.error
    con = duckdb.connect(str(path), read_only=True)
    # HD 1 = 01-10, widened one day either side: [01-09, 01-12)
    expected = _sql(con, layout, "chartevents", ["row_id"],
                    lambda pt: f"{pt.col('subject_id')} = ? AND {pt.col('itemid')} = ? AND {pt.col('valuenum')} > ? "
                               f"AND {pt.col('charttime')} >= ? AND {pt.col('charttime')} < ?",
                    [A, 220045, 100, dt.datetime(2130, 1, 9), dt.datetime(2130, 1, 12)])
    assert _ids(r) == sorted(("chartevents", e[0]) for e in expected)
    assert [x["valuenum"] for x in r.rows] == [105.0, 112.0]
    assert r.summary["n_in_window"] == 4


@pytest.mark.parametrize("args,values", [
    ({"operator": "less", "value": "100"}, [95.0, 99.0, 80.0]),
    ({"operator": "between", "value": "101", "value2": "99"}, [99.0, 101.0]),
    ({"operator": ">=", "value": "105"}, [105.0, 112.0]),
    ({"operator": "equals", "value": "101"}, [101.0]),
])
def test_value_history_operators(tools, args, values):
    r = tools.call("Get_Item_Value_History", {"item": "chartevents:220045", **args})
    assert r.ok, r.error
    assert [x["valuenum"] for x in r.rows] == values


def test_value_history_text_conditions(tools):
    loc = tools.call("Get_Item_Value_History", {"item": "chartevents:226104", "operator": "equals", "value": "alert"})
    assert [x["value"] for x in loc.rows] == ["Alert"]
    micro = tools.call("Get_Item_Value_History", {"item": "microbiologyevents:spec:BLOOD CULTURE",
                                                  "operator": "contains", "value": "coli"})
    assert micro.n_rows == 1 and micro.rows[0]["time"] == "2130-01-10"   # chartdate fallback


def test_interval_tables_match_on_overlap(tools):
    # norepinephrine ran 01-11 02:00 -> 20:00; a timestamp window 01-11 12:00 ± 1 h lies inside it
    r = tools.call("Get_Item_Status_History", {"item": "inputevents_mv:221906", "time": "2130-01-11 12:00"})
    assert r.n_rows == 1
    none = tools.call("Get_Item_Status_History", {"item": "inputevents_mv:221906", "time": "2130-01-13"})
    assert none.n_rows == 0
    vanc = tools.call("Get_Item_Status_History", {"item": "prescriptions:Vancomycin", "time": "2130-01-12"})
    assert vanc.n_rows == 1                                       # started 01-10, ended 01-13


def test_diagnoses_are_admission_scope(tools):
    r = tools.call("Get_Item_Status_History", {"item": "diagnoses_icd:5849", "time": "2120-01-01"})
    assert r.n_rows == 1 and "admission" in r.text


def test_pod_uses_the_named_anchor(tools):
    r = tools.call("View_General_Timeline", {"time": "POD 1", "table": "outputevents"})
    # surgery 01-11 09:00 -> POD 1 = 01-12, widened: [01-11, 01-14)
    assert [x["valuenum"] for x in r.rows] == [300.0, 150.0]


def test_value_trend_direction_and_statistics(tools):
    wbc = tools.call("Analyze_Value_Trend", {"item": "WBC"})
    t = wbc.summary["trend"]
    assert (t["n"], t["first"], t["last"], t["min"], t["max"], t["direction"]) == (4, 15.2, 9.0, 9.0, 15.2, "falling")
    assert t["slope_per_day"] < 0
    cr = tools.call("Analyze_Value_Trend", {"item": "creatinine", "time": "HD 1 to HD 3"})
    assert cr.summary["trend"]["direction"] == "rising"       # 1.0 -> 1.4 -> 1.9 over [01-09, 01-14)
    cond = tools.call("Analyze_Value_Trend", {"item": "HR", "operator": "more", "value": "100"})
    assert cond.summary["trend"]["n"] == 3


def test_value_trend_without_item_covers_all_numeric_items(tools):
    r = tools.call("Analyze_Value_Trend", {"time": "admission", "operator": "more", "value": "90"})
    assert r.ok
    assert all(x["valuenum"] > 90 for x in r.rows)
    assert "chartevents:Heart Rate" in r.summary["trends"]


def test_general_timeline_counts_match_independent_sql(tools, tiny):
    path, layout = tiny
    r = tools.call("View_General_Timeline", {"time": "2130-01-11"})
    con = duckdb.connect(str(path), read_only=True)
    lo, hi = dt.datetime(2130, 1, 11), dt.datetime(2130, 1, 12)
    for table, col in (("chartevents", "charttime"), ("labevents", "charttime"), ("outputevents", "charttime")):
        n = len(_sql(con, layout, table, ["row_id"],
                     lambda pt: f"{pt.col('subject_id')} = ? AND {pt.col(col)} >= ? AND {pt.col(col)} < ?",  # noqa: B023
                     [A, lo, hi]))  # (the lambda is called at once)
        assert r.summary["counts"].get(table, 0) == n
    assert r.summary["counts"]["inputevents_mv"] == 1 and r.summary["counts"]["prescriptions"] == 1
    assert "diagnoses_icd" not in r.summary["counts"]


# --- criterion ------------------------------------------------------------------------

@pytest.mark.parametrize("state,cid", [("febrile", "fever"), ("afebrile", "fever"), ("tachycardic", "tachycardia"),
                                       ("acute kidney injury", "aki"), ("anemic", "anemia"), ("hypoxic", "hypoxia")])
def test_clinical_criterion(tools, state, cid):
    r = tools.call("Get_Clinical_Criterion", {"state": state})
    assert r.ok, r.error
    assert r.summary["id"] == cid and r.summary["source"]
    assert r.summary["negated"] == (state == "afebrile")


def test_clinical_criterion_lists_items_and_sex(tools):
    r = tools.call("Get_Clinical_Criterion", {"state": "tachycardia"})
    assert r.rows[0]["threshold"] == 100 and r.rows[0]["operator"] == ">"
    assert r.rows[0]["items"][0]["key"] == "chartevents:220045"
    anemia = tools.call("Get_Clinical_Criterion", {"state": "anemia"})
    applies = {row["sex"]: row["applies_to_patient"] for row in anemia.rows}
    assert applies == {"M": False, "F": True}
    assert tools.call("Get_Clinical_Criterion", {"state": "purple elephant"}).error


# --- contract -------------------------------------------------------------------------

@pytest.mark.parametrize("name,args,needle", [
    ("Get_Item_Status_History", {"item": "chartevents:999999"}, "unknown item key"),
    ("Get_Item_Status_History", {"item": "nosuchtable:1"}, "no item matches"),
    ("Get_Item_Status_History", {"item": "labevents:50912", "time": "2130-13-45"}, "cannot read time spec"),
    ("Get_Item_Status_History", {"item": "labevents:50912", "time": "HD 99999999"}, "implausibly large"),
    ("Get_Item_Status_History", {"item": "labevents:50912", "time": "HD 4 to HD 1"}, "ends before it starts"),
    ("Get_Item_Value_History", {"item": "HR", "operator": "sideways", "value": "1"}, "unknown operator"),
    ("Get_Item_Value_History", {"item": "HR", "operator": "more", "value": "lots"}, "must be a number"),
    ("Get_Item_Value_History", {"item": "HR", "operator": "more", "value": "1e400"}, "finite"),
    ("Get_Item_Value_History", {"item": "HR", "operator": "", "value": "1"}, "without an operator"),
    ("View_General_Timeline", {"time": "admission", "table": "users"}, "unknown table"),
    ("Lexical_Search", {"query": "x", "k": 0}, "k must be"),
    ("Lexical_Search", {"query": ""}, "empty"),
    ("Lexical_Search", {"q": "x"}, "bad arguments"),
    ("Get_Item_Value_Distribution", {"item": "diagnoses_icd:5849"}, "billing code"),
    ("No_Such_Tool", {}, "unknown tool"),
])
def test_expected_failures_are_error_results(tools, name, args, needle):
    r = tools.call(name, args)
    assert r.error and needle in r.error, r.error
    assert r.text.startswith("ERROR:") and r.rows == ()
    assert tools.tracer.records[-1].error == r.error


def test_every_call_is_traced(tiny):
    path, _ = tiny
    tracer = Tracer(prefix="n1")
    ctx = PatientContext(A, HA, ADMIT, DISCH)
    with make_toolset(path, ctx, tracer=tracer) as ts:
        tracer.set_step(3)
        ok = ts.call("Get_Item_Status_History", {"item": "WBC"})
        ts.call("Get_Item_Status_History", {"item": "WBC", "time": "never"})
    first, second = tracer.records
    assert (first.tool, first.n_rows, first.error, first.step, first.call_id) == \
        ("Get_Item_Status_History", ok.n_rows, None, 3, "n1-1")
    assert first.args == {"item": "WBC"} and first.ms > 0
    assert second.error and second.call_id == "n1-2"


def test_results_are_json_serialisable_with_evidence(tools):
    r = tools.call("View_General_Timeline", {"time": "2130-01-11"})
    json.dumps(r.to_dict())
    assert all({"table", "row_id"} <= set(row) for row in r.rows)
    assert r.evidence()[0].keys() == {"table", "row_id"}


def test_text_is_capped_and_says_what_was_cut(tiny):
    path, _ = tiny
    ctx = PatientContext(A, HA, ADMIT, DISCH)
    with make_toolset(path, ctx, text_rows=4, row_limit=6) as ts:
        r = ts.call("View_General_Timeline", {"time": ""})
    assert len(r.rows) == 6 and r.n_rows > 6
    lines = r.text.splitlines()
    assert len(lines) == 1 + 4 + 1 and "rows cut" in lines[3]


def test_categories_select_tools(tiny):
    path, _ = tiny
    ctx = PatientContext(A, HA, ADMIT, DISCH)
    with make_toolset(path, ctx, categories=("alignment", "temporal")) as ts:
        assert set(ts.names) == {"Lexical_Search", "Semantic_Search", "Get_Item_Status_History",
                                 "Get_Item_Value_History", "Analyze_Value_Trend", "View_General_Timeline"}
        assert ts.call("Get_Clinical_Criterion", {"state": "febrile"}).error
    with make_toolset(path, ctx) as ts:
        assert ts.names == TOOL_NAMES
    with pytest.raises(ConfigError):
        make_toolset(path, ctx, categories=("alignment", "magic"))


def test_writable_connections_are_refused(tiny, tmp_path):
    path, _ = tiny
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(path.read_bytes())
    con = duckdb.connect(str(copy))
    with pytest.raises(ConfigError, match="read-only"):
        make_toolset(con, PatientContext(A, HA, ADMIT, DISCH))
    con.close()
    ro = duckdb.connect(str(copy), read_only=True)
    ts = make_toolset(ro.cursor(), PatientContext(A, HA, ADMIT, DISCH))   # a cursor works too (pipeline threads)
    assert ts.call("Lexical_Search", {"query": "WBC"}).ok


def test_load_patient_context_reads_the_admission(tiny):
    path, layout = tiny
    con = duckdb.connect(str(path), read_only=True)
    ctx = load_patient_context(con, schema_map(detect_flavor(con)), B, 2002, note_date="2130-01-15")
    assert (ctx.admittime, ctx.dischtime, ctx.sex) == (ADMIT, DISCH, "M")
    assert ctx.note_date == dt.datetime(2130, 1, 15)


def test_a_row_time_text_is_jsonable_s_whether_kept_or_not():
    from ehrlib.tools.access import _time_text
    from ehrlib.tools.result import jsonable
    utc, plus2 = dt.UTC, dt.timezone(dt.timedelta(hours=2))
    for t in (dt.datetime(2130, 1, 12, 8, 5, 7), dt.datetime(2130, 1, 12), dt.datetime(2130, 1, 12, 8, 0, 0, 500),
              None, dt.date(2130, 1, 12)):
        assert _time_text(t) == _time_text(t) == jsonable(t)
    # the same instant in two zones: equal datetimes with different texts, never confused
    a, b = dt.datetime(2130, 1, 12, 8, tzinfo=utc), dt.datetime(2130, 1, 12, 10, tzinfo=plus2)
    assert a == b and _time_text(a) == jsonable(a) and _time_text(b) == jsonable(b) != jsonable(a)
