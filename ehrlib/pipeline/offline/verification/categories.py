"""Categorical lab results: a stated result word against the words the laboratory recorded.

A dipstick or screen result is compared by grade (:func:`.lab_categories.grade`): the same
grade is consistent, a negative against a positive (or the reverse) and two different
grades are a contradiction, and an ungraded "POS" is met by any grade above negative. The
rows compared are the draw a results record's stamp names (:func:`.draws.at_stamp`);
without a recorded word in the window the item's record is missing.
"""
from __future__ import annotations

from ehrlib.pipeline.offline.lab_categories import grade
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.draws import at_stamp
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.records import Verdict

__all__ = ["RESULT_GRADE", "RULES", "agrees"]


def agrees(stated: int, recorded: int) -> bool:
    """Whether two grades name the same result ("POS", -1, is any grade above negative)."""
    if -1 in (stated, recorded):
        return (stated != 0) and (recorded != 0)
    return stated == recorded


def _result_grade(c: Case) -> Verdict | None:
    e = c.entity
    stated = grade(e.value or "")
    if stated is None:
        return None
    inside, _ = c.item_rows()
    graded = [r for r in inside if grade(str(r.get("value") or "")) is not None]
    if not graded:
        return verdict(c, False, f"{e.text}: no {e.value} result recorded in the window", (), missing=True)
    rows = at_stamp(c, graded)
    hits = [r for r in rows if agrees(stated, grade(str(r.get("value"))) or 0)]
    if hits:
        return verdict(c, True, f"{e.text}-{e.value} recorded in the window", hits[:3])
    shown = ", ".join(sorted({str(r.get("value")) for r in rows})[:4])
    return verdict(c, False, f"{e.text}: note says {e.value}; the laboratory recorded {shown}", rows[:3])


RESULT_GRADE = Rule("categories.result_grade", "A categorical lab result is met by a recorded result of the same "
                    "grade (negative < trace < small < moderate < large; positive is any grade above negative) "
                    "in the stated draw; a different grade is a contradiction.", _result_grade, ("finding",))

RULES = (RESULT_GRADE,)
