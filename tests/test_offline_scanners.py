"""Known answers for the finding, procedure, medication and microbiology scanners
(ehrlib.pipeline.offline.{exam_findings,procedures,medications,microbiology})."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _ms(text: str, drugs: tuple[str, ...] = ()):
    return find_mentions(text, 0, load_lexicon(), drugs, "other")


def test_rhythm_carries_its_rate() -> None:
    ms = _ms("ST 90s-120s")
    rate = [m for m in ms if m.concept == "heart_rate"]
    assert rate and rate[0].kind == "range" and (rate[0].claim.reading.min, rate[0].claim.reading.max) == (90, 129)


def test_self_describing_finding_stops_at_a_comma() -> None:
    ms = _ms("arouses to voice, not following commands")
    assert all("," not in (m.value or "") for m in ms if m.kind == "finding")


def test_hospital_day_is_not_dialysis_and_ct_needs_a_body_part() -> None:
    assert not [m for m in _ms("HD 3, doing well") if m.kind == "procedure"]
    assert [m.concept for m in _ms("CT head negative") if m.kind == "procedure"] == ["imaging_ct"]


def test_levo_is_levophed_with_a_rate_and_levofloxacin_otherwise() -> None:
    drug = {m.text: m.claim.drugs for m in _ms("levo 0.8 mcg/kg/min") if m.concept == "drug"}
    assert drug == {"levo": ("norepinephrine",)}
    drug = {m.text: m.claim.drugs for m in _ms("levo/flagyl started") if m.concept == "drug"}
    assert drug["levo"] != ("norepinephrine",)


def test_ambiguous_abbreviation_needs_an_infusion_context() -> None:
    assert [m.text for m in _ms("NS 1L bolus") if m.concept == "drug"] == ["NS"]
    assert not [m for m in _ms("seen by NS team") if m.concept == "drug"]


def test_culture_with_organism_and_negative() -> None:
    ms = _ms("BCx 2/4 GPC in clusters; UCx NGTD")
    cultures = [m for m in ms if m.kind == "microbiology"]
    assert len(cultures) == 2
    assert cultures[0].claim.organism is not None and cultures[1].claim.negative is True
