"""Known-answer tests of the microbiology rules (specimen, organism, susceptibilities)."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.corpus.records import TimeSpan


def _culture(day: str = "2199-02-03", **extra) -> dict:
    return row(f"{day} 06:00:00", None, key="microbiologyevents", table="microbiologyevents", item="BLOOD CULTURE",
               extra=extra)


def _bcx(**attributes) -> object:
    attributes.setdefault("specimen", "blood")
    return entity("BCx", "microbiology", keys=(), **attributes)


@pytest.mark.parametrize("micro, kind", [((), "missing"), ((_culture("2199-02-09"),), "contradiction")])
def test_specimen_in_window(micro, kind):
    assert_decided(verify(_bcx(), FakeTools(micro=micro)), "microbiology.specimen_in_window", "inconsistent", kind)


def test_collected():
    assert_decided(verify(_bcx(), FakeTools(micro=[_culture()])), "microbiology.collected", "consistent")


@pytest.mark.parametrize("organism, label", [("ESCHERICHIA COLI", "consistent"), ("STAPH AUREUS", "inconsistent")])
def test_organism_grown(organism, label):
    e = _bcx(organism="coli", organism_text="E. coli")
    assert_decided(verify(e, FakeTools(micro=[_culture(organism=organism)])), "microbiology.organism_grown", label)


@pytest.mark.parametrize("claims, pan, label", [([["levofloxacin", "S"]], False, "inconsistent"),
                                                ([["levofloxacin", "R"]], False, "consistent"),
                                                ([], True, "inconsistent")])
def test_susceptibility(claims, pan, label):
    e = _bcx(organism="coli", organism_text="E. coli", sensitivities=claims, pan_sensitive=pan)
    micro = [_culture(organism="E. COLI", antibiotic="LEVOFLOXACIN", interpretation="R")]
    assert_decided(verify(e, FakeTools(micro=micro)), "microbiology.susceptibility", label)


def test_antibiotic_interpretation():
    e = _bcx(organism="coli", organism_text="E. coli", antibiotics=["ceftriaxone"], susceptibility="S")
    micro = [_culture(organism="E. COLI", antibiotic="CEFTRIAXONE", interpretation="R")]
    assert_decided(verify(e, FakeTools(micro=micro)), "microbiology.antibiotic_interpretation", "inconsistent")


@pytest.mark.parametrize("attributes, micro", [({"negative": True}, [_culture(organism="E. COLI")]),
                                               ({"positive": True}, [_culture()])])
def test_result_sign(attributes, micro):
    assert_decided(verify(_bcx(**attributes), FakeTools(micro=micro)), "microbiology.result_sign", "inconsistent")


def test_undated_result_looks_back_for_the_specimen():
    e = _bcx(organism="coli", organism_text="E. coli")
    drawn_earlier = [_culture("2199-01-31", organism="E. COLI")]  # 2 days before the window, within the look-back
    assert_decided(verify(e, FakeTools(micro=drawn_earlier)), "microbiology.organism_grown", "consistent")


@pytest.mark.parametrize("rows, label", [
    ([dict(organism="STAPH AUREUS COAG +", antibiotic="OXACILLIN", interpretation="S")], "inconsistent"),  # MSSA
    ([dict(organism="STAPH AUREUS COAG +", antibiotic="OXACILLIN", interpretation="R")], "consistent"),
    ([dict(organism="STAPH AUREUS COAG +")], "consistent"),  # never tested: not judged
])
def test_mrsa_claims_oxacillin_resistance(rows, label):
    # "swab grew MRSA" as the extractor reads it: S. aureus, oxacillin R
    e = _bcx(organism="aureus", organism_text="MRSA", sensitivities=[["oxacillin", "R"]])
    micro = [_culture(**r) for r in rows]
    assert_decided(verify(e, FakeTools(micro=micro)), "microbiology.susceptibility", label)


BEDSIDE = "procedureevents_mv:225401"


@pytest.mark.parametrize("rows, attributes, label, rule", [
    # no wound specimen in the table, but the culture's collection charted at the bedside that day
    ([row("2199-02-03 10:00:00", None, key=BEDSIDE, table="procedureevents_mv")], {}, "consistent",
     "microbiology.specimen_in_window"),
    ([], {}, "inconsistent", "microbiology.specimen_in_window"),  # neither: missing
    # a stated result needs the microbiology rows: the bedside collection says nothing of growth
    ([row("2199-02-03 10:00:00", None, key=BEDSIDE, table="procedureevents_mv")], {"negative": True},
     "inconsistent", "microbiology.specimen_in_window"),
])
def test_a_collection_charted_as_a_bedside_procedure(rows, attributes, label, rule):
    from ehrlib.corpus.records import ItemRef
    e = entity("wound cx", "microbiology", keys=(), specimen="wound|swab", **attributes)
    items = [(ItemRef("procedureevents_mv", "Wound Culture", 225401), BEDSIDE)]
    assert_decided(verify(e, FakeTools({BEDSIDE: rows}), patient_items=items), rule, label)


@pytest.mark.parametrize("every, label", [(True, "inconsistent"), (False, "consistent")])
def test_a_result_of_all_cultures_covers_the_stay_so_far(every, label):
    # "All blood cultures no growth to date": one grew a week before the note's day; a later
    # culture, after the note, is not among them
    micro = [_culture("2199-01-31", organism="STAPH AUREUS COAG +"), _culture(), _culture("2199-02-10")]
    e = _bcx(negative=True, every=every)
    rule = "microbiology.result_sign" if every else "microbiology.collected"
    assert_decided(verify(e, FakeTools(micro=micro)), rule, label)


def test_all_cultures_so_far_end_at_the_statement():
    micro = [_culture(), _culture("2199-02-10", organism="ESCHERICHIA COLI")]  # grew only after the note
    assert_decided(verify(_bcx(negative=True, every=True), FakeTools(micro=micro)), "microbiology.collected",
                   "consistent")


@pytest.mark.parametrize("excepted, label", [((), "inconsistent"), ((("cefazolin", "R"),), "consistent")])
def test_pan_sensitive_excepts_the_resistances_the_report_states(excepted, label):
    e = _bcx(organism="klebsiella", organism_text="Klebsiella", sensitivities=[list(x) for x in excepted],
             pan_sensitive=True)
    micro = [_culture(organism="KLEBSIELLA PNEUMONIAE", antibiotic="CEFAZOLIN", interpretation="R"),
             _culture(organism="KLEBSIELLA PNEUMONIAE", antibiotic="MEROPENEM", interpretation="S")]
    assert_decided(verify(e, FakeTools(micro=micro)), "microbiology.susceptibility", label)


@pytest.mark.parametrize("time_text, drawn, label, rule", [
    ("this AM", "2199-02-03 07:30:00", "consistent", "microbiology.collected"),
    ("this AM", "2199-02-03 19:40:00", "inconsistent", "microbiology.collection_day_part"),  # drawn in the evening
    ("overnight", "2199-02-03 02:10:00", "consistent", "microbiology.collected"),
    ("this evening", "2199-02-03 00:00:00", "consistent", "microbiology.collected"),  # a date-only row: no hour
])
def test_a_collection_dated_by_a_part_of_the_day(time_text, drawn, label, rule):
    from ehrlib.pipeline.records import TimeSpan

    e = entity("blood cultures sent", "microbiology", keys=(), specimen="blood", time_text=time_text,
               window=TimeSpan("2199-02-02 12:00:00", "2199-02-03 23:59:59"))
    micro = [row(drawn, None, key="microbiologyevents", table="microbiologyevents", item="BLOOD CULTURE")]
    assert_decided(verify(e, FakeTools(micro=micro)), rule, label)


DAY_ONLY = TimeSpan("2199-02-03 00:00:00", "2199-02-03 23:59:59")


@pytest.mark.parametrize("drawn, rule, label", [
    ("2199-02-02 22:00:00", "microbiology.collected", "consistent"),           # sent the evening before
    ("2199-01-31 22:00:00", "microbiology.specimen_in_window", "inconsistent"),  # days before: no longer pending
])
def test_a_pending_culture_looks_back_one_day(drawn, rule, label):
    e = entity("BCx pending", "microbiology", keys=(), window=DAY_ONLY, specimen="blood", pending=True)
    micro = [row(drawn, None, key="microbiologyevents", table="microbiologyevents", item="BLOOD CULTURE")]
    assert_decided(verify(e, FakeTools(micro=micro)), rule, label)


def test_a_susceptibility_leaves_its_cultures_date_to_the_culture():
    micro = [_culture("2199-02-09", organism="STAPH AUREUS COAG +", antibiotic="OXACILLIN", interpretation="S")]
    claim = dict(specimen="blood", organism="aureus", organism_text="MSSA", sensitivities=[["oxacillin", "S"]])
    culture = entity("BCx", "microbiology", keys=(), shown="MSSA (oxacillin S)", **claim)
    assert_decided(verify(culture, FakeTools(micro=micro)), "microbiology.specimen_in_window", "inconsistent")
    drug = entity("oxacillin", "microbiology", keys=(), shown="S", **claim)
    v = verify(drug, FakeTools(micro=micro))
    assert_decided(v, "microbiology.specimen_in_window", "unverified")
    assert "culture statement" in v.reason


def test_pan_sensitive_leaves_the_organism_to_the_culture():
    micro = [_culture(organism="STAPH AUREUS COAG +")]
    claim = dict(specimen="blood", organism="coli", organism_text="E. coli", pan_sensitive=True)
    assert_decided(verify(entity("BCx", "microbiology", keys=(), shown="grew E. coli", **claim),
                          FakeTools(micro=micro)), "microbiology.organism_grown", "inconsistent")
    assert_decided(verify(entity("pan-sensitive", "microbiology", keys=(), shown="pan-sensitive", **claim),
                          FakeTools(micro=micro)), "microbiology.organism_grown", "unverified")
