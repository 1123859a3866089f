"""Known answers for slash-panel mentions (ehrlib.pipeline.offline.panel_mentions)."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.panel_mentions import RULE, panel_mentions


def _values(text):
    return [(m.concept, m.claim.reading.value) for m in find_mentions(text, 0, load_lexicon())
            if m.kind == "measurement"]


def test_slash_names_take_one_value_each_in_order():
    assert _values("AST/ALT 310/205") == [("ast", 310.0), ("alt", 205.0)]
    assert _values("Na/K 131/5.1, BUN/Cr 40/1.9") == [("sodium", 131.0), ("potassium", 5.1), ("bun", 40.0),
                                                     ("creatinine", 1.9)]


def test_items_of_one_panel_share_a_group():
    out, taken = [], []
    panel_mentions("LFTs: AST/ALT 310/205", 3, load_lexicon(), out, taken)
    assert len({m.group for m in out}) == 1 and [m.line for m in out] == [3, 3]
    assert taken  # the panel's span is not re-read by the name-by-name scanners


def test_not_a_lab_panel_is_left_to_the_other_scanners():
    out, taken = [], []
    panel_mentions("BP 120/80, I/O 1200/800, s/p 3/4", 0, load_lexicon(), out, taken)
    assert out == [] and taken == []
    out, taken = [], []
    panel_mentions("Na/K 131/55", 0, load_lexicon(), out, taken)  # a potassium of 55 is no potassium
    assert out == []


def test_rule_states_its_principle():
    assert RULE.rule_id == "extract.slash_panel" and "one value per item" in RULE.principle


def test_the_flattened_blood_count_fishbone_names_its_four_items():
    assert _values("CBC: 8.4 > 12.2 / 36.0 < 98") == [("wbc", 8.4), ("hemoglobin", 12.2), ("hematocrit", 36.0),
                                                      ("platelets", 98.0)]
    assert _values("if HR > 110 / SBP < 90 call") == []  # thresholds, not a blood count
