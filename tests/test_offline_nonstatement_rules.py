"""Known answers for every non-statement rule, by rule id (ehrlib.pipeline.offline.nonstatement_rules).

Each rule has at least one case where it is the rule that drops the mention and one
near miss where it must not fire; the guard test fails when a registered rule has no
known-answer case, so a new rule cannot land untested.
"""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.nonstatement_rules import MentionView
from ehrlib.pipeline.offline.precision import (
    NON_STATEMENT_RULES,
    non_statement_reason,
    non_statement_rule,
    split_non_statements,
)

# rule id -> (text, mention text, dropped by this rule?) ; "False" rows are near misses
CASES: dict[str, list[tuple[str, str, bool]]] = {
    "nonstatement.problem_title": [("# Anemia: no overt bleeding; on protonix gtt.", "Anemia", True),
                                   ("# Hypokalemia: resolved", "Hypokalemia", False)],
    "nonstatement.word_fragment": [("Angiocath tip sent", "cath tip", True), ("BAL sent from RLL", "BAL", False)],
    "nonstatement.lone_title": [("Problem: Hyperkalemia", "Hyperkalemia", True), ("Anemia.", "Anemia", True),
                                ("Hypotension (not Shock)", "Hypotension", True), ("Afebrile.", "Afebrile", False),
                                ("Hypotension (resolved)", "Hypotension", False),
                                ("Skin: intact.", "Skin: intact", False)],  # a header with its content
    "nonstatement.home_medication": [("Holding home lisinopril.", "lisinopril", True),
                                     ("Started lisinopril today.", "lisinopril", False)],
    "nonstatement.code_event": [("HR 48-133, asystole during code, now SR.", "code", True),
                                ("Lactate 8.9 post-code, down to 3.4.", "code", True),
                                ("Events: found unresponsive, code called, brief asystole.", "code", False)],
    "nonstatement.imaging_interpretation": [("CXR: possible RLL atelectasis.", "CXR", True),
                                            ("CXR done at 0800.", "CXR", False)],
    "nonstatement.study_reading": [("EKG: sinus rhythm, no ST changes.", "sinus rhythm", True),
                                   ("EKG showed atrial fibrillation", "atrial fibrillation", True),
                                   ("CV: sinus rhythm 80s, no ectopy.", "sinus rhythm", False)],
    "nonstatement.pt_patient": [("Subjective: pt reports feeling better.", "pt", True),
                                ("PT 14.2, INR 1.3", "PT", False)],
    "nonstatement.generic_transfusion": [("He was transfused 2 units of FFP.", "transfused", True),
                                         ("He was transfused 2 units of FFP.", "FFP", False)],
    "nonstatement.device_as_route": [("CV: SBP 95-177 via aline, MAP 62-110.", "aline", True),
                                     ("GI: OGT in place, TF started", "OGT", True),
                                     ("R radial aline placed.", "aline", False)],
    "nonstatement.therapy_as_circumstance": [("BUN 41, Cr 2.2 (on CVVHD), Mg 2.0", "CVVHD", True),
                                             ("Cr drifting up on hemodialysis, recheck PM", "hemodialysis", True),
                                             ("heparin (CRRT circuit) 500 units/hr", "CRRT", True),
                                             ("Cr 3.1; started on CRRT this AM", "CRRT", False),
                                             ("Cr 2.0, remains on CVVHDF", "CVVHDF", False),
                                             ("CRRT since 4/2, Cr 1.9", "CRRT", False)],
    "nonstatement.consult_request": [("ERCP consult re: stent exchange.", "ERCP", True),
                                     ("ERCP done today.", "ERCP", False)],
    "nonstatement.elsewhere_event": [("septic shock. Intubated at OSH. Hx asthma", "Intubated", True),
                                     ("Intubated at 1300.", "Intubated", False)],
    "nonstatement.repeated_procedure": [("Endotracheal intubation and mechanical ventilation", "mechanical ventilation",
                                         True),
                                        ("Endotracheal intubation and mechanical ventilation", "intubation", False)],
    "nonstatement.order_condition": [("If hypotensive again, give IVF bolus.", "hypotensive", True),
                                     ("Pt hypotensive this AM requiring fluid.", "hypotensive", False)],
    "nonstatement.imperative_order": [("- start heparin gtt", "heparin", True),
                                      ("Started heparin gtt at 1400", "heparin", False),
                                      ("Repeat lactate 2.1, down from 4.", "lactate", False)],
    "nonstatement.opinion": [("Consults: ID recommends meropenem; renal feels AKI is prerenal.", "AKI", True),
                             ("Cr up, AKI today.", "AKI", False)],
    "nonstatement.admission_reason": [("79M admitted [**4-17**] w/ cardiogenic shock and ARF.", "ARF", True),
                                      ("Admitted with sepsis. Now hypotensive to 80s.", "hypotensive to 80s", False)],
    "nonstatement.history_introduction": [("Pt is a 70s M w/ prior stroke, AF, CKD. Events below.", "AF", True),
                                          ("58F with CHF, afib on warfarin, admitted for dyspnea", "afib", True),
                                          ("CV: AF 80s-90s, no ectopy.", "AF", False)],
    "nonstatement.diagnosis_list": [("Dx: GI bleed, CHF, anemia.", "anemia", True),
                                    ("Labs: Hct 24, anemic.", "anemic", False)],
    "nonstatement.heading_word": [("RESP: Increased secretions overnight, suctioned q2h.", "RESP", True),
                                  ("RESP: 22, unlabored.", "RESP", False)],
    "nonstatement.sedation_drug": [("NEURO: Sedated on fentanyl 150 mcg/hr.", "Sedated", True),
                                   ("General: intubated, sedated, arouses to voice", "sedated", False)],
    "nonstatement.o2_flow_device": [("2L NC, sats 92-100%.", "O2 flow", True), ("2L NC, sats 92-100%.", "NC", False)],
    "nonstatement.drug_second_name": [("FSBS 124-184, covered w/ regular insulin SSI.", "SSI", True),
                                      ("FSBS 124-184, covered w/ regular insulin SSI.", "insulin", False)],
    "nonstatement.drug_class_member": [("Abx changed to daptomycin today.", "Abx", True),
                                       ("Abx changed to daptomycin today.", "daptomycin", False)],
    "nonstatement.time_reference": [("# CHF: once off pressors he was gently diuresed", "pressors", True),
                                    ("6. FEN: NPO for now, advance diet after ERCP.", "ERCP", True),
                                    ("off pressors since yesterday", "pressors", False)],
    "nonstatement.indication": [("Vitamin K 10 mg PO was given for his coagulopathy.", "coagulopathy", True),
                                ("Coagulopathy worse today.", "Coagulopathy", False),
                                # a state told with its own value is observed, not only the reason
                                ("back on AC overnight for tachypnea to the 40s", "tachypnea to the 40s", False),
                                ("back on AC overnight for tachypnea", "tachypnea", True)],
    "nonstatement.bare_device": [("GU: foley. Abd soft, NT.", "foley", True), ("Foley placed at 1400.", "Foley", False),
                                 ("GU: Foley draining clear yellow urine", "Foley", False)],
}


def _rule_for(text: str, word: str) -> str | None:
    ms = find_mentions(text, 0, load_lexicon(), ["Norepinephrine"], "other")
    found = [m for m in ms if m.text == word]
    assert found, {m.text for m in ms}
    return non_statement_reason(found[0], text, ms)


@pytest.mark.parametrize("rule_id, text, word, dropped",
                         [(r, t, w, d) for r, cases in CASES.items() for t, w, d in cases])
def test_rule_known_answers(rule_id: str, text: str, word: str, dropped: bool) -> None:
    got = _rule_for(text, word)
    if dropped:
        assert got == rule_id
    else:
        assert got != rule_id


def _procedure_pair(text: str, head: tuple[int, int, str, str, str], tail: tuple[int, int, str, str, str]
                    ) -> list[Mention]:
    return [Mention(0, *head), Mention(0, *tail)]


def test_procedure_tail_known_answers() -> None:
    # the tail of one procedure split at "with" (mentions built by hand: the split is the
    # procedure-section scanner's, not the line scanner's)
    text = "Bronchoscopy with bronchoalveolar lavage"
    ms = _procedure_pair(text, (0, 12, "Bronchoscopy", "procedure", "bronchoscopy"),
                         (13, len(text), "with bronchoalveolar lavage", "diagnosis", "procedure_code"))
    assert non_statement_reason(ms[1], text, ms) == "nonstatement.procedure_tail"
    text = "Total abdominal colectomy with end ileostomy"  # two coded procedures: two entities
    ms = _procedure_pair(text, (0, 25, "Total abdominal colectomy", "diagnosis", "procedure_code"),
                         (26, len(text), "with end ileostomy", "diagnosis", "procedure_code"))
    assert non_statement_reason(ms[1], text, ms) is None


COVERED = set(CASES) | {"nonstatement.procedure_tail"}


def test_every_rule_has_known_answers() -> None:
    ids = [r.rule_id for r in NON_STATEMENT_RULES]
    assert len(ids) == len(set(ids))
    assert not set(ids) - COVERED, f"rules without a known-answer case: {sorted(set(ids) - COVERED)}"
    assert not COVERED - set(ids), f"cases for unknown rules: {sorted(COVERED - set(ids))}"
    for case_rule, cases in CASES.items():
        assert any(d for _, _, d in cases) and any(not d for _, _, d in cases), case_rule


def test_rules_are_well_formed() -> None:
    for r in NON_STATEMENT_RULES:
        assert r.rule_id.startswith("nonstatement.") and r.rule_id == r.rule_id.lower()
        assert r.principle.endswith(".") and len(r.principle) < 200
        assert all(k in ("interpretation", "diagnosis", "finding", "procedure", "medication", "infusion", "measurement",
                         "range", "trend", "output", "microbiology") for k in r.kinds)


def test_first_match_wins_in_order() -> None:
    # "Restart if on home lisinopril": a home medication, a condition and an order; the earliest rule names it
    text = "Restart if on home lisinopril."
    ms = find_mentions(text, 0, load_lexicon(), [], "other")
    m = next(x for x in ms if x.text == "lisinopril")
    view = MentionView.of(m, text, ms)
    fired = [r.rule_id for r in NON_STATEMENT_RULES if r.applies_to(m.kind) and r.apply(view)]
    assert fired == ["nonstatement.home_medication", "nonstatement.order_condition", "nonstatement.imperative_order"]
    rule = non_statement_rule(m, text, ms)
    assert rule is not None and rule.rule_id == "nonstatement.home_medication"


def test_split_records_the_rule_of_each_dropped_mention() -> None:
    text = "He was transfused 2 units of FFP."
    ms = find_mentions(text, 3, load_lexicon(), [], "other")
    kept, dropped = split_non_statements(text, ms)
    assert [m.text for m in kept] == ["FFP"]
    assert [(d.text, d.line, d.rule_id) for d in dropped] == [("transfused", 3, "nonstatement.generic_transfusion")]


def test_dropped_mentions_reach_the_stage_records_with_their_rule(offline_note) -> None:
    import json

    from ehrlib.pipeline.rundir import note_lines

    result = offline_note("drop-1", "Events:\nHe was transfused 2 units of FFP. Holding home lisinopril.")
    lines = [json.loads(x) for x in note_lines("t", result)["stages.jsonl"]]
    extraction = [r for r in lines if r["stage"] == "patient_extraction"]
    dropped = {(d["text"], d["line"], d["rule_id"]) for r in extraction for d in r["dropped"]}
    assert ("transfused", 1, "nonstatement.generic_transfusion") in dropped
    assert ("lisinopril", 1, "nonstatement.home_medication") in dropped
    assert all(r["schema_version"] >= 2 for r in lines)  # "dropped" exists since version 2
    assert not any(p.entity.lower().startswith("transfused") for p in result.predictions)


def test_an_earlier_value_of_a_named_item_is_no_word_fragment() -> None:
    text = "Na 140, K 4.1 (5.9 in the ER pre-HD), HCO3 22"
    kept, _ = split_non_statements(text, find_mentions(text, 0, load_lexicon()))
    assert [m.value for m in kept if m.concept == "potassium"] == ["4.1", "5.9 in the ER pre-"]
