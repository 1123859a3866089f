"""Known-answer tests of procedure events named through the patient's own item dictionary."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.event_items import (
    EVENT_ITEM,
    event_forms,
    event_item_mentions,
    event_item_pairs,
    label_phrases,
    patient_event_items,
)

LABELS = ("Transthoracic Echo", "Pan Culture", "Blakemore Inserted", "Blakemore D/C", "EEG", "X-ray",
          "Magnetic Resonance Imaging", "Cardiac Cath", "OR Sent", "Chest Pain", "Fall",
          "Unplanned Extubation (patient-initiated)")
PAIRS = [(ItemRef("procedureevents_mv", label, str(i)), f"procedureevents_mv:{i}") for i, label in enumerate(LABELS)]
PAIRS.append((ItemRef("chartevents", "Heart Rhythm", "220048"), "chartevents:220048"))
FORMS = event_forms(patient_event_items(PAIRS))


@pytest.mark.parametrize("label, phrases", [
    ("Blakemore Inserted", [("Blakemore",)]),                     # the action word is the edge, not the name
    ("Unplanned Extubation (patient-initiated)", [("Unplanned", "Extubation")]),
    ("OR Sent", []),                                              # generic words only
    ("Fall", []),                                                 # one short common word
    ("EEG", [("EEG",)]),                                          # an acronym stands alone
    ("Dialysis - CRRT", [("Dialysis",), ("CRRT",)]),
])
def test_label_phrases(label, phrases):
    assert label_phrases(label) == phrases


@pytest.mark.parametrize("line, texts", [
    ("Echo: TTE this afternoon showed an EF of 35%.", ["TTE"]),   # the shipped abbreviation of the label
    ("Pan-cultured overnight for a fever of 102.", ["Pan-cultured"]),
    ("Minnesota-style Blakemore tube was put in by GI.", ["Blakemore"]),
    ("Portable x-ray at 0600 confirmed the tip.", ["x-ray"]),
    ("Went to the cath lab at noon.", ["cath lab"]),
    ("Plan: EEG tomorrow, MRI brain if still obtunded.", ["EEG", "MRI"]),
    ("Denies chest pain, fall risk precautions, or sent home.", []),
    ("eeg is not an acronym in lower case", []),
    ("CCU note, EEG#2: no seizures; EEG 11/3 normal", ["EEG"]),   # a day count, then a dated study
])
def test_mentions_of_the_patients_items(line, texts):
    found = event_item_mentions(line, 0, FORMS, [])
    assert [m.text for m in found] == texts
    assert all(m.kind == "procedure" and m.concept == EVENT_ITEM for m in found)


def test_taken_spans_win():
    line = "TTE done"
    assert event_item_mentions(line, 0, FORMS, [(0, 3)]) == []


def test_alignment_is_the_items_whose_phrase_the_mention_is():
    assert [k for _, k in event_item_pairs("Blakemore", PAIRS)] == ["procedureevents_mv:2", "procedureevents_mv:3"]
    assert [k for _, k in event_item_pairs("TTE", PAIRS)] == ["procedureevents_mv:0"]
    assert event_item_pairs("Heart Rhythm", PAIRS) == []  # only the procedure-event tables are the dictionary


def test_action_and_negation_come_from_the_words_around():
    (m,) = event_item_mentions("No TTE yet; pan culture deferred", 0, FORMS[:2], [])
    assert m.claim.negated
    (m,) = event_item_mentions("Blakemore placed at 0300", 0, FORMS, [])
    assert m.claim.action == "placed"


EDGES = ("Chest Tube Removed", "Temporary Pacemaker Wires Discontinued", "Transthoracic Echo")
EDGE_FORMS = event_forms(tuple((f"procedureevents_mv:{i}", label) for i, label in enumerate(EDGES)))


@pytest.mark.parametrize("line, texts", [
    ("Both chest tubes were pulled after the CXR.", ["chest tubes were pulled"]),  # the device and its removal verb
    ("Temporary pacemaker wires d/c'd on POD 4", ["Temporary pacemaker wires d/c'd"]),
    ("Chest tube to water seal, 40 cc out over the shift", []),                    # no removal of the tube
    ("Chest tubes put out 200 cc", []),
])
def test_a_label_naming_a_removal_is_the_device_and_a_removal_verb(line, texts):
    assert [m.text for m in event_item_mentions(line, 0, EDGE_FORMS, [])] == texts


def test_a_size_unit_after_a_number_may_be_written_short():
    pairs = [(ItemRef("procedureevents_mv", "16 Gauge", "1"), "procedureevents_mv:1"),
             (ItemRef("procedureevents_mv", "22 Gauge", "2"), "procedureevents_mv:2")]
    forms = event_forms(patient_event_items(pairs))
    texts = lambda line: [m.text for m in event_item_mentions(line, 0, forms, [])]  # noqa: E731
    assert texts("PIVs: 16g L AC and 22 ga R hand.") == ["16g", "22 ga"]
    assert texts("16 gauge placed.") == ["16 gauge"]
    assert texts("received 22 g of protein") == []  # a one-letter unit only joined to its number


PLACES = ("OR Sent", "OR Received", "Interventional Radiology", "Bronchoscopy", "Colonoscopy")
PLACE_PAIRS = [(ItemRef("procedureevents_mv", label, str(i)), f"procedureevents_mv:{i}")
               for i, label in enumerate(PLACES)]
PLACE_FORMS = event_forms(patient_event_items(PLACE_PAIRS))


@pytest.mark.parametrize("line, texts, labels", [
    # a move to a place is charted on leaving, the move back on return
    ("Went to the OR at 1400 for washout.", ["Went to the OR"], ["OR Sent"]),
    ("Returned from OR ~2100, extubated.", ["Returned from OR"], ["OR Received"]),
    ("back from the operating room at 0020", ["back from the operating room"], ["OR Received"]),
    ("Pt to IR this AM for a drain", ["to IR"], ["Interventional Radiology"]),
    ("intubated and taken\nto IR for embolization", ["to IR"], ["Interventional Radiology"]),  # verb on its own line
    # a move named as the time of something else, or as where the patient came from, is no event
    ("Pupils 3 mm (4 mm on return from OR)", [], []),
    ("Admitted from OR s/p Whipple, arrived 1500", [], []),
    # a lower-case "or" is a conjunction, never the place
    ("Continue cefepime or meropenem, to or from the floor", [], []),
    # a label's last word in the plural
    ("s/p two bronchoscopies and a colonoscopy", ["bronchoscopies", "colonoscopy"], ["Bronchoscopy", "Colonoscopy"]),
])
def test_places_and_plural_labels(line, texts, labels):
    found = event_item_mentions(line, 0, PLACE_FORMS, [])
    assert [m.text for m in found] == texts
    assert [it.label for m in found for it, _ in event_item_pairs(m.text, PLACE_PAIRS)] == labels
