"""How a release counts lines: ruled out by impossible positions, else by where entities are."""
from __future__ import annotations

from ehrlib.corpus.line_base import detect_line_base, shift_lines
from ehrlib.corpus.records import GoldEntity, Note

NOTE = Note("1", 1, 2, "nursing", "2150-01-01", "Neuro: alert\nHR 80s\nUOP 30 cc/hr")


def _gold(*pairs):
    return [GoldEntity("1", f"e{i}", line, entity, "consistent") for i, (line, entity) in enumerate(pairs)]


def test_entities_on_their_line_decide():
    from_one = detect_line_base({"1": NOTE}, _gold((2, "HR"), (3, "UOP")))
    assert (from_one.base, from_one.offset, dict(from_one.hits)) == (1, -1, {0: 1, 1: 2})
    assert from_one.chosen_by == "the only count every position fits"  # 3 is past the end from 0
    from_zero = detect_line_base({"1": NOTE}, _gold((1, "HR"), (2, "UOP")))
    assert (from_zero.base, from_zero.chosen_by) == (0, "entities found on their line")
    tie = detect_line_base({"1": NOTE}, _gold((1, "pressure")))
    assert tie.base == 0 and dict(tie.hits) == {0: 0, 1: 0}


def test_impossible_positions_rule_a_count_out_whatever_the_text_says():
    # "vanc" is written where the label says "vancomycin": no entity is found on any line
    assert detect_line_base({"1": NOTE}, _gold((0, "vancomycin"), (2, "heparin"))).base == 0
    assert detect_line_base({"1": NOTE}, _gold((3, "vancomycin"), (1, "heparin"))).base == 1
    assert detect_line_base({"1": NOTE}, _gold((3, "HR")), given=0).chosen_by == "given"


def test_shift_keeps_labels_inside_their_note():
    gold = _gold((1, "Neuro"), (3, "UOP"), (4, "beyond"))
    base = detect_line_base({"1": NOTE}, gold[:2])
    kept, outside = shift_lines(gold, {"1": NOTE}, base)
    assert [(g.line, g.entity) for g in kept] == [(0, "Neuro"), (2, "UOP")] and outside == 1
