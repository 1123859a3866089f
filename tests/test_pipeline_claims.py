"""Known answers for the typed claims (ehrlib.pipeline.claims): construction, validation,
the on-disk form and the flat form of schema version 2."""
from __future__ import annotations

import json

import pytest

from ehrlib.corpus.records import RecordError, to_dict
from ehrlib.pipeline.claims import (
    CLAIM_TYPES,
    BloodPressure,
    CheckEhrClaim,
    Claim,
    FindingClaim,
    InterpretationClaim,
    MedicationClaim,
    MicrobiologyClaim,
    NumericClaim,
    OracleClaim,
    ProcedureClaim,
    Reading,
    Trend,
    claim_for,
    claim_from_attributes,
    claim_from_dict,
)
from ehrlib.pipeline.records import Entity

#: one claim of every type, as extraction builds them
EXAMPLES: list[Claim] = [
    Claim(concept="diagnosis", section="discharge_diagnosis"),
    NumericClaim(concept="heart_rate", reading=Reading(value=88.0, min=80.0, max=110.0)),
    NumericClaim(concept="blood_pressure", bp=BloodPressure(
        systolic=Reading(value=110.0, min=95.0, max=130.0), diastolic=Reading(value=60.0, min=50.0, max=80.0),
        mean=Reading(value=75.0, min=62.0, max=90.0))),
    NumericClaim(concept="creatinine", reading=Reading(value=1.2),
                 trend=Trend(direction="down", word="improved", series=(2.3, 1.8, 1.2))),
    NumericClaim(concept="urine_output", reading=Reading(value=1500.0), unit="mL", per_day=True, approx=True),
    NumericClaim(concept="lactate", trend=Trend(direction="down", word="cleared", normalized=True)),
    InterpretationClaim(concept="tachycardia", criterion="tachycardia", state="tachycardic to",
                        reading=Reading(value=120.0, min=120.0, max=129.0)),
    InterpretationClaim(concept="fever", criterion="fever", state="afebrile", negated=True, duration_days=1.0),
    FindingClaim(concept="edema", words="1+ pitting edema", grade="1+"),
    MedicationClaim(concept="drug", drugs=("furosemide",), dose=40.0, dose_unit="mg", route="IV", action="given"),
    MedicationClaim(concept="drug", drugs=("norepinephrine",), rate=0.08, rate_unit="mcg/kg/min", infusion=True),
    MedicationClaim(concept="drug", drugs=("potassium chloride",), action="repleted", repletes="potassium"),
    MedicationClaim(concept="transfusion", drugs=("transfusion",), units=2.0),
    ProcedureClaim(concept="central_line", action="placement", side="r"),
    MicrobiologyClaim(concept="culture", specimen="blood", organism="staph", organism_text="GPC in clusters",
                      sensitivities=(("vancomycin", "S"),)),
    MicrobiologyClaim(concept="culture", specimen="urine", negative=True),
    CheckEhrClaim(entity_type="lab", tables=("labevents",), time_filter="date", time="2150-01-02"),
    OracleClaim(gold_label="inconsistent", gold_kind="missing", turns=3),
]


@pytest.mark.parametrize("claim", EXAMPLES, ids=lambda c: f"{type(c).__name__}:{c.concept}")
def test_on_disk_form_round_trips_through_json(claim: Claim) -> None:
    data = json.loads(json.dumps(to_dict(claim)))
    assert data["type"] == claim.TYPE
    assert claim_from_dict(data) == claim


#: entities' ``attributes`` as schema version 2 wrote them, and the claim each one is
FLAT: list[tuple[str, dict, Claim]] = [
    ("measurement", {"value": 2.0, "unit": "L/min", "concept": "o2_flow", "section": "vitals"},
     NumericClaim(concept="o2_flow", section="vitals", reading=Reading(value=2.0), unit="L/min")),
    ("trend", {"series": [2.3, 1.8, 1.2], "value": 1.2, "direction": "down", "trend_word": "improved",
               "concept": "creatinine"},
     EXAMPLES[3].placed("creatinine", None)),
    ("trend", {"direction": "down", "trend_word": "cleared", "normalized": True, "concept": "lactate"},
     EXAMPLES[5]),
    ("output", {"value": 1500.0, "unit": "mL", "per_day": True, "approx": True, "concept": "urine_output"},
     EXAMPLES[4]),
    ("interpretation", {"criterion": "fever", "negated": True, "state": "afebrile", "duration_days": 1.0,
                        "concept": "fever"}, EXAMPLES[7]),
    ("finding", {"words": "1+ pitting edema", "negated": False, "grade": "1+", "concept": "edema"}, EXAMPLES[8]),
    ("infusion", {"drugs": ["norepinephrine"], "rate": 0.08, "rate_unit": "mcg/kg/min", "infusion": True,
                  "negated": False, "concept": "drug"}, EXAMPLES[10]),
    ("medication", {"drugs": ["potassium chloride"], "action": "repleted", "negated": False, "for": "potassium",
                    "concept": "drug"}, EXAMPLES[11]),
    ("procedure", {"negated": False, "action": "placement", "side": "r", "concept": "central_line"}, EXAMPLES[13]),
    ("microbiology", {"specimen": "blood", "organism": "staph", "organism_text": "GPC in clusters",
                      "sensitivities": [["vancomycin", "S"]], "concept": "culture"}, EXAMPLES[14]),
    ("event", {"entity_type": "lab", "tables": ["labevents"], "time_filter": "date", "time": "2150-01-02"},
     EXAMPLES[16]),
    ("finding", {"gold_label": "inconsistent", "kind": "missing", "turns": 3}, EXAMPLES[17]),
    ("diagnosis", {"concept": "diagnosis", "section": "discharge_diagnosis"}, EXAMPLES[0]),
]


@pytest.mark.parametrize("kind,flat,expected", FLAT, ids=lambda x: x if isinstance(x, str) else "")
def test_flat_form_of_schema_2_is_read(kind: str, flat: dict, expected: Claim) -> None:
    assert claim_from_attributes(kind, flat) == expected
    assert claim_from_dict(flat, kind) == expected  # an old record (no "type") is read by its entity kind


def test_flat_form_matches_what_schema_2_wrote() -> None:
    bp = claim_for("range", systolic=110.0, diastolic=60.0, mean=75.0, systolic_min=95.0, diastolic_min=50.0,
                   systolic_max=130.0, diastolic_max=80.0, mean_min=62.0, mean_max=90.0, concept="blood_pressure")
    assert isinstance(bp, NumericClaim) and bp.bp is not None
    assert (bp.bp.systolic, bp.bp.mean) == (Reading(110.0, 95.0, None, 130.0), Reading(75.0, 62.0, None, 90.0))
    assert bp.reading == Reading() and bp.has_numbers and bp.bp.has_bounds
    decades = claim_for("range", systolic_min=80.0, systolic_min_hi=89.0, systolic_max_lo=140.0, systolic_max=149.0)
    assert decades.bp == BloodPressure(systolic=Reading(None, 80.0, 89.0, 149.0, 140.0))
    med = claim_for("medication", drugs=["vancomycin"], action="started", negated=False, concept="drug")
    assert med == MedicationClaim(concept="drug", drugs=("vancomycin",), action="started")
    assert claim_for("finding", concept="ls_data") == Claim(concept="ls_data")  # nothing parsed


def test_stated_is_the_compact_form() -> None:
    assert NumericClaim(concept="wbc", reading=Reading(value=20.0), unit="K/uL").stated() == {
        "concept": "wbc", "reading": {"value": 20.0}, "unit": "K/uL"}
    assert Claim().stated() == {}
    assert MicrobiologyClaim(specimen="blood", sensitivities=(("vancomycin", "S"),)).stated() == {
        "specimen": "blood", "sensitivities": [["vancomycin", "S"]]}


def test_trend_and_range_helpers() -> None:
    words_only = NumericClaim(trend=Trend(direction="down", word="downtrending"))
    assert not words_only.has_numbers
    assert Reading(min=80.0, max=110.0).has_bounds and not Reading(value=3.0).has_bounds
    assert Reading(value=3.6, max=4.0).scaled(1000) == Reading(value=3600.0, max=4000.0)


@pytest.mark.parametrize("build,message", [
    (lambda: Reading(value="20"), "'value' must be a number"),
    (lambda: Reading(value=True), "'value' must be a number"),
    (lambda: Reading(min=80.0, min_hi=70.0), "min_hi 70.0 is below min 80.0"),
    (lambda: Reading(max=80.0, max_lo=90.0), "max_lo 90.0 is above max 80.0"),
    (lambda: Trend(series=[1.0, 2.0]), "'series' must be a tuple"),
    (lambda: MedicationClaim(drugs=["vancomycin"]), "'drugs' must be a tuple of strings"),
    (lambda: MedicationClaim(drugs=("x",), dose="40"), "'dose' must be a number"),
    (lambda: ProcedureClaim(side="right"), "'side' must be 'r', 'l' or 'b'"),
    (lambda: MicrobiologyClaim(susceptibility="sensitive"), "'susceptibility' must be S, R or I"),
    (lambda: MicrobiologyClaim(sensitivities=(("vancomycin",),)), "(antibiotic, level) pairs"),
    (lambda: FindingClaim(negated="no"), "'negated' must be true or false"),
    (lambda: OracleClaim(gold_label="maybe"), "'gold_label' must be a label"),
    (lambda: claim_from_attributes("measurement", {"value": 1.0, "colour": "red"}), "unknown key(s) ['colour']"),
    (lambda: claim_from_dict({"type": "numeric", "reading": {"value": 1.0, "x": 2}}), "unknown field(s) ['x']"),
    (lambda: claim_from_dict({"type": "gossip"}), "unknown type 'gossip'"),
    (lambda: claim_from_dict(["value", 1.0]), "expected an object"),
])
def test_bad_claims_are_record_errors(build, message: str) -> None:
    with pytest.raises(RecordError) as err:
        build()
    assert message in str(err.value)


def test_every_type_is_registered_and_frozen() -> None:
    assert set(CLAIM_TYPES) == {type(c).TYPE for c in EXAMPLES}
    with pytest.raises(AttributeError):
        EXAMPLES[1].concept = "x"  # type: ignore[misc]


def test_entity_carries_a_claim_and_serialises_it_typed() -> None:
    e = Entity("e1", 3, "WBC", "measurement", claim=claim_for("measurement", value=20.0, concept="wbc"))
    assert Entity("e2", 3, "x", "event").claim == Claim()
    data = to_dict(e)
    assert "attributes" not in data and data["claim"]["type"] == "numeric"
    assert claim_from_dict(data["claim"]) == e.claim


def test_offline_entities_reach_stages_jsonl_with_their_claims(offline_note) -> None:
    from ehrlib.pipeline.rundir import STAGES_SCHEMA_VERSION, note_lines

    result = offline_note("claims-1", "Labs: WBC 14.2 -> 11.0, K 3.1, repleted\n"
                                      "lasix 40 mg IV x1. BCx GPC in clusters. afebrile")
    lines = [json.loads(x) for x in note_lines("t", result)["stages.jsonl"]]
    assert STAGES_SCHEMA_VERSION == 3 and all(r["schema_version"] == 3 for r in lines)
    written = [e for r in lines if r["stage"] == "note" for e in r["output"]["entities"]]
    assert written and len(written) == len(result.entities)
    for e, data in zip(result.entities, written, strict=True):
        assert claim_from_dict(data["claim"], data["kind"]) == e.claim
    claims = {type(e.claim) for e in result.entities}
    assert {NumericClaim, MedicationClaim, MicrobiologyClaim, InterpretationClaim} <= claims
    wbc = [e.claim for e in result.entities if e.claim.concept == "wbc"]
    # a series is one value claim per number, in the order written
    assert [c.reading.value for c in wbc if isinstance(c, NumericClaim)] == [14.2, 11.0]
    assert all(c.section is not None for c in wbc)  # extraction places the claim in its section


def test_an_entity_refuses_a_mapping_for_its_claim() -> None:
    with pytest.raises(RecordError, match="claim must be a claim record"):
        Entity("e1", 3, "WBC", "measurement", claim={"value": 20.0})  # type: ignore[arg-type]
