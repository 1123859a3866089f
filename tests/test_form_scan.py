"""Known answers for the automaton form scan (ehrlib.pipeline.offline.form_scan): whole
words, longest form first, flexible word gaps, case per family, and the alternation's
own matches on every line of the development notes.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ehrlib.pipeline.offline.form_scan import FormFamily, FormScanner, alternation, squeeze
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mention import clean_line

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCANNER = FormScanner((
    FormFamily("plain", ("hr", "chest tube", "chest", "skin intact", "ab c", "ab", "bc", "multi-lumen", "b c d"),
               re.I),
    FormFamily("cased", ("K", "Mg")),
    FormFamily("none", ()),
))
PLAIN, CASED, NONE = SCANNER.family("plain"), SCANNER.family("cased"), SCANNER.family("none")


def _found(fam, text):
    return [(m.start(), m.group(0)) for m in fam.finditer(text)]


def test_whole_words_only():
    assert _found(PLAIN, "HR 88, three chr hr") == [(0, "HR"), (17, "hr")]
    assert _found(PLAIN, "HR88 xhr hr2 _hr_") == [(14, "hr")]  # "_" is no letter or digit


def test_longest_form_first_and_no_overlaps():
    assert _found(PLAIN, "chest tube to suction, chest clear") == [(0, "chest tube"), (23, "chest")]
    # "ab c" fails its right boundary in "ab cd": the shorter "ab" is the alternation's match
    assert _found(PLAIN, "ab cd") == [(0, "ab")]
    # left to right: "ab c" takes "c", so "b c d" (which starts inside it) is not found
    assert _found(PLAIN, "ab c d") == [(0, "ab c")]
    assert _found(PLAIN, "x b c d") == [(2, "b c d")]


def test_word_gaps_colon_space_hyphen_or_none():
    for text in ("Skin: intact", "skin  intact", "skin-intact", "skinintact", "SKIN :  INTACT"):
        assert _found(PLAIN, text) == [(0, text)], text
    assert _found(PLAIN, "skin, intact") == []
    assert _found(PLAIN, "multi-lumen; multi lumen") == [(0, "multi-lumen")]  # a hyphen in a form is literal


def test_case_per_family():
    assert _found(CASED, "K 3.1, k, Mg 2.0 mg, MG") == [(0, "K"), (10, "Mg")]
    assert _found(PLAIN, "Chest Tube") == [(0, "Chest Tube")]


def test_empty_family_matches_nothing():
    assert _found(NONE, "anything at all") == []
    assert NONE.search("") is None


def test_non_ascii_line_is_read_as_the_regex_reads_it():
    # re's case folding makes the Kelvin sign a "k"; the scan leaves such lines to the alternation
    text = "\u212a 3.1 and HR 90 \u2014 chest tube"
    assert [m.span() for m in PLAIN.finditer(text)] == [m.span() for m in PLAIN.regex.finditer(text)]
    assert _found(PLAIN, text) == [(10, "HR"), (18, "chest tube")]


def test_squeeze_drops_only_gap_characters():
    assert squeeze("skin: intact - now") == "skinintactnow"
    assert alternation([]) == "(?!)"


def _dev_lines() -> list[str]:
    lines: list[str] = []
    for name in ("realnotes", "realnotes_holdout", "handwritten", "precision_dev", "realnotes_mimic4"):
        with open(FIXTURES / name / "notes.jsonl", encoding="utf-8") as fh:
            for row in fh:
                lines += [clean_line(x) for x in json.loads(row)["text"].split("\n")]
    return lines


@pytest.mark.parametrize("family", ["concept_re", "cased_re", "drug_re", "term_re"])
def test_same_matches_as_the_alternation_on_real_notes(family):
    fam = getattr(load_lexicon(), family)
    lines = _dev_lines()
    variants = [v for x in lines for v in (x, x.upper(), x.replace(" ", " : "), x.replace(" ", "-"))]
    assert sum(1 for x in lines for _ in fam.finditer(x)) > 20  # the comparison below is not empty
    for text in variants:
        assert [(m.span(), m.group(0)) for m in fam.finditer(text)] == \
            [(m.span(), m.group(0)) for m in fam.regex.finditer(text)], text
        got, first = fam.search(text), fam.regex.search(text)
        assert (got.span() if got else None) == (first.span() if first else None)
    starts = [x[p:] for x in lines[::3] for p in {0, *(m.start() for m in fam.regex.finditer(x))}]
    for text in (*starts, *(t.upper() for t in starts), " leading space"):
        got, first = fam.match(text), fam.regex.match(text)
        assert (got.span() if got else None) == (first.span() if first else None), text
