"""Known answers for the nursing-assessment sites (finding_sites.yaml): neuro reflexes, seizure
activity, the GCS verbal response, secretions, stool, skin and safety items, and changes of
state written in one phrase."""
from __future__ import annotations

import pytest
from test_finding_sites import _entity, _stated

from ehrlib.pipeline.offline.verification.findings import judge_site_finding

METAVISION = ["Gag Reflex", "Cough Reflex", "Cough Effort", "Corneal Reflex Right", "Corneal Reflex Left",
              "Seizure Activity", "GCS - Verbal Response", "GCS - Eye Opening", "GCS - Motor Response",
              "Therapeutic Bed", "Cooling Device", "Cooling Device Status", "Family Communication", "Stool Color",
              "Stool Consistency", "Sputum Color", "Sputum Consistency", "Sputum Amount", "Pressure Ulcer Stage #1",
              "Urine Color", "Turn", "Cough Type", "Stool Management", "Anti Embolic Device",
              "Anti Embolic Device Status"]
CAREVUE = ["Anti-Embolism [Device]", "Anti-Embolism [Status]",
           "seizure pads", "Corneal Reflex [Right]", "Corneal Reflex [Left]", "Verbal Response", "Cooling [Device]",
           "Cooling [Status]", "Stool [Color]", "Stool [Consistency]", "Pressure Sore #1 [Stage]", "Sputum [Amount]"]


@pytest.mark.parametrize("line, expected", [
    # reflexes of a neuro check: one item each, the corneal reflex per side
    ("Neuro: corneals present bilaterally, gag weak", [
        ("corneals present bilaterally", ["Corneal Reflex Left", "Corneal Reflex Right"]),
        ("gag weak", ["Gag Reflex"])]),
    ("R corneal absent", [("corneal absent", ["Corneal Reflex Right"])]),
    ("no gag", [("no gag", ["Gag Reflex"])]),
    ("cough reflex intact", [("cough reflex intact", ["Cough Reflex"])]),
    ("Weak cough, unable to clear", [("Weak cough", ["Cough Effort"])]),  # the effort, not the reflex
    # seizure activity, not seizure precautions or medicines
    ("No seizures noted overnight", [("No seizures noted", ["Seizure Activity"])]),
    ("Focal seizure of L arm x2 min", [("Focal seizure", ["Seizure Activity"])]),
    ("Remains on seizure precautions; keppra given", []),
    # GCS components written as codes, not a rhythm's "VT"
    ("GCS 6 (E1, V1, M4)", [("E1", ["GCS - Eye Opening"]), ("V1", ["GCS - Verbal Response"]),
                            ("M4", ["GCS - Motor Response"])]),
    ("brief run of VT", []),
    # suctioned secretions are the sputum items; oral secretions are not
    ("Suctioned q2h for moderate amts of white secretions", [
        ("moderate amts of white secretions", ["Sputum Amount", "Sputum Color"])]),
    ("Copious oral secretions, suctioned with yankauer", []),
    # stool colour and consistency
    ("Small soft brown BM this AM", [("soft brown BM", ["Stool Color", "Stool Consistency"])]),
    ("Stool sent for C diff", []),
    # skin and safety
    ("Sacrum with stage III pressure ulcer, dressing changed", [
        ("stage III pressure ulcer", ["Pressure Ulcer Stage #1"])]),
    ("Pt on kinair bed, turned side to side", [("kinair bed", ["Therapeutic Bed"]), ("turned", ["Turn"])]),
    ("Cooling blanket applied for T 102", [("Cooling blanket applied", ["Cooling Device", "Cooling Device Status"])]),
    ("Family in to visit, questions answered", [("Family in to visit", ["Family Communication"])]),
    ("Daughter phoned, updated by RN", []),  # no family word: who called is not named as family
])
def test_nursing_sites(line, expected):
    assert _stated(line, METAVISION) == expected


def test_carevue_labels():
    assert _stated("seizure pads on", CAREVUE) == [("seizure pads on", ["seizure pads"])]
    assert _stated("bilat corneals intact", CAREVUE) == [("corneals intact", [
        "Corneal Reflex [Left]", "Corneal Reflex [Right]"])]
    assert _stated("Stool liquid, green", CAREVUE) == [
        ("Stool liquid, green", ["Stool [Color]", "Stool [Consistency]"])]


@pytest.mark.parametrize("line, expected", [
    # a change of state: each side is a statement of its own
    ("Suctioned for scant -> copious secretions", [("scant", ["Sputum Amount"]), ("copious", ["Sputum Amount"])]),
    ("Stool formed, then loose by evening", [("Stool formed", ["Stool Consistency"]),
                                             ("loose", ["Stool Consistency"])]),
    # a later state dated apart after a comma
    ("Gag intact at start of shift, absent by 0400", [("Gag intact", ["Gag Reflex"]), ("absent", ["Gag Reflex"])]),
    # a comma phrase of values only still continues the same statement
    ("Sputum thick, yellow", [("Sputum thick, yellow", ["Sputum Color", "Sputum Consistency"])]),
])
def test_changes_of_state(line, expected):
    assert _stated(line, METAVISION) == expected


@pytest.mark.parametrize("value, charted, expected", [
    ("absent", {"Gag Reflex": ["Impaired", "Absent"]}, True),
    ("intact", {"Corneal Reflex Right": ["Absent"], "Corneal Reflex Left": ["Impaired"]}, False),
    ("weak", {"Gag Reflex": ["Impaired"]}, True),
    ("no", {"Seizure Activity": ["None"]}, True),
    ("no", {"Seizure Activity": ["Focal"]}, False),
    ("generalized", {"Seizure Activity": ["General", "None"]}, True),
    ("V1", {"GCS - Verbal Response": ["No Response-ETT"]}, True),
    ("V1", {"Verbal Response": ["1.0 ET/Trach"]}, True),
    ("V5", {"GCS - Verbal Response": ["No Response"]}, False),
    ("stage 2", {"Pressure Ulcer Stage #1": ["Partial thickness skin loss through epidermis and/or dermis"]}, True),
    ("stage 2", {"Pressure Sore #1 [Stage]": ["Red, Unbroken"]}, False),
    ("stage 1", {"Pressure Ulcer Stage #1": ["Red; unbroken"]}, True),
    ("air", {"Therapeutic Bed": ["AtmosAir Mattress"]}, True),
    ("visited", {"Family Communication": ["Family Called"]}, None),  # another contact: no claim either way
    ("called", {"Family Communication": ["Family Called"]}, True),
    ("liquid, brown", {"Stool Consistency": ["Liquid"], "Stool Color": ["Golden"]}, True),
    ("formed", {"Stool Consistency": ["Liquid"]}, False),
    ("on", {"seizure pads": ["on"]}, True),
])
def test_judge_nursing_site(value, charted, expected):
    ok, reason, _ = judge_site_finding(_entity(value), [(k, [{"value": v} for v in vs]) for k, vs in charted.items()])
    assert ok is expected, reason


@pytest.mark.parametrize("line, expected", [
    # a device named by its kind: the kind is the charted value
    ("Soft formed stool per rectal tube", [("Soft formed stool", ["Stool Consistency"]),
                                           ("rectal tube", ["Stool Management"])]),
    ("Flexi-seal in place, draining", [("Flexi-seal", ["Stool Management"])]),
    ("Pneumoboots on, heels floated", [("Pneumoboots on", ["Anti Embolic Device", "Anti Embolic Device Status"])]),
    # a device after a volume is the output's source, a detail of the output statement
    ("Stool 300 cc via FMS", []),
    # the patient's own cough: its effort and its type, each item of its own
    ("Poor nonproductive cough", [("Poor nonproductive cough", ["Cough Effort", "Cough Type"])]),
    ("Cough reflex impaired", [("Cough reflex impaired", ["Cough Reflex"])]),  # the reflex, not the effort
])
def test_devices_and_cough(line, expected):
    assert _stated(line, METAVISION) == expected


def test_carevue_device_status():
    assert _stated("TEDs off for skin check", CAREVUE) == [
        ("TEDs off", ["Anti-Embolism [Device]", "Anti-Embolism [Status]"])]


@pytest.mark.parametrize("value, charted, expected", [
    ("mushroom cath", {"Stool Management": ["Mushroom Catheter"]}, True),
    ("colostomy", {"Stool Management": ["Flexiseal FMS"]}, None),  # another device: no claim either way
    ("SCDs on", {"Anti Embolic Device": ["Compression sleeve"], "Anti Embolic Device Status": ["On"]}, True),
    ("SCDs off", {"Anti Embolic Device Status": ["On"]}, False),
    ("weak", {"Cough Effort": ["Strong"]}, False),
    ("productive", {"Cough Type": ["Productive/Congested"]}, True),
    ("productive", {"Cough Type": ["Non-productive"]}, False),
])
def test_judge_devices_and_cough(value, charted, expected):
    ok, reason, _ = judge_site_finding(_entity(value), [(k, [{"value": v} for v in vs]) for k, vs in charted.items()])
    assert ok is expected, reason


INCISIONS = ["Incision Site #1", "Incision Site #2", "Incision Drainage #1", "Incision Drainage #2",
             "Incision Drainage Amount #1", "Incision Drainage Amount #2", "Incision Closure #1"]


def test_incision_statement_names_every_number():
    # the wound's number is told at verification by the charted sites: every number is named here
    assert _stated("Incisions: L flank incision with small serous drainage", INCISIONS) == [
        ("incision with small serous", ["Incision Drainage #1", "Incision Drainage #2", "Incision Drainage Amount #1",
                                        "Incision Drainage Amount #2", "Incision Site #1", "Incision Site #2"])]
    assert _stated("sternotomy approximated with staples", INCISIONS) == [
        ("sternotomy approximated with staples", ["Incision Closure #1", "Incision Site #1", "Incision Site #2"])]
