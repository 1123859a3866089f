"""The course of an infusion in the rest of its drug's sentence: rates, stops and set-off times.

"Lasix gtt 30 -> 20 mg/hr, stopped at 0600", "rate decreased from 1,100 to 800 units/hr",
"titrated up to 2.5, then off by 1400": a note states a drip's course as a sequence of
claims, each checkable on its own (a rate among the drug's charted rates, a stop against
the end of its last run). :func:`course_steps` reads them; the medication scanner makes
each a mention of the drug named last (:mod:`.medications`). A stop or a dose's time in a
clause of its own (:func:`clause_times`) is such a claim too, for any drug.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ehrlib.pipeline.offline.rule import Rule

__all__ = ["CourseStep", "course_steps", "clause_times", "number", "HEAD_ONLY", "COURSE_RULE", "CLAUSE_TIME_RULE"]

_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_RATE_UNIT = (r"(?:mcg|mg|g|units?|u|ml|cc)\s*/\s*kg\s*/\s*(?:min|hr|h)\b|"
              r"(?:mcg|mg|g|units?|u|ml|cc)\s*/\s*(?:min|hr|h)\b|(?:mcg|mg|g|units?|u)\s+per\s+(?:min|hour|hr)\b")
#: one step of an infusion's course: a chain of rates sharing the unit after the last
#: ("30 -> 20 mg/hr", "from 1,100 to 800 units/hr", "weaned 40 -> 10 mcg/kg/min")
#: a link of a chain: an arrow, "to" or "then", after an optional time or remark without numbers
#: before an arrow ("0.4 at its peak late AM -> 0.15")
_LINK = r"(?:(?:\s+[a-z][a-z ]{0,30}?)?\s*(?:->|→)|\s*(?:>|(?:(?:down|up|back)\s+)?to|then))"
_RATE_CHAIN = re.compile(rf"(?<![\d.,\-q])(?P<chain>{_NUM}(?:{_LINK}\s*{_NUM})*)"
                         rf"\s*(?P<unit>{_RATE_UNIT})", re.I)
#: a chain of doses sharing the unit after the last ("furosemide 20 -> 40 -> 80 mg IV"): two or more
#: numbers joined by arrows, each a dose of its own; a number fused to a frequency's "q" ("q12 -> 500 mg
#: PO") is the dosing interval, in either chain, never its first value
_DOSE_CHAIN = re.compile(rf"(?<![\d.,\-q])(?P<chain>{_NUM}(?:\s*(?:->|→)\s*{_NUM})+)"
                         r"\s*(?P<unit>mg|mcg|g|gm|units?|meq|mmol)\b(?!\s*/)", re.I)
#: the drip's rate at another moment, without a unit ("now 0.12", "had been 100 overnight")
_RATE_NOW = re.compile(rf"\b(?:now|currently|had\s+been|was\s+at|now\s+at)\s+(?P<num>{_NUM})"
                       r"(?![\d.]|,\d|\s*(?:%|/|(?:mg|mcg|g|gm|units?|u|ml|cc|meq|mmol|l|kg|mm|cm|hrs?|h|min|x|days?|"
                       r"times|pm|am|beats|bpm|breaths)\b))", re.I)
#: a titration to a number without a unit ("titrated up to 2.5"): the rate in the drug's charted unit
_TITRATED_TO = re.compile(rf"\b(?:titrated|increased|decreased|weaned|turned|went|down|up)(?:\s+(?:up|down|back))?"
                          rf"\s+to\s+(?P<num>{_NUM})(?![\d.]|,\d|\s*(?:%|/|[a-z]))", re.I)
#: the stop of a course at a clock time ("off at 1740", "weaned off by 1600", "stopped at 0600")
_STOP_AT = re.compile(r"\b(?P<a>(?:weaned\s+|turned\s+|titrated\s+)?off|stopped|d/c'?d|dc'?d|discontinued)\s+"
                      r"(?:(?:at|by|since|@|~|around)\s*)?(?P<t>\d{3,4}h?\b(?!\s*(?:mg|mcg|g|ml|cc|units?)\b)|"
                      r"\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|noon|midnight)",
                      re.I)
#: a time of the drug's course told in a clause of its own: after a comma, semicolon, bracket or dash
#: ("NS @ 100 cc/hr, finished 0600", "neo 3 mcg/kg/min, which was weaned off on [date]", "cefazolin 1 g
#: IV - last dose 0600", "(first dose given at 0200)"), a stop or a dose with its own time, a claim apart
#: from the drug's statement; in the drug's own clause ("cefazolin 2 g at 1200") the time is the statement's
_CLAUSE_BREAK = (r"(?:[,;(]|\s[-\u2013]{1,2}\s)\s*(?:(?:which|that|it|and|then|but)\s+)*"
                 r"(?:(?:was|were|is|had\s+been)\s+)?")
_CLAUSE_STOP = (r"(?P<stop>(?:weaned\s+|turned\s+|titrated\s+)?off|stopped|d/c'?d|dc'?d|discontinued|finished|"
                r"completed|paused|held)")
_CLAUSE_DOSE = r"(?P<given>(?:(?:first|last|final)\s+)?dose\s+given|given|(?:first|last|final)\s+dose)"
_CLAUSE_WHEN = (r"\s*(?:(?:at|by|on|since|@|~|around)\s*)?(?:the\s+(?:morning|afternoon|evening|night)\s+of\s+)?"
                r"(?P<t>`{3}[^`]{1,20}`{3}|(?:HD|POD)\s*#?\s*\d{1,2}\b|\d{1,2}:\d{2}(?:\s*[ap]m)?\b|\d{1,2}\s*[ap]m\b|"
                r"\d{3,4}h?\b(?!\s*(?:mg|mcg|g|ml|cc|units?|u|mEq|L)\b)|noon\b|midnight\b)")
_CLAUSE_TIME = re.compile(_CLAUSE_BREAK + rf"(?P<claim>(?:{_CLAUSE_STOP}|{_CLAUSE_DOSE}){_CLAUSE_WHEN})", re.I)
#: the chain's action for a stop word told in a clause of its own
_STOP_ACTIONS = {"finished": "stopped", "completed": "stopped", "paused": "held"}


@dataclass(frozen=True, slots=True)
class CourseStep:
    """One claim of an infusion's course after its drug name: a rate (``rate`` set, its
    ``unit`` None when the note gives none) or a stop at a clock time (``rate`` None).
    Offsets are in the text scanned.
    """

    start: int
    end: int
    rate: float | None
    unit: str | None
    action: str | None
    #: one of several rates of a chain ("from 1,100 to 800 units/hr")
    chained: bool = False
    #: a dose of a chain of doses ("20 -> 40 mg"), not a rate
    dose: bool = False
    #: a dose's time told in a clause of its own ("- last dose 0600"): an administration then
    given: bool = False


_STEP_LEAD = re.compile(r"(?:(?:then\s+)?(?:(?:de|in)creased|titrated(?:\s+(?:up|down))?|weaned|reduced|down|up|"
                        r"drip|gtt|infusion|rate)\s+)?(?:(?:from|to|at|@)\s+)?$", re.I)


#: nothing but infusion words between a drug and its first rate ("Lasix gtt 30 -> 20 mg/hr")
HEAD_ONLY = re.compile(r"[\s:@-]*(?:(?:gtt|drip|infusion|was|is|now|running|at)\b[\s:@-]*)*", re.I)


def number(text: str) -> float:
    """A number as written, thousands separators and all ("1,100")."""
    return float(text.replace(",", ""))


def course_steps(text: str) -> list[CourseStep]:
    """The course claims of ``text`` (the rest of a drug's sentence), in order: every rate
    of a chain ("30 -> 20 mg/hr" is two, a time may sit before an arrow), every dose of a
    chain of doses ("20 -> 40 mg"), a titration to a unit-less number or the rate at another
    moment ("now 0.12"), a stop at a clock time. A range ("50-100 mcg/hr") is no chain.
    """
    out: list[CourseStep] = []
    for m in _RATE_CHAIN.finditer(text):
        unit = re.sub(r"\s+", "", m.group("unit").lower()).replace("per", "/")
        nums = list(re.finditer(_NUM, m.group("chain")))
        lead = _STEP_LEAD.search(text[:m.start()])
        action = "titrated" if lead and re.match(r"(?:de|in)cr|titr|wean|reduc|down|up", lead.group(0).strip(), re.I) \
            else None
        for i, n in enumerate(nums):
            a = m.start("chain") + n.start()
            start = lead.start() if i == 0 and lead and lead.group(0) else a
            end = m.end() if i == len(nums) - 1 else m.start("chain") + n.end()
            out.append(CourseStep(start, end, number(n.group(0)), unit, action if i == 0 else "titrated",
                                  len(nums) > 1))
    for m in _DOSE_CHAIN.finditer(text):
        if any(s.start <= m.start() < s.end for s in out):
            continue
        unit = m.group("unit").lower()
        nums = list(re.finditer(_NUM, m.group("chain")))
        for i, n in enumerate(nums):
            a = m.start("chain") + n.start()
            end = m.end() if i == len(nums) - 1 else m.start("chain") + n.end()
            out.append(CourseStep(a, end, number(n.group(0)), unit, None if i == 0 else "changed", True, True))
    for m in list(_TITRATED_TO.finditer(text)) + list(_RATE_NOW.finditer(text)):
        if not any(s.start <= m.start("num") < s.end for s in out):
            out.append(CourseStep(m.start(), m.end(), number(m.group("num")), None, "titrated"))
    for m in _STOP_AT.finditer(text):
        out.append(CourseStep(m.start(), m.end(), None, None, "off"))
    out += clause_times(text, out)
    return sorted(out, key=lambda s: s.start)


def clause_times(text: str, found: Sequence[CourseStep] = ()) -> list[CourseStep]:
    """The stops and dose times of ``text`` told in a clause of their own (see ``_CLAUSE_TIME``),
    none overlapping a step already ``found``: each a claim apart from the drug's statement,
    on its own words, which then carry its time.
    """
    out: list[CourseStep] = []
    for m in _CLAUSE_TIME.finditer(text):
        a, b = m.start("claim"), m.end("claim")
        if any(s.start < b and a < s.end for s in found):
            continue
        if m.group("stop"):
            word = m.group("stop").lower()
            out.append(CourseStep(a, b, None, None, _STOP_ACTIONS.get(word, "off" if "off" in word else word)))
        else:
            out.append(CourseStep(a, b, None, None, "given", given=True))
    return out


COURSE_RULE = Rule("extract.infusion_course", "A drug's sentence states a course: each rate of a chain or titration "
                   "and each stop at a clock time is a claim of its own about the drug last named.", course_steps)
CLAUSE_TIME_RULE = Rule("extract.clause_time", "A stop or a dose's time told in a clause of its own after a drug's "
                        "statement (after a comma, semicolon, bracket or dash: \"..., finished 0600\", \"- last dose "
                        "0600\") is a claim of its own on its own words; the drug's statement is judged without that "
                        "time, which it keeps when told in its own clause (\"2 g at 1200\").", clause_times)
