"""Data contracts of the synthetic hospital (ehrlib.synth tables), on all three layouts.

Queries go through ehrlib.schema maps, so each contract runs unchanged on the MIMIC-III,
MIMIC-IV and perturbed renderings of the same hospital.
"""
from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from ehrlib import schema
from ehrlib.cli import main
from ehrlib.db import read_manifest, table_defs
from ehrlib.db.contracts import check_not_null_ids, check_unique_row_ids
from ehrlib.errors import ConfigError, DataError
from ehrlib.synth import (
    STORYLINES,
    STORYLINES_TABLE,
    admission_view,
    content_checksums,
    generate_hospital,
    read_storylines,
)
from ehrlib.synth.dictionaries import CHART_ITEMS, LAB_SPECS
from ehrlib.synth.storylines import COMORBIDITIES
from ehrlib.synth.tables import build_tables

LAYOUT_FIXTURES = {"mimic3": "synth_db", "mimic4": "synth_db_mimic4", "perturbed": "synth_db_perturbed"}


@pytest.fixture(params=list(LAYOUT_FIXTURES))
def layout_db(request):
    """(layout, read-only connection, schema map) for each rendering of the seed-0 hospital."""
    path = request.getfixturevalue(LAYOUT_FIXTURES[request.param])
    con = duckdb.connect(str(path), read_only=True)
    yield request.param, con, schema.schema_map(request.param)
    con.close()


def _q(con, sql, params=()):
    return con.execute(sql, list(params)).fetchall()


# --- builds, layouts, determinism ----------------------------------------------------------------

def test_every_layout_is_detected_and_marked_synthetic(layout_db):
    layout, con, _ = layout_db
    assert schema.detect_flavor(con) == layout
    manifest = read_manifest(con)
    assert manifest["source_kind"] == "synthetic" and manifest["layout"] == layout
    loaded = {t["table_name"]: t["row_count"] for t in manifest["tables"] if t["status"] == "loaded"}
    assert all(n > 0 for n in loaded.values()), loaded


def test_builder_contracts_row_ids_unique_and_ids_not_null(layout_db):
    """The same data contracts `ehrlib build-db` enforces on MIMIC (evidence cites row ids)."""
    layout, con, _ = layout_db
    checked = 0
    for d in table_defs(layout).values():
        check_not_null_ids(con, layout, d)
        check_unique_row_ids(con, layout, d)
        checked += 1
    assert checked >= 17


def test_same_seed_same_content_other_seed_differs(synth_db, tmp_path):
    again = generate_hospital(tmp_path / "again.duckdb", seed=0)
    other = generate_hospital(tmp_path / "other.duckdb", seed=1, patients=8)
    base = content_checksums(synth_db)
    assert content_checksums(again) == base
    diff = content_checksums(other)
    assert diff.keys() == base.keys()
    changed = [t for t in base if base[t] != diff[t]]
    # dictionaries are fixed; every patient-level table changes with the seed
    assert {"CHARTEVENTS", "LABEVENTS", "ADMISSIONS", "PRESCRIPTIONS", STORYLINES_TABLE} <= set(changed)
    assert {"D_ITEMS", "D_LABITEMS"}.isdisjoint(changed)


def test_layouts_hold_the_same_hospital(synth_db, synth_db_mimic4, synth_db_perturbed):
    counts = {}
    for layout, path in (("mimic3", synth_db), ("mimic4", synth_db_mimic4), ("perturbed", synth_db_perturbed)):
        con = duckdb.connect(str(path), read_only=True)
        m = schema.schema_map(layout)
        counts[layout] = tuple(
            _q(con, f"SELECT count(*), sum({m.table(t).col('subject_id')}) FROM {m.table(t).ref}")[0]
            for t in ("patients", "admissions", "chartevents", "labevents", "microbiologyevents")
        )
        con.close()
    assert counts["mimic3"] == counts["mimic4"] == counts["perturbed"]


def test_default_size_and_shape(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    m = schema.MIMIC3
    n_pat = _q(con, f"SELECT count(*) FROM {m.table('patients').ref}")[0][0]
    per_patient = _q(con,
                     f"SELECT count(*) FROM {m.table('admissions').ref} GROUP BY "
                     f"{m.table('admissions').col('subject_id')}")
    assert n_pat == 40 and 44 <= sum(r[0] for r in per_patient) <= 60
    assert any(r[0] == 2 for r in per_patient)
    los = _q(con, f"SELECT min(date_diff('hour', {m.table('admissions').col('admittime')}, "
                  f"{m.table('admissions').col('dischtime')})) / 24.0 FROM {m.table('admissions').ref}")[0][0]
    assert los >= 2.5
    years = _q(con, f"SELECT min(year({m.table('admissions').col('admittime')})), "
                    f"max(year({m.table('admissions').col('dischtime')})) FROM {m.table('admissions').ref}")[0]
    assert 2100 <= years[0] and years[1] < 2200  # dates shifted into the 2100s
    rows = read_storylines(con)
    assert {r[2] for r in rows} == set(STORYLINES)
    one = read_storylines(con, rows[0][1])
    assert one and {r[1] for r in one} == {rows[0][1]} and [r[4] for r in one] == sorted(r[4] for r in one)
    # both charting systems occur: CareVue stays chart into INPUTEVENTS_CV
    assert _q(con, f"SELECT count(*) FROM {m.table('inputevents_cv').ref}")[0][0] > 0
    assert _q(con, f"SELECT count(*) FROM {m.table('inputevents_mv').ref}")[0][0] > 0
    con.close()


# --- plausibility contracts ------------------------------------------------------------------------

_VITAL_RANGES = {"hr": (30, 200), "nbp_sys": (50, 250), "nbp_dia": (20, 150), "nbp_mean": (30, 200),
                 "abp_sys": (50, 250), "abp_dia": (20, 150), "abp_mean": (30, 200), "rr": (4, 60),
                 "spo2": (50, 100), "temp_c": (33, 42), "temp_f": (91, 108)}


def test_vitals_are_physiological(layout_db):
    _, con, m = layout_db
    ce = m.table("chartevents")
    for concept, (lo, hi) in _VITAL_RANGES.items():
        ids = [i for i in (CHART_ITEMS[concept].mv, CHART_ITEMS[concept].cv) if i]
        n, vmin, vmax = _q(con, f"SELECT count(*), min({ce.col('valuenum')}), max({ce.col('valuenum')}) "
                                f"FROM {ce.ref} WHERE {ce.col('itemid')} IN (?, ?)", (ids + ids)[:2])[0]
        assert n > 0, concept
        assert lo <= vmin and vmax <= hi, (concept, vmin, vmax)


def test_temperature_charted_in_f_and_c_consistently(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    ce = schema.MIMIC3.table("chartevents")
    f, c = CHART_ITEMS["temp_f"].mv, CHART_ITEMS["temp_c"].mv
    pairs = _q(con, f"SELECT a.{ce.col('valuenum')}, b.{ce.col('valuenum')} FROM {ce.ref} a JOIN {ce.ref} b "
                    f"ON a.{ce.col('icustay_id')} = b.{ce.col('icustay_id')} AND a.{ce.col('charttime')} = "
                    f"b.{ce.col('charttime')} WHERE a.{ce.col('itemid')} = ? AND b.{ce.col('itemid')} = ?", (f, c))
    assert len(pairs) > 20
    assert all(abs(tf - (tc * 9 / 5 + 32)) < 0.11 for tf, tc in pairs)
    con.close()


def _timed_tables(m):
    for name in schema.EVENT_TABLES:
        lt = schema.LOGICAL[name]
        if not m.has(name) or "admission" not in lt.roles:
            continue
        cols = [lt.roles[r] for r in ("time", "start", "end") if r in lt.roles]
        yield name, [c for c in cols if m.table(name).has(c)]


def test_every_event_row_lies_inside_its_admission(layout_db):
    _, con, m = layout_db
    adm = m.table("admissions")
    checked = 0
    for name, cols in _timed_tables(m):
        t = m.table(name)
        for c in cols:
            bad = _q(con, f"SELECT count(*), count(a.{adm.col('hadm_id')}) FROM {t.ref} e LEFT JOIN {adm.ref} a "
                          f"ON e.{t.col('hadm_id')} = a.{adm.col('hadm_id')} WHERE a.{adm.col('hadm_id')} IS NULL "
                          f"OR e.{t.col(c)} < a.{adm.col('admittime')} - INTERVAL 1 DAY "
                          f"OR e.{t.col(c)} > a.{adm.col('dischtime')} + INTERVAL 1 DAY")[0]
            assert bad[0] == 0, (name, c, bad)
            checked += 1
    assert checked >= 10


def test_interval_end_not_before_start(layout_db):
    _, con, m = layout_db
    for name in schema.EVENT_TABLES:
        lt = schema.LOGICAL[name]
        if lt.time_kind != "interval" or not m.has(name):
            continue
        t = m.table(name)
        s, e = t.col(lt.roles["start"]), t.col(lt.roles["end"])
        assert _q(con, f"SELECT count(*) FROM {t.ref} WHERE {e} < {s} OR {s} IS NULL")[0][0] == 0, name


def test_every_itemid_and_code_is_in_its_dictionary(layout_db):
    _, con, m = layout_db
    for name in schema.EVENT_TABLES:
        lt = schema.LOGICAL[name]
        if not m.has(name) or not lt.dictionary or not m.has(lt.dictionary):
            continue
        t, d = m.table(name), m.table(lt.dictionary)
        key = lt.roles["item"]
        dkey = schema.LOGICAL[lt.dictionary].roles["item"]
        missing = _q(con, f"SELECT DISTINCT e.{t.col(key)} FROM {t.ref} e WHERE e.{t.col(key)} IS NOT NULL AND "
                          f"e.{t.col(key)} NOT IN (SELECT {d.col(dkey)} FROM {d.ref})")
        assert missing == [], (name, missing[:5])
    micro, items = m.table("microbiologyevents"), m.table("d_items")
    for col in ("spec_itemid", "org_itemid", "ab_itemid"):
        missing = _q(con, f"SELECT DISTINCT {micro.col(col)} FROM {micro.ref} WHERE {micro.col(col)} IS NOT NULL "
                          f"AND {micro.col(col)} NOT IN (SELECT {items.col('itemid')} FROM {items.ref})")
        assert missing == [], (col, missing)


def test_flag_set_exactly_outside_reference_range(layout_db):
    _, con, m = layout_db
    lab = m.table("labevents")
    rows = _q(con, f"SELECT {lab.col('itemid')}, {lab.col('valuenum')}, {lab.col('value')}, {lab.col('flag')} "
                   f"FROM {lab.ref}")
    specs = {s.itemid: s for s in LAB_SPECS.values()}
    assert len(rows) > 2000
    n_abnormal = 0
    for itemid, num, text, flag in rows:
        spec = specs[itemid]
        outside = num < spec.low or num > spec.high
        assert (flag == "abnormal") == outside and flag in (None, "abnormal"), (itemid, num, flag)
        assert float(text) == num
        n_abnormal += outside
    assert 0.1 < n_abnormal / len(rows) < 0.6


def test_dictionaries_are_a_realistic_haystack(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    m = schema.MIMIC3
    d, ce = m.table("d_items"), m.table("chartevents")
    n_items = _q(con, f"SELECT count(*) FROM {d.ref}")[0][0]
    used = _q(con, f"SELECT count(DISTINCT {ce.col('itemid')}) FROM {ce.ref}")[0][0]
    assert n_items >= 400 and used / n_items < 0.2
    # synonyms: the same concept under several labels/abbreviations
    labels = {r[0] for r in _q(con, f"SELECT {d.col('label')} FROM {d.ref} WHERE {d.col('itemid')} IN "
                                    "(211, 220045, 220179, 455, 220050, 51)")}
    assert {"Heart Rate", "Non Invasive Blood Pressure systolic", "NBP [Systolic]",
            "Arterial Blood Pressure systolic", "Arterial BP [Systolic]"} <= labels
    assert _q(con, f"SELECT {d.col('abbreviation')} FROM {d.ref} WHERE {d.col('itemid')} = 220179")[0][0] == "NBPs"
    con.close()


# --- storylines drive coherent trajectories ------------------------------------------------------

def _events(con):
    out: dict[int, dict[str, object]] = {}
    for _, hadm, story, event, when in read_storylines(con):
        out.setdefault(hadm, {"storyline": story})[event] = when
    return out


def test_storyline_events_are_backed_by_rows(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    m = schema.MIMIC3
    inp, proc, lab, ce = (m.table(t) for t in ("inputevents_mv", "procedureevents_mv", "labevents", "chartevents"))
    events = _events(con)
    pressors = transfusions = intubations = 0
    for hadm, ev in events.items():
        assert ev["admission"] <= ev["icu_admission"] < ev["icu_discharge"] <= ev["discharge"]
        if "surgery" in ev:
            assert ev["admission"] < ev["surgery"] < ev["icu_admission"]
        if "first_antibiotic" in ev:
            assert ev["culture"] < ev["first_antibiotic"]
        if "pressor_start" in ev:
            # norepinephrine starts then, after a MAP below 65 was charted (the trigger)
            assert ev["pressor_start"] < ev["pressor_stop"]
            mv = _q(con, f"SELECT min({inp.col('starttime')}) FROM {inp.ref} WHERE {inp.col('hadm_id')} = ? "
                         f"AND {inp.col('itemid')} = 221906", (hadm,))[0][0]
            assert mv is None or mv == ev["pressor_start"]
            low = _q(con, f"SELECT min({ce.col('valuenum')}) FROM {ce.ref} WHERE {ce.col('hadm_id')} = ? AND "
                          f"{ce.col('itemid')} IN (220181, 220052, 456, 52) AND {ce.col('charttime')} <= ?",
                     (hadm, ev["pressor_start"]))[0][0]
            pressors += low is not None and low < 65
        if "transfusion" in ev:
            hgb = _q(con, f"SELECT min({lab.col('valuenum')}) FROM {lab.ref} WHERE {lab.col('hadm_id')} = ? AND "
                          f"{lab.col('itemid')} = 51222 AND {lab.col('charttime')} < ?", (hadm,
                                                                                          ev["transfusion"]))[0][0]
            assert hgb < 7.5
            transfusions += 1
        if "intubation" in ev and _q(con, f"SELECT count(*) FROM {proc.ref} WHERE {proc.col('hadm_id')} = ?",
                                     (hadm,))[0][0]:
            got = _q(con, f"SELECT {proc.col('starttime')} FROM {proc.ref} WHERE {proc.col('hadm_id')} = ? "
                          f"AND {proc.col('itemid')} = 224385", (hadm,))
            assert got == [(ev["intubation"],)]
            intubations += 1
    n_pressor = sum("pressor_start" in ev for ev in events.values())
    assert n_pressor >= 3 and pressors >= 0.8 * n_pressor
    assert transfusions >= 2 and intubations >= 3
    con.close()


def test_billing_codes_follow_what_happened(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    px = schema.MIMIC3.table("procedures_icd")
    events = _events(con)
    codes: dict[int, set[str]] = {}
    for hadm, code in _q(con, f"SELECT {px.col('hadm_id')}, {px.col('icd9_code')} FROM {px.ref}"):
        codes.setdefault(hadm, set()).add(code)
    for hadm, ev in events.items():
        got = codes.get(hadm, set())
        assert ("9904" in got) == ("transfusion" in ev), hadm
        if "intubation" not in ev:
            assert not got & {"9604", "9671", "9672"}, hadm
    # chronic conditions: billed on every admission of the same patient
    dx = schema.MIMIC3.table("diagnoses_icd")
    chronic: dict[int, list[set[str]]] = {}
    per_adm: dict[tuple[int, int], set[str]] = {}
    for subject, hadm, code in _q(con, f"SELECT {dx.col('subject_id')}, {dx.col('hadm_id')}, {dx.col('icd9_code')} "
                                       f"FROM {dx.ref}"):
        if code in COMORBIDITIES:
            per_adm.setdefault((subject, hadm), set()).add(code)
    for (subject, _), codes in per_adm.items():
        chronic.setdefault(subject, []).append(codes)
    twice = [sets for sets in chronic.values() if len(sets) == 2]
    assert twice and all(a & b for a, b in twice)
    con.close()


def test_mimic4_has_emar_for_orders(synth_db_mimic4):
    con = duckdb.connect(str(synth_db_mimic4), read_only=True)
    m = schema.MIMIC4
    emar, det = m.table("emar"), m.table("emar_detail")
    n, joined = _q(con, f"SELECT count(*), count(d.{det.col('emar_id')}) FROM {emar.ref} e LEFT JOIN {det.ref} d "
                        f"ON e.{emar.col('emar_id')} = d.{det.col('emar_id')}")[0]
    assert n > 500 and joined == n
    # titrated drips are administrations too: started when the pressor was started
    events = _events(con)
    starts = dict(_q(con, f"SELECT e.{emar.col('hadm_id')}, min(e.{emar.col('charttime')}) FROM {emar.ref} e JOIN "
                          f"{det.ref} d ON e.{emar.col('emar_id')} = d.{det.col('emar_id')} WHERE "
                          f"e.{emar.col('medication')} = 'NORepinephrine' AND e.{emar.col('event_txt')} = 'Started' "
                          f"AND d.{det.col('infusion_rate')} IS NOT NULL GROUP BY 1"))
    expected = {h: ev["pressor_start"] for h, ev in events.items() if "pressor_start" in ev}
    assert starts == expected and len(expected) >= 3
    version = _q(con, f"SELECT DISTINCT {m.table('diagnoses_icd').col('icd_version')} "
                      f"FROM {m.table('diagnoses_icd').ref}")
    assert version == [(9,)]
    con.close()


# --- scale, CLI, errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["mimic3", "mimic4", "perturbed"])
def test_scale_adds_bulk_rows_up_to_target(tmp_path, layout):
    path = generate_hospital(tmp_path / "scaled.duckdb", patients=3, seed=4, scale=60_000, layout=layout)
    con = duckdb.connect(str(path), read_only=True)
    assert schema.detect_flavor(con) == layout
    m = schema.schema_map(layout)
    ce, adm = m.table("chartevents"), m.table("admissions")
    n = _q(con, f"SELECT count(*) FROM {ce.ref}")[0][0]
    assert 60_000 <= n <= 62_000
    bad = _q(con, f"SELECT count(*) FROM {ce.ref} e LEFT JOIN {adm.ref} a ON e.{ce.col('hadm_id')} = "
                  f"a.{adm.col('hadm_id')} WHERE a.{adm.col('hadm_id')} IS NULL OR e.{ce.col('charttime')} NOT "
                  f"BETWEEN a.{adm.col('admittime')} AND a.{adm.col('dischtime')}")[0][0]
    assert bad == 0
    ids = _q(con, f"SELECT count(*), count(DISTINCT {ce.col('row_id')}) FROM {ce.ref}")[0]
    assert ids[0] == ids[1]
    spo2 = _q(con, f"SELECT min({ce.col('valuenum')}), max({ce.col('valuenum')}) FROM {ce.ref} "
                   f"WHERE {ce.col('itemid')} = 220277")[0]
    assert 80 <= spo2[0] and spo2[1] <= 100
    con.close()


def test_build_tables_is_deterministic_per_patient():
    a, b = build_tables(3, seed=9), build_tables(3, seed=9)
    for name in a:
        assert a[name].equals(b[name]), name


def test_cli_writes_a_database(tmp_path, capsys):
    out = tmp_path / "cli.duckdb"
    assert main(["synth", "tables", str(out), "--patients", "2", "--seed", "3", "--layout", "perturbed"]) == 0
    con = duckdb.connect(str(out), read_only=True)
    assert schema.detect_flavor(con) == "perturbed"
    con.close()
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("kwargs", [{"layout": "oracle"}, {"patients": 0}, {"patients": 50_001}, {"scale": -5}])
def test_bad_arguments_are_clear_errors_and_write_nothing(tmp_path, kwargs):
    out = tmp_path / "bad.duckdb"
    with pytest.raises(ConfigError):
        generate_hospital(out, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_realistic_gaps_missing_vitals_and_labs_not_drawn_daily(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    m = schema.MIMIC3
    ce, icu, lab = m.table("chartevents"), m.table("icustays"), m.table("labevents")
    charted, hours = _q(con, f"""
        SELECT (SELECT count(*) FROM {ce.ref} WHERE {ce.col('itemid')} = 220045),
               (SELECT sum(date_diff('hour', {icu.col('intime')}, {icu.col('outtime')}))
                FROM {icu.ref} WHERE DBSOURCE = 'metavision')""")[0]
    assert 0.85 < charted / hours < 0.99  # hourly heart rate, with gaps
    # LFTs (ALT) are not drawn every day; the basic panel (creatinine) nearly always is
    days = {}
    for itemid in (50861, 50912, 51222):
        days[itemid] = _q(con, f"SELECT count(DISTINCT ({lab.col('hadm_id')}, CAST({lab.col('charttime')} AS DATE))) "
                               f"FROM {lab.ref} WHERE {lab.col('itemid')} = ?", (itemid,))[0][0]
    assert days[50861] < 0.7 * days[50912] <= 0.7 * 1.25 * days[51222]  # CBC most mornings too
    con.close()


@pytest.mark.parametrize("layout", ["mimic3", "mimic4", "perturbed"])
def test_linksto_names_the_layouts_own_tables(layout, request):
    path = request.getfixturevalue(LAYOUT_FIXTURES[layout])
    con = duckdb.connect(str(path), read_only=True)
    m = schema.schema_map(layout)
    d = m.table("d_items")
    links = {r[0] for r in _q(con, f"SELECT DISTINCT {d.col('linksto')} FROM {d.ref}")}
    own = {t.name.lower() for t in m.tables.values()}
    assert links <= own, links - own
    assert m.table("chartevents").name.lower() in links
    con.close()


def test_admission_view_reads_the_same_admission_in_every_layout(synth_db, synth_db_mimic4, synth_db_perturbed):
    con = duckdb.connect(str(synth_db), read_only=True)
    hadm = next(h for h, ev in _events(con).items() if "pressor_start" in ev)
    con.close()
    views = {p: admission_view(p, hadm) for p in (synth_db, synth_db_mimic4, synth_db_perturbed)}
    base = views[synth_db]
    assert base.flavor == "mimic3" and base.storyline in STORYLINES and "pressor_start" in base.events
    cols = ["charttime", "itemid", "value", "valuenum"]
    for view in views.values():
        assert view.hadm_id == hadm and view.subject_id == base.subject_id and view.events == base.events
        for name in ("chartevents", "labevents", "inputevents_mv", "microbiologyevents"):
            a = base.tables[name]
            b = view.tables[name]
            keep = [c for c in (cols if name == "chartevents" else a.columns) if b[c].notna().any()
                    or a[c].isna().all()]
            pd.testing.assert_frame_equal(a[keep].reset_index(drop=True), b[keep].reset_index(drop=True),
                                          check_dtype=False)
    # the pressor in the tables starts when the storyline says
    inp = base.tables["inputevents_mv"]
    if len(inp):
        assert inp.loc[inp.itemid == 221906, "starttime"].min() == base.events["pressor_start"]
    assert len(views[synth_db_mimic4].tables["emar_detail"]) > 0
    with pytest.raises(DataError):
        admission_view(synth_db, 1)


def test_admission_view_on_the_real_mimic3_demo(mimic3_demo_db):
    con = duckdb.connect(str(mimic3_demo_db), read_only=True)
    adm = schema.MIMIC3.table("admissions")
    hadm = _q(con, f"SELECT {adm.col('hadm_id')} FROM {adm.ref} ORDER BY 1 LIMIT 1")[0][0]
    con.close()
    view = admission_view(mimic3_demo_db, hadm)
    assert view.flavor == "mimic3" and view.storyline is None and view.events == {}
    assert len(view.tables["admissions"]) == 1 and len(view.tables["chartevents"]) > 0
