"""A statement's own clause and line questions are answered without rescanning its line:
the backward clause search gives the forward regex's answer, and the tracer hands one
entity its calls without copying the note's.
"""
from __future__ import annotations

import random

import pytest

from ehrlib.pipeline.offline.lab_results import _CLAUSE_END, clause_start
from ehrlib.tools.tracing import Tracer


def _by_regex(text: str, lo: int, hi: int) -> int:
    """The definition: just after the last clause end found in ``text[lo:hi]``, else ``lo``."""
    return max([m.end() for m in _CLAUSE_END.finditer(text, lo, hi)] + [lo])


@pytest.mark.parametrize(("text", "lo", "hi", "want"), [
    ("K 3.5, Na 140", 0, 7, 0),                   # "3.5": a decimal point ends no clause
    ("afebrile. WBC 12", 0, 10, 9),               # a full stop does
    ("afebrile; WBC 12", 0, 10, 9),               # a semicolon does
    ("urine Na 40. K 3.5", 0, 14, 12),            # the last end before the statement
    ("Na 140.", 0, 7, 7),                         # a stop right at the position ends the clause before it
    ("x. y. z", 3, 7, 5),                         # no end before ``lo`` counts
    ("no break at all", 0, 12, 0),
])
def test_clause_start_known_answers(text: str, lo: int, hi: int, want: int) -> None:
    assert clause_start(text, lo, hi) == want == _by_regex(text, lo, hi)


def test_clause_start_agrees_with_the_regex_everywhere() -> None:
    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice("ab .;12\n٣") for _ in range(rng.randint(0, 14)))  # ٣: a non-ASCII digit
        hi = rng.randint(0, len(text))
        lo = rng.randint(0, hi)
        assert clause_start(text, lo, hi) == _by_regex(text, lo, hi), (text, lo, hi)


def test_tracer_count_and_since_read_without_copying_the_whole_trace() -> None:
    tracer = Tracer(prefix="n")
    assert tracer.count == 0 and bool(tracer)  # an empty tracer stays truthy (``tracer or Tracer()``)
    for k in range(5):
        tracer.record("Get_Item_Status_History", {"item": str(k)}, 1, 0.1, None)
    start = tracer.count
    tracer.record("Analyze_Value_Trend", {"item": "x"}, 2, 0.2, None)
    assert start == 5
    assert [r.tool for r in tracer.since(start)] == ["Analyze_Value_Trend"]
    assert tracer.since(start) == tracer.records[start:]
