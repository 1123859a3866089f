"""The hand-written real-patient evaluation set (tests/fixtures/realnotes).

Three checks, cheapest first: the files load through the corpus readers; every evidence
row the annotator cited exists in the built MIMIC-III demo and belongs to the note's
admission; and an independent re-check of the numeric claims of *consistent* labels
(the cited rows really carry the value the note states). The last two need the demo
data and skip without it.
"""
from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from ehrlib.corpus.io import load_corpus
from ehrlib.corpus.records import GoldEntity, Note
from ehrlib.schema import LOGICAL, MIMIC3

FIXTURE = Path(__file__).parent / "fixtures" / "realnotes"

#: the column holding a numeric claim, per logical table (logical names, mapped below)
_CLAIM_COLUMN = {
    ("chartevents", "valuenum"): "valuenum", ("labevents", "valuenum"): "valuenum",
    ("outputevents", "valuenum"): "value", ("outputevents", "total"): "value",
    ("inputevents_mv", "rate"): "rate", ("inputevents_cv", "rate"): "rate",
    ("inputevents_mv", "amount"): "amount", ("inputevents_cv", "amount"): "amount",
    ("inputevents_mv", "total"): "amount",
}
#: which claim columns a claim key may be read from, in order of preference
_LOOKUPS = {"valuenum": ("valuenum",), "range": ("valuenum", "rate"), "rate": ("rate",),
            "amount": ("amount",), "total": ("total",), "count": ()}


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(FIXTURE)


def test_files_load_and_are_well_formed(corpus) -> None:
    notes, gold = corpus.notes, corpus.gold
    assert len(notes) == 12
    assert Counter(n.note_type for n in notes) == {"discharge_summary": 4, "physician": 4, "nursing": 4}
    assert len({n.note_id for n in notes}) == 12
    assert len({g.entity_id for g in gold}) == len(gold)
    per_note = Counter(g.note_id for g in gold)
    assert all(per_note[n.note_id] >= 10 for n in notes)
    share = sum(g.label == "inconsistent" for g in gold) / len(gold)
    assert 0.22 <= share <= 0.35, share
    for g in gold:
        # a label's inconsistency block is present exactly when the label says so
        assert (g.label == "inconsistent") == (g.inconsistency is not None), g.entity_id
        if g.inconsistency is not None and g.inconsistency.kind == "column":
            assert g.evidence_row_ids, f"{g.entity_id}: a column-level inconsistency needs the contradicting rows"
        if g.label == "consistent":
            assert g.evidence_row_ids, f"{g.entity_id}: a consistent label needs its supporting rows"
        for ref in (*g.items, *g.evidence_row_ids):
            assert ref.table in LOGICAL, f"{g.entity_id}: unknown logical table {ref.table!r}"


def test_entities_are_written_on_their_line(corpus) -> None:
    notes = {n.note_id: n for n in corpus.notes}
    for g in corpus.gold:
        line = notes[g.note_id].lines[g.line].lower()
        assert g.entity.lower() in line, f"{g.entity_id}: {g.entity!r} not on line {g.line}: {line!r}"


def test_all_inconsistency_types_are_present(corpus) -> None:
    kinds = Counter((g.inconsistency.kind, g.inconsistency.type) for g in corpus.gold if g.inconsistency)
    assert kinds[("missing", None)] >= 5
    for typ in ("value", "time", "interpretation", "trend"):
        assert kinds[("column", typ)] >= 3, (typ, kinds)


# --- against the real demo database ---------------------------------------------------


def _row(con, table: str, row_id: int | str) -> dict | None:
    phys = MIMIC3.table(table)
    cols = [c for c in LOGICAL[table].columns if phys.has(c)]
    sql = (f"SELECT {', '.join(phys.col(c) for c in cols)} FROM {phys.ref} "
           f"WHERE {phys.col('row_id')} = ?")
    hit = con.execute(sql, [row_id]).fetchone()
    return None if hit is None else dict(zip(cols, hit, strict=True))


@pytest.fixture(scope="module")
def rows(corpus, request):
    """Every cited row, by (table, row_id), read once from the built demo."""
    db = request.getfixturevalue("mimic3_demo_db")
    from ehrlib.db import connect

    con = connect(db)
    try:
        wanted = {(r.table, r.row_id) for g in corpus.gold for r in g.evidence_row_ids}
        return {key: _row(con, *key) for key in wanted}
    finally:
        con.close()


def test_evidence_rows_exist_and_belong_to_the_admission(corpus, rows) -> None:
    notes: dict[str, Note] = {n.note_id: n for n in corpus.notes}
    for g in corpus.gold:
        for ref in g.evidence_row_ids:
            row = rows[(ref.table, ref.row_id)]
            assert row is not None, f"{g.entity_id}: {ref.table} row {ref.row_id} not in the demo"
            assert row["hadm_id"] == notes[g.note_id].hadm_id, (g.entity_id, ref)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=0.005, abs_tol=0.051)


def _claim_values(g: GoldEntity, rows) -> dict[str, list[float]]:
    """Numeric values of the cited rows, per claim key, for the tables the claim can live in."""
    out: dict[str, list[float]] = {}
    for key in g.claim or {}:
        vals = []
        for ref in g.evidence_row_ids:
            row = rows[(ref.table, ref.row_id)]
            for lookup in _LOOKUPS[key]:
                col = _CLAIM_COLUMN.get((ref.table, lookup))
                if col is not None and row is not None and row.get(col) is not None:
                    vals.append(float(row[col]))
                    break
        out[key] = vals
    return out


def test_consistent_numeric_claims_match_the_cited_rows(corpus, rows) -> None:
    checked = 0
    for g in corpus.gold:
        if g.label != "consistent" or not g.claim:
            continue
        vals = _claim_values(g, rows)
        for key, want in g.claim.items():
            got = vals.get(key, [])
            if key == "count":
                assert len(g.evidence_row_ids) == want, (g.entity_id, want)
                continue
            assert got, f"{g.entity_id}: no numeric {key} among cited rows"
            if key in ("valuenum", "rate", "amount"):
                assert any(_close(v, float(want)) for v in got), (g.entity_id, want, got)
            elif key == "range":
                lo, hi = (float(x) for x in want)
                assert _close(min(got), lo) and _close(max(got), hi), (g.entity_id, want, got)
            elif key == "total":
                assert _close(sum(got), float(want)), (g.entity_id, want, sum(got))
            else:
                raise AssertionError(f"{g.entity_id}: unknown claim key {key!r}")
            checked += 1
    assert checked >= 120


def test_contradicted_values_really_differ(corpus, rows) -> None:
    """A 'value' inconsistency on a single numeric statement must not match any cited row."""
    for g in corpus.gold:
        inc = g.inconsistency
        if inc is None or inc.type != "value" or inc.columns != ("valuenum",) or g.value is None:
            continue
        try:
            stated = float(g.value.rstrip("*"))
        except ValueError:
            continue  # ranges and prose values are checked by the annotator, not here
        for ref in g.evidence_row_ids:
            row = rows[(ref.table, ref.row_id)]
            col = _CLAIM_COLUMN.get((ref.table, "valuenum"))
            if col and row.get(col) is not None:
                assert not _close(float(row[col]), stated), (g.entity_id, stated, row[col])



# --- ehrlib.bench.realnotes: the error listing ----------------------------------------


def test_error_rows_classify_every_kind_of_error() -> None:
    from ehrlib.bench.realnotes import ERROR_HEADER, error_rows
    from ehrlib.corpus.records import Inconsistency, ItemRef, Judgement, Prediction

    note = Note("n", 1, 2, "nursing", "2100-01-01", "K 3.1\nHR 80\nafebrile\nplan: lasix")
    k, hr = ItemRef("labevents", "Potassium", 50971), ItemRef("chartevents", "Heart Rate", 211)
    gold = [GoldEntity("n", "e1", 0, "K", "consistent", (k,)),
            GoldEntity("n", "e2", 1, "HR", "inconsistent", (hr,), inconsistency=Inconsistency("column", ("valuenum",),
                                                                                              "value")),
            GoldEntity("n", "e3", 2, "afebrile", "consistent"),
            GoldEntity("n", "e4", 0, "K", "consistent", (k,))]
    preds = [Prediction("r", "n", 0, "K", "inconsistent", (k,)),
             Prediction("r", "n", 1, "HR", "consistent", (hr,)),
             Prediction("r", "n", 3, "lasix", "inconsistent"),
             Prediction("r", "n", 0, "K", "consistent", (k,))]
    judgements = [Judgement("n", "e1", "harsh", "matcher", "incorrect", matched_prediction=0),
                  Judgement("n", "e2", "harsh", "matcher", "incorrect", matched_prediction=1),
                  Judgement("n", "e3", "harsh", "matcher", "incorrect"),
                  Judgement("n", "e4", "harsh", "matcher", "correct", matched_prediction=3),
                  Judgement("n", "e1", "lenient", "matcher", "correct", matched_prediction=0)]
    rows = [dict(zip(ERROR_HEADER, r, strict=True)) for r in error_rows("inspector", [note], gold, preds, judgements,
                                                                        "harsh")]
    assert [(r["entity_id"], r["error"]) for r in rows] == [
        ("e1", "false_alarm"), ("e2", "missed_inconsistency"), ("e3", "missed"), ("", "spurious")]
    assert rows[1]["gold_group"] == "value" and rows[1]["same_item"] is True
    assert rows[3]["line_text"] == "plan: lasix" and rows[3]["pred_entity"] == "lasix"
    assert all(len(r) == len(ERROR_HEADER) for r in rows)


@pytest.mark.slow  # one offline run (ontology + lexical index build dominate: ~8 s idle, ~25 s loaded)
def test_bench_writes_scores_and_error_listing(mimic3_demo_db, tmp_path) -> None:
    import csv

    from ehrlib.bench.realnotes import ERROR_HEADER, HEADER, run

    picked = ("rn-md-122928", "rn-rn-104697")  # the two shortest notes keep this test fast
    out = run(tmp_path / "figures", methods=("surface",), runs_dir=tmp_path / "runs", db=mimic3_demo_db,
              note_ids=picked)
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == HEADER
    assert {(r["mode"], r["scope"]) for r in rows} == {
        (m, s) for m in ("harsh", "lenient") for s in ("all", "physician", "nursing")}
    for r in rows:
        assert 0.0 <= float(r["f1"]) <= 1.0 and r["method"] == "surface"
    everything = next(r for r in rows if r["mode"] == "harsh" and r["scope"] == "all")
    assert int(everything["n_gold"]) == sum(g.note_id in picked for g in load_corpus(FIXTURE).gold)
    with open(tmp_path / "runs" / "errors.csv", newline="", encoding="utf-8") as fh:
        errors = list(csv.DictReader(fh))
    assert tuple(errors[0]) == ERROR_HEADER
    harsh_wrong = sum(e["mode"] == "harsh" and e["error"] != "spurious" for e in errors)
    assert harsh_wrong == int(everything["n_gold"]) - int(everything["n_correct"])


@pytest.mark.slow  # one offline run on one short MIMIC-IV note
def test_bench_scores_the_mimic4_set_on_a_mimic4_database(mimic4_demo_db, tmp_path) -> None:
    import csv

    from ehrlib.bench.realnotes import SETS, run

    picked = ("m4d-rn-22130791",)
    out = run(tmp_path / "figures", methods=("surface",), runs_dir=tmp_path / "runs" / "realnotes",
              db4=mimic4_demo_db, note_ids=picked, sets=("mimic4",))
    assert out == tmp_path / "figures" / SETS["mimic4"][1]
    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    everything = next(r for r in rows if r["mode"] == "harsh" and r["scope"] == "all")
    gold = load_corpus(Path(__file__).parent / "fixtures" / "realnotes_mimic4").gold
    assert int(everything["n_gold"]) == sum(g.note_id in picked for g in gold)
    assert int(everything["n_correct"]) > 0  # the run found this patient's rows in the MIMIC-IV tables
    assert (tmp_path / "runs" / "realnotes_mimic4" / "errors.csv").exists()
