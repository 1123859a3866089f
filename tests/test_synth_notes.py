"""The note writer: gold labels re-derived by an independent checker, determinism, scope.

The checker below shares no code with ``ehrlib.synth``: it reads the gold record's claim,
items and window, re-queries the tables through the logical model with its own SQL, reads
the criteria YAML itself and re-derives label, inconsistency kind and type. Done means
it agrees on every gold entity, on the synthetic hospital and on real MIMIC-III demo
patients.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from pathlib import Path

import duckdb
import pytest
import yaml

from ehrlib.corpus.io import load_corpus, read_gold, read_notes
from ehrlib.corpus.records import GoldEntity
from ehrlib.schema import detect_flavor, schema_map

REPO = Path(__file__).resolve().parents[1]
REL_TOL = 0.02


# --- the independent checker ------------------------------------------------------------

def _ts(v) -> dt.datetime | None:
    if v is None:
        return None
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, dt.date):
        return dt.datetime.combine(v, dt.time())
    return dt.datetime.fromisoformat(str(v))


def _close(claimed: float, actual: float, abs_tol: float = 0.011) -> bool:
    return abs(claimed - actual) <= max(REL_TOL * abs(actual), abs_tol)


class Checker:
    def __init__(self, con, hadm_by_note: dict[str, int]):
        self.con = con
        self.smap = schema_map(detect_flavor(con))
        self.hadm = hadm_by_note
        self._dicts: dict[str, list[dict]] = {}
        self.criteria = {c["id"]: c for c in yaml.safe_load(
            (REPO / "ehrlib" / "data" / "clinical_criteria.yaml").read_text())["criteria"]}

    def q(self, table: str, cols: list[str], where: str, params: list) -> list[dict]:
        pt = self.smap.table(table)
        sql = f"SELECT {self.smap.select_list(table, cols)} FROM {pt.ref} WHERE " + re.sub(
            r"\{(\w+)\}", lambda m: pt.col(m.group(1)), where)
        return [dict(zip(cols, r, strict=True)) for r in self.con.execute(sql, params).fetchall()]

    def window(self, g: GoldEntity) -> tuple[dt.datetime, dt.datetime]:
        return dt.datetime.fromisoformat(g.time.start), dt.datetime.fromisoformat(g.time.end)

    def check(self, g: GoldEntity) -> tuple[str, str | None, str | None]:
        """(label, inconsistency kind, inconsistency type) derived from the tables."""
        c, hadm = g.claim, self.hadm[g.note_id]
        if "icd9_code" in c:
            rows = self.q("diagnoses_icd", ["row_id"], "{hadm_id} = ? AND {icd9_code} = ?", [hadm, c["icd9_code"]])
            return ("consistent", None, None) if rows else ("inconsistent", "missing", None)
        if "criterion" in c:
            return self.check_criterion(g, hadm)
        if "relation" in c:
            return self.check_relation(g, hadm)
        if "drug" in c:
            return self.check_drug(g, hadm)
        if "spec_type_desc" in c:
            return self.check_micro(g, hadm)
        item = g.items[0]
        lo, hi = self.window(g)
        if "sum" in c:
            rows = self.q("outputevents", ["value"], "{hadm_id} = ? AND list_contains(?, {itemid}) "
                          "AND {charttime} BETWEEN ? AND ?", [hadm, [i.itemid for i in g.items], lo, hi])
            total = sum(float(r["value"]) for r in rows if r["value"] is not None)
            return ("consistent", None, None) if _close(c["sum"], total, 1.0) else ("inconsistent", "column", "value")
        if "stats" in c:
            for s in c["stats"]:
                rows = self.q("chartevents", ["charttime", "row_id", "valuenum"],
                              "{hadm_id} = ? AND {itemid} = ? AND {valuenum} IS NOT NULL "
                              "AND {charttime} BETWEEN ? AND ?",
                              [hadm, s["itemid"], lo, hi])
                rows.sort(key=lambda r: (r["charttime"], r["row_id"]))
                actual = {"min": min(r["valuenum"] for r in rows), "max": max(r["valuenum"] for r in rows),
                          "last": rows[-1]["valuenum"]}
                if any(not _close(s[k], actual[k], 0.51) for k in ("min", "max", "last") if k in s):
                    return "inconsistent", "column", "value"
            return "consistent", None, None
        if item.table in ("labevents", "chartevents") and ("valuenum" in c or "trend" in c):
            rows = self.q(item.table, ["charttime", "row_id", "valuenum"],
                          "{hadm_id} = ? AND {itemid} = ? AND {valuenum} IS NOT NULL", [hadm, item.itemid])
            rows.sort(key=lambda r: (r["charttime"], r["row_id"]))
            if not rows:
                return "inconsistent", "missing", None
            inwin = [r for r in rows if lo <= _ts(r["charttime"]) <= hi]
            if "trend" in c:
                return self.check_trend(c, inwin)
            if not inwin:
                return "inconsistent", "column", "time"
            if any(_close(c["valuenum"], r["valuenum"]) for r in inwin):
                return "consistent", None, None
            return "inconsistent", "column", "value"
        if "value" in c:  # categorical chart value
            rows = self.q("chartevents", ["charttime", "value"],
                          "{hadm_id} = ? AND {itemid} = ? AND {value} IS NOT NULL",
                          [hadm, item.itemid])
            if not rows:
                return "inconsistent", "missing", None
            inwin = [r for r in rows if lo <= _ts(r["charttime"]) <= hi]
            if not inwin:
                return "inconsistent", "column", "time"
            ok = any(str(r["value"]).strip().lower() == c["value"].strip().lower() for r in inwin)
            return ("consistent", None, None) if ok else ("inconsistent", "column", "value")
        if "rate" in c or "stopped" in c:
            t0 = "starttime" if item.table == "inputevents_mv" else "charttime"
            rows = self.q(item.table, [t0, "rate"] + (["endtime"] if t0 == "starttime" else []),
                          "{hadm_id} = ? AND {itemid} = ?", [hadm, item.itemid])
            if not rows:
                return "inconsistent", "missing", None
            if "stopped" in c:
                last = max(_ts(r["endtime"]) for r in rows if r["endtime"] is not None)
                return ("consistent", None, None) if lo <= last <= hi else ("inconsistent", "column", "time")
            inwin = [r for r in rows if lo <= _ts(r[t0]) <= hi and r["rate"] is not None]
            if not inwin:
                return "inconsistent", "column", "time"
            ok = any(_close(c["rate"], r["rate"], 0.0011) for r in inwin)
            return ("consistent", None, None) if ok else ("inconsistent", "column", "value")
        if "started" in c:
            time_col = "starttime" if item.table == "inputevents_mv" else "charttime"
            rows = self.q(item.table, [time_col], "{hadm_id} = ? AND {itemid} = ?", [hadm, item.itemid])
            if not rows:
                return "inconsistent", "missing", None
            ok = any(lo <= _ts(r[time_col]) <= hi for r in rows if r[time_col] is not None)
            return ("consistent", None, None) if ok else ("inconsistent", "column", "time")
        if "performed" in c:
            rows = self.q("procedureevents_mv", ["starttime", "location"], "{hadm_id} = ? AND {itemid} = ?",
                          [hadm, item.itemid])
            if not rows:
                return "inconsistent", "missing", None
            inwin = [r for r in rows if lo <= _ts(r["starttime"]) <= hi]
            if not inwin:
                return "inconsistent", "column", "time"
            if "location" in c and not any(_side_site(r["location"]) == _side_site(c["location"]) for r in inwin):
                return "inconsistent", "column", "other"
            return "consistent", None, None
        raise AssertionError(f"checker cannot read claim {c}")

    def check_trend(self, c: dict, rows: list[dict]):
        vals = [r["valuenum"] for r in rows]
        if c["trend"] == "peak":
            peak = max(vals)
            ok = _close(c["peak"], peak) and vals[0] <= 0.85 * peak and vals[-1] <= 0.85 * peak
            return ("consistent", None, None) if ok else ("inconsistent", "column", "trend")
        change = (vals[-1] - vals[0]) / abs(vals[0])
        actual = "up" if change >= 0.1 else "down" if change <= -0.1 else "stable"
        return ("consistent", None, None) if actual == c["trend"] else ("inconsistent", "column", "trend")

    def dictionary(self, table: str) -> list[dict]:
        if table not in self._dicts:
            cols = ["itemid", "label", "fluid"] if table == "d_labitems" else ["itemid", "label", "linksto"]
            self._dicts[table] = self.q(table, cols, "{itemid} IS NOT NULL", [])
        return self._dicts[table]

    def criterion_rows(self, crit: dict, hadm: int, lo, hi, sex: str | None) -> list[tuple[dict, dict]]:
        out = []
        for test in crit["tests"]:
            if test.get("sex") and test["sex"] != sex:
                continue
            if test["table"] == "labevents":
                items = [i for i in self.dictionary("d_labitems") if i["label"]
                         and re.search(test["label"], i["label"].strip(), re.I)
                         and re.search(test.get("fluid") or "", (i["fluid"] or "").strip(), re.I)]
            else:
                # LINKSTO names the layout's physical table (VITALS_TIMESERIES when perturbed)
                physical = self.smap.table(test["table"]).name.lower()
                items = [i for i in self.dictionary("d_items") if i["label"]
                         and (i["linksto"] or "chartevents").lower() in (test["table"], physical)
                         and re.search(test["label"], i["label"].strip(), re.I)]
            if not items:
                continue
            num = "value" if test["table"] == "outputevents" else "valuenum"  # outputevents.value is numeric
            rows = self.q(test["table"], ["row_id", "charttime", num],
                          f"{{hadm_id}} = ? AND list_contains(?, {{itemid}}) AND {{{num}}} IS NOT NULL "
                          "AND {charttime} BETWEEN ? AND ?", [hadm, [i["itemid"] for i in items], lo, hi])
            out += [(test, {**r, "valuenum": float(r[num])}) for r in rows]
        return out

    def check_criterion(self, g: GoldEntity, hadm: int):
        c = g.claim
        crit = self.criteria[c["criterion"]]
        lo, hi = self.window(g)
        sex = self.q("patients", ["gender"], "{subject_id} = (SELECT {subject_id} FROM " +
                     self.smap.table("admissions").ref + " WHERE " + self.smap.table("admissions").col("hadm_id") +
                     " = ?)", [hadm])[0]["gender"]
        rows = self.criterion_rows(crit, hadm, lo, hi, (sex or "")[:1].upper())
        assert rows, f"{g.entity_id}: no rows to judge {c['criterion']}"
        if crit["kind"] == "rate":
            wts = sorted((_ts(r["charttime"]), r["row_id"], r["valuenum"]) for _, r in self.criterion_rows(
                {"tests": crit["weight"]}, hadm, dt.datetime.min, dt.datetime.max, None) if r["valuenum"] > 0)
            weight = wts[0][2] if wts else crit["default_weight_kg"]
            test = crit["tests"][0]
            hours = ((hi - lo).total_seconds() + 1) / 3600
            holds = sum(r["valuenum"] for _, r in rows) / (weight * hours) < test["threshold"]
        elif crit["kind"] == "delta":
            series = sorted((_ts(r["charttime"]), r["row_id"], r["valuenum"]) for _, r in rows)
            holds = False
            for i, (tb, _, vb) in enumerate(series):
                earlier = series[:i]
                if not earlier:
                    continue
                if any(vb - va >= crit["rise"] and (tb - ta).total_seconds() <= crit["within_hours"] * 3600
                       for ta, _, va in earlier):
                    holds = True
                base = min(v for _, _, v in earlier)
                if base > 0 and vb >= crit["ratio"] * base:
                    holds = True
        else:
            ops = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
                   ">=": lambda a, b: a >= b}
            holds = any(ops[t["operator"]](r["valuenum"], t["threshold"]) for t, r in rows)
        if holds == c["holds"]:
            return "consistent", None, None
        return "inconsistent", "column", "interpretation"

    def check_relation(self, g: GoldEntity, hadm: int):
        c = g.claim
        starts = [_ts(r["startdate"]) for r in self.q("prescriptions", ["startdate"],
                                                       "{hadm_id} = ? AND lower(trim({drug})) = lower(?)",
                                                       [hadm, c["drug"]]) if r["startdate"] is not None]
        anchor = self.q(c["anchor"]["table"], ["charttime", "chartdate"], "{row_id} = ?", [c["anchor"]["row_id"]])[0]
        days = (min(starts).date() - _ts(anchor["charttime"] or anchor["chartdate"]).date()).days
        actual = "after" if days > 0 else "before" if days < 0 else "same day"
        if actual == c["relation"] and c.get("days_after", days) == days:
            return "consistent", None, None
        return "inconsistent", "column", "time"

    def check_drug(self, g: GoldEntity, hadm: int):
        c = g.claim
        rows = self.q("prescriptions", ["startdate", "enddate", "dose_val_rx", "dose_unit_rx", "route"],
                      "{hadm_id} = ? AND lower(trim({drug})) = lower(?)", [hadm, c["drug"]])
        if not rows:
            return "inconsistent", "missing", None
        lo, hi = self.window(g)
        inwin = [r for r in rows if r["startdate"] is not None and lo <= _ts(r["startdate"]) <= hi]
        if not inwin:
            return "inconsistent", "column", "time"
        best = None
        for r in inwin:
            bad = set()
            try:
                if not _close(c["dose_val_rx"], float(str(r["dose_val_rx"]).replace(",", ""))):
                    bad.add("dose")
            except (TypeError, ValueError):
                bad.add("dose")
            if (r["dose_unit_rx"] or "").lower() != (c["dose_unit_rx"] or "").lower():
                bad.add("dose")
            if (r["route"] or "").lower() != (c["route"] or "").lower():
                bad.add("route")
            if "duration_days" in c and (r["enddate"] is None or
                                         (_ts(r["enddate"]) - _ts(r["startdate"])).days != c["duration_days"]):
                bad.add("duration")
            if best is None or len(bad) < len(best):
                best = bad
        if not best:
            return "consistent", None, None
        return "inconsistent", "column", "value" if "dose" in best else "other"

    def check_micro(self, g: GoldEntity, hadm: int):
        c = g.claim
        rows = self.q("microbiologyevents", ["charttime", "chartdate", "ab_name", "interpretation"],
                      "{hadm_id} = ? AND upper({spec_type_desc}) = upper(?) AND upper({org_name}) = upper(?)",
                      [hadm, c["spec_type_desc"], c["org_name"]])
        if not rows:
            return "inconsistent", "missing", None
        lo, hi = self.window(g)
        inwin = [r for r in rows if lo <= _ts(r["charttime"] or r["chartdate"]) <= hi]
        if not inwin:
            return "inconsistent", "column", "time"
        if "ab_name" in c:
            abx = [r for r in inwin if (r["ab_name"] or "").upper() == c["ab_name"].upper()]
            if not any(r["interpretation"] == c["interpretation"] for r in abx):
                return "inconsistent", "column", "value"
        if c.get("all_sensitive"):
            seen = {r["interpretation"] for r in inwin if r["interpretation"]}
            if not seen or seen != {"S"}:
                return "inconsistent", "column", "value"
        return "consistent", None, None


def _side_site(loc: str | None) -> str:
    s = re.sub(r"[^a-z ]", "", (loc or "").lower()).strip()
    s = re.sub(r"^(r|rt)\b", "right", s)
    return re.sub(r"^(l|lt)\b", "left", s)


def check_corpus(db_path: Path, corpus: Path) -> tuple[int, list[str]]:
    notes = read_notes(corpus / "notes.jsonl")
    gold = read_gold(corpus / "gold.jsonl")
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        checker = Checker(con, {n.note_id: n.hadm_id for n in notes})
        problems = []
        wanted: dict[str, set] = {}
        for g in gold:
            derived = checker.check(g)
            stated = (g.label, g.inconsistency.kind if g.inconsistency else None,
                      g.inconsistency.type if g.inconsistency else None)
            if derived != stated:
                problems.append(f"{g.entity_id} {g.entity!r} claim={g.claim} gold={stated} checker={derived}")
            for ref in g.evidence_row_ids:
                wanted.setdefault(ref.table, set()).add(ref.row_id)
        owner: dict[tuple[str, object], int] = {}
        for table, ids in wanted.items():
            for r in checker.q(table, ["row_id", "hadm_id"], "list_contains(?, {row_id})", [sorted(ids)]):
                owner[(table, r["row_id"])] = r["hadm_id"]
        for g in gold:
            for ref in g.evidence_row_ids:
                if owner.get((ref.table, ref.row_id)) != checker.hadm[g.note_id]:
                    problems.append(f"{g.entity_id}: evidence row {ref} not in the admission")
    finally:
        con.close()
    return len(gold), problems


# --- fixtures ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_corpus(mimic3_demo_db, tmp_path_factory) -> tuple[Path, Path]:
    from ehrlib.synth.notes import write_corpus

    out = write_corpus(mimic3_demo_db, tmp_path_factory.mktemp("demo_corpus"), seed=3, notes_per_type=8,
                       progress=False)
    return mimic3_demo_db, out


@pytest.fixture(scope="module")
def synth_corpus(request, tmp_path_factory) -> tuple[Path, Path]:
    try:
        db = request.getfixturevalue("synth_db")
    except pytest.FixtureLookupError:
        pytest.skip("synth_db fixture (synthetic hospital tables) not available yet")
    from ehrlib.synth.notes import write_corpus

    return db, write_corpus(db, tmp_path_factory.mktemp("synth_corpus"), seed=1, notes_per_type=6, progress=False)


# --- tests ---------------------------------------------------------------------------------

def test_checker_agrees_on_every_gold_label_for_real_demo_patients(demo_corpus):
    n, problems = check_corpus(*demo_corpus)
    assert n > 300
    assert not problems, f"{len(problems)} of {n} disagree:\n" + "\n".join(problems[:20])


def test_checker_agrees_on_every_gold_label_for_the_synthetic_hospital(synth_corpus):
    n, problems = check_corpus(*synth_corpus)
    assert n > 200
    assert not problems, f"{len(problems)} of {n} disagree:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("layout_fixture", ["synth_db_mimic4", "synth_db_perturbed"])
def test_checker_agrees_in_other_physical_layouts(request, layout_fixture, tmp_path):
    """The writer and the checker only speak the logical model: MIMIC-IV and the
    perturbed schema (paper Table 15) give labels that re-derive just the same."""
    from ehrlib.synth.notes import write_corpus

    try:
        db = request.getfixturevalue(layout_fixture)
    except pytest.FixtureLookupError:
        pytest.skip(f"{layout_fixture} fixture not available")
    out = write_corpus(db, tmp_path / "corpus", seed=5, notes_per_type=4, progress=False)
    n, problems = check_corpus(db, out)
    assert n > 60
    assert not problems, f"{len(problems)} of {n} disagree:\n" + "\n".join(problems[:20])


def test_checker_agrees_on_real_mimic4_demo_patients(mimic4_demo_db, tmp_path):
    """MIMIC-IV demo (hosp/icu schemas, no chartevents in the open demo): same writer, same checker."""
    from ehrlib.synth.notes import write_corpus

    out = write_corpus(mimic4_demo_db, tmp_path / "corpus", seed=2, notes_per_type=3, progress=False)
    n, problems = check_corpus(mimic4_demo_db, out)
    assert n > 40
    assert not problems, f"{len(problems)} of {n} disagree:\n" + "\n".join(problems[:20])


def test_cli_on_real_demo_patients(mimic3_demo_db, tmp_path, capsys):
    from ehrlib.cli import main

    out = tmp_path / "cli_corpus"
    assert main(["synth", "notes", str(mimic3_demo_db), str(out), "--seed", "11", "--notes-per-type", "3",
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "discharge_summary" in printed and "inconsistent" in printed
    n, problems = check_corpus(mimic3_demo_db, out)
    assert n > 30 and not problems, problems[:10]
    assert main(["synth", "notes", str(tmp_path / "absent.duckdb"), str(out)]) == 2


def test_corpus_shape_rates_and_split(demo_corpus):
    _, out = demo_corpus
    corpus = load_corpus(out)
    gold = corpus.gold
    incon = [g for g in gold if g.label == "inconsistent"]
    rate = len(incon) / len(gold)
    assert 0.18 <= rate <= 0.36, rate
    missing = sum(g.inconsistency.kind == "missing" for g in incon) / len(incon)
    assert 0.3 <= missing <= 0.7, missing
    column = [g for g in incon if g.inconsistency.kind == "column"]
    types = Counter(g.inconsistency.type for g in column)
    assert types["time"] == max(types.values()), types  # time errors are the most common (Figure 6)
    assert {"value", "interpretation", "trend"} <= set(types), types
    assert Counter(n.note_type for n in corpus.notes) == {"discharge_summary": 8, "physician": 8, "nursing": 8}
    manifest = corpus.manifest
    assert manifest["seed"] == 3 and manifest["counts"]["entities"] == len(gold)
    val, test = manifest["splits"]["validation"], manifest["splits"]["test"]
    assert sorted(val + test) == sorted(n.note_id for n in corpus.notes) and not set(val) & set(test)
    assert len(val) == round(24 * 22 / 105)
    assert len(load_corpus(out, "validation").notes) == len(val)


def test_entities_sit_on_their_line_and_carry_paths(demo_corpus):
    _, out = demo_corpus
    corpus = load_corpus(out)
    notes = {n.note_id: n for n in corpus.notes}
    tools = {"Lexical_Search", "Semantic_Search", "Get_Item_Value_Distribution", "Analyze_Category_Trend",
             "Get_Item_Status_History", "Get_Item_Value_History", "Analyze_Value_Trend", "View_General_Timeline",
             "Get_Clinical_Criterion"}
    for g in corpus.gold:
        assert g.entity in notes[g.note_id].lines[g.line]
        assert g.check_path and set(g.check_path) <= tools
        if g.reasoning == "medical":
            assert g.medical_knowledge_source and "Get_Clinical_Criterion" in g.check_path
        if g.label == "consistent":
            assert g.evidence_row_ids, g


_OUT_OF_SCOPE = ("Past Medical History:", "Social History:", "Family History:", "Medications on Admission:",
                 "Discharge Medications:", "Discharge Instructions:", "Followup Instructions:", "Plan:", "Allergies:")


def test_out_of_scope_sections_are_never_labeled(demo_corpus):
    _, out = demo_corpus
    corpus = load_corpus(out)
    for note in corpus.notes:
        labeled = {g.line for g in corpus.gold_for(note.note_id)}
        section = None
        for i, line in enumerate(note.lines):
            if line.strip() in _OUT_OF_SCOPE:
                section = line.strip()
            elif line.strip().endswith(":") or (line and not line[0].isspace() and line.rstrip().endswith(":")):
                section = None
            if section and i in labeled:
                pytest.fail(f"{note.note_id} line {i} in {section} is labeled: {line!r}")


def test_note_style_mimic_like(demo_corpus):
    _, out = demo_corpus
    corpus = load_corpus(out)
    ds = next(n for n in corpus.notes if n.note_type == "discharge_summary").text
    for head in ("Chief Complaint:", "History of Present Illness:", "Past Medical History:", "Pertinent Results:",
                 "Brief Hospital Course:", "Medications on Admission:", "Discharge Medications:",
                 "Discharge Diagnosis:", "Discharge Instructions:", "Followup Instructions:"):
        assert head in ds
    assert re.search(r"\[\*\*\d{4}-\d{2}-\d{2}\*\*\]", ds)
    md = "\n".join(n.text for n in corpus.notes if n.note_type == "physician")
    assert re.search(r"BP: \d+/\d+\(\d+\) \{\d+/\d+\(\d+\) - \d+/\d+\(\d+\)\}", md)
    for head in ("24 Hour Events:", "Allergies:", "Last dose of Antibiotics:", "Infusions:", "Physical Examination",
                 "Labs / Radiology", "Assessment and Plan"):
        assert head in md
    rn = "\n".join(n.text for n in corpus.notes if n.note_type == "nursing")
    for head in ("Neuro:", "CV:", "Resp:", "GI/Abd:", "GU:", "Skin:", "Action:", "Response:", "Plan:"):
        assert head in rn


def test_many_surface_forms_per_statement_type(demo_corpus):
    _, out = demo_corpus
    gold = load_corpus(out).gold
    shapes: dict[str, set[str]] = {}
    for g in gold:
        kind = next(k for k in ("criterion", "trend", "drug", "stats", "spec_type_desc", "valuenum", "value",
                                "started", "stopped", "rate", "performed", "icd9_code", "sum") if k in g.claim)
        shape = re.sub(r"\d+(\.\d+)?", "N", g.entity)
        shape = re.sub(r"[A-Za-z]+", "w", shape)
        shapes.setdefault(kind, set()).add(shape)
    for kind in ("valuenum", "drug", "trend"):
        assert len(shapes[kind]) >= 3, (kind, shapes[kind])
    lab_names = {g.entity.split()[0].rstrip("-0123456789.*").lower() for g in gold
                 if g.claim and "valuenum" in g.claim}
    assert len(lab_names) >= 8


def test_same_seed_is_byte_identical_and_other_seed_differs(mimic3_demo_db, tmp_path):
    from ehrlib.synth.notes import write_corpus

    a = write_corpus(mimic3_demo_db, tmp_path / "a", seed=7, notes_per_type=1, progress=False)
    b = write_corpus(mimic3_demo_db, tmp_path / "b", seed=7, notes_per_type=1, progress=False)
    c = write_corpus(mimic3_demo_db, tmp_path / "c", seed=8, notes_per_type=1, progress=False)
    for name in ("notes.jsonl", "gold.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
        assert (a / name).read_bytes() != (c / name).read_bytes()
    first = json.loads((a / "gold.jsonl").read_text().splitlines()[0])
    assert next(iter(first)) == "schema_version"


def test_bad_inputs_raise_clear_errors(mimic3_demo_db, tmp_path):
    from ehrlib.errors import ConfigError, DataError
    from ehrlib.synth.notes import write_corpus

    with pytest.raises(DataError):
        write_corpus(tmp_path / "nope.duckdb", tmp_path / "x")
    with pytest.raises(ConfigError):
        write_corpus(mimic3_demo_db, tmp_path / "x", notes_per_type=0)
    with pytest.raises(DataError, match="999999"):
        write_corpus(mimic3_demo_db, tmp_path / "x", admissions=[999999])
    assert not (tmp_path / "x" / "notes.jsonl").exists()
