"""The held-out hand-written real-patient set (tests/fixtures/realnotes_holdout).

Nine notes for nine MIMIC-III demo admissions that no other hand-written set uses,
labelled by hand under the paper's Appendix B protocol; it estimates how the offline
verifier does on text nobody tuned it on, so it must never be used to tune a method
(see the fixture README). These tests check the annotation, not a method:

- the files load and have the promised shape (note types, lengths, label mix);
- every cited row exists in the built demo and belongs to the note's admission;
- every machine-checkable ``claim`` re-derives from the cited rows when the label is
  consistent and does not when it is inconsistent (values, ranges, totals, trends);
- time labels agree with the cited rows' times (overlap for consistent, none for a
  time error), and a ``missing`` item has no record at all in the admission.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from ehrlib.corpus.io import load_corpus
from ehrlib.corpus.records import GoldEntity
from ehrlib.schema import LOGICAL, MIMIC3

HERE = Path(__file__).parent / "fixtures"
FIXTURE = HERE / "realnotes_holdout"
OTHER_SETS = ("realnotes", "handwritten", "handwritten_holdout")

#: the logical column a numeric claim key reads, per table ("total" sums that column)
_NUMERIC = {"labevents": "valuenum", "chartevents": "valuenum", "outputevents": "value",
            "inputevents_cv": "amount", "inputevents_mv": "amount"}
_RATE_TABLES = {"inputevents_cv", "inputevents_mv"}
#: (start, end) logical time columns per table; a point table repeats its column
_TIMES = {"chartevents": ("charttime", "charttime"), "labevents": ("charttime", "charttime"),
          "outputevents": ("charttime", "charttime"), "inputevents_cv": ("charttime", "charttime"),
          "microbiologyevents": ("chartdate", "chartdate"), "inputevents_mv": ("starttime", "endtime"),
          "procedureevents_mv": ("starttime", "endtime"), "prescriptions": ("startdate", "enddate")}


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(FIXTURE)


def test_shape_of_the_set(corpus) -> None:
    notes, gold = corpus.notes, corpus.gold
    assert Counter(n.note_type for n in notes) == {"discharge_summary": 3, "physician": 3, "nursing": 3}
    assert len({n.hadm_id for n in notes}) == 9
    per_note = Counter(g.note_id for g in gold)
    for n in notes:
        assert 25 <= len(n.lines) <= 60, (n.note_id, len(n.lines))
        assert 10 <= per_note[n.note_id] <= 30, (n.note_id, per_note[n.note_id])
    assert len({g.entity_id for g in gold}) == len(gold)
    share = sum(g.label == "inconsistent" for g in gold) / len(gold)
    assert 0.25 <= share <= 0.30, share
    kinds = Counter((g.inconsistency.kind, g.inconsistency.type) for g in gold if g.inconsistency)
    assert kinds[("missing", None)] >= 5
    for typ in ("value", "time", "interpretation", "trend"):
        assert kinds[("column", typ)] >= 4, (typ, kinds)


def test_labels_are_well_formed(corpus) -> None:
    lines = {n.note_id: n.lines for n in corpus.notes}
    for g in corpus.gold:
        assert g.entity.lower() in lines[g.note_id][g.line].lower(), g.entity_id
        assert (g.label == "inconsistent") == (g.inconsistency is not None), g.entity_id
        assert g.time is not None and g.time.start <= g.time.end, g.entity_id
        assert g.items and g.check_path, g.entity_id
        for ref in (*g.items, *g.evidence_row_ids):
            assert ref.table in LOGICAL, (g.entity_id, ref.table)
        missing = g.inconsistency is not None and g.inconsistency.kind == "missing"
        # a missing record cites no row; every other label cites the rows it was judged on
        assert bool(g.evidence_row_ids) != missing, g.entity_id


def test_admissions_are_held_out_from_the_other_sets(corpus) -> None:
    ours = {n.hadm_id for n in corpus.notes}
    for name in OTHER_SETS:
        path = HERE / name / "notes.jsonl"
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as fh:
            theirs = {json.loads(line)["hadm_id"] for line in fh if line.strip()}
        assert not ours & theirs, (name, sorted(ours & theirs))


# --- against the real demo database ---------------------------------------------------


@pytest.fixture(scope="module")
def con(mimic3_demo_db):
    from ehrlib.db import connect

    handle = connect(mimic3_demo_db)
    yield handle
    handle.close()


@pytest.fixture(scope="module")
def cited(corpus, con) -> dict[tuple[str, int], dict | None]:
    """Every cited row as {logical column: value}, read once."""
    out: dict[tuple[str, int], dict | None] = {}
    for table in sorted({r.table for g in corpus.gold for r in g.evidence_row_ids}):
        phys = MIMIC3.table(table)
        cols = [c for c in LOGICAL[table].columns if phys.has(c)]
        ids = sorted({int(r.row_id) for g in corpus.gold for r in g.evidence_row_ids if r.table == table})
        sql = (f"SELECT {', '.join(phys.col(c) for c in cols)} FROM {phys.ref} "
               f"WHERE {phys.col('row_id')} IN ({', '.join('?' for _ in ids)})")
        found = {int(rec["row_id"]): rec for rec in (dict(zip(cols, hit, strict=True))
                                                     for hit in con.execute(sql, ids).fetchall())}
        out.update({(table, i): found.get(i) for i in ids})
    return out


def _rows(g: GoldEntity, cited) -> list[tuple[str, dict]]:
    return [(r.table, cited[(r.table, int(r.row_id))]) for r in g.evidence_row_ids]


def test_cited_rows_exist_in_the_note_admission(corpus, cited) -> None:
    hadm = {n.note_id: n.hadm_id for n in corpus.notes}
    for g in corpus.gold:
        for table, row in _rows(g, cited):
            assert row is not None, (g.entity_id, table)
            assert row["hadm_id"] == hadm[g.note_id], (g.entity_id, table, row["row_id"])


def _near(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.005, abs_tol=0.051)


def _numbers(rows: list[tuple[str, dict]], key: str) -> list[float]:
    """The cited rows' numbers for a claim key; a stated infusion range is a range of rates."""
    if key in ("rate", "range"):
        def col_of(t: str) -> str | None:
            return "rate" if t in _RATE_TABLES else (None if key == "rate" else _NUMERIC.get(t))
    else:
        col_of = _NUMERIC.get
    vals = []
    for table, row in rows:
        col = col_of(table)
        if col is not None and row.get(col) is not None:
            vals.append(float(row[col]))
    return vals


def _ordered_values(rows: list[tuple[str, dict]]) -> list[float]:
    stamped = [(row["charttime"], float(row["valuenum"])) for _, row in rows if row.get("valuenum") is not None]
    return [v for _, v in sorted(stamped)]


def _direction(values: list[float]) -> str:
    first, last = values[0], values[-1]
    if abs(last - first) <= 0.1 * max(abs(first), 1e-9):
        return "flat"
    return "up" if last > first else "down"


def _claim_holds(key: str, want, rows: list[tuple[str, dict]]) -> bool:
    """Whether the cited rows bear out one claim key of the note."""
    if key == "trend":
        return _direction(_ordered_values(rows)) == want
    vals = _numbers(rows, key)
    if not vals:
        raise AssertionError(f"no numeric column for claim {key!r}")
    if key == "total":
        return _near(sum(vals), float(want))
    if key == "range":
        return _near(min(vals), float(want[0])) and _near(max(vals), float(want[1]))
    return any(_near(v, float(want)) for v in vals)


def test_claims_rederive_exactly_when_the_label_is_consistent(corpus, cited) -> None:
    checked = Counter()
    for g in corpus.gold:
        if not g.claim:
            continue
        rows = _rows(g, cited)
        holds = all(_claim_holds(k, v, rows) for k, v in g.claim.items())
        assert holds == (g.label == "consistent"), (g.entity_id, dict(g.claim))
        checked[g.label] += 1
    assert checked["consistent"] >= 80 and checked["inconsistent"] >= 25, checked


def _span(table: str, row: dict) -> tuple[str, str] | None:
    cols = _TIMES.get(table)
    if cols is None:
        return None
    start = row.get(cols[0]) or row.get("charttime")
    end = row.get(cols[1]) or start
    if start is None:
        return None
    start, end = str(start), str(end)
    if len(end) == 10 or end.endswith("00:00:00") and table in ("prescriptions", "microbiologyevents"):
        end = end[:10] + " 23:59:59"  # a date column covers its whole day
    return start, end


def test_times_agree_with_the_cited_rows(corpus, cited) -> None:
    for g in corpus.gold:
        lo, hi = g.time.start, g.time.end
        overlaps = [s <= hi and lo <= e for s, e in
                    (sp for sp in (_span(t, r) for t, r in _rows(g, cited)) if sp is not None)]
        if not overlaps:
            continue  # billed codes: the admission is the scope
        if g.inconsistency is not None and g.inconsistency.type == "time":
            assert not any(overlaps), f"{g.entity_id}: a time error but a cited row is inside {lo}..{hi}"
        elif g.label == "consistent":
            assert any(overlaps), f"{g.entity_id}: no cited row inside {lo}..{hi}"


def _absent(con, item, hadm_id: int) -> bool:
    if item.table in ("diagnoses_icd", "procedures_icd"):
        phys = MIMIC3.table(item.table)
        sql = (f"SELECT count(*) FROM {phys.ref} WHERE {phys.col('hadm_id')} = ? "
               f"AND {phys.col('icd9_code')} = ?")
        return con.execute(sql, [hadm_id, str(item.itemid)]).fetchone()[0] == 0
    word = item.label.split()[0].lower()
    rx = MIMIC3.table("prescriptions")
    counts = [con.execute(f"SELECT count(*) FROM {rx.ref} WHERE {rx.col('hadm_id')} = ? "
                          f"AND lower({rx.col('drug')}) LIKE ?", [hadm_id, f"%{word}%"]).fetchone()[0]]
    d = MIMIC3.table("d_items")
    for table in ("inputevents_mv", "inputevents_cv", "chartevents"):
        phys = MIMIC3.table(table)
        sql = (f"SELECT count(*) FROM {phys.ref} e JOIN {d.ref} d ON e.{phys.col('itemid')} = d.{d.col('itemid')} "
               f"WHERE e.{phys.col('hadm_id')} = ? AND lower(d.{d.col('label')}) LIKE ?")
        counts.append(con.execute(sql, [hadm_id, f"%{word}%"]).fetchone()[0])
    return sum(counts) == 0


def test_missing_items_have_no_record_in_the_admission(corpus, con) -> None:
    hadm = {n.note_id: n.hadm_id for n in corpus.notes}
    n_missing = 0
    for g in corpus.gold:
        if g.inconsistency is None or g.inconsistency.kind != "missing":
            continue
        for item in g.items:
            assert _absent(con, item, hadm[g.note_id]), (g.entity_id, item)
        n_missing += 1
    assert n_missing >= 5


# --- ehrlib.bench.realnotes: the held-out set is scored into its own CSV ---------------


@pytest.mark.slow  # one offline run on one short note (index builds dominate)
def test_bench_scores_the_holdout_set_separately(mimic3_demo_db, tmp_path) -> None:
    import csv

    from ehrlib.bench.realnotes import HEADER, SETS, run

    picked = ("ho-rn-174739",)  # a holdout note only: the dev set is not run
    first = run(tmp_path / "figures", methods=("surface",), runs_dir=tmp_path / "runs" / "realnotes",
                db=mimic3_demo_db, note_ids=picked)
    assert first == tmp_path / "figures" / SETS["holdout"][1]
    assert not (tmp_path / "figures" / SETS["dev"][1]).exists()
    with open(first, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == HEADER
    everything = next(r for r in rows if r["mode"] == "harsh" and r["scope"] == "all")
    gold = load_corpus(FIXTURE).gold
    assert int(everything["n_gold"]) == sum(g.note_id in picked for g in gold)
    assert (tmp_path / "runs" / "realnotes_holdout" / "errors.csv").exists()
