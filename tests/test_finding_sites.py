"""Known answers for site statements (finding_sites): a charted body site named in shorthand
with a value of its class, aligned to every item of the patient its sides name.
"""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.finding_sites import SITE_CONCEPT, site_statements
from ehrlib.pipeline.offline.verification.findings import judge_site_finding
from ehrlib.pipeline.records import Entity

METAVISION = ["Dorsal PedPulse L", "Dorsal PedPulse R", "PostTib. Pulses L", "PostTib. Pulses R", "Radial Pulse R",
              "RUL Lung Sounds", "RLL Lung Sounds", "LUL Lung Sounds", "LLL Lung Sounds", "Sputum Color",
              "Sputum Consistency", "Sputum Amount", "Urine Color", "Urine Appearance", "GCS - Motor Response",
              "GCS - Eye Opening", "Riker-SAS Scale", "Oral Cavity", "Flatus", "Stool Guaiac", "Turn",
              "Family Communication", "RL Strength/Movement", "LL Strength/Movement", "RU Strength/Movement",
              "LU Strength/Movement"]
CAREVUE = ["Dorsal PedPulse [Right]", "Dorsal PedPulse [Left]", "PostTib. Pulses [Right]", "PostTib. Pulses [Left]",
           "RLL Lung Sounds", "LLL Lung Sounds", "RUL Lung Sounds", "LUL Lung Sounds", "Sputum [Color]",
           "Sputum [Amount]", "Urine [Color]", "Motor Response", "Eye Opening", "LL Strength/Movement",
           "RL Strength/Movement", "RU Strength/Movement", "LU Strength/Movement"]


def _items(labels):
    return [(ItemRef("chartevents", lab, i), f"chartevents:{i}") for i, lab in enumerate(labels)]


def _stated(line: str, labels=METAVISION) -> list[tuple[str, list[str]]]:
    return [(line[s.start:s.end], sorted(it.label or "" for it, _ in s.items))
            for s in site_statements(line, _items(labels))]


@pytest.mark.parametrize("line, expected", [
    # physician exam template, MetaVision labels: "DP/PT" names both pulses, no side: both sides
    ("Ext: trace edema, weakly palpable DP/PT pulses", [("weakly palpable DP/PT pulses", [
        "Dorsal PedPulse L", "Dorsal PedPulse R", "PostTib. Pulses L", "PostTib. Pulses R"])]),
    # terse nursing: one side named
    ("CV: L DP doppler only", [("DP doppler", ["Dorsal PedPulse L"])]),
    # "PT" is a pulse only with a pulse value right next to it
    ("Pedal pulses strong, faint PT", [("Pedal pulses strong", ["Dorsal PedPulse L", "Dorsal PedPulse R"]),
                                       ("faint PT", ["PostTib. Pulses L", "PostTib. Pulses R"])]),
    ("Seen by PT today, tolerated well", []),
    # lung fields: bases are the lower lobes, apices / upper fields the upper ones, codes name one lobe
    ("Resp: rhonchi in upper fields, decreased at the bases", [
        ("rhonchi in upper fields", ["LUL Lung Sounds", "RUL Lung Sounds"]),
        ("decreased at the bases", ["LLL Lung Sounds", "RLL Lung Sounds"])]),
    ("Lungs: crackles RLL", [("crackles RLL", ["RLL Lung Sounds"])]),
    ("bibasilar rales", [("bibasilar rales", ["LLL Lung Sounds", "RLL Lung Sounds"])]),
    # limbs: codes and "any extremity"
    ("Neuro: no movement of R leg, moves LUE", [("no movement of R leg", ["RL Strength/Movement"]),
                                               ("moves LUE", ["LU Strength/Movement"])]),
    ("Does not move any extremity to command", [("Does not move any extremity", [
        "LL Strength/Movement", "LU Strength/Movement", "RL Strength/Movement", "RU Strength/Movement"])]),
    # a value class picks the item of a site that charts several (colour vs consistency), and a
    # following comma phrase of values only continues the statement
    ("Suctioned for thick tan sputum, moderate", [("thick tan sputum, moderate", [
        "Sputum Amount", "Sputum Color", "Sputum Consistency"])]),
    ("Foley draining pale yellow urine", [("pale yellow urine", ["Urine Color"])]),
    ("Urine cloudy w/ sediment", [("Urine cloudy w/ sediment", ["Urine Appearance"])]),
    # observations whose value names the item
    ("Neuro: E3, M5, localizes to noxious stimuli", [("E3", ["GCS - Eye Opening"]), ("M5", ["GCS - Motor Response"]),
                                                     ("localizes", ["GCS - Motor Response"])]),
    ("Pt cooperative and calm after haldol", [("cooperative and calm", ["Riker-SAS Scale"])]),
    ("Gen: sedated on propofol, calm (SAS 4)", [("calm (SAS 4)", ["Riker-SAS Scale"])]),  # an aside: one statement
    ("white plaques c/w thrush on tongue", [("thrush", ["Oral Cavity"])]),
    ("GI: +flatus, stool heme neg", [("+flatus", ["Flatus"]), ("heme neg", ["Stool Guaiac"])]),
    ("Skin: repositioned every 2 hrs, heels off bed", [("repositioned", ["Turn"])]),
    # a site named with no value of its class, or one the patient has no item for: no statement
    ("Lungs: see CXR", []),
    # an observation word as the reason or the time of something else is no observation
    ("Got haloperidol 2 mg IV for agitation", []),
    ("Vomited after turning, zofran given", []),
    ("Cough strong, able to clear secretions", []),
    ("Sputum sent for culture", []),
    ("Suctioned for copious oral secretions", []),  # oral or tracheal: not the sputum items
])
def test_site_statements_metavision(line, expected):
    assert _stated(line) == expected


def test_carevue_labels_and_missing_items():
    assert _stated("Ext: palpable DP/PT pulses bilat", CAREVUE) == [("palpable DP/PT pulses bilat", [
        "Dorsal PedPulse [Left]", "Dorsal PedPulse [Right]", "PostTib. Pulses [Left]", "PostTib. Pulses [Right]"])]
    assert _stated("diminished at R base", CAREVUE) == [("diminished at R base", ["RLL Lung Sounds"])]
    assert _stated("E4 M6", CAREVUE) == [("E4", ["Eye Opening"]), ("M6", ["Motor Response"])]
    # the patient has no consistency item: only the colour is a statement
    assert _stated("sputum thick, blood tinged", CAREVUE) == [("sputum thick, blood tinged", ["Sputum [Color]"])]
    assert _stated("radial pulse weak", CAREVUE) == []  # no radial item charted for this patient


def _entity(value: str) -> Entity:
    return Entity(entity_id="L1:0", line=1, text=value, kind="finding", segment=0, value=value,
                  claim=Claim(concept=SITE_CONCEPT))


@pytest.mark.parametrize("value, charted, expected", [
    ("weakly palpable", {"Dorsal PedPulse L": ["Weak Palpable"], "Dorsal PedPulse R": ["Easily Palpable"]}, True),
    ("palpable", {"Dorsal PedPulse [Left]": ["Doppler"], "Dorsal PedPulse [Right]": ["Easily Palpable"]}, True),
    ("palpable", {"Dorsal PedPulse [Left]": ["Doppler"], "Dorsal PedPulse [Right]": ["Absent"]}, False),
    ("diminished", {"RLL Lung Sounds": ["Diminished", "Clear"], "LLL Lung Sounds": ["Crackles"]}, True),
    ("clear", {"RUL Lung Sounds": ["Clear"], "LLL Lung Sounds": ["Rhonchi", "Diminished"]}, True),  # either lobe
    ("clear", {"RLL Lung Sounds": ["Crackles"], "LLL Lung Sounds": ["Rhonchi", "Diminished"]}, False),
    ("coarse", {"RUL Lung Sounds": ["Clear"], "LLL Lung Sounds": ["Rhonchi"]}, True),  # coarse sounds are rhonchi
    ("coarse", {"RUL Lung Sounds": ["Clear"], "LLL Lung Sounds": ["Clear"]}, False),
    ("thick, blood tinged", {"Sputum Consistency": ["Thick"], "Sputum Color": ["Yellow"]}, True),
    ("thin", {"Sputum Consistency": ["Thick"]}, False),
    ("passing flatus", {"Flatus": ["Negative"]}, False),
    ("neg", {"Stool Guaiac": ["Negative"]}, True),
    ("M6", {"Motor Response": ["6 Obeys Commands"]}, True),
    ("E1", {"GCS - Eye Opening": ["Spontaneously"]}, False),
    ("calm", {"Riker-SAS Scale": ["Sedated"]}, None),  # neither the same state nor an excluding one
    ("moves", {"RL Strength/Movement": ["Lifts and Holds"]}, True),
    ("no movement", {"LL Strength/Movement": ["Moves on Bed"]}, False),
    ("yellow", {"Urine Color": []}, None),  # nothing charted in the window: no claim
])
def test_judge_site_finding(value, charted, expected):
    ok, reason, _ = judge_site_finding(_entity(value), [(k, [{"value": v} for v in vs]) for k, vs in charted.items()])
    assert ok is expected, reason


def test_a_heading_over_a_site_statement_gives_way_to_it():
    from ehrlib.pipeline.offline.findings_data import superseded
    from ehrlib.pipeline.records import Segment

    items = _items(METAVISION)
    lobes = tuple(k for it, k in items if "Lung" in (it.label or ""))
    line = "Lungs: faint rhonchi at R base. Rhonchi upper lobes, clear at bases"

    def finding(text: str, start: int, end: int) -> Entity:
        return Entity(entity_id=f"L0:{start}", line=0, text=text, kind="finding", segment=0, value=line[start:end],
                      claim=Claim(concept="lung_sounds"), item_keys=lobes, span=(start, end))
    heading, own = finding("Lungs", 0, 30), finding("Rhonchi", 32, 67)
    seg = Segment(0, 0, 0, "x", "exam")
    # "Lungs:" (a modifier may follow) names no lobe of its own; "Rhonchi upper lobes" is a
    # statement whose words run on into the next phrase
    assert superseded([line], seg, items, [heading, own]) == [own]
    assert superseded([line], Segment(0, 0, 0, "x", "hpi"), items, [heading]) == [heading]
