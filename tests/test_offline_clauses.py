"""Known answers for the one clause splitter (ehrlib.pipeline.offline.clauses)."""
from __future__ import annotations

import pytest

from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.clauses import clause_after, clause_before, clause_breaks, has_break, mask_parentheticals


@pytest.mark.parametrize("text, pos, breaks, want", [
    ("no fever but rigors", 19, "negation", " rigors"),
    ("Neuro: no focal deficit", 23, "negation", " no focal deficit"),
    ("h/o CHF, now with edema", 23, "temporal", "now with edema"),         # the break word stays
    ("h/o CHF; edema", 14, "temporal", " edema"),
    ("h/o CHF with edema", 18, "temporal", "h/o CHF with edema"),         # no break: the whole prefix
    ("Abx changed, Vanc started", 25, "statement", "Vanc started"),       # comma before a capital
    ("Abx changed, vanc started", 25, "statement", "Abx changed, vanc started"),
    ("lasix. levo", 11, "phrase", "levo"),
])
def test_clause_before(text: str, pos: int, breaks: str, want: str) -> None:
    assert clause_before(text, pos, breaks) == want


@pytest.mark.parametrize("text, pos, breaks, want", [
    ("K 3.1, repleted. Mg 2.0", 1, "line_item", " 3.1, repleted"),
    ("seen by K. Smith today. Then", 0, "line_item", "seen by K. Smith today"),  # an initial is no sentence end
    ("HR 88   BP 120/80", 2, "line_item", " 88"),                         # a flowsheet column gap
    ("HR 88 | BP 120/80", 2, "line_item", " 88 "),
    ("CT at OSH. Intubated", 2, "sentence", " at OSH"),
    ("ratio 3.5 today", 0, "sentence", "ratio 3.5 today"),                # a decimal point is no break
])
def test_clause_after(text: str, pos: int, breaks: str, want: str) -> None:
    assert clause_after(text, pos, breaks) == want


def test_lookahead_never_sees_past_the_position() -> None:
    # "[,;]\s(?=[A-Z#])" needs the capital: cut at the position, it is not there
    text = "Abx changed, Vanc"
    assert clause_before(text, 13, "statement") == "Abx changed, "
    assert clause_before(text, 14, "statement") == "V"


def test_unknown_break_set_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        clause_breaks("no_such_set")


def test_has_break_treats_the_slice_end_as_a_text_end() -> None:
    assert has_break("K 3.1.", "sentence") and has_break("K 3.1. Mg", "sentence")
    assert not has_break("ratio 3.5 today", "sentence")


@pytest.mark.parametrize("text, want", [
    ("Plt 90 (known ITP), Na", "Plt 90 " + " " * 11 + ", Na"),
    ("a (b (c) d) e", "a " + " " * 9 + " e"),                 # nested asides are blanked whole
    ("Cr 1.4 (baseline", "Cr 1.4 (baseline"),           # an aside still open at the end is kept
    ("no parentheses", "no parentheses"),
])
def test_mask_parentheticals(text: str, want: str) -> None:
    assert mask_parentheticals(text) == want and len(mask_parentheticals(text)) == len(text)


def test_a_clause_reaches_only_so_far():
    """A cue further back than CLAUSE_REACH characters, with no break between, is out of reach."""
    from ehrlib.pipeline.offline.clauses import CLAUSE_REACH

    text = "h/o " + "x " * CLAUSE_REACH + "edema"
    before = clause_before(text, len(text), "temporal")
    assert len(before) == CLAUSE_REACH and "h/o" not in before
    after = clause_after(text, 0, "temporal")
    assert len(after) == CLAUSE_REACH and after.startswith("h/o")
