"""Known answers for the number forms of clinical notes (ehrlib.pipeline.offline.numparse)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.clock_tokens import reads_as_clock
from ehrlib.pipeline.offline.numparse import (
    block_items,
    panel_items,
    parse_number,
    parse_series,
    parse_value,
    strip_charge,
    takes_negative,
)


def _block(text):
    return {it.name: it.reading for it in block_items(text)}


def test_mimic_results_block_values_are_positive_and_flags_kept():
    line = "[**2145-3-4**] 06:00AM BLOOD WBC-11.2* RBC-3.45* Hgb-13.4 Hct-38.1 Plt Ct-234 K-4.2"
    got = _block(line)
    assert {k: r.value for k, r in got.items()} == {"WBC": 11.2, "RBC": 3.45, "Hgb": 13.4, "Hct": 38.1,
                                                   "Plt Ct": 234.0, "K": 4.2}
    assert got["WBC"].flagged and not got["Hgb"].flagged
    assert all(r.value > 0 for r in got.values())


def test_a_hyphenated_block_name_is_one_analyte():
    got = _block("___ 12:35AM BLOOD CK(CPK)-129 CK-MB-7 D-Dimer-2361* Base XS--2")
    assert {k: r.value for k, r in got.items()} == {"CK(CPK)": 129.0, "CK-MB": 7.0, "D-Dimer": 2361.0,
                                                   "Base XS": -2.0}


def test_block_second_hyphen_is_a_sign_only_for_signed_analytes():
    got = _block("pO2-64* pCO2-52* pH-7.28* calTCO2-25 Base XS--2 Hgb--3")
    assert got["Base XS"].value == -2.0
    assert got["Hgb"].value == 3.0  # haemoglobin cannot be negative: the hyphen is a dash
    assert got["pH"].value == 7.28


def test_block_ranges_comparators_and_names_with_parentheses():
    got = _block("URINE RBC-0-2 WBC-3-5 cTropnT-<0.01 ALT(SGPT)-310 INR(PT)-1.1")
    assert (got["RBC"].role, got["RBC"].low, got["RBC"].high) == ("range", 0.0, 2.0)
    assert (got["cTropnT"].value, got["cTropnT"].comparator) == (0.01, "<")
    assert got["ALT(SGPT)"].value == 310.0 and got["INR(PT)"].value == 1.1


def test_block_ignores_dates_and_compound_words():
    assert block_items("[**2145-3-4**] seen 3-4 times, follow-up in 2-3 weeks") == []


@pytest.mark.parametrize("text, value", [("12,400", 12400.0), ("1,234.5", 1234.5), ("7.28", 7.28), ("-4", -4.0),
                                         (".5", 0.5), ("1,2", None), ("12,40", None), ("abc", None)])
def test_parse_number_thousands_separators(text, value):
    assert parse_number(text) == value


def test_thousands_separator_is_not_cut_at_the_comma():
    assert parse_value(" 12,400").value == 12400.0
    assert parse_value(" 3.5, 4.0").value == 3.5  # comma and space: a list, not a thousands group


def test_negative_value_after_space_needs_an_analyte_that_takes_negatives():
    assert takes_negative("base excess") and takes_negative("BE") and not takes_negative("K")
    assert parse_value(" -4", signed=True).value == -4.0
    assert parse_value(": -4", signed=True).value == -4.0
    assert parse_value(" -4").value == 4.0
    assert parse_value("-13.4").value == 13.4  # touching the name: a separator even if signed
    assert parse_value("-13.4", signed=True).value == 13.4


def test_slash_panels_one_value_per_item_in_order():
    items = panel_items("ABG 7.28/52/64, AST/ALT 310/205, Na/K 131/5.1")
    assert [(i.name, i.reading.value, i.source) for i in items] == [
        ("pH", 7.28, "panel"), ("pCO2", 52.0, "panel"), ("pO2", 64.0, "panel"),
        ("AST", 310.0, "slash"), ("ALT", 205.0, "slash"), ("Na", 131.0, "slash"), ("K", 5.1, "slash")]


def test_panel_with_signed_item_and_refusals():
    items = panel_items("ABG: 7.30/45/80/22/-3")
    assert [(i.name, i.reading.value) for i in items][-1] == ("base excess", -3.0)
    assert panel_items("ABG 7.28/52/64/22/-3/99") == []  # more values than the panel has items
    assert panel_items("AST/ALT 310/205/90") == []  # names and values must pair one to one
    assert panel_items("BP 120/80, s/p 3/4, w/o 2/3") == []  # not panels
    assert panel_items("Na/K 131/-5.1") == []  # a negative potassium is not a reading


def test_slash_value_is_not_a_single_value():
    assert parse_value(" 120/80") is None


@pytest.mark.parametrize("text, series, direction", [
    (" 1.9 <- 1.6 <- 1.4", (1.4, 1.6, 1.9), "up"),
    (" 1.4 -> 1.9", (1.4, 1.9), "up"),
    (" 2.3 → 1.8 → 1.1", (2.3, 1.8, 1.1), "down"),
    (" 12,400 -> 9,800", (12400.0, 9800.0), "down"),
])
def test_arrow_series_oldest_first(text, series, direction):
    r = parse_value(text)
    assert (r.role, r.series, r.value, r.direction) == ("series", series, series[-1], direction)


def test_mixed_arrows_are_not_a_series():
    assert parse_series("1.2 -> 1.5 <- 1.1") is None


@pytest.mark.parametrize("text, name, charge", [("Mg++", "Mg", 2), ("K+", "K", 1), ("Na", "Na", 0)])
def test_charge_is_part_of_the_name(text, name, charge):
    assert strip_charge(text) == (name, charge)


def test_value_after_charge_marks():
    assert parse_value("++ 1.6").value == 1.6
    assert parse_value("+ 3.1").value == 3.1


@pytest.mark.parametrize("text, low, high", [(" 3.1 to 3.5", 3.1, 3.5), (" 3.1-3.5", 3.1, 3.5),
                                             (" between 3 and 4", 3.0, 4.0), (" 110s", 110.0, 119.0),
                                             (" 90s-110s", 90.0, 119.0)])
def test_ranges(text, low, high):
    r = parse_value(text)
    assert (r.role, r.value, r.low, r.high) == ("range", None, low, high)


@pytest.mark.parametrize("text, value, role, direction", [
    (" of 131", 131.0, "value", None),  # "a sodium of 131"
    (" was 131", 131.0, "value", None),
    (" level of 4.1", 4.1, "value", None),
    (" rose to 2.3", 2.3, "value", "up"),
    (" fell to 1.1", 1.1, "value", "down"),
    (" trended down to 0.9", 0.9, "value", "down"),
    (" peaked at 2.3", 2.3, "max", None),
    (" with a peak of 14,200", 14200.0, "max", None),
    (" with a nadir of 7.1", 7.1, "min", None),
    (" nadired at 88", 88.0, "min", None),
    (" stayed at baseline", None, "baseline", "stable"),
    (" remained at her baseline of 1.2", 1.2, "baseline", "stable"),
    (" <0.01", 0.01, "value", None),
])
def test_prose_forms(text, value, role, direction):
    r = parse_value(text)
    assert (r.value, r.role, r.direction) == (value, role, direction)


def test_from_to_is_a_series():
    r = parse_value(" fell from 2.3 to 1.8")
    assert (r.role, r.series, r.direction) == ("series", (2.3, 1.8), "down")
    assert parse_value(" from 1.4 to 1.9").series == (1.4, 1.9)


def test_no_value_stated():
    assert parse_value(" pending") is None
    assert parse_value(" to be checked") is None


def test_panel_data_typo_is_rejected():
    import json

    import jsonschema

    from ehrlib.datafiles import data_text, load_data

    broken = json.loads(json.dumps(load_data("result_panels.yaml")))
    broken["panels"][0]["items"] = ["pH"]  # a panel of one item is not a panel
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json.loads(data_text("schemas/result_panels.schema.json")))


def test_a_row_of_name_value_columns_is_a_table_row():
    from ehrlib.pipeline.offline.numparse import is_table_row
    assert is_table_row(" Na 141  K 3.3  Cl 104  HCO3 25  BUN 12")
    assert is_table_row("WBC 9.8*   Hgb 11.2   Plt 301")
    # prose, even with a double space after a sentence, is not
    assert not is_table_row("Creatinine rose from 2.0 to a peak of 4.3 over two days and then")
    assert not is_table_row("He was extubated.  Diet advanced and tolerated well by evening")


def test_a_slash_panel_with_its_earlier_values():
    from ehrlib.pipeline.offline.numparse import panel_items
    items = panel_items("LFTs: AST/ALT 140/96, down from 410/233 on admission")
    assert [(it.name, it.reading.value) for it in items] == [("AST", 140.0), ("ALT", 96.0), ("AST", 410.0),
                                                             ("ALT", 233.0)]
    assert items[0].start != items[2].start  # two panels: the current values and the earlier ones


@pytest.mark.parametrize("text, token, clock", [
    ("ABG 0631 (on vent): 7.42/34/96", "0631", True),   # a leading zero: never how a value is written
    ("CBC 1608: WBC 8.2", "1608", True),                # a heading's colon, then the values
    ("K at 1400 3.2", "1400", True),                    # a time word before, a value after
    ("CK peaked at 1200", "1200", False),               # nothing after: the value itself
    ("BNP 1240 on admission", "1240", False),
    ("LDH 1658, trending down", "1658", False),
    ("Plt 2561 (clumped)", "2561", False),              # 25:61 is no clock time
])
def test_a_clock_time_written_where_a_value_could_stand(text, token, clock):
    i = text.index(token)
    assert reads_as_clock(text, i, i + len(token)) is clock
