"""Known answers for the time inside the note's day a finding is stated for
(verification/finding_time.py): the time words of its own phrase, and the chartings they keep."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.verification.finding_time import rows_at, stated_time, timed_rows_of

DAY = "2150-03-04"
ROWS = [{"time": f"{DAY} {h:02d}:00:00", "value": v} for h, v in
        [(0, "a"), (4, "b"), (8, "c"), (12, "d"), (16, "e"), (20, "f")]]


def _at(line: str, phrase: str) -> str | None:
    a = line.index(phrase)
    return stated_time(line, (a, a + len(phrase)))


@pytest.mark.parametrize("line, phrase, expected", [
    ("Cough weak overnight, strong this AM", "Cough weak", "overnight"),
    ("Cough weak overnight, strong this AM", "strong", "this AM"),
    ("Gag intact at 0800; corneals absent", "Gag intact", "at 0800"),
    ("Gag intact at 0800; corneals absent", "corneals absent", None),  # another phrase's time
    ("LS rhonchi -> clear by 1900", "rhonchi", None),  # the change ends the first state's phrase
    ("LS rhonchi -> clear by 1900", "LS rhonchi -> clear by 1900", "by 1900"),  # the later state's time
    ("Pupils equal, brisk since 3 pm", "brisk", "since 3 pm"),
])
def test_stated_time(line, phrase, expected):
    assert _at(line, phrase) == expected


@pytest.mark.parametrize("when, kept", [
    ("overnight", ["a", "b", "c"]),  # 18:00 the evening before to 08:00, give or take two hours
    ("this AM", ["a", "b", "c", "d"]),
    ("tonight", ["e", "f"]),
    ("at 1300", ["d"]),  # the charting nearest the stated time
    ("by 1900", ["f"]),
    ("since 1400", ["e", "f"]),
    ("until 0500", ["a", "b"]),
    ("at 0200", ["a"]),  # midnight is a charting time, not a date-only row
])
def test_rows_at(when, kept):
    assert [r["value"] for r in rows_at(ROWS, when, DAY)] == kept


def test_nothing_near_the_clock_keeps_nothing():
    sparse = [{"time": f"{DAY} 08:00:00", "value": "a"}]
    assert rows_at(sparse, "at 1500", DAY) == []


def test_an_item_with_nothing_at_the_time_keeps_its_window():
    line = "Gag intact at 1500"
    rows_of = [("Gag Reflex", [{"time": f"{DAY} 08:00:00", "value": "Absent"}]),
               ("Cough Reflex", [{"time": f"{DAY} 14:00:00", "value": "Intact"}])]
    kept, timed = timed_rows_of(line, (0, 10), DAY, rows_of)
    assert timed and [[r["value"] for r in rows] for _, rows in kept] == [["Absent"], ["Intact"]]
    assert timed_rows_of("Gag intact", (0, 10), DAY, rows_of) == (rows_of, False)
