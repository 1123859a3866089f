"""Known-answer tests of the finding rules (categorical exam states, edema, data-driven findings)."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, assert_outcome, entity, row, spanned, verify

from ehrlib.pipeline.offline.findings_data import DATA_CONCEPT
from ehrlib.pipeline.offline.verification.findings import pitting_grade


def _charted(*values: str) -> FakeTools:
    return FakeTools({"chartevents:1": [row(f"2199-02-03 {8 + i:02d}:00:00", None, value=v) for i,
                                        v in enumerate(values)]})


@pytest.mark.parametrize("charted, label", [("Soft Nontender", "consistent"), ("Firm", "inconsistent")])
def test_charted_state(charted, label):
    e = entity("Abd", "finding", shown="soft", concept="abdomen")
    assert_decided(verify(e, _charted(charted)), "findings.charted_state", label)


def test_charted_state_with_other_words_is_not_contradicted():
    e = entity("Abd", "finding", shown="soft", concept="abdomen")
    assert_decided(verify(e, _charted("Obese")), "findings.charted_state", "consistent")


def test_no_known_state():
    e = entity("Abd", "finding", shown="scaphoid", concept="abdomen")
    assert_decided(verify(e, _charted("Soft")), "findings.no_known_state", "consistent")


def test_pitting_grade():
    e = entity("edema", "finding", shown="3+ pitting", concept="edema", grade="3+")
    assert_decided(verify(e, _charted("1+")), "findings.pitting_grade", "inconsistent", "contradiction")
    assert pitting_grade("4 mm") == "2" and pitting_grade("Trace") == "0" and pitting_grade("none") is None


@pytest.mark.parametrize("negated, charted, label", [
    (True, "Trace", "inconsistent"),    # "no edema", trace charted
    (True, "None", "consistent"),
    (False, "2+", "consistent"),
])
def test_edema_presence(negated, charted, label):
    e = entity("edema", "finding", shown="" if negated else "edema", concept="edema", negated=negated)
    assert_decided(verify(e, _charted(charted)), "findings.edema_presence", label)


@pytest.mark.parametrize("charted, label", [(("Warm, Dry",), "consistent"), (("Cool",), "inconsistent"),
                                            (("Pink",), "consistent")])
def test_data_value(charted, label):
    e = entity("Skin", "finding", shown="warm dry", concept=DATA_CONCEPT)
    assert_decided(verify(e, _charted(*charted)), "findings.data_value", label)


# --- attributes of a finding on the stated side (findings.attribute_value) -----------------------

def _sided(text: str, concept: str, words: str, charted: dict[str, tuple[str, ...]]):
    from dataclasses import replace

    from ehrlib.corpus.records import ItemRef

    keys = tuple(f"chartevents:{i + 1}" for i in range(len(charted)))
    e = replace(entity(text, "finding", keys=keys, shown=words.split()[-1], concept=concept, words=words),
                items=tuple(ItemRef("chartevents", label, i + 1) for i, label in enumerate(charted)))
    tools = FakeTools({k: [row(f"2199-02-03 {8 + j:02d}:00:00", None, value=v, key=k) for j, v in enumerate(vals)]
                       for k, vals in zip(keys, charted.values(), strict=True)})
    return verify(e, tools)


@pytest.mark.parametrize("text, concept, words, label", [
    ("R pupil 5mm", "pupil_size", "right 5mm", "consistent"),       # the right pupil was 5 mm
    ("L pupil 5mm", "pupil_size", "left 5mm", "inconsistent"),      # the left one was 3 mm
    ("pupils 3-4 mm", "pupil_size", "3-4 mm", "consistent"),        # a range by either end
    ("L sluggish", "pupil_response", "left sluggish", "consistent"),
    ("R brisk", "pupil_response", "right brisk", "inconsistent"),   # the right pupil was non-reactive
])
def test_attribute_value_on_the_stated_side(text, concept, words, label):
    charted = ({"Pupil Size Right": ("5 mm",), "Pupil Size Left": ("3 mm",)} if concept == "pupil_size" else
               {"Pupil Response Right": ("Non-reactive",), "Pupil Response Left": ("Sluggish",)})
    assert_decided(_sided(text, concept, words, charted), "findings.attribute_value", label)


def test_attribute_value_without_charted_values_is_left_to_the_other_rules():
    v = _sided("pupils 3mm", "pupil_size", "3mm", {"Pupil Size Right": ("",)})
    assert v.rule_id != "findings.attribute_value"


@pytest.mark.parametrize("concept, text, shown, negated, charted, label", [
    ("ventilator_mode", "CPAP+PS", "CPAP+PS at 0400", False, "CPAP/PSV", "consistent"),
    ("ventilator_mode", "A/C", "A/C", False, "CPAP+PS", "inconsistent"),       # a spontaneous mode was charted
    ("ectopy", "rare PVCs", "rare PVCs", False, "PVC's", "consistent"),
    ("ectopy", "occasional PVCs", "occasional PVCs", False, "None", "inconsistent"),
    ("ectopy", "ectopy", "ectopy", True, "None", "consistent"),                # "no ectopy"
    ("gcs_eye", "opens eyes to voice", "opens eyes to voice", False, "To Speech", "consistent"),
    ("gcs_eye", "opens eyes to voice", "opens eyes to voice", False, "Spontaneously", "inconsistent"),
])
def test_charted_state_vocabularies(concept, text, shown, negated, charted, label):
    e = entity(text, "finding", shown=shown, concept=concept, negated=negated)
    assert_decided(verify(e, _charted(charted)), "findings.charted_state", label)


@pytest.mark.parametrize("words, charted, label", [("7.5mm", "7.5mm", "consistent"), ("7.5mm", "8mm", "inconsistent"),
                                                   ("22 cm at the lip", "22cm", "consistent")])
def test_attribute_value_as_a_number(words, charted, label):
    concept = "ett_mark" if "cm" in words else "ett_size"
    v = _sided("ETT", concept, words, {"ETT Size (ID)" if concept == "ett_size" else "ETT Mark (cm)": (charted,)})
    assert_decided(v, "findings.attribute_value", label)


def test_no_eye_opening_to_pain_states_none():
    e = entity("no eye opening to pain", "finding", shown="no eye opening to pain", concept="gcs_eye")
    assert_decided(verify(e, _charted("None")), "findings.charted_state", "consistent")


@pytest.mark.parametrize("charted, label", [("Aerosol-cool", "consistent"), ("Nasal cannula", "inconsistent")])
def test_aerosol_mask_is_charted_as_aerosol(charted, label):
    e = entity("AEROSOL MASK", "finding", shown="AEROSOL MASK AT 2200", concept="o2_device")
    assert_decided(verify(e, _charted(charted)), "findings.charted_state", label)


# --- site statements over every side they name (findings.site_value) ------------------------------

@pytest.mark.parametrize("text, words, charted, label", [
    # both pulses weak on each side: consistent; Doppler and absent on the two sides contradict "palpable"
    ("weakly palpable DP pulses", "weakly palpable", {"Dorsal PedPulse L": ("Weak Palpable",),
                                                       "Dorsal PedPulse R": ("Weak Palpable",)}, "consistent"),
    ("palpable DP pulses", "palpable", {"Dorsal PedPulse [Left]": ("Doppler",),
                                        "Dorsal PedPulse [Right]": ("Absent",)}, "inconsistent"),
    # "clear throughout": met by a clear lobe; contradicted when every lobe charts other sounds
    ("LS clear throughout", "clear", {"RUL Lung Sounds": ("Clear",), "LLL Lung Sounds": ("Rhonchi",)},
     "consistent"),
    ("LS clear throughout", "clear", {"RUL Lung Sounds": ("Coarse",), "LLL Lung Sounds": ("Rhonchi",)},
     "inconsistent"),
    # colour and consistency each on its own item; values the class does not oppose make no claim
    ("sputum thick, tan", "thick, tan", {"Sputum Consistency": ("Thick",), "Sputum Color": ("Yellow",)},
     "consistent"),
    ("calm", "calm", {"Riker-SAS Scale": ("Sedated",)}, "consistent"),
])
def test_site_value(text, words, charted, label):
    from dataclasses import replace

    from ehrlib.corpus.records import ItemRef
    from ehrlib.pipeline.offline.finding_sites import SITE_CONCEPT

    keys = tuple(f"chartevents:{i + 1}" for i in range(len(charted)))
    e = replace(entity(text, "finding", keys=keys, shown=words, concept=SITE_CONCEPT),
                items=tuple(ItemRef("chartevents", lab, i + 1) for i, lab in enumerate(charted)))
    tools = FakeTools({k: [row(f"2199-02-03 {8 + j:02d}:00:00", None, value=v, key=k) for j, v in enumerate(vals)]
                       for k, vals in zip(keys, charted.values(), strict=True)})
    v = verify(e, tools)
    assert_decided(v, "findings.site_value", label, "contradiction" if label == "inconsistent" else None)


@pytest.mark.parametrize("text, words, label", [
    ("crackles", "crackles at the R base", "consistent"),   # the right lower lobe has crackles
    ("LS", "LS clear at both bases", "inconsistent"),        # the lower lobes were charted only with crackles
    ("LS", "LS clear in the upper fields", "consistent"),    # the upper lobes were clear
    ("crackles", "crackles in the upper fields", "inconsistent"),  # not where the note puts them
])
def test_site_state_judges_the_lobes_a_vocabulary_finding_names(text, words, label):
    from dataclasses import replace

    from ehrlib.corpus.records import ItemRef

    charted = {"RUL Lung Sounds": ("Clear",), "LUL Lung Sounds": ("Clear",), "RLL Lung Sounds": ("Crackles",),
               "LLL Lung Sounds": ("Crackles",)}
    keys = tuple(f"chartevents:{i + 1}" for i in range(len(charted)))
    e = replace(entity(text, "finding", keys=keys, shown=words, concept="lung_sounds", words=words),
                items=tuple(ItemRef("chartevents", lab, i + 1) for i, lab in enumerate(charted)))
    tools = FakeTools({k: [row(f"2199-02-03 {8 + j:02d}:00:00", None, value=v, key=k) for j, v in enumerate(vals)]
                       for k, vals in zip(keys, charted.values(), strict=True)})
    assert_decided(verify(e, tools), "findings.site_state", label)


@pytest.mark.parametrize("line, text, label", [
    ("# AF: rate ok, cont heparin gtt.", "AF", "unverified"),          # a problem heading names the diagnosis
    ("PMH: CHF, AF on coumadin, DM2", "AF", "unverified"),             # a history list
    ("- heparin gtt for afib, INR 1.4", "afib", "unverified"),         # a drug's indication
    ("CV: in AF with RVR overnight.", "AF", "inconsistent"),            # placed in it: the current rhythm
    ("CV: AF on monitor, HR 70-110.", "AF", "inconsistent"),
    ("Rhythm: AF 110s.", "AF", "inconsistent"),
    ("Heart rhythm: rate-controlled AF", "Heart rhythm", "inconsistent"),  # the statement names the rhythm
    ("# AFib: currently in AF with RVR.", "AFib", "inconsistent"),    # the heading's own line places it
])
def test_a_rhythm_named_as_a_diagnosis_is_not_the_current_rhythm(line, text, label):
    word = "afib" if "afib" in line else "AF"
    e = entity(text, "finding", shown=word, concept="heart_rhythm", span=spanned(line, text))
    v = verify(e, _charted("SR (Sinus Rhythm)", "ST (Sinus Tachycardia)"), line=line)
    assert_outcome(v, "findings.charted_state", label, "as a diagnosis")


def test_sinus_rhythm_is_judged_wherever_it_is_named():
    line = "# Rhythm: NSR, cont metoprolol."
    e = entity("NSR", "finding", shown="NSR", concept="heart_rhythm", span=spanned(line, "NSR"))
    assert_decided(verify(e, _charted("AF (Atrial Fibrillation)"), line=line), "findings.charted_state",
                   "inconsistent")
