"""Which resolved time a statement carries, and what a preposition does to it.

:func:`ehrlib.pipeline.offline.timex.resolve_line` finds and resolves every temporal
expression of a line. This module decides, for one statement inside the line:

* **Attachment.** A date dates the clause it sits in ("Cr peaked at 2.3 on [**4-11**]";
  "K 3.1 [**2145-3-4**]"): the statement takes the date of its own clause; with none, the
  one date of its sentence; with several and none in its clause, none (the segment's
  window applies, as before).
* **Bounds.** A preposition turns a day into an interval: "by D" ends at D (from the
  start of the stay: the event happened at some point up to D), "since D" and "after D"
  start at D (up to the note's time), "before/prior to D" ends where D starts, "from D1
  to/through D2" spans both, as does a change from a value at D1 to a value at D2 ("from
  9.8 post-op to 7.9 at discharge"); a change from a value at D alone ("improving from 6.0
  yesterday"), or a direction from D ("Hgb stable from last evening"), runs from D to the
  note's time; a change told by its endpoints with only the
  end dated ("climbed from 489 to a peak of 1,450 on D") is, at its "from", the course from
  the stay's start to D, while D still dates the end value. "through/until D" alone keeps
  D's own window: a state said to last until D is claimed at D, and widening it to the
  whole stay would let any
  earlier record confirm it.
* **Asides.** A time inside parentheses with a value of its own dates that value: in "Phos
  2.7 (was 1.6 yesterday)" and "Hgb drifting down (10.7 yesterday)" the day is the earlier
  value's, not the statement's outside the parentheses; "R IJ TLC ([**12-13**])", a time
  alone in the parentheses, still dates the statement before it.
* **Courses.** "weaned from 40 to 10 by [**4-11**]" states a change with its start and end
  values and, when written, the time it was reached.

Pure functions over the line's text and its :class:`~ehrlib.pipeline.records.TimeRef`
list, so every rule family uses the same attachment.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, time

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.clauses import mask_parentheticals
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.trends import trend_word
from ehrlib.pipeline.records import TimeRef

__all__ = ["Course", "in_aside", "ASIDE_RULE", "clause_of", "sentence_of", "statement_ref", "bounded", "courses",
           "reaches", "ends_change", "premodifies", "REACH_RULE",
           "is_stamped", "stamp_ref", "stamp_clock", "RULE", "STAMP_RULE", "STAMP_CLOCK_RULE"]

_SENTENCE_END = re.compile(r"(?<!\b[A-Za-z])[.;](?=\s|$)|\n|\|")
_CLAUSE_END = re.compile(_SENTENCE_END.pattern + r"|,\s*(?=(?:and|then|but|which|after\s+which|while)\b)"
                         r"|\s(?=then\s)|\s(?=but\s)")
_PREP = re.compile(r"\b(?P<p>by|through|thru|until|till|up\s+to|since|after|before|prior\s+to|from)\s*(?:the\s+)?$",
                   re.I)
_RANGE_JOIN = re.compile(r"^\s*(?:to|through|thru|until|till|-|–)\s*$", re.I)
#: "from 9.8 post-op to 7.9 at discharge": a change from a value at one time to a value at
#: another spans both times (the values are the statement's own claims)
_VALUE = r"(?:" + NUMBER + r")\s*(?:[A-Za-z/%]{1,6}\s+)?"
_FROM_VALUE = re.compile(r"\bfrom\s+" + _VALUE + r"$", re.I)
#: "climbed from 489 to a peak of 1,450 on D": a change told by its endpoints runs over the course up to D
_FROM_TO_VALUE = re.compile(r"\bfrom\s+" + _VALUE + r"(?:to|->|→)\s+(?:a\s+(?:new\s+)?(?:peak|nadir|high|low|"
                            r"max(?:imum)?|min(?:imum)?)\s+of\s+)?" + _VALUE + r"(?:at|on|by)\s+(?:the\s+)?$", re.I)
_VALUE_JOIN = re.compile(r"^\s*,?\s*(?:to|->|→)\s+" + _VALUE + r"(?:(?:at|on|by)\s+)?(?:the\s+)?$", re.I)


def _bounds(text: str, pos: int, pattern: re.Pattern[str]) -> tuple[int, int]:
    start = 0
    for m in pattern.finditer(text, 0, pos):
        start = m.end()
    after = pattern.search(text, pos)
    return start, (after.start() if after else len(text))


def clause_of(text: str, pos: int) -> tuple[int, int]:
    """Offsets of the clause holding ``text[pos]``."""
    return _bounds(text, pos, _CLAUSE_END)


def sentence_of(text: str, pos: int) -> tuple[int, int]:
    """Offsets of the sentence holding ``text[pos]``."""
    return _bounds(text, pos, _SENTENCE_END)


#: a time set off by a comma with a predicate of its own after it ("intubated, now septic")
_OPENS_PREDICATE = re.compile(r"\s*(?:(?:and|or)\s+)?[A-Za-z]{3,}")
_CHANGE_JOIN = re.compile(r"\bto\b|->|→", re.I)
#: a break after which a new clause with its own subject begins; a relative clause ("dopamine, which was
#: weaned off on 8/9") tells more of the same statement, so its time still reaches back
_NEW_CLAUSE = re.compile(_SENTENCE_END.pattern + r"|,\s*(?=(?:and|then|but|while)\b)|\s(?=then\s)|\s(?=but\s)")


def reaches(text: str, end: int, span: tuple[int, int]) -> bool:
    """Whether a time written after a statement ending at ``end`` can date it: only inside
    the statement's clause ("Lactate 1.1 by then, and a repeat on 2/8 was 1.4": 2/8 is the
    repeat's; a relative clause, "which was stopped on 2/8", still tells the statement),
    and not when, set off by a comma, it opens a predicate of its own ("intubated, now
    septic": now is the sepsis's time, not the intubation's).
    """
    gap = text[end:span[0]]
    if _NEW_CLAUSE.search(gap):
        return False
    if not gap.rstrip().endswith(","):
        return True
    _, s_hi = sentence_of(text, span[0])
    rest = re.split(r"[,(]", text[span[1]:s_hi], maxsplit=1)[0]
    return not _OPENS_PREDICATE.match(rest)


def ends_change(text: str, start_value: str, end_value: str, end: int, other_start: int) -> bool:
    """Whether the statement ending at ``end`` is the start of a stated change whose end value
    (another statement of the same quantity at ``other_start``) comes first before the time:
    "Cr rose from 2.0 to 4.3 on 8/24" dates the 4.3, not the 2.0.
    """
    return start_value != end_value and bool(_CHANGE_JOIN.search(text[end:other_start]))


def premodifies(text: str, span: tuple[int, int], test_start: int) -> bool:
    """Whether the time at ``text[span]`` is written directly before a test's name, as part of
    it ("the 12/3 culture", "8/18 BCx"): that test's date, not the date of the rest of the
    sentence. A time led by a preposition ("On 12/3 cultures were sent") dates the clause.
    """
    return span[1] <= test_start and not text[span[1]:test_start].strip() \
        and not _PREP_LEAD.search(text[:span[0]])


_PREP_LEAD = re.compile(r"\b(?:on|by|since|from|after|before|until|through|at|in|of)\s*(?:the\s+)?$", re.I)


def _span(ref: TimeRef) -> tuple[int, int]:
    """The span of a reference the caller has kept as dated."""
    if ref.span is None:
        raise ValueError(f"time reference {ref.text!r} has no span")
    return ref.span


def _inside(ref: TimeRef, lo: int, hi: int) -> bool:
    return ref.span is not None and lo <= ref.span[0] and ref.span[1] <= hi


def statement_ref(text: str, start: int, end: int, refs: Sequence[TimeRef]) -> TimeRef | None:
    """The time of the statement at ``text[start:end]``: the nearest dated expression of
    its clause, else the only one of its sentence, else ``None``.
    """
    dated = [r for r in refs if r.span is not None]
    c_lo, c_hi = clause_of(text, start)
    in_clause = [r for r in dated if _inside(r, c_lo, max(c_hi, end))]
    if in_clause:
        return min(in_clause, key=lambda r: min(abs(_span(r)[0] - end), abs(start - _span(r)[1])))
    s_lo, s_hi = sentence_of(text, start)
    in_sentence = [r for r in dated if _inside(r, s_lo, max(s_hi, end))]
    return in_sentence[0] if len(in_sentence) == 1 else None


def in_aside(text: str, span: tuple[int, int], statement: int, masked: str | None = None) -> bool:
    """Whether the time at ``text[span]`` dates a value of its own inside a closed
    parenthetical that does not hold ``text[statement]`` ("(was 1.6 yesterday)"); an aside
    that holds only the time ("TLC ([**12-13**])") dates the statement before it.
    ``masked``: :func:`mask_parentheticals` of ``text``, if at hand.
    """
    at = span[0]
    masked = mask_parentheticals(text) if masked is None else masked
    if masked[at] != " " or text[at] == " ":
        return False
    lo, hi = text.rfind("(", 0, at), text.find(")", span[1])
    if not re.search(r"\d", text[lo + 1:at] + text[span[1]:hi if hi >= 0 else len(text)]):
        return False  # nothing but the time: it annotates the statement before the parenthesis
    if masked[statement] != " " or text[statement] == " ":
        return True  # the statement stands outside every aside
    first, last = sorted((at, statement))
    return any(ch in "()" for ch in text[first:last])


#: a results record's stamp at the start of a line: a date (``[**2101-3-4**]``, ``3/4``) or the
#: de-identified ``___``, then a clock time, then the specimen or the first ``Name-value``; the
#: specimen may also come first (``PLEURAL FLUID ___ 08:38AM: ...``)
_STAMP = re.compile(r"^\s*(?:[A-Z][A-Z ()]{2,40}\s+)?"
                    r"(?:\[\*\*[\d-]+\*\*\]|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|_{2,})\s+"
                    r"\d{1,2}:\d{2}\s*(?:[AP]M)?:?\s+(?=[A-Z][A-Za-z]*(?:\s|-))")


def is_stamped(line: str) -> bool:
    """Whether ``line`` is a results record (``[**2101-3-4**] 06:10AM BLOOD WBC-9.1 Hgb-9.8*``)."""
    return bool(_STAMP.match(line))


_STAMP_CLOCK = re.compile(r"\s(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ap>[AP]M)?", re.I)


def stamp_clock(text: str) -> tuple[int, int] | None:
    """(hour, minute) of a results record's stamp (``___ 11:34PM BLOOD ...`` gives (23, 34)):
    the draw's clock time, which times its values even when the date is de-identified.
    """
    m = _STAMP.match(text)
    c = _STAMP_CLOCK.search(text, 0, m.end()) if m else None
    if c is None:
        return None
    hour, minute, ap = int(c.group("h")), int(c.group("m")), (c.group("ap") or "").upper()
    if ap == "PM" and hour < 12:
        hour += 12
    if ap == "AM" and hour == 12:
        hour = 0
    return (hour, minute) if hour < 24 and minute < 60 else None


def stamp_ref(text: str, refs: Sequence[TimeRef]) -> TimeRef | None:
    """The stamp of a results record line: it times every value on the line, however far
    along the line the value is and whatever date the next line writes. ``None`` when
    ``text`` is no record line or its stamp resolves to no date (``___ 05:40AM``: the
    segment's window applies).
    """
    m = _STAMP.match(text)
    if m is None:
        return None
    return next((r for r in refs if r.span is not None and r.span[0] < m.end() and r.span[1] > m.start()), None)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _direction_before(text: str) -> bool:
    """Whether ``text`` ends with a trend word ("stable", "up", "trending down")."""
    found = trend_word(text[-25:])
    return found is not None and text.rstrip().lower().endswith(found[1].lower())


def bounded(text: str, refs: Sequence[TimeRef], *, stay_start: datetime | None,
            reference: datetime) -> list[TimeRef]:
    """``refs`` with each window widened by the preposition before it (see the module
    docstring); "from D1 to D2" becomes one reference covering both. Unbounded sides are
    the stay's start and the note's ``reference`` time.
    """
    out: list[TimeRef] = []
    ordered = sorted((r for r in refs), key=lambda r: r.span or (0, 0))
    skip: set[int] = set()
    lo_default = _iso(stay_start) if stay_start else None
    hi_default = _iso(reference)
    # a change from a dated value runs to the note's writing, at any hour of a day-only note's day
    now = _iso(reference.replace(hour=23, minute=59, second=59) if reference.time() == time() else reference)
    for i, r in enumerate(ordered):
        if i in skip:
            continue
        span = r.span
        nxt = ordered[i + 1] if i + 1 < len(ordered) else None
        fv = _FROM_VALUE.search(text[:span[0]]) if span is not None else None
        if span is not None and fv is not None and nxt is not None and nxt.span is not None \
                and _VALUE_JOIN.match(text[span[1]:nxt.span[0]]):
            skip.add(i + 1)
            out.append(TimeRef(r.line, text[fv.start():nxt.span[1]], TimeSpan(r.window.start, nxt.window.end),
                               r.anchor, (fv.start(), nxt.span[1])))
            continue
        ft = _FROM_TO_VALUE.search(text[:span[0]]) if span is not None else None
        if ft is not None:  # the change as a whole, at its "from": the stay's course up to the end value's time
            out.append(TimeRef(r.line, text[ft.start():_span(r)[1]], TimeSpan(lo_default, r.window.end), r.anchor,
                               (ft.start(), ft.start() + 4)))
        if span is not None and fv is not None:  # "improving from 6.0 yesterday": from then to the note's time
            out.append(replace(r, window=TimeSpan(r.window.start, max(now, r.window.end or now))))
            continue
        m = _PREP.search(text[:span[0]]) if span is not None else None
        if span is None or m is None:  # undated, or no preposition before it: as resolved
            out.append(r)
            continue
        prep = re.sub(r"\s+", " ", m.group("p").lower())
        w = r.window
        if prep == "from" and nxt is not None and nxt.span is not None \
                and _RANGE_JOIN.match(text[span[1]:nxt.span[0]]):
            skip.add(i + 1)
            out.append(TimeRef(r.line, text[m.start("p"):nxt.span[1]], TimeSpan(w.start, nxt.window.end), r.anchor,
                               (m.start("p"), nxt.span[1])))
            continue
        if prep == "from" and _direction_before(text[:m.start("p")]):
            # "Hgb stable from last evening": a direction from a time runs from then to the note's time
            out.append(replace(r, text=text[m.start("p"):span[1]], window=TimeSpan(w.start, max(now, w.end or now)),
                               span=(m.start("p"), span[1])))
            continue
        if prep in ("by", "up to"):
            w = TimeSpan(lo_default, w.end)
        elif prep in ("since", "after"):
            w = TimeSpan(w.start if prep == "since" else w.end, hi_default)
        elif prep in ("before", "prior to"):
            w = TimeSpan(lo_default, w.start)
        else:
            out.append(r)
            continue
        out.append(replace(r, text=text[m.start("p"):span[1]], window=w, span=(m.start("p"), span[1])))
    return out


@dataclass(frozen=True, slots=True)
class Course:
    """A stated change: ``verb`` from ``start_value`` to ``end_value``, reached at ``when``
    (the reference written right after it, if any).
    """

    verb: str
    start_value: float
    end_value: float
    direction: str
    start: int
    end: int
    when: TimeRef | None = None


_COURSE = re.compile(
    r"\b(?P<verb>weaned(?:\s+down)?|titrated(?:\s+(?:up|down))?|tapered|decreased|increased|uptitrated|"
    r"down-?titrated|reduced|escalated|went|changed|turned\s+(?:up|down))\s+"
    r"(?:from\s+)?(?P<a>" + NUMBER + r")\s*(?:%|[A-Za-z/]+)?\s*(?:to|->|→)\s*(?P<b>" + NUMBER + r")"
    r"(?:\s*(?:%|[A-Za-z/]+(?<!\bby)(?<!\bon)(?<!\bover)))?", re.I)


def courses(text: str, refs: Sequence[TimeRef] = ()) -> list[Course]:
    """Every "<verb> from A to B [by/on/over <time>]" of ``text``; ``when`` is the time
    reference that follows within the clause, joined by by/on/over/through/until.
    """
    out: list[Course] = []
    for m in _COURSE.finditer(text):
        a, b = float(m.group("a").replace(",", "")), float(m.group("b").replace(",", ""))
        when = None
        _, c_hi = clause_of(text, m.start())
        for r in sorted((r for r in refs if r.span is not None), key=lambda r: _span(r)[0]):
            lo, hi = _span(r)
            gap = text[m.end():lo]
            if lo >= m.end() and hi <= max(c_hi, hi) \
                    and re.fullmatch(r"\s*(?:[A-Za-z/%]+\s+)?(?:by|on|over|through|thru|until|in)?\s*(?:the\s+)?", gap,
                                     re.I):
                when = r
                break
        direction = "up" if b > a else ("down" if b < a else "stable")
        out.append(Course(re.sub(r"\s+", " ", m.group("verb").lower()), a, b, direction, m.start(), m.end(), when))
    return out


RULE = Rule("time.preposition_bounds", "A preposition before a date bounds the statement's time: 'by D' ends at D, "
            "'since/after D' starts at D, 'before D' ends where D starts, 'from D1 to D2' (or from a value at D1 to a "
            "value at D2) spans both.", bounded)
ASIDE_RULE = Rule("time.aside", "A time inside parentheses beside a value of its own dates that value, not the "
                  "statement outside the parentheses ('Phos 2.7 (was 1.6 yesterday)': yesterday is the 1.6's); a time "
                  "alone in parentheses dates the statement before it.", in_aside)
REACH_RULE = Rule("time.clause_reach", "A time dates the statement of its own clause: a time written after a "
                  "clause break or opening a predicate after a comma, the end value's time of a change 'from A to B "
                  "<time>', and a date written as part of a test's name ('the 12/3 culture') date no other statement.",
                  reaches)
STAMP_CLOCK_RULE = Rule("time.record_stamp_clock", "A results record's clock time is its draw's: its values are "
                        "met by rows charted at that clock time (on any day of the window when the date is "
                        "de-identified); only an item with no row at that clock falls back to the window.",
                        stamp_clock)
STAMP_RULE = Rule("time.record_stamp", "A line that starts with a date-and-time stamp is a results record: the stamp "
                  "is the time of every value on that line, and a stamp without a date leaves the segment's window.",
                  stamp_ref)
