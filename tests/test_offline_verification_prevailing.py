"""Known answers for the day's prevailing state of a graded finding (verification/prevailing.py):
an untimed normal state against a day charted mostly worse, the asymmetry for abnormal states,
statements with a time of their own, and the bowel-sound and site rules that use it."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.finding_sites import SITE_CONCEPT
from ehrlib.pipeline.offline.verification.findings import judge_site_finding
from ehrlib.pipeline.offline.verification.prevailing import has_own_time, prevailing_against, rank_of
from ehrlib.pipeline.records import Entity

# a note's widened window: the day before, the note's day (06-11), the day after
WINDOW = TimeSpan("2150-06-10 00:00:00", "2150-06-12 23:59:59")
TIERS = (("normal",), ("low", "high"), ("none",))


def _rows(*charted: tuple[str, str]) -> list[tuple[dict, set[str]]]:
    return [({"time": t, "value": v}, {v}) for t, v in charted]


def _against(stated: str, rows, window=WINDOW):
    return prevailing_against(window, rows, {stated}, TIERS, lambda st: not st & {stated})


def test_rank_of():
    assert rank_of(TIERS, {"high"}) == 1
    assert rank_of(TIERS, {"none", "normal"}) == 0
    assert rank_of(TIERS, {"other"}) is None


def test_normal_state_against_a_worse_day():
    day = _rows(("2150-06-11 04:00", "low"), ("2150-06-11 08:00", "low"), ("2150-06-11 12:00", "normal"),
                ("2150-06-11 16:00", "low"))
    assert [r["value"] for r in _against("normal", day)] == ["low", "low", "low"]


def test_agreeing_chartings_hold_it():
    day = _rows(("2150-06-11 04:00", "low"), ("2150-06-11 08:00", "normal"), ("2150-06-11 12:00", "low"),
                ("2150-06-11 16:00", "normal"))
    assert _against("normal", day) is None  # two against two: not prevailing
    assert _against("normal", _rows(("2150-06-11 04:00", "low"))) is None  # one charting is too few


def test_only_the_statement_day_counts():
    other_days = _rows(("2150-06-10 04:00", "low"), ("2150-06-10 08:00", "low"), ("2150-06-12 08:00", "low"),
                       ("2150-06-11 08:00", "normal"))
    assert _against("normal", other_days) is None


def test_a_stated_part_of_the_day_is_read_whole():
    morning = TimeSpan("2150-06-11 06:00:00", "2150-06-11 12:00:00")
    rows = _rows(("2150-06-11 07:00", "low"), ("2150-06-11 09:00", "low"), ("2150-06-11 20:00", "normal"))
    assert _against("normal", rows, morning) is not None


def test_an_abnormal_state_seen_once_stands():
    day = _rows(("2150-06-11 04:00", "normal"), ("2150-06-11 08:00", "normal"), ("2150-06-11 12:00", "low"),
                ("2150-06-11 16:00", "normal"))
    assert _against("low", day) is None  # the charted states are better, not worse


@pytest.mark.parametrize("line, phrase, expected", [
    ("GI: abd soft, active BS, passing flatus.", "active BS", False),
    ("GI: BS hypoactive at 0400, active by noon.", "active", True),
    ("Neuro: localizes overnight. Pupils equal.", "localizes", True),
    ("Neuro: withdraws to pain. Lethargic since 1500.", "withdraws", False),  # the time is another sentence's
    ("Gag absent -> present.", "present", True),
])
def test_has_own_time(line, phrase, expected):
    a = line.index(phrase)
    assert has_own_time(line, (a, a + len(phrase)), None) is expected


def test_extracted_time_is_own_time():
    assert has_own_time("Neuro: calm.", (7, 11), "this AM")


def _entity(value: str) -> Entity:
    return Entity(entity_id="L1:0", line=1, text=value, kind="finding", segment=0, value=value,
                  claim=Claim(concept=SITE_CONCEPT), window=WINDOW)


def _charted(label: str, *values: str) -> list[tuple[str, list[dict]]]:
    return [(label, [{"time": f"2150-06-11 {2 + 3 * i:02d}:00", "value": v} for i, v in enumerate(values)])]


@pytest.mark.parametrize("value, label, values, expected", [
    # a better motor response than the day mostly charted
    ("localizes", "GCS - Motor Response", ("Abnormal Flexion", "Abnormal Flexion", "Localizes Pain",
                                           "Abnormal Flexion"), False),
    # flatus said passed on a day charted mostly negative
    ("passing flatus", "Flatus", ("Negative", "Negative", "Positive"), False),
    # the worse state stated: seen once is a finding
    ("no flatus", "Flatus", ("Positive", "Positive", "Negative"), True),
    # an ungraded class (sputum) is never judged on the day's majority
    ("thin", "Sputum Consistency", ("Thick", "Thick", "Thin"), True),
])
def test_site_statement_prevailing(value, label, values, expected):
    ok, reason, _ = judge_site_finding(_entity(value), _charted(label, *values), timed=False)
    assert ok is expected, reason


def test_timed_site_statement_keeps_the_window_rule():
    rows = _charted("Flatus", "Negative", "Negative", "Positive")
    ok, _, _ = judge_site_finding(_entity("passing flatus"), rows, timed=True)
    assert ok is True


def test_prevailing_needs_every_charted_item():
    rows = (_charted("Corneal Reflex Left", "Absent", "Absent", "Intact")
            + _charted("Corneal Reflex Right", "Intact", "Intact"))
    ok, _, _ = judge_site_finding(_entity("intact"), rows, timed=False)
    assert ok is True  # the right side's day agrees
