"""Known-answer tests of the diagnosis rule and its ICD wording."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.verification.diagnoses import icd_rewrites, icd_wording

CHF = {"table": "diagnoses_icd", "score": 0.9, "key": "diagnoses_icd:4280", "label": "Congestive heart failure",
       "has_records": True}


@pytest.mark.parametrize("billed, label, kind", [(True, "consistent", None), (False, "inconsistent", "missing")])
def test_billed_code(billed, label, kind):
    rows = {"diagnoses_icd:4280": [row("2199-02-03", None, key="diagnoses_icd:4280", table="diagnoses_icd",
                                       label="Congestive heart failure")]} if billed else {}
    v = verify(entity("CHF", "diagnosis", keys=()), FakeTools(rows, lexical=[CHF]))
    assert_decided(v, "diagnoses.billed_code", label, kind)


def test_no_matching_title_is_not_judged():
    far = dict(CHF, key="diagnoses_icd:496", label="Chronic airway obstruction, not elsewhere classified")
    assert_decided(verify(entity("CHF", "diagnosis", keys=()), FakeTools(lexical=[far])), "diagnoses.billed_code",
                   "consistent")


def test_title_named_through_a_synonym_whatever_the_search_score():
    nstemi = {"table": "diagnoses_icd", "score": 0.2, "key": "diagnoses_icd:41071",
              "label": "Subendocardial infarction, initial episode of care", "has_records": True}
    rows = {"diagnoses_icd:41071": [row("2199-02-03", None, key="diagnoses_icd:41071", table="diagnoses_icd",
                                        label=nstemi["label"])]}
    assert_decided(verify(entity("NSTEMI", "diagnosis", keys=()), FakeTools(rows, lexical=[nstemi])),
                   "diagnoses.billed_code", "consistent")
    assert_decided(verify(entity("NSTEMI", "diagnosis", keys=()), FakeTools({}, lexical=[nstemi])),
                   "diagnoses.billed_code", "inconsistent", "missing")


def test_billing_sections_use_their_tables_only():
    tube = {"table": "procedures_icd", "score": 0.9, "key": "procedures_icd:9604",
            "label": "Insertion of endotracheal tube", "has_records": True}
    rows = {"procedures_icd:9604": [row("2199-02-03", None, key="procedures_icd:9604", table="procedures_icd",
                                        label=tube["label"])]}
    proc = entity("intubation", "procedure", keys=("chartevents:1",), section="procedures")
    v = verify(proc, FakeTools(rows, lexical=[tube]))  # the bedside item has no rows: billing decides alone
    assert_decided(v, "diagnoses.section_billed", "consistent")
    assert v.evidence_row_ids
    # a discharge-diagnosis entry is not confirmed by a procedure code: no diagnosis title matches, not judged
    dx = entity("intubation", "diagnosis", keys=(), section="discharge_diagnosis")
    v = verify(dx, FakeTools(rows, lexical=[tube]))
    assert_decided(v, "diagnoses.section_billed", "consistent")
    assert not v.evidence_row_ids


def test_icd_wording_rewrites_in_order():
    assert icd_wording("CHF exacerbation") == "congestive heart failure exacerbation"
    assert icd_wording("UGIB") == "gastrointestinal bleeding"  # the hemorrhage rewrite sees the expansion
    assert icd_wording("s/p CVL") == "s/p venous catheter"


def test_abbreviation_entries_come_from_abbreviations_yaml():
    abbreviations = load_data("abbreviations.yaml")["abbreviations"]
    rewrites = dict((p.pattern, icd) for p, icd in icd_rewrites())
    for entry in load_data("diagnosis_wording.yaml")["rewrites"]:
        if "abbreviation" in entry:
            assert rewrites[rf"\b{entry['abbreviation'].lower()}\b"] == abbreviations[entry["abbreviation"]][0]


def test_listed_procedure_without_a_billed_code_goes_on_to_its_bedside_record():
    proc = entity("arterial line", "procedure", keys=("chartevents:1",), section="procedures")
    v = verify(proc, FakeTools({"chartevents:1": [row("2199-02-03", None, value="placed")]}, lexical=[]))
    assert v.label == "consistent" and v.rule_id != "diagnoses.section_billed"
