"""Known answers for the ConText-style cue sets (ehrlib.pipeline.offline.context)."""
from __future__ import annotations

import pytest

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.context import cue, cue_in_clause_before, cue_set, negated_before


@pytest.mark.parametrize("prefix, negated", [
    ("no ", True), ("denies chest pain, ", True), ("pt without ", True), ("-tender ", True),
    ("no fever but ", False),                       # the contrast word ends the negation's scope
    ("no fever. ", False),
    ("no issues with the patient's recent long course of ", False),  # beyond the 25-character window
    ("K+ ", False),
    ("Calm, appropriate. Not ", True),            # a sentence-initial cue, capitalised
    # verbs of withholding deny that what follows is in use
    ("work of breathing up but holding off ", True), ("held off on ", True), ("avoiding ", True),
    ("deferring ", True), ("stable without need for ", True),
    ("holding pattern, on ", False), ("BP held steady on ", False),
])
def test_negation_before(prefix: str, negated: bool) -> None:
    assert negated_before(prefix) is negated


@pytest.mark.parametrize("name, text, pos, hit", [
    ("historical", "h/o CHF with ", 13, "h/o"),
    ("historical", "h/o CHF, now with ", 18, None),      # "now" resets the time
    ("family", "mother with ", 12, "mother"),
    ("plan", "will start ", 11, "will start"),
    ("plan", "started ", 8, None),
])
def test_cues_in_their_scope(name: str, text: str, pos: int, hit: str | None) -> None:
    m = cue_in_clause_before(name, text, pos)
    assert (m.group(0) if m else None) == hit


def test_title_negation_has_two_frames_over_one_word_list() -> None:
    after = cue("negation_after_title")
    title = cue("negation_after_title", "title_claim")
    assert after.match(": none") and after.match(" resolved")
    assert title.match(": resolved") and not title.match(": resolved with fluids and more")
    with pytest.raises(ConfigError):
        cue("negation_after_title", "no_such_frame")


@pytest.mark.parametrize("name, text, hit", [
    ("conditional", "If hypotensive again, give ", True), ("conditional", "hypotensive, gave ", False),
    ("imperative", "- start ", True), ("imperative", "was started on ", False),
    ("opinion", "renal feels ", True), ("opinion", "renal function ", False),
    ("elsewhere_after", " at OSH", True), ("elsewhere_after", " at 1300", False),
])
def test_order_and_opinion_cues(name: str, text: str, hit: bool) -> None:
    pattern = cue(name)
    found = pattern.match(text) if name in ("imperative", "elsewhere_after") else pattern.search(text)
    assert bool(found) is hit


def test_every_cue_set_compiles_and_names_a_known_scope() -> None:
    doc = load_data("offline_context.yaml")
    for name in doc["cues"]:
        cs = cue_set(name)
        assert cs.scope in doc["clause_breaks"], name
        assert cs.terms and cs.pattern.flags & 2  # re.IGNORECASE


def test_unknown_cue_set_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        cue_set("no_such_cues")


def test_schema_rejects_a_malformed_cue_set(tmp_path) -> None:
    import json

    import jsonschema

    from ehrlib.datafiles import data_text

    schema = json.loads(data_text("schemas/offline_context.schema.json"))
    bad = {"version": 1, "clause_breaks": {}, "cues": {"x": {"category": "negated", "direction": "forward",
                                                             "scope": "s", "terms": ["no"]}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    jsonschema.validate(load_data("offline_context.yaml"), schema)


@pytest.mark.parametrize("after, planned", [
    (" (results pending)", False),       # a pending result is of a study that was done
    (", final read pending", False),
    (" pending", True),                  # the study itself is pending
    (" tomorrow", True),
    (" and reassess", True),             # an order whose effect is still to be judged
    (" 500 cc, then re-evaluate", True),
    (" given, reassessed at 1400", False),
])
def test_a_pending_result_is_no_plan(after: str, planned: bool) -> None:
    assert bool(cue("plan_after").match(after)) is planned


@pytest.mark.parametrize("prefix, after, negated", [
    ("No BM today, ", "/colace given.", False),  # the item after the comma has its own predicate
    ("No BM today, senna/", " given.", False),
    ("no ", " given", True),                               # no comma: the trigger's own clause
    ("Denies fever, ", ", or night sweats", True),         # a list of bare items stays negated
    ("no heparin or ", " given", True),
])
def test_a_negation_does_not_reach_a_list_item_with_its_own_predicate(prefix, after, negated):
    assert negated_before(prefix, after) is negated
