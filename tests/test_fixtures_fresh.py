"""The hand-labelled MIMIC-IV development set, the spent estimate set and the sealed blind estimate set.

Both corpora must load, and every gold label must point at things that exist in the demo
databases: each item in its dictionary (or, for name-keyed tables, among the admission's
rows) and each evidence row in its table for the note's own admission. Nothing here runs
a verification method; these are checks on the labels only.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ehrlib.corpus.io import load_corpus
from ehrlib.schema import LOGICAL, MIMIC3, MIMIC4, SchemaMap

FIXTURES = Path(__file__).parent / "fixtures"
CORPORA = tuple(c for c in ("realnotes_mimic4", "realnotes_mixed", "realnotes_blind", "realnotes_blind2",
                                 "realnotes_blind3", "realnotes_blind4", "realnotes_blind5",
                                 "realnotes_blind6", "realnotes_blind7", "realnotes_blind8",
                                 "realnotes_blind9", "realnotes_blind10", "realnotes_blind11",
                                 "estimate_blind")
                if (FIXTURES / c).is_dir())


@pytest.fixture(scope="module", params=CORPORA)
def corpus(request):
    return load_corpus(FIXTURES / request.param)


def test_corpus_loads_with_labels_on_every_note(corpus) -> None:
    note_ids = {n.note_id for n in corpus.notes}
    assert len(corpus.gold) > 10 * len(note_ids)
    assert {g.note_id for g in corpus.gold} == note_ids
    for g in corpus.gold:
        line = next(n for n in corpus.notes if n.note_id == g.note_id).lines[g.line]
        assert g.entity in line, (g.entity_id, line)
        if g.label == "inconsistent":
            assert g.inconsistency is not None, g.entity_id
            if g.inconsistency.kind == "missing":
                assert not g.evidence_row_ids, g.entity_id
        else:
            assert g.evidence_row_ids, g.entity_id


def test_sets_share_no_admission_with_any_other_fixture() -> None:
    fresh = {name: {n.hadm_id for n in load_corpus(FIXTURES / name).notes} for name in CORPORA}
    names = sorted(fresh)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not fresh[a] & fresh[b], (a, b, sorted(fresh[a] & fresh[b]))
    for folder in FIXTURES.iterdir():
        if folder.name in CORPORA or not (folder / "notes.jsonl").exists():
            continue
        others = {n.hadm_id for n in load_corpus(folder).notes}
        for name, hadms in fresh.items():
            assert not hadms & others, (name, folder.name, sorted(hadms & others))


def _flavor_of(hadm_id: int, cons: dict) -> tuple[object, SchemaMap]:
    for con, smap in cons.values():
        adm = smap.table("admissions")
        if con.execute(f"SELECT 1 FROM {adm.ref} WHERE {adm.col('hadm_id')} = ?", [hadm_id]).fetchone():
            return con, smap
    raise AssertionError(f"admission {hadm_id} is in neither demo database")


def _item_exists(con, smap: SchemaMap, table: str, key, hadm_id: int) -> bool:
    logical = LOGICAL[table]
    if logical.dictionary:
        d = smap.table(logical.dictionary)
        col = LOGICAL[logical.dictionary].role("item")
        value = str(key) if col == "icd9_code" else int(key)
        return con.execute(f"SELECT 1 FROM {d.ref} WHERE {d.col(col)} = ? LIMIT 1", [value]).fetchone() is not None
    t = smap.table(table)
    item = logical.role("item")
    return con.execute(f"SELECT 1 FROM {t.ref} WHERE {t.col(item)} ILIKE ? LIMIT 1", [str(key)]).fetchone() is not None


def test_items_and_evidence_rows_resolve_in_the_demo_databases(corpus, mimic3_demo_db, mimic4_demo_db) -> None:
    from ehrlib.db import connect

    cons = {"mimic3": (connect(mimic3_demo_db), MIMIC3), "mimic4": (connect(mimic4_demo_db), MIMIC4)}
    hadm = {n.note_id: n.hadm_id for n in corpus.notes}
    flavor = {h: _flavor_of(h, cons) for h in set(hadm.values())}
    problems = []
    for g in corpus.gold:
        con, smap = flavor[hadm[g.note_id]]
        for item in g.items:
            assert smap.has(item.table), (g.entity_id, item.table)
            if not _item_exists(con, smap, item.table, item.itemid, hadm[g.note_id]):
                problems.append((g.entity_id, "item", item.table, item.itemid))
        for ref in g.evidence_row_ids:
            t = smap.table(ref.table)
            row = con.execute(f"SELECT {t.col('hadm_id')} FROM {t.ref} WHERE {t.col('row_id')} = ?",
                              [ref.row_id]).fetchone()
            if row is None or row[0] != hadm[g.note_id]:
                problems.append((g.entity_id, "row", ref.table, ref.row_id))
    assert not problems, problems[:10]
