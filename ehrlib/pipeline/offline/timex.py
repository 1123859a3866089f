"""Temporal anchors and relative-time resolution for clinical notes, without an LLM.

Paper §4.1 and Appendix B.4: a statement's time is (1) an explicit date/time in its line,
(2) a relative expression resolved against a global anchor (admission, discharge, surgery,
the note date), or (3) the segment's default window. Narrative anchors ("on admission",
"at discharge", "POD 3") are widened one day either side, as the annotation protocol and
the retrieval tools do; an explicit calendar date covers that whole day.

MIMIC de-identification writes dates as ``[**2164-10-23**]`` or, without the year,
``[**10-23**]``; a partial date takes the year that puts it closest to the reference date
(the admission), which handles stays that cross New Year.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.stay_anchors import latest_before, narrative_day, stay_phrases
from ehrlib.pipeline.records import Anchor, TimeRef

__all__ = [
    "TimeContext",
    "CLOCK_SPAN",
    "clock_span",
    "parse_datetime",
    "fmt",
    "day_window",
    "widen",
    "find_anchors",
    "resolve_line",
    "parse_duration_days",
    "strip_deid",
]

_DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class TimeContext:
    """What relative expressions resolve against.

    ``anchors`` maps names (admission, discharge, surgery, icu_admission, note) to times.
    ``reference`` is the note's own time: the chart date of a physician/nursing note, the
    discharge for a discharge summary.
    """

    reference: datetime
    anchors: Mapping[str, datetime]
    #: widening (days) of narrative anchors, per Appendix B.4 / C.3
    widen_days: float = 1.0
    #: the admission's ICU stays in order: "in the ICU" is a stay, not its first day (.stay_anchors)
    icu_stays: tuple[TimeSpan, ...] = ()
    #: a discharge summary: relative days and clock times count from the paragraph's latest
    #: written date, not from the note's own day (.stay_anchors)
    narrative: bool = False

    def get(self, name: str) -> datetime | None:
        """The anchor's time, or None."""
        return self.anchors.get(name)


def parse_datetime(text: str | None) -> datetime | None:
    """Parse an ISO date or timestamp (``2164-10-23``, ``2164-10-23 14:00:00``, ``...T...``)."""
    if not text:
        return None
    return _parse_datetime(str(text))


@functools.lru_cache(maxsize=1 << 16)
def _parse_datetime(text: str) -> datetime | None:
    # memoised: verification parses the same row and window times again and again (strptime
    # costs ~20 us; a note's verification asked for ~50,000 parses of a few hundred strings)
    text = text.strip().replace("T", " ")
    for form in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text[:19] if form.endswith("%S") else text, form)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def fmt(moment: datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS``, the form TimeSpan holds."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def day_window(day: date | datetime, before: float = 0.0, after: float = 0.0) -> TimeSpan:
    """The calendar day (00:00 to 23:59:59), optionally widened by whole days."""
    start = datetime(day.year, day.month, day.day) - timedelta(days=before)
    end = datetime(day.year, day.month, day.day, 23, 59, 59) + timedelta(days=after)
    return TimeSpan(fmt(start), fmt(end))


def widen(span: TimeSpan, days: float) -> TimeSpan:
    """``span`` widened by ``days`` on each side (open ends stay open)."""
    start, end = parse_datetime(span.start), parse_datetime(span.end)
    return TimeSpan(fmt(start - timedelta(days=days)) if start else None,
                    fmt(end + timedelta(days=days)) if end else None)


def strip_deid(text: str) -> str:
    """``[**2164-10-23**]`` -> ``2164-10-23``; ``[**Hospital1 18**]`` -> ``Hospital1``."""
    def repl(m: re.Match[str]) -> str:
        inner = m.group(1).strip()
        if re.fullmatch(r"[\d\-/ :]+", inner):
            return inner
        return re.sub(r"\s+\d+$", "", inner)
    return re.sub(r"\[\*\*(.*?)\*\*\]", repl, text)


# --- explicit dates ------------------------------------------------------------------------

_TIME = r"(?:\s*(?:at\s+|@\s*)?(?P<hh>[01]?\d|2[0-3]):?(?P<mi>[0-5]\d)(?:\s*(?P<ampm>[ap]\.?m\.?))?(?!\d))?"
_FULL_DATE = re.compile(
    r"(?<![\d/])(?:\[\*\*)?(?P<y>2\d{3})-(?P<m>1[0-2]|0?[1-9])-(?P<d>3[01]|[12]\d|0?[1-9])(?!\d)(?:\*\*\])?" + _TIME)
_US_DATE = re.compile(
    r"(?<![A-Za-z\d/.\-])(?:\[\*\*)?(?P<m>1[0-2]|0?[1-9])[/-](?P<d>3[01]|[12]\d|0?[1-9])(?!\d)(?:[/-](?P<y>(?:2\d)?\d\d))?"
    r"(?:\*\*\])?(?![\d/.]|\s*(?:mg|mcg|g|ml|units?|%|cc|mmol|meq)\b)" + _TIME, re.I)


def _closest_year(month: int, day: int, ref: datetime) -> date | None:
    best: date | None = None
    for year in (ref.year - 1, ref.year, ref.year + 1):
        try:
            cand = date(year, month, day)
        except ValueError:
            continue
        if best is None or abs((cand - ref.date()).days) < abs((best - ref.date()).days):
            best = cand
    return best


def _with_time(day: date, m: re.Match[str]) -> tuple[TimeSpan, bool]:
    if m.group("hh") is None:
        return day_window(day), False
    hour, minute = int(m.group("hh")), int(m.group("mi"))
    ampm = (m.group("ampm") or "").lower()
    if ampm.startswith("p") and hour < 12:
        hour += 12
    if ampm.startswith("a") and hour == 12:
        hour = 0
    # a note's date-and-time ("[**2107-1-4**] 10:38PM") stamps a results block or an
    # event; annotators check it against that calendar day (Appendix B.4), not the minute
    del hour, minute
    return day_window(day), True


def _explicit_dates(text: str, ctx: TimeContext) -> list[tuple[int, int, date, TimeSpan]]:
    found: list[tuple[int, int, date, TimeSpan]] = []
    taken: list[tuple[int, int]] = []
    for m in _FULL_DATE.finditer(text):
        try:
            day = date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
        except ValueError:
            continue
        span, _ = _with_time(day, m)
        found.append((m.start(), m.end(), day, span))
        taken.append((m.start(), m.end()))
    for m in _US_DATE.finditer(text):
        if any(s <= m.start() < e for s, e in taken):
            continue
        # "2/4" bottles, "1/2" tab, BP "120/80": reject when it looks like a ratio of values
        raw = m.group(0)
        if "/" in raw and m.group("y") is None and not raw.startswith("[**"):
            before = text[max(0, m.start() - 12):m.start()].lower()
            if not re.search(r"(on|since|from|to|until|thru|through|of|dated?|by|,|\()\s*$", before) \
                    and not re.match(r"^\s*[:\-]", text[m.end():m.end() + 2]) and m.start() > 0:
                continue
        year = m.group("y")
        if year:
            y = int(year)
            y = y + 2100 if y < 100 and ctx.reference.year >= 2100 else (y + 2000 if y < 100 else y)
            try:
                day = date(y, int(m.group("m")), int(m.group("d")))
            except ValueError:
                continue
        else:
            maybe = _closest_year(int(m.group("m")), int(m.group("d")), ctx.reference)
            if maybe is None:
                continue
            day = maybe
        span, _ = _with_time(day, m)
        found.append((m.start(), m.end(), day, span))
    return sorted(found)


# --- relative expressions --------------------------------------------------------------------

_NUM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
              "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fourteen": 14}
_N = r"(?P<n>\d{1,2}|" + "|".join(_NUM_WORDS) + r")"


def _num(tok: str) -> int:
    return int(tok) if tok.isdigit() else _NUM_WORDS[tok.lower()]


_HD = re.compile(r"\b(?:HD|hospital\s+day|hosp\.?\s*day|day)\s*#?\s*" + _N + r"\b(?!\s*(?:of|x)\s)", re.I)
_POD = re.compile(r"\b(?:POD|post[-\s]?op(?:erative)?\s+day)\s*#?\s*" + _N + r"\b", re.I)
_ICU_DAY = re.compile(r"\b(?:ICU\s+day|MICU\s+day|ICU\s*D)\s*#?\s*" + _N + r"\b", re.I)
_DAYS_AFTER = re.compile(
    _N + r"\s+days?\s+(?P<rel>after|post|following|prior to|before)\s+(?P<what>admission|surgery|the procedure|"
    r"discharge|transfer|intubation|extubation)", re.I)

_NARRATIVE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), name) for p, name in (
        (r"\b(?:on|at|upon|during|since)\s+(?:admission|presentation|arrival|adm)\b|\badmission\s+(?:labs?|exam|vitals?|weight)\b"
         r"|\bon\s+admit\b|\bpresented\s+(?:with|to)\b|\bin\s+the\s+(?:ED|ER|emergency\s+(?:department|room))\b"
         r"|\bED\s+(?:course|vitals|labs)\b|\binitial(?:ly)?\b", "admission"),
        (r"\b(?:on|at|upon|prior\s+to|before|day\s+of)\s+discharge\b|\bdischarge\s+(?:labs?|exam|vitals?|weight)\b"
         r"|\bat\s+the\s+time\s+of\s+discharge\b", "discharge"),
        (r"\b(?:post-?op(?:eratively)?|after\s+(?:the\s+)?surgery|in\s+the\s+OR|intra-?op(?:eratively)?)\b", "surgery"),
    ))

_NOTE_RELATIVE: tuple[tuple[re.Pattern[str], float, float], ...] = tuple(
    # (pattern, start offset days, end offset days) relative to the note's reference day
    (re.compile(p, re.I), a, b) for p, a, b in (
        (r"\b(?:overnight|last\s+night|o/n|this\s+past\s+night)\b", -1.0, 0.0),
        # "for the shift/day" names either period: no part of the day
        (r"\b(?:this\s+(?:AM|morning|afternoon|evening)|(?:(?:this|my)\s+|for\s+(?:the\s+)?|on\s+)shift)\b"
         r"(?!\s*/)", 0.0, 0.0),
        (r"\byesterday\b|\blast\s+evening\b|\bprior\s+day\b", -1.0, -1.0),
        (r"\bsince\s+(?:midnight|MN|12\s*am)\b", 0.0, 0.0),
        (r"\b(?:over\s+the\s+|in\s+the\s+|for\s+the\s+|in\s+|over\s+|x\s*)(?:past|last)?\s*24\s*(?:h|hrs?|hours?)\b",
         -1.0, 0.0),
        (r"\bx\s*24\s*(?:h|hrs?|hours?)\b|\bover\s+(?:the\s+)?(?:past|last)\s+(?:day|shift)\b", -1.0, 0.0),
        (r"\b(?:over\s+the\s+|in\s+the\s+)?(?:past|last)\s+48\s*(?:h|hrs?|hours?)\b|\bx\s*48\s*(?:h|hrs?)\b", -2.0,
         0.0),
    ))
#: words that name the time of writing itself: a discharge summary's "currently" is discharge
_PRESENT = re.compile(r"\b(?:today|currently|now|at\s+present)\b", re.I)
_CLOCK = re.compile(r"(?:\b(?:at|since|@|by|until|from|around|about|approx\.?)\s*(?P<tilde>~)?\s*|(?<=(?:ed|en|"
                    r"ne)\s)(?P<tilde2>~)\s*)"
                    r"(?:(?P<hh>[01]?\d|2[0-3]):(?P<mi>[0-5]\d)|(?P<hh4>[01]\d|2[0-3])(?P<mi4>[0-5]\d)"
                    r"|(?P<h12>1[0-2]|0?[1-9])(?=\s*[ap]\.?m\b))"
                    r"\s*(?P<ampm>[ap]\.?m\.?)?"
                    r"(?![\d/])(?!\s*(?:mg|mcg|cc|ml|units?|u\b|meq|%|/))", re.I)

#: a span between two clock times ("860 cc 2000-0600", "from 19:00 to 07:00", "(1900-0700)"): four
#: digits or a colon each; a bare pair of numbers counts only after "from"/"between", an amount's
#: unit or a list break, so a stated range of values ("UOP 1500-2000") is never a span
CLOCK_SPAN = re.compile(r"(?P<pre>\b(?:from|between)\s+|(?:(?<=\d)|\b)(?:cc|ml|mls|l)\s*|[(,;:]\s*|^\s*)"
                         r"(?P<a>(?:[01]\d|2[0-3]):?[0-5]\d|(?:[01]?\d|2[0-3]):[0-5]\d)\s*(?:-|–|to|until|and)\s*"
                         r"(?P<b>(?:[01]\d|2[0-3]):?[0-5]\d|(?:[01]?\d|2[0-3]):[0-5]\d)(?![\d/.]|:\d)"
                         r"(?!\s*(?:mg|mcg|g|cc|ml|mls|l|units?|u\b|meq|mmol|%|/))", re.I)

#: a bare 24-hour clock time right after a word that dates a dose or a course edge
#: ("started 0600", "last dose 0800", "given 2130", "finished 0600"); a number with a unit is a dose
_ACTION_CLOCK = re.compile(r"\b(?:(?:re)?start(?:ed)?|stopped|finished|completed|paused|given|hung|held|off|resumed|"
                           r"initiated|begun|"
                           r"(?:re)?bolused|administered|received|d/c'?d|discontinued|dose)\s+"
                           r"(?P<hh4>[01]\d|2[0-3])(?P<mi4>[0-5]\d)(?![\d/:-]|[.,]\d)"
                           r"(?!\s*(?:mg|mcg|g|gm|cc|ml|mls|l|units?|u|meq|mmol|mu|%|/|x|of|ns|lr|d5w?|kcal)\b)"
                           r"(?!\s*[%/])", re.I)


def clock_of(m: re.Match[str]) -> tuple[int, int]:
    """24-hour (hour, minute) of a clock match (groups hh/mi, hh4/mi4, h12, ampm); 12 AM is midnight."""
    hour = int(m.group("hh") or m.group("hh4") or m.group("h12"))
    minute = int(m.group("mi") or m.group("mi4") or 0)
    ampm = (m.group("ampm") or "").lower()
    if ampm.startswith("p") and hour < 12:
        hour += 12
    if ampm.startswith("a") and hour == 12:
        hour = 0
    return hour, minute


_FIRST_HOURS = re.compile(r"\b(?:in\s+|within\s+|over\s+|during\s+)?the\s+first\s+(?P<n>\d{1,3}|" + "|".join(_NUM_WORDS)
                          + r")\s*(?P<u>h(?:ours?|rs?)?|days?)\b", re.I)
_FOLLOWING = re.compile(r"\b(?:the\s+)?(?:following|next|subsequent)\s+(?:day|morning|AM)\b|\bthe\s+day\s+after\b",
                        re.I)
_PRIOR = re.compile(r"\b(?:the\s+)?(?:previous|preceding|prior)\s+(?:day|evening|night)\b|\bthe\s+day\s+before\b", re.I)

_DURATION = re.compile(
    r"\b(?:x|for|times|over|total\s+of|course\s+of)\s*" + r"(?P<n>\d{1,3}(?:\.\d)?|" + "|".join(_NUM_WORDS) + r")"
    r"\s*-?\s*(?P<u>d(?:ays?)?|wks?|weeks?|h(?:rs?|ours?)?)\b", re.I)
_DOSES_DURATION = re.compile(r"\b(?P<n>\d{1,2})\s*-?\s*days?\s+(?:course|of\s+(?:treatment|therapy|abx|antibiotics))\b",
                             re.I)


def parse_duration_days(text: str) -> float | None:
    """``x3 days`` / ``for 7d`` / ``2 wks`` / ``x48h`` / ``5 day course`` -> days (float)."""
    m = _DURATION.search(text)
    if m:
        n = float(m.group("n")) if m.group("n")[0].isdigit() else float(_NUM_WORDS[m.group("n").lower()])
        unit = m.group("u").lower()
        if unit.startswith("w"):
            return n * 7
        if unit.startswith("h"):
            return n / 24
        return n
    m = _DOSES_DURATION.search(text)
    return float(m.group("n")) if m else None


def find_anchors(lines: Iterable[str], ctx: TimeContext) -> list[Anchor]:
    """Global anchors: the table anchors plus note statements such as "underwent X on [**10-23**]"."""
    anchors = [Anchor(name, fmt(t), None, "table") for name, t in ctx.anchors.items()]
    have = {a.name for a in anchors}
    surgery_cue = re.compile(r"\b(?:underwent|s/p|status post|taken to the OR|OR for|went to (?:the )?OR|"
                             r"surgery|operation|ectomy|otomy|plasty|CABG|repair)\b", re.I)
    for i, raw in enumerate(lines):
        if "surgery" in have:
            break
        if surgery_cue.search(raw):
            dates = _explicit_dates(raw, ctx)
            if dates:
                anchors.append(Anchor("surgery", fmt(datetime.combine(dates[0][2], datetime.min.time())), i, "note"))
                have.add("surgery")
    return anchors


def _anchor_times(anchors: Iterable[Anchor]) -> dict[str, datetime]:
    out: dict[str, datetime] = {}
    for a in anchors:
        t = parse_datetime(a.time)
        if t is not None and a.name not in out:
            out[a.name] = t
    return out


_HOUR = timedelta(hours=1)


def clock_span(m: re.Match[str], reference: datetime, slack: timedelta) -> tuple[datetime, datetime] | None:
    """The moments a :data:`CLOCK_SPAN` match names: the last such span that ends by
    ``reference`` + ``slack`` (a reference of exactly midnight has no clock: its own day's), one
    crossing midnight starting the evening before; None for a span of no length.
    """
    (h1, m1), (h2, m2) = ((int(g.replace(":", "")[:-2] or 0), int(g[-2:])) for g in (m.group("a"), m.group("b")))
    end = datetime(reference.year, reference.month, reference.day, h2, m2)
    if (reference.hour, reference.minute) != (0, 0) and end > reference + slack:
        end -= _DAY
    length = timedelta(hours=h2 - h1, minutes=m2 - m1) % _DAY
    return (end - length, end) if length else None


def resolve_line(text: str, line: int, ctx: TimeContext, anchors: Iterable[Anchor] = (),
                 previous: TimeSpan | None = None) -> list[TimeRef]:
    """Every temporal expression of one line, resolved to an absolute window, in text order.

    ``previous`` is the last window resolved earlier in the segment ("the following day"
    counts from it). Durations are not windows; see :func:`parse_duration_days`.
    """
    if not text or text.isspace():
        return []  # no expression matches white space alone (a note may hold 100,000 blank lines)
    times = dict(ctx.anchors)
    times.update({k: v for k, v in _anchor_times(anchors).items() if k not in times})
    w = ctx.widen_days
    refs: list[TimeRef] = []
    for start, end, _day, span in _explicit_dates(text, ctx):
        refs.append(TimeRef(line, text[start:end].strip(), span, None, (start, end)))
    dated = list(refs)  # the written dates: what a narrative's relative words count from

    def add(m: re.Match[str], span: TimeSpan, anchor: str | None) -> None:
        if any(r.span and r.span[0] <= m.start() < r.span[1] for r in refs):
            return
        refs.append(TimeRef(line, m.group(0).strip(), span, anchor, (m.start(), m.end())))

    admit = times.get("admission")
    icu = times.get("icu_admission") or admit
    for m in _HD.finditer(text):
        bare = re.match(r"day\b", m.group(0), re.I)
        if admit is None or (bare and not re.search(r"\bon\s+$", text[:m.start()], re.I)):
            continue  # a bare "day 3" is a hospital day only as "on day 3"
        add(m, day_window(admit + (_num(m.group("n")) - 1) * _DAY, w, w), "admission")
    surgery = times.get("surgery")
    for m in _POD.finditer(text):
        if surgery is not None:
            add(m, day_window(surgery + _num(m.group("n")) * _DAY, w, w), "surgery")
    for m in _ICU_DAY.finditer(text):
        if icu is not None:
            add(m, day_window(icu + (_num(m.group("n")) - 1) * _DAY, w, w), "icu_admission")
    for m in _DAYS_AFTER.finditer(text):
        what = m.group("what").lower()
        name = {"the procedure": "surgery", "transfer": "icu_admission"}.get(what, what)
        base = times.get(name)
        if base is None:
            continue
        sign = -1 if m.group("rel").lower() in ("prior to", "before") else 1
        add(m, day_window(base + sign * _num(m.group("n")) * _DAY, w, w), name)

    def at(pos: int) -> datetime | None:  # the day relative words count from (None: no day)
        return narrative_day(dated, pos) if ctx.narrative else ctx.reference

    for m, window, name in stay_phrases(text, ctx.icu_stays, at, icu, lambda t: day_window(t, w, w),
                                        narrative=ctx.narrative, admission=admit, by=ctx.reference + _DAY):
        add(m, window, name)
    for pattern, name in _NARRATIVE:
        base = times.get(name)
        if base is None:
            continue
        for m in pattern.finditer(text):
            # "on admission" reaches back one day (ED before the admit time), per B.4
            add(m, day_window(base, w, w), name)
    if admit is not None:
        for m in _FIRST_HOURS.finditer(text):
            n = _num(m.group("n"))
            span_end = admit + (timedelta(hours=n) if m.group("u").lower().startswith("h") else n * _DAY)
            add(m, TimeSpan(fmt(admit - timedelta(hours=12)), fmt(span_end)), "admission")
    for m, sign in [(m, 1) for m in _FOLLOWING.finditer(text)] + [(m, -1) for m in _PRIOR.finditer(text)]:
        # "the following day" counts from the last time before it in its own text, else the previous one
        base_span = (r.window if (r := latest_before(refs, m.start())) is not None else None) or previous
        base_start = parse_datetime(base_span.start) if base_span else None
        if base_span is not None and base_start is not None:
            base_end = parse_datetime(base_span.end) or base_start
            add(m, TimeSpan(fmt(base_start + sign * _DAY), fmt(base_end + sign * _DAY)), "previous")
    for m in CLOCK_SPAN.finditer(text):
        # the last such span by the note (a shift ending within the charting slack of a note written
        # near its end still counts); one crossing midnight starts the evening before
        if (ref_day := at(m.start())) is None or (moments := clock_span(m, ref_day, _HOUR)) is None:
            continue
        begin = m.start() if m.group("pre").strip().lower() in ("from", "between") else m.start("a")
        if not any(r.span and r.span[0] <= begin < r.span[1] for r in refs):
            refs.append(TimeRef(line, text[begin:m.end()].strip(), TimeSpan(fmt(moments[0]), fmt(moments[1])), "note",
                                (begin, m.end())))
    for m in _CLOCK.finditer(text):
        # a bare clock time in a progress/nursing note is on the note's day: +/- 2 h
        # (+/- 3 h when approximate: "~1600", "around 9pm"; see .clocktime)
        if (ref_day := at(m.start())) is None:
            continue
        hour, minute = clock_of(m)
        moment = datetime(ref_day.year, ref_day.month, ref_day.day, hour, minute)
        tol = timedelta(hours=3 if (m.group("tilde") or m.group("tilde2") or re.match(r"(?:around|about|approx)",
                                                                                      m.group(0), re.I)) else 2)
        # a night-shift note's "at 2300" may be the evening before its date: both days
        add(m, TimeSpan(fmt(moment - timedelta(days=1) - tol), fmt(moment + tol)), "note")
    for m in _ACTION_CLOCK.finditer(text):
        if any(r.span and r.span[0] <= m.start("hh4") < r.span[1] for r in refs) or (ref_day := at(m.start())) is None:
            continue
        moment = datetime(ref_day.year, ref_day.month, ref_day.day, int(m.group("hh4")), int(m.group("mi4")))
        two = timedelta(hours=2)
        refs.append(TimeRef(line, text[m.start("hh4"):m.end()].strip(), TimeSpan(
            fmt(moment - timedelta(days=1) - two), fmt(moment + two)), "note", (m.start("hh4"), m.end())))
    for pattern, a, b in (*_NOTE_RELATIVE, (_PRESENT, 0.0, 0.0)):
        for m in pattern.finditer(text):
            # relative to the note's day (a summary's narrative date), widened half a day to cover the charting shift
            if (ref_day := ctx.reference if pattern is _PRESENT else at(m.start())) is None:
                continue
            lo = datetime(ref_day.year, ref_day.month, ref_day.day) + timedelta(days=a) - timedelta(hours=12)
            hi = datetime(ref_day.year, ref_day.month, ref_day.day, 23, 59, 59) + timedelta(days=b)
            add(m, TimeSpan(fmt(lo), fmt(hi)), "note")
    return _initially_from_course(text, sorted(refs, key=lambda r: r.span or (0, 0)))


_INITIALLY = re.compile(r"initial(?:ly)?", re.I)
_SENTENCE_BREAK = re.compile(r"(?<!\b[A-Za-z])[.;](?=\s|$)")


def _initially_from_course(text: str, refs: list[TimeRef]) -> list[TimeRef]:
    """"Initially" is the start of the course its sentence tells: after an earlier time of
    that sentence ("drain placed yesterday, 2 L out initially") it is that time, not the
    admission; with none it stays the admission.
    """
    out: list[TimeRef] = []
    for r in refs:
        if r.anchor == "admission" and r.span is not None and _INITIALLY.fullmatch(r.text):
            lo = r.span[0]
            earlier = latest_before([o for o in out if not _SENTENCE_BREAK.search(text, (o.span or (0, 0))[1], lo)],
                                    lo)
            if earlier is not None:
                r = TimeRef(r.line, r.text, earlier.window, earlier.anchor, r.span)
        out.append(r)
    return out
