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


# --- the database dictionary behind the tools --------------------------------------------

from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

from test_icd_match import _Env, _Item  # noqa: E402

DICT_ITEMS = [_Item("diagnoses_icd", "5845", "Acute kidney failure with lesion of tubular necrosis"),
              _Item("diagnoses_icd", "5849", "Acute kidney failure, unspecified"),
              _Item("diagnoses_icd", "2866", "Defibrination syndrome")]


@dataclass
class DictTools(FakeTools):
    env: Any = None


def _dict_tools(billed_rows):
    tools = DictTools(billed_rows)
    tools.env = _Env(DICT_ITEMS, set(billed_rows))
    return tools


def test_resolved_concept_confirmed_by_a_billed_code_under_the_same_parent():
    key = "diagnoses_icd:5845"
    rows = {key: [row("2199-02-03", None, key=key, table="diagnoses_icd", label="Acute kidney failure with lesion "
                                                                                   "of tubular necrosis")]}
    v = verify(entity("AKI on admission", "diagnosis", keys=()), _dict_tools(rows))
    assert_decided(v, "diagnoses.billed_code", "consistent")
    assert [c.tool for c in v.tool_calls] == ["Get_Item_Status_History"]


def test_resolved_concept_with_nothing_billed_is_missing():
    v = verify(entity("DIC", "diagnosis", keys=()), _dict_tools({}))
    assert_decided(v, "diagnoses.billed_code", "inconsistent", "missing")
    assert "Defibrination syndrome" in v.reason


def test_code_billed_on_another_admission_only_is_missing():
    tools = _dict_tools({})
    tools.env = _Env(DICT_ITEMS, {"diagnoses_icd:5849"})  # the patient's, but no row for this admission
    assert_decided(verify(entity("acute renal failure", "diagnosis", keys=()), tools), "diagnoses.billed_code",
                   "inconsistent", "missing")


def test_listed_entry_around_a_span():
    from ehrlib.pipeline.offline.verification.diagnoses import listed_entry

    line = "PROCEDURES: Colonoscopy with polypectomy, CVL placement (R IJ, ultrasound guided)"
    assert listed_entry(line, (12, 23)) == "Colonoscopy with polypectomy"
    assert listed_entry(line, (43, 46)) == "CVL placement (R IJ, ultrasound guided)"
    assert listed_entry("", (0, 3)) is None
    line = "Transfusion of packed red blood cells. TIPS."
    assert listed_entry(line, (39, 43)) == "TIPS"  # a sentence end separates entries


def test_a_name_split_from_its_procedure_entry_is_billed_as_the_whole_entry():
    from verification_kit import spanned

    items = [_Item("procedures_icd", "4443", "Endoscopic control of gastric or duodenal bleeding"),
             _Item("procedures_icd", "4513", "Other endoscopy of small intestine")]
    key = "procedures_icd:4443"
    tools = DictTools({key: [row("2199-02-03", None, key=key, table="procedures_icd", label=items[0].label)]})
    tools.env = _Env(items, {key})
    line = "Upper endoscopy with control of bleeding"
    e = entity("Upper endoscopy", "diagnosis", keys=(), section="procedures", span=spanned(line, "Upper endoscopy"))
    v = verify(e, tools, line=line)
    assert_decided(v, "diagnoses.section_billed", "consistent")
    assert "Endoscopic control" in v.reason


# --- a resolved concept that does not fit the statement is no missing code ---------------------------


FIT_ITEMS = [_Item("diagnoses_icd", "L89022", "Pressure ulcer of left elbow, stage 2"),
             _Item("diagnoses_icd", "I26", "Pulmonary embolism"),
             _Item("diagnoses_icd", "I2699", "Other pulmonary embolism without acute cor pulmonale"),
             _Item("diagnoses_icd", "I2602", "Saddle embolus of pulmonary artery with acute cor pulmonale"),
             _Item("diagnoses_icd", "5849", "Acute kidney failure, unspecified"),
             _Item("procedures_icd", "8675", "Revision of pedicle or flap graft")]


def _billed_tools(key="diagnoses_icd:I2602"):
    tools = DictTools({key: [row("2199-02-03", None, key=key, table="diagnoses_icd", label="billed")]})
    tools.env = _Env(FIT_ITEMS, {key})
    return tools


@pytest.mark.parametrize("text, section, rule, label", [
    ("left elbow", "discharge_diagnosis", "diagnoses.section_billed", "consistent"),   # a site, not judged
    ("Saddle pulmonary embolism", "discharge_diagnosis", "diagnoses.section_billed", "consistent"),  # under I26
    ("Revision of AV graft", "procedures", "diagnoses.section_billed", "unverified"),   # a neighbouring title
    ("acute kidney injury", "discharge_diagnosis", "diagnoses.section_billed", "inconsistent"),  # truly missing
])
def test_a_missing_code_needs_a_concept_that_fits(text, section, rule, label):
    e = entity(text, "diagnosis", keys=(), section=section)
    v = verify(e, _billed_tools())
    assert_decided(v, rule, label)
    if text == "left elbow":
        assert "site or qualifier" in v.reason and not v.evidence_row_ids


# --- a procedure billed in the other ICD version ---------------------------------------------------

PCS_ITEMS = [_Item("procedures_icd", "387", "Interruption of the vena cava"),
             _Item("procedures_icd", "06H03DZ", "Insertion of Intraluminal Device into Inferior Vena Cava, "
                                                "Percutaneous Approach"),
             _Item("procedures_icd", "02HV33Z", "Insertion of Infusion Device into Superior Vena Cava, "
                                                "Percutaneous Approach")]


@pytest.mark.parametrize("billed, label", [("06H03DZ", "unverified"),     # ICD-10-PCS words it otherwise
                                           ("02HV33Z", "inconsistent")])  # another vein: still missing
def test_a_procedure_billed_in_the_other_version_is_not_missing(billed, label):
    key = f"procedures_icd:{billed}"
    tools = DictTools({key: [row("2199-02-03", None, key=key, table="procedures_icd", label=billed)]})
    tools.env = _Env(PCS_ITEMS, {key})
    v = verify(entity("IVC filter placement", "diagnosis", keys=(), section="procedures"), tools)
    assert_decided(v, "diagnoses.section_billed", label)
    if label == "unverified":
        assert "other" in v.reason and billed in v.reason
