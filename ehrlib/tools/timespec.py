"""Time specs shared by the temporal tools.

A note says "on admission", "POD 2", "06-24" or "from HD 2 to HD 4"; a table has
timestamps. Following the paper (Appendix C.3, Get_Item_Status_History):

* an exact date matches that calendar day; an exact timestamp matches one hour either
  side (charting is rarely to the minute of a note's time);
* a narrative anchor ("admission", "discharge", "note date", "yesterday", "overnight",
  "HD n", "POD n", a named context event such as "surgery") is interpreted, then widened
  to one day either side,
  because the note's author places it only roughly;
* a duration "A to B" runs from one day before A to one day after B.

An empty spec, or "during admission", means the whole stay widened by a day each way.
Windows are half-open ``[start, end)``.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

from ehrlib.errors import EhrlibError
from ehrlib.tools.context import PatientContext

__all__ = ["TimeWindow", "TimeSpecError", "parse_time_spec", "TIME_SPEC_HELP"]

DAY = _dt.timedelta(days=1)
HOUR = _dt.timedelta(hours=1)
_MAX_DAY_NUMBER = 1000
_YEARS = (1800, 2300)

TIME_SPEC_HELP = ("use a date '2130-06-24' or '06-24', a timestamp '2130-06-24 08:00', 'admission', "
                  "'discharge', 'note date', 'HD 3', 'POD 2', a named event, 'during admission', "
                  "or a range 'HD 2 to HD 4'")


class TimeSpecError(EhrlibError, ValueError):
    """A time spec the tools cannot read; the message says what would work."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start: _dt.datetime
    end: _dt.datetime
    spec: str
    description: str

    def as_dict(self) -> dict[str, str]:
        return {"spec": self.spec, "start": self.start.isoformat(sep=" "), "end": self.end.isoformat(sep=" "),
                "meaning": self.description}


_WHOLE = {"", "all", "any", "admission stay", "whole admission", "entire admission", "this admission",
          "during admission", "during the admission", "hospital stay", "hospital course", "stay",
          "whole stay", "entire stay", "hospitalization", "during hospitalization"}
_ADMISSION = {"admission", "admit", "on admission", "at admission", "upon admission", "admission day",
              "presentation", "on presentation", "at presentation", "arrival", "on arrival"}
_DISCHARGE = {"discharge", "at discharge", "on discharge", "upon discharge", "discharge day", "day of discharge"}
_NOTE = {"note date", "note", "note day", "today", "date of note", "note time"}
_YESTERDAY = {"yesterday", "day before", "the day before", "prior day", "previous day"}
_OVERNIGHT = {"overnight", "last night", "over night", "o/n"}
_SURGERY_NAMES = ("surgery", "operation", "procedure", "op", "or")
_RANGE = re.compile(r"^\s*(?:from\s+|between\s+)?(.+?)\s+(?:to|until|through|thru|and|-|–|—)\s+(.+?)\s*$",
                    re.IGNORECASE)
_HD = re.compile(r"^(?:hd|hospital\s+day|day|hosp(?:ital)?\s*day)\s*#?\s*(-?\d+)$")
_POD = re.compile(r"^(?:pod|post[- ]?op(?:erative)?\s+day|postop\s+day)\s*#?\s*(-?\d+)(?:\s+(?:after|from)\s+(.+))?$")
_MONTH_DAY = re.compile(r"^(\d{1,2})[-/](\d{1,2})$")


def _norm(spec: str) -> str:
    return re.sub(r"\s+", " ", spec.strip().lower())


def _day(d: _dt.datetime) -> tuple[_dt.datetime, _dt.datetime]:
    start = _dt.datetime.combine(d.date(), _dt.time())
    return start, start + DAY


def _check_year(d: _dt.datetime, spec: str) -> _dt.datetime:
    if not _YEARS[0] <= d.year <= _YEARS[1]:
        raise TimeSpecError(f"date {spec!r} is outside the years this database covers")
    return d


def _day_number(text: str, spec: str) -> int:
    n = int(text)
    if abs(n) > _MAX_DAY_NUMBER:
        raise TimeSpecError(f"day number in {spec!r} is implausibly large")
    return n


def _anchor(ctx: PatientContext, name: str | None, spec: str) -> tuple[str, _dt.datetime]:
    if name:
        key = _norm(name)
        if key in ctx.anchors:
            return key, ctx.anchors[key]
        raise TimeSpecError(f"no event named {name!r} in this patient's context; known events: "
                            f"{sorted(ctx.anchors) or 'none'}")
    for key in _SURGERY_NAMES:
        if key in ctx.anchors:
            return key, ctx.anchors[key]
    if len(ctx.anchors) == 1:
        return next(iter(ctx.anchors.items()))
    raise TimeSpecError(f"{spec!r} needs a surgery time, but this patient's context names "
                        f"{sorted(ctx.anchors) or 'no events'}; give a date instead")


def _point(spec: str, ctx: PatientContext) -> tuple[_dt.datetime, _dt.datetime, bool, str]:
    """(lower bound, upper bound, narrative?, meaning) of one point spec."""
    s = _norm(spec)
    if s in _ADMISSION:
        return ctx.admittime, ctx.admittime, True, "admission time"
    if s in _DISCHARGE:
        if ctx.dischtime is None:
            raise TimeSpecError("this admission has no discharge time")
        return ctx.dischtime, ctx.dischtime, True, "discharge time"
    if s in _NOTE:
        if ctx.note_date is None:
            raise TimeSpecError("the note date is not known for this patient; give a date instead")
        lo, hi = _day(ctx.note_date)
        return lo, hi, True, "note date"
    if s in _YESTERDAY or s in _OVERNIGHT:
        if ctx.note_date is None:
            raise TimeSpecError(f"{spec!r} is relative to the note date, which is not known; give a date instead")
        day, _ = _day(ctx.note_date)
        if s in _YESTERDAY:
            return day - DAY, day, True, "the day before the note date"
        return day - DAY + 18 * HOUR, day + 8 * HOUR, True, "overnight before the note (18:00 to 08:00)"
    if m := _HD.match(s):
        n = _day_number(m.group(1), spec)
        lo, hi = _day(ctx.admittime + (n - 1) * DAY)
        return lo, hi, True, f"hospital day {n} (HD 1 = admission day)"
    if m := _POD.match(s):
        n = _day_number(m.group(1), spec)
        name, when = _anchor(ctx, m.group(2), spec)
        lo, hi = _day(when + n * DAY)
        return lo, hi, True, f"post-operative day {n} after {name} (POD 0 = day of {name})"
    if s in ctx.anchors:
        return ctx.anchors[s], ctx.anchors[s], True, f"event {s!r}"
    if m := _MONTH_DAY.match(s):
        month, day = int(m.group(1)), int(m.group(2))
        candidates = []
        for year in (ctx.admittime.year - 1, ctx.admittime.year, ctx.admittime.year + 1):
            try:
                candidates.append(_dt.datetime(year, month, day))
            except ValueError:
                continue
        if not candidates:
            raise TimeSpecError(f"{spec!r} is not a valid month-day")
        best = min(candidates, key=lambda d: abs((d - ctx.admittime).total_seconds()))
        lo, hi = _day(best)
        return lo, hi, False, f"date {lo.date()} (year taken from the admission)"
    try:
        parsed = _dt.datetime.fromisoformat(s.replace("t", " ").replace("/", "-")) if len(s) <= 40 else None
    except ValueError:
        parsed = None
    if parsed is None:
        raise TimeSpecError(f"cannot read time spec {spec!r}; {TIME_SPEC_HELP}")
    parsed = _check_year(parsed.replace(tzinfo=None), spec)
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", s.replace("/", "-")):
        lo, hi = _day(parsed)
        return lo, hi, False, f"date {lo.date()}"
    return parsed - HOUR, parsed + HOUR, False, f"timestamp {parsed} ± 1 hour"


def parse_time_spec(spec: str | None, ctx: PatientContext) -> TimeWindow:
    """The half-open window a spec denotes for this patient; raises TimeSpecError."""
    raw = "" if spec is None else str(spec)
    if len(raw) > 200:
        raise TimeSpecError("time spec is too long; " + TIME_SPEC_HELP)
    s = _norm(raw)
    if s in _WHOLE:
        end = ctx.dischtime or ctx.admittime
        return TimeWindow(ctx.admittime - DAY, end + DAY, raw, "the whole admission, widened one day each way")
    m = _RANGE.match(s)
    if m and not re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}( \d{1,2}:\d{2}(:\d{2})?)?", s):
        lo, _, _, left = _point(m.group(1), ctx)
        _, hi, _, right = _point(m.group(2), ctx)
        start, end = lo - DAY, hi + DAY
        if end <= start:
            raise TimeSpecError(f"range {spec!r} ends before it starts")
        return TimeWindow(start, end, raw, f"from {left} to {right}, widened one day each way")
    lo, hi, narrative, meaning = _point(s, ctx)
    if narrative:
        return TimeWindow(lo - DAY, hi + DAY, raw, f"{meaning}, widened one day either side")
    return TimeWindow(lo, hi, raw, meaning)
