"""Known answers for an infusion's course (ehrlib.pipeline.offline.infusion_course), on made-up sentence tails."""
from __future__ import annotations

from ehrlib.pipeline.offline.infusion_course import COURSE_RULE, course_steps, number


def _read(text: str) -> list[tuple[float | None, str | None, str | None]]:
    return [(s.rate, s.unit, s.action) for s in course_steps(text)]


def test_a_chain_shares_the_unit_after_its_last_number() -> None:
    assert _read(" gtt 12 -> 8 -> 4 mg/hr") == [(12.0, "mg/hr", None), (8.0, "mg/hr", "titrated"),
                                               (4.0, "mg/hr", "titrated")]
    assert _read(" rate increased from 900 to 1,250 units/hr") == [(900.0, "units/hr", "titrated"),
                                                                  (1250.0, "units/hr", "titrated")]


def test_titration_without_a_unit_and_stops_at_a_clock_time() -> None:
    assert _read(" titrated down to 0.5, then off at 0415") == [(0.5, None, "titrated"), (None, None, "off")]
    assert _read(" turned off 2300") == [(None, None, "off")]
    assert _read(" stopped 1000 mg") == []  # a dose, not a clock time


def test_a_range_is_no_course() -> None:
    assert course_steps(" 2-6 mcg/min overnight") == []  # the drug's own range, not a sequence of claims


def test_numbers_and_the_rule() -> None:
    assert number("1,100") == 1100.0
    assert COURSE_RULE.rule_id == "extract.infusion_course" and COURSE_RULE.principle.endswith(".")


def test_a_time_in_a_clause_of_its_own_is_a_claim_apart() -> None:
    # a stop or a dose's time after a comma, semicolon, bracket or dash is its own claim, on its own words
    assert _read(" 80 mL/hr, finished 2215") == [(80.0, "ml/hr", None), (None, None, "stopped")]
    assert _read(" 0.2 mcg/kg/min, which was weaned off on ```3-14```") == [(0.2, "mcg/kg/min", None),
                                                                            (None, None, "off")]
    assert _read(" 2 g IV q12 (last dose 1745)") == [(None, None, "given")]
    assert _read(" - first dose given at 0330; ") == [(None, None, "given")]
    assert _read(" 10 mg/hr; paused ~2330 for the CT") == [(10.0, "mg/hr", None), (None, None, "held")]
    got = course_steps(" 1 g IV q8 - last dose 0600")
    assert [(s.given, " 1 g IV q8 - last dose 0600"[s.start:s.end]) for s in got] == [(True, "last dose 0600")]


def test_a_time_in_the_drugs_own_clause_stays_the_statements() -> None:
    assert course_steps(" 2 g at 1400") == []  # "cefazolin 2 g at 1400": one statement
    assert course_steps(" 40 mg IV given at 0915") == []  # no break: the dose's own time
    assert course_steps(", 1 g given 2 doses") == []  # a count, not a time
    assert course_steps(", completed 500 mg") == []  # an amount, not a clock time
