"""Known answers for the offline inspector's "is this a statement at all" rules (precision)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.precision import drop_non_statements, is_allergy_paragraph, non_statement_reason
from ehrlib.pipeline.offline.scope import PLAN_CUES


def _reasons(text: str) -> dict[str, str | None]:
    ms = find_mentions(text, 0, load_lexicon(), ["Norepinephrine"], "other")
    return {m.text: non_statement_reason(m, text, ms) for m in ms}


@pytest.mark.parametrize("text, word, dropped", [
    ("# Anemia: no overt bleeding; on protonix gtt.", "Anemia", True),
    ("# Hypokalemia: resolved", "Hypokalemia", False),          # the title is the claim
    ("# Code: Full", "Code", False),
    ("Events: found unresponsive, code called, brief asystole.", "code", False),
    ("HR 48-133, asystole during code, now SR.", "code", True),
    ("Lactate 8.9 post-code, down to 3.4.", "code", True),
    ("Full code", "Full code", False),
    ("CXR: possible RLL atelectasis.", "CXR", True),
    ("Imaging: CXR with persistent RLL opacity.", "CXR", True),
    ("CXR done at 0800.", "CXR", False),
    ("He was transfused 2 units of FFP.", "transfused", True),
    ("GU: foley in place. Abd soft.", "foley", True),
    ("Foley placed at 1400.", "Foley", False),
    ("I/O: foley 2.4 L today, ostomy 150 cc", "foley", False),
    ("GU: Foley draining clear yellow urine", "Foley", False),  # the urine it drains is the claim
    ("CV: SBP 95-177 via aline, MAP 62-110.", "aline", True),
    ("BP 85-144 systolic on A-line", "A-line", True),
    ("free water flushes via OGT started.", "OGT", True),
    ("GI: OGT in place, TF started", "OGT", True),
    ("R radial aline placed.", "aline", False),
    ("Access: PICC, R radial aline, L IJ", "PICC", False),
    ("R IJ TLC intact.", "R IJ TLC", False),
    ("septic shock. Intubated at OSH. Hx asthma", "Intubated", True),
    ("intubated in ED. Family has made pt DNR.", "intubated", True),
    ("Intubated at 1300.", "Intubated", False),
    ("ERCP consult re: stent exchange.", "ERCP", True),
    ("Endotracheal intubation and mechanical ventilation", "mechanical ventilation", True),
    ("Endotracheal intubation and mechanical ventilation", "intubation", False),
    ("Abx changed to daptomycin today.", "Abx", True),
    ("Abx changed to daptomycin today.", "daptomycin", False),
    ("# CHF: once off pressors he was gently diuresed", "pressors", True),
    ("off pressors since yesterday", "pressors", False),
    ("6. FEN: NPO for now, advance diet after ERCP.", "ERCP", True),
    ("Once extubated she was gently diuresed with Lasix 20 mg PO", "extubated", True),
    ("after extubation on [**8-14**] she did well", "extubation", False),
    ("Vitamin K 10 mg PO was given for his coagulopathy.", "coagulopathy", True),
    ("started on levophed for hypotension", "levophed", False),
    ("Lopressor IV given at 2000 for HR 120s.", "HR", False),
    ("If hypotensive again, give IVF bolus.", "hypotensive", True),
    ("If hypotensive again, give IVF bolus.", "IVF", True),
    ("Pt hypotensive this AM requiring fluid.", "hypotensive", False),
    ("- start heparin gtt", "heparin", True),
    ("Started heparin gtt at 1400", "heparin", False),
    ("Repeat lactate 2.1, down from 4.", "lactate", False),
    ("- dose of lasix increased to 40 mg IV", "lasix", False),
    ("Consults: ID recommends meropenem; renal feels AKI is prerenal.", "AKI", True),
    ("Gave 2L IVF", "IVF", False),
    ("Tachycardia to 120s: given lopressor", "Tachycardia to 120s", False),  # the title carries a value
    ("Problem: Hyperkalemia", "Hyperkalemia", True),
    ("Anemia.", "Anemia", True),
    ("Hypotension (not Shock)", "Hypotension", True),
    ("Afebrile.", "Afebrile", False),
    ("Hypotension (resolved)", "Hypotension", False),
    ("Lungs: clear", "Lungs: clear", False),  # the header and its content are one form
    ("Holding home lisinopril.", "lisinopril", True),
    ("79M admitted [**4-17**] w/ cardiogenic shock and ARF.", "ARF", True),
    ("Admitted with sepsis. Now hypotensive to 80s.", "hypotensive to 80s", False),
    ("NEURO: Sedated on fentanyl 150 mcg/hr.", "Sedated", True),
    ("NEURO: Sedated on fentanyl 150 mcg/hr.", "fentanyl", False),
    ("General: intubated, sedated, arouses to voice", "sedated", False),
    ("EKG: sinus rhythm, no ST changes.", "sinus rhythm", True),
    ("EKG showed atrial fibrillation", "atrial fibrillation", True),
    ("CV: sinus rhythm 80s, no ectopy.", "sinus rhythm", False),
    ("Subjective: pt reports feeling better.", "pt", True),
    ("PT 14.2, INR 1.3", "PT", False),
    ("Angiocath tip sent", "cath tip", True),   # a specimen word inside a longer word
    ("FSBS 124-184, covered w/ regular insulin SSI.", "SSI", True),
    ("FSBS 124-184, covered w/ regular insulin SSI.", "insulin", False),
    ("on vanc/zosyn day 5", "zosyn", False),
    ("2L NC, sats 92-100%.", "O2 flow", True),
    ("2L NC, sats 92-100%.", "NC", False),
    ("SpO2 75-100% on 10L face tent.", "face tent", False),
    ("BAL sent from RLL", "BAL", False),
])
def test_non_statement_rules(text: str, word: str, dropped: bool) -> None:
    reasons = _reasons(text)
    assert word in reasons, reasons
    assert (reasons[word] is not None) is dropped, reasons


def test_statements_beside_dropped_words_survive() -> None:
    reasons = _reasons("# Anemia: no overt bleeding; on protonix gtt.")
    assert reasons["protonix gtt"] is None
    assert _reasons("GU: foley in place, UOP 222 cc.")["UOP"] is None
    assert _reasons("He was transfused 2 units of FFP.")["FFP"] is None


def test_split_procedure_name_is_one_entity() -> None:
    text = "Bronchoscopy with bronchoalveolar lavage"
    head = Mention(0, 0, 12, "Bronchoscopy", "procedure", "bronchoscopy")
    tail = Mention(0, 13, len(text), "with bronchoalveolar lavage", "diagnosis", "procedure_code")
    assert drop_non_statements(text, [head, tail]) == [head]
    text = "Endotracheal intubation and mechanical ventilation"
    head = Mention(0, 13, 23, "intubation", "procedure", "intubation")
    tail = Mention(0, 28, len(text), "mechanical ventilation", "diagnosis", "procedure_code")
    assert drop_non_statements(text, [head, tail]) == [head]
    # two coded procedures stay two entities
    text = "Total abdominal colectomy with end ileostomy"
    head = Mention(0, 0, 25, "Total abdominal colectomy", "diagnosis", "procedure_code")
    tail = Mention(0, 26, len(text), "with end ileostomy", "diagnosis", "procedure_code")
    assert drop_non_statements(text, [head, tail]) == [head, tail]


def test_allergy_paragraphs() -> None:
    lines = ["Allergies:", "Aspirin", "", "Chief Complaint:", "Allergies: Penicillins (rash)", "K 3.1"]
    assert is_allergy_paragraph(lines, 1)
    assert is_allergy_paragraph(lines, 4)
    assert not is_allergy_paragraph(lines, 3)
    assert not is_allergy_paragraph(lines, 5)


@pytest.mark.parametrize("clause, plan", [("hold coumadin", True), ("Discussing CMO w/ team", True),
                                          ("anticoagulation held given bleed", False)])
def test_hold_and_discussing_are_plans(clause: str, plan: bool) -> None:
    assert bool(PLAN_CUES.search(clause)) is plan


def test_precision_dev_set_loads_and_is_disjoint_from_other_sets() -> None:
    from pathlib import Path

    from ehrlib.corpus.io import load_corpus

    root = Path(__file__).parent / "fixtures"
    corpus = load_corpus(root / "precision_dev")
    assert len(corpus.notes) == 5 and len(corpus.gold) == 125
    lines = {n.note_id: n.lines for n in corpus.notes}
    assert all(g.line < len(lines[g.note_id]) and lines[g.note_id][g.line].strip() for g in corpus.gold)
    others = {n.hadm_id for d in root.iterdir() if d.is_dir() and d.name != "precision_dev"
              for n in load_corpus(d).notes}
    assert not others & {n.hadm_id for n in corpus.notes}


def test_drug_class_words_need_a_member_item() -> None:
    from ehrlib.pipeline.offline.precision import is_drug_class

    lex = load_lexicon()
    classes = {m.text: is_drug_class(m) for m in find_mentions("remains on abx; levophed 0.1", 0, lex, [], "other")}
    assert classes == {"abx": True, "levophed": False}


# --- a statement whose natural table the database lacks is not an entity (extract.table_absent) ---

def _first(text: str, concept: str) -> Mention:
    return next(m for m in find_mentions(text, 0, load_lexicon(), [], "exam") if m.concept == concept)


@pytest.mark.parametrize("text, concept, absent, expected", [
    ("Lungs: crackles at both bases.", "lung_sounds", {"chartevents"}, True),  # charted findings only
    ("Lungs: crackles at both bases.", "lung_sounds", set(), False),           # the table is there
    ("Pt afebrile overnight.", "fever", {"chartevents"}, True),                 # the criterion's only input
    ("Pt anemic this AM.", "anemia", {"chartevents"}, False),                   # judged on labevents
    ("Cr 1.4 this AM.", "creatinine", {"chartevents"}, False),
])
def test_uncheckable_when_every_natural_table_is_absent(text, concept, absent, expected):
    from ehrlib.pipeline.offline.precision import TABLE_ABSENT, uncheckable

    m = _first(text, concept)
    assert uncheckable(m, [], frozenset(absent), load_lexicon()) is expected
    assert TABLE_ABSENT.rule_id == "extract.table_absent" and "absent from the database" in TABLE_ABSENT.principle


def test_uncheckable_uses_the_aligned_items_tables():
    from ehrlib.corpus.records import ItemRef
    from ehrlib.pipeline.offline.precision import uncheckable

    m = _first("Lungs: crackles at both bases.", "lung_sounds")
    lab = [ItemRef("labevents", "Some lab", 1)]
    assert uncheckable(m, lab, frozenset({"chartevents"}), load_lexicon()) is False


def test_absent_tables_read_the_build_manifest(mimic4_demo_db, mimic3_demo_db):
    import duckdb

    from ehrlib.pipeline.offline.precision import absent_tables

    with duckdb.connect(str(mimic4_demo_db), read_only=True) as con:
        assert "chartevents" in absent_tables(con)  # the MIMIC-IV demo ships without chartevents
    with duckdb.connect(str(mimic3_demo_db), read_only=True) as con:
        assert "chartevents" not in absent_tables(con)
    assert absent_tables(None) == frozenset()


# --- a code status whose chart table is absent is checked against the billed status codes ---

@pytest.mark.parametrize("text, expected", [
    ("Family meeting held; pt made DNR.", "DNR"),          # V49.86 / Z66
    ("Transitioned to CMO after discussion.", "CMO"),      # V66.7 / Z51.5
    ("Remains full code.", None),                          # no ICD title names "full code"
    ("Pt is not DNR at this time.", None),                 # a denied status is no billed one
    ("Code: discussed with wife.", None),                  # the bare word is no status
])
def test_code_status_becomes_a_billed_status_statement(text, expected):
    from ehrlib.pipeline.offline.status_codes import billed_status_mention

    m = next(m for m in find_mentions(text, 0, load_lexicon(), [], "assessment_plan") if m.concept == "code_status")
    got = billed_status_mention(m)
    assert (got.value if got else None) == expected
    if got is not None:
        assert got.kind == "diagnosis" and (got.start, got.end) == (m.start, m.end)


def test_only_billed_status_concepts_are_rerouted():
    from ehrlib.pipeline.offline.status_codes import billed_status_mention

    m = _first("Lungs: crackles at both bases.", "lung_sounds")
    assert billed_status_mention(m) is None


def test_billed_status_rule_states_its_principle():
    from ehrlib.pipeline.offline.status_codes import BILLED_STATUS

    assert BILLED_STATUS.rule_id == "extract.billed_status" and "billed status codes" in BILLED_STATUS.principle
    assert len(BILLED_STATUS.principle) <= 260
