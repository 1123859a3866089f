"""The verification engine: every rule is registered once, states a principle, routes
where it should, and has a known-answer case in this test suite."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from verification_kit import FakeTools, entity

from ehrlib.pipeline.offline.findings_data import DATA_CONCEPT
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification import ALL_RULES, chain_for
from ehrlib.pipeline.offline.verification.session import Case, Session, decide, verdict

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "ehrlib" / "pipeline" / "offline" / "verification"


def test_every_rule_has_a_known_answer_case():
    """Each registered rule id is asserted as the deciding rule somewhere in
    tests/test_offline_verification_*.py (``assert_decided(..., "<rule_id>", ...)`` or a
    parametrized rule column)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in TESTS.glob("test_offline_verification_*.py")
                     if p.name != Path(__file__).name)
    cited = set(re.findall(r'"([a-z]+\.[a-z_]+)"', text))
    missing = [r.rule_id for r in ALL_RULES if r.rule_id not in cited]
    assert not missing, f"rules without a known-answer test: {missing}"


def test_rule_records_are_well_formed():
    assert len(ALL_RULES) >= 40
    for r in ALL_RULES:
        assert re.fullmatch(r"[a-z]+\.[a-z_]+", r.rule_id), r.rule_id
        assert r.principle.endswith(".") and 40 <= len(r.principle) <= 260, r.rule_id
        assert callable(r.apply)


def test_modules_stay_small():
    for p in PACKAGE.glob("*.py"):
        assert len(p.read_text(encoding="utf-8").splitlines()) <= 300, p.name


@pytest.mark.parametrize("e, first", [
    (entity("febrile", "interpretation"), "states.attached_value"),
    (entity("lactate", "trend"), "trends.stated_origin"),
    (entity("HR", "measurement", value=75.0), "trends.stated_origin"),
    (entity("UOP", "output", value=30.0, per_hour=True), "events.negated_absent"),
    (entity("UOP", "output"), "events.negated_absent"),
    (entity("heparin", "medication"), "medications.negated_absent"),
    (entity("BCx", "microbiology"), "microbiology.specimen_in_window"),
    (entity("CHF", "diagnosis"), "diagnoses.billed_code"),
    (entity("CHF", "diagnosis", section="discharge_diagnosis"), "diagnoses.section_billed"),
    (entity("EGD", "procedure", section="procedures"), "diagnoses.section_billed"),
    (entity("Skin", "finding", concept=DATA_CONCEPT), "findings.data_value"),
    (entity("Abd", "finding", concept="abdomen"), "events.negated_absent"),
])
def test_routing(e, first):
    assert chain_for(e)[0].rule_id == first


def test_decide_stamps_the_deciding_rule_and_keeps_a_delegates_id():
    from ehrlib.corpus.records import Note
    from ehrlib.pipeline.stages import NoteContext

    ctx = NoteContext(Note("n", 1, 1, "physician", "2199-02-03", "x"), 1, 1)
    c = Case(entity("x", "measurement"), ctx, Session(FakeTools()))
    passes = Rule("t.passes", "A rule that passes.", lambda c: None)
    inner = Rule("t.inner", "A rule that decides.", lambda c: verdict(c, True, "inner"))
    outer = Rule("t.outer", "A rule that hands over.", lambda c: decide(c, (inner,)))
    only_trend = Rule("t.trend", "A rule for trends only.", lambda c: verdict(c, False, "trend"), ("trend",))
    assert decide(c, (passes, only_trend, inner)).rule_id == "t.inner"
    assert decide(c, (outer,)).rule_id == "t.inner"
    assert decide(c, (passes,)) is None


def test_rule_table_in_the_docs_is_current():
    doc = (TESTS.parent / "docs" / "offline_rules.md").read_text(encoding="utf-8")
    for r in ALL_RULES:
        assert f"| `{r.rule_id}` | {', '.join(r.kinds)} | {r.principle} |" in doc, f"docs/offline_rules.md: {r.rule_id}"
    assert len(re.findall(r"^\| `[a-z]+\.[a-z_]+` \|", doc, re.M)) == len(ALL_RULES)
