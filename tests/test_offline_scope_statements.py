"""Known-answer tests of what a statement's scope says about the admission's records.

A patient summary's drugs are from before the stay, a drug listed bare in a problem entry is
a regimen the problem's plan sets (not judged on its absence), and an order written for later
is a plan.
"""
from __future__ import annotations

from typing import Any

import pytest

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims.forms import claim_for
from ehrlib.pipeline.offline.scope import decide_scope, listed_bare
from ehrlib.pipeline.records import Entity, Segment

STAY = TimeSpan("2150-03-10 14:00:00", "2150-03-25 12:00:00")


def _status(line: str, word: str, section: str, note_type: str = "physician", before: str = "",
            **claim: Any) -> str:
    start = line.index(word)
    e = Entity("e1", 1, word, "medication", claim=claim_for("medication", drugs=[word.lower()], **claim),
               span=(start, start + len(word)))
    return decide_scope(e, line, Segment(0, 0, 2, section, section), STAY, note_type, before=before).status


@pytest.mark.parametrize("before, line, word, status", [
    ("", "71F w/ AF on warfarin, CKD, admitted with sepsis", "warfarin", "past"),
    ("", "71F w/ AF on warfarin, admitted with sepsis, now on vancomycin", "vancomycin", "active"),
    ("48 yo M with HIV on", "raltegravir, presenting with fever and cough.", "raltegravir", "past"),  # line before
    ("", "48 yo M with HIV, presented with fever; raltegravir held", "raltegravir", "active"),
    ("", "On warfarin for AF, INR 3.1 today", "warfarin", "active"),           # no summary of the patient
    ("", "Pt received 2 L NS. 71F w/ AF on warfarin", "warfarin", "past"),     # the summary's own sentence
    # a title line without a period before the summary does not hide its opening age and sex
    ("CCU PROGRESS NOTE (day 3)", "66M w/ CAD, nightly zolpidem, admitted w/ chest pain", "zolpidem", "past"),
    ("Nursing note - days", "80 y/o F, HTN on amlodipine, admitted after a fall", "amlodipine", "past"),
    ("CCU PROGRESS NOTE (day 3)", "Heparin gtt continued, 66M w/ CAD", "Heparin", "active"),
])
def test_a_patient_summary_before_its_admission_is_history(before, line, word, status):
    assert _status(line, word, "other", before=before) == status


@pytest.mark.parametrize("line, word, note_type, section, claim, bare", [
    ("# Prophylaxis: SQ heparin, famotidine", "heparin", "physician", "assessment_plan", {"route": "SC"}, True),
    ("# Prophylaxis: SQ heparin, famotidine", "famotidine", "physician", "assessment_plan", {}, True),
    ("3. Withdrawal: CIWA, thiamine/folate, monitor", "folate", "physician", "assessment_plan", {}, True),
    ("# Hypernatremia: free water.", "free water", "physician", "assessment_plan", {}, True),
    # a verb, a dose or a time makes it a report of what was given
    ("# AF: rates 80s, on diltiazem", "diltiazem", "physician", "assessment_plan", {"action": "on"}, False),
    ("# Bacteremia: already covered with cefepime", "cefepime", "physician", "assessment_plan", {}, False),
    ("# Pain: oxycodone 5 mg given", "oxycodone", "physician", "assessment_plan", {"dose": 5.0}, False),
    # a summary's problem entries tell the stay, and a line without a problem title is no entry
    ("# Prophylaxis: SQ heparin", "heparin", "discharge_summary", "assessment_plan", {}, False),
    ("Prophylaxis: SQ heparin", "heparin", "physician", "assessment_plan", {}, False),
    ("# Prophylaxis: SQ heparin", "heparin", "physician", "events", {}, False),
])
def test_a_drug_listed_bare_in_a_problem_entry(line, word, note_type, section, claim, bare):
    start = line.index(word)
    e = Entity("e1", 0, word, "medication", claim=claim_for("medication", drugs=[word.lower()], **claim),
               span=(start, start + len(word)))
    assert listed_bare(e, line, section, note_type) is bare


def test_a_bare_regimen_is_not_judged_on_its_absence():
    from verification_kit import FakeTools, assert_decided, entity, row, verify

    line = "# PPx: SC heparin, famotidine"
    bare = entity("famotidine", "medication", keys=("prescriptions:Famotidine",), drugs=["famotidine"],
                  span=(line.index("famotidine"), len(line)), section="assessment_plan")
    later = row("2199-02-08", None, key="prescriptions:Famotidine", table="prescriptions")
    assert_decided(verify(bare, FakeTools({}), line=line), "medications.record_in_window", "unverified")
    assert_decided(verify(bare, FakeTools({"prescriptions:Famotidine": [later]}), line=line),
                   "medications.record_in_window", "unverified")
    said = "# PPx: famotidine 20 mg IV given"
    dosed = entity("famotidine", "medication", keys=("prescriptions:Famotidine",), drugs=["famotidine"], dose=20.0,
                   span=(said.index("famotidine"), said.index("famotidine") + 10), section="assessment_plan")
    assert_decided(verify(dosed, FakeTools({}), line=said), "medications.record_in_window", "inconsistent", "missing")


@pytest.mark.parametrize("line, word, status", [
    ("UOP low overnight, furosemide 20 IV ordered for AM.", "furosemide", "plan"),
    ("Zolpidem 5 mg ordered for tonight.", "Zolpidem", "plan"),
    ("Furosemide 20 IV given this AM.", "Furosemide", "active"),
    ("# Pneumonia: narrow to ceftriaxone once cultures final", "ceftriaxone", "plan"),
    ("- avoid NSAIDs/ketorolac", "ketorolac", "plan"),
    # "add X" orders a drug to come, at a list item's head or after the entry's other drugs
    ("# Pain: oxycodone prn, add gabapentin at night", "gabapentin", "plan"),
    ("HTN: add amlodipine if SBP stays >160", "amlodipine", "plan"),
    ("BP soft, added vasopressin overnight", "vasopressin", "active"),
    # a change named in its base form is still to come; in its past form it was made
    ("# HTN: amlodipine, transition to PO metoprolol", "metoprolol", "plan"),
    ("# AF: switch to oral amiodarone when tolerating PO", "amiodarone", "plan"),
    ("# AF: transitioned to oral amiodarone yesterday", "amiodarone", "active"),
    # an order followed by its reassessment is a plan
    ("# Low UOP: 15 cc/hr; bolus 1 L NS and reassess", "NS", "plan"),
    ("# Low UOP: bolus 1 L NS given, UOP up", "NS", "active"),
])
def test_an_order_for_later_is_a_plan(line, word, status):
    assert _status(line, word, "nursing_system", "nursing") == status
