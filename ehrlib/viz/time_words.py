"""A finding's time in words: how its window was chosen (``time_basis``) and the window."""
from __future__ import annotations

from ehrlib.corpus.records import TimeSpan

__all__ = ["BASIS_WORDS", "describe_time"]

#: ``Prediction.time_basis`` -> what a reviewer reads
BASIS_WORDS = {"explicit_time": "stated date and time", "explicit_date": "stated date",
               "relative_day": "stated relative day", "part_of_day": "stated part of the day",
               "section_default": "the section's time", "note_day": "note day",
               "hospitalization": "whole hospitalization", "later_time": "a time after the note's"}


def _window(w: TimeSpan) -> str:
    start, end = (w.start or "")[:16], (w.end or "")[:16]
    if start[:10] and start[:10] == end[:10]:
        s_clock, e_clock = start[11:16] or "00:00", end[11:16] or "23:59"
        if s_clock == "00:00" and e_clock == "23:59":
            return start[:10]
        if s_clock == "00:00":
            return f"{start[:10]}, up to {e_clock}"
        return f"{start[:10]} {s_clock} to {e_clock}"
    return f"{start or '?'} to {end or '?'}"


def describe_time(basis: str | None, window: TimeSpan | None) -> str:
    """``note day (2150-01-05, up to 19:00)``; ``not recorded`` when neither is known."""
    words = BASIS_WORDS.get(basis, basis) if basis else None
    if window is None:
        return words or "not recorded"
    return f"{words} ({_window(window)})" if words else _window(window)
