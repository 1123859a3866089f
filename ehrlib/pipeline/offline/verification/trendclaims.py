"""What a trend statement's wording claims beyond a bare direction (:mod:`.trends`):
a small change ("drifting down"), a span with a stated start ("since admission"), and the
course after a peak or nadir ("peaked at 5.4 and normalized").
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.note_time import judged_until
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.statement_time import clause_of
from ehrlib.pipeline.offline.verification.deciding import num
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.windows import in_window, parse_time
from ehrlib.pipeline.records import Verdict
from ehrlib.pipeline.stages import NoteContext

__all__ = ["small_change", "spans_course", "course_window", "extreme_of", "narrated_after", "after_value",
           "stated_reference", "is_the_number"]

Rows = list[Mapping[str, Any]]
_WORDS = load_data("verification_terms.yaml")["trend_words"]
_SMALL = re.compile(r"\b(?:" + "|".join(_WORDS["small"]) + r")\b", re.I)
_STAY_SPAN = re.compile(r"\b(?:" + "|".join(_WORDS["span_times"]) + r")\s+(?:the|his|her|this)?\s*"
                        r"(?:entire\s+|whole\s+)?(?:" + "|".join(_WORDS["stay_nouns"]) + r")\b", re.I)
_SPAN_TIME = re.compile(r"^\s*(?:" + "|".join(_WORDS["span_times"]) + r")\b", re.I)
_STATED_CHANGE = re.compile(rf"(?P<a>{NUMBER})\s*(?:->|→|-+>|to)\s*(?P<b>{NUMBER})")
#: the earlier value a direction is told against: "improving from 6.0", "drifting down (10.7 yesterday)"
_REFERENCE = re.compile(rf"\bfrom\s+(?P<a>{NUMBER})(?!\s*(?:->|→|-+>|to)\s*\d)"
                        rf"|(?P<b>{NUMBER})\s*(?:yesterday|yest\b|the\s+day\s+before|previously|prior|earlier)", re.I)
_STATEMENT_END = re.compile(r";|\.\s|,\s")


def small_change(c: Case) -> bool:
    """Whether the statement claims a small change: a small-change word in its own words
    ("Na drifting down", "Hgb slightly down") or values written with it whose own change is
    within the relative dead band ("down 131 -> 130"; "26.2 -> 14.5" claims a large one).
    Its direction is then the sign of any change the item's tolerance tells apart (the
    value check's own resolution), not only one beyond the relative dead band.
    """
    line, e = c.line(), c.entity
    if _SMALL.search(e.text):
        return True
    if line is None or e.span is None:
        return False
    clause_end = clause_of(line, e.span[0])[1]
    words = line[e.span[0]:max(e.span[1], e.span[0] + len(e.text) + len(e.value or "") + 12)]
    if _SMALL.search(words):
        return True
    m = _STATED_CHANGE.search(line[e.span[1]:max(clause_end, e.span[1])])
    if m is None:
        return False
    a, b = (float(m.group(g).replace(",", "")) for g in ("a", "b"))
    return abs(b - a) <= 0.05 * max(abs(a), abs(b), 1e-9)  # within the relative dead band


def stated_reference(c: Case) -> str | None:
    """The earlier value the statement tells its direction against, as written after its name
    in its own clause ("bili improving from 6.0 yesterday", "Hgb drifting down (10.7
    yesterday)"); None when it states none (or both ends: "from 2.3 to 1.1" is a stated origin).
    """
    line, e = c.line(), c.entity
    if line is None or e.span is None:
        return None
    tail = line[e.span[1]:e.span[1] + 60]
    tail = tail[:m.start()] if (m := _STATEMENT_END.search(tail)) else tail
    m = _REFERENCE.search(tail)
    if m is None:
        return None
    return str(m.group("a") or m.group("b")).replace(",", "")


def is_the_number(written: str, value: float) -> bool:
    """Whether a charted value is the number as written, to its stated precision ("6.0" is 6,
    "10.7" is 10.7; "132" is not 133, another draw the value check's tolerance would pass).
    """
    decimals = len(written.partition(".")[2])
    return abs(float(written) - value) < 0.5 * 10 ** -decimals


def spans_course(c: Case) -> bool:
    """Whether the statement's time is a span from a stated start ("since admission") or
    the whole stay ("stable throughout the stay", written in its clause): its trend is the
    start of that span against its end.
    """
    e, line = c.entity, c.line()
    if e.time_text and _SPAN_TIME.match(e.time_text):
        return True
    if line is None or e.span is None:
        return False
    return bool(_STAY_SPAN.search(line, e.span[0], max(clause_of(line, e.span[0])[1], e.span[1])))


def course_window(window: TimeSpan | None, ctx: NoteContext) -> TimeSpan | None:
    """A span with a stated start ("since admission") runs from that start to the note's
    time: a progress note's day, a summary's discharge.
    """
    if window is None:
        return None
    if ctx.note_type == "discharge_summary":
        end = parse_time(ctx.dischtime) or parse_time(window.end)
    else:
        end = judged_until(ctx) or parse_time(window.end)  # the note's time (note_time.py)
    if end is None:
        return window
    return TimeSpan(window.start, end.strftime("%Y-%m-%d %H:%M:%S"))


def extreme_of(n: NumericClaim) -> str | None:
    """"max" for a peak ("peaked at 5.4": the reading's maximum is its value), "min" for a nadir."""
    r = n.reading
    if r.value is None:
        return None
    if r.max_lo is not None and r.max is not None and r.min is None and float(r.max) == float(r.value):
        return "max"
    if r.min is not None and r.min_hi is not None and r.max is None and float(r.min) == float(r.value):
        return "min"
    return None


#: a number, then what joins a later event to it ("1.8 that climbed", "5.4, then fell"): the
#: text between a value and a past-tense direction verb narrated after it
_THEN = re.compile(rf"(?:{NUMBER})\s*\*?\s*(?:[A-Za-z/%]{{1,6}}\s*)?[,;]?\s*(?:(?:and|then|that|which|but|later|"
                   r"subsequently|before)\s+)+$", re.I)
_PAST = re.compile(r"(?:ed|\bfell|\brose|\brisen|\bcame\s+down|\bwent\s+(?:up|down))$", re.I)


def narrated_after(c: Case, word: str | None) -> bool:
    """Whether the direction verb is narrated after the value, as what happened next ("an INR
    of 1.8 that climbed", "5.4, then fell"): a past-tense verb joined to the value by
    and/then/that/which. A participle or adjective ("2.1 and rising", "27.5, stable") is the
    state at the value's time, the course up to it.
    """
    line, e = c.line(), c.entity
    if not word or not _PAST.search(word.strip()):
        return False
    # the statement's words: its span of the line, or its own text when it runs on past a wrapped line's end
    for text in ((line[e.span[0]:e.span[1]],) if line is not None and e.span is not None else ()) + (e.text,):
        at = text.lower().rfind(word.lower())
        if at > 0:
            return bool(_THEN.search(text[:at]))
    return False


def after_value(c: Case, claim: str, value: float, tol: float, hits: Rows, rows: Rows) -> Verdict:
    """"peaked at 5.4 and normalized", "nadired at 40 then recovered", "1.8 that climbed": the
    direction word tells the course after the value (an extreme is where the values turned):
    a later value of the window (the value's own check has passed) lies beyond the tolerance
    in the claimed direction. What the values did before a peak is the peak's own claim.
    """
    e, window = c.entity, c.entity.window
    turned = "fell" if claim == "falling" else "rose"
    for hit in hits:
        after = [float(r["valuenum"]) for r in rows
                 if str(r.get("time")) > str(hit.get("time")) and in_window(r, window)]
        moved = [v for v in after if (v < value - tol if claim == "falling" else v > value + tol)]
        if moved:
            end = min(moved) if claim == "falling" else max(moved)
            return verdict(c, True, f"{e.text}: {num(value)} recorded, and the values {turned} after it "
                           f"(to {num(end)})", [hit])
    return verdict(c, False, f"{e.text}: {num(value)} recorded, but the values never {turned} after it",
                   hits[:2] or rows[:2])
