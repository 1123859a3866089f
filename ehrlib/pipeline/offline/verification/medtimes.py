"""The time checks of medication statements: a stop at the end of the day; a start, stop
or dose at a clock time, in a part of the note's day, or on a date (rules of the
:mod:`.medications` chain).
"""
from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta

from ehrlib.pipeline.offline.note_time import judged_part
from ehrlib.pipeline.offline.verification.clocktime import (
    CHARTING_DELAY,
    edge_matches,
    infusion_runs,
    parse_clock,
    timed_within,
)
from ehrlib.pipeline.offline.verification.medcourses import course_spans, drip_runs
from ehrlib.pipeline.offline.verification.medcourses import edge_in as _edge_in
from ehrlib.pipeline.offline.verification.medcourses import is_administration as _is_administration
from ehrlib.pipeline.offline.verification.meddays import counted_day
from ehrlib.pipeline.offline.verification.medrows import course as _course
from ehrlib.pipeline.offline.verification.medrows import med as _med
from ehrlib.pipeline.offline.verification.medrows import names as _names
from ehrlib.pipeline.offline.verification.medrows import rows as _rows
from ehrlib.pipeline.offline.verification.medrows import short_window
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import core_window, parse_time, row_interval
from ehrlib.pipeline.records import Verdict

__all__ = ["stopped", "clock_edge", "timed_administration", "dated_edge", "template_dose_time",
           "clock_dates_stop"]

#: an ICU medication template's entry "Vancomycin - 1400" / "Cefepime - last evening": the
#: time of the drug's last dose, after a dash, ending the entry (a rate would carry a unit)
_TEMPLATE_TIME = re.compile(r"^\s*-\s*(?:\[\*\*[^\]]*\*\*\]\s*)?(?P<time>(?:[01]?\d|2[0-3]):?[0-5]\d(?:\s*[ap]\.?m\.?)?"
                            r"|[a-z][a-z ]{2,24}?)\s*(?:[,;]|$)", re.I)


def _action(c: Case) -> str:
    return _med(c).action or ""


def stopped(c: Case) -> Verdict | None:
    """"off octreotide", "lasix held": not running at the end of the statement's day (a
    progress note's own day, not the day after its widened window). When the drug's
    administrations are charted, they decide: an order (a PRN bolus order, a renewal) may
    run on after the drip it covered was stopped.
    """
    e = c.entity
    if not _action(c).startswith(tuple(terms()["actions"]["stopped_prefixes"])) or e.time_text:
        return None
    inside, every = c.item_rows()
    given = [r for r in every if _is_administration(r)]
    if given:  # an order outlives its drip ("fentanyl gtt off (prn boluses)"): the charted runs tell
        inside = [r for r in inside if _is_administration(r)]
    core = core_window(e.window) if short_window(e.window) else None
    end = (core or e.window).end if e.window else None
    we_ = parse_time(end) if end else None
    running = [r for r in inside if (iv := row_interval(r)) and we_ and iv[0] <= we_ <= iv[1]]
    if running:
        return verdict(c, False, f"note says {_names(c)} stopped, but it runs past the window", running[:4])
    return verdict(c, True, f"{_names(c)} not running at the end of the window, as stated",
                   inside[-2:] or every[-2:])


def clock_edge(c: Case) -> Verdict | None:
    """"started at 1600" / "off since 0400": a run of the drug must start/end at that clock
    time; a contradiction is returned, otherwise None (the other checks go on). A time after
    "from" is the run's start even beside a stop word ("from 1130, d/c 1458").
    """
    e, action, actions = c.entity, _action(c), terms()["actions"]
    clock = parse_clock(e.time_text)
    off = action.startswith(tuple(actions["clock_stop_prefixes"])) or (
        action.startswith("weaned") and "off" in e.text.lower())
    edge = "start" if action in actions["clock_start"] else "end" if off else None
    if edge == "end" and re.match(r"\s*from\b", e.time_text or "", re.I):
        edge = "start"  # "dopamine from 1130, d/c 1458": "from" names when the run began, whatever stopped it
    if clock is None or edge is None:
        return None
    ok, evidence, detail = edge_matches(clock, e.window, _course(c), edge)
    if ok is False and edge == "start" and action in actions.get("restarts", ()):
        # "TF restarted 1026": a restart may be a new bag hung right after the last one ran out
        ok, evidence, detail = edge_matches(clock, e.window, _course(c), edge, merge=False)
    if ok is False:
        return verdict(c, False, f"{_names(c)}: stated {edge} {e.time_text} (±{clock.tolerance.seconds // 3600} h), "
                       f"{detail}", evidence)
    return None


def timed_administration(c: Case) -> Verdict | None:
    """"heparin SC given at 2100", "cefepime given overnight": a clock time or part of the
    note's day dates the administration, so a charted administration must start near that
    time (the clock rule's tolerance) or fall in that part of the day (give or take the same
    two hours of charting delay). An amount stated at a clock time with no action word
    ("Free water 250 cc at 0500", "D50 1 amp at 1500") is such an administration too. Date-only
    orders cannot place a dose in the day: with no timed row of the drug in the admission
    there is nothing to contradict.
    """
    e, action, actions = c.entity, _action(c), terms()["actions"]
    clock = parse_clock(e.time_text)
    # blood-product units at a clock time are the transfusion rule's (units near the time, by volume)
    counted = _med(c).units is not None and str(e.claim.concept) != "transfusion"
    # a drug (not a drip's rate, not a blood product) stated at a clock time with no action word
    # ("vanco IV dose at 2100", "last Zosyn dose 0800") dates one of its administrations
    bare = (_med(c).rate is None and not _med(c).infusion and str(e.claim.concept) != "transfusion"
            and not _OPEN_CLOCK.match(e.time_text or "") and _told_after_name(c)
            and str(_med(c).section or "") != "icu_medications")  # a template's entry: its own rule
    # a dose with a clock time dates it only when the time is told in the dose's own clause, not
    # in another drug's before it ("vanc 1 g (last dose 0800 today), ASA 81, ranitidine 150")
    dosed = (_med(c).dose is not None or counted) and _in_own_clause(c)
    dosed_at = not action and clock is not None and (dosed or bare)
    if (action not in actions.get("timed_administrations", ()) and not dosed_at) or not e.time_text:
        return None
    if clock is not None:
        if action in actions["clock_start"]:
            return None  # a start at a clock time is the clock edge rule's
        if not action and clock_dates_stop(c):
            # "fentanyl off 1358": the time is when the drug was stopped, so a run must end then
            ok, evidence, detail = edge_matches(clock, e.window, _course(c), "end", final=False)
            if ok is False:
                return verdict(c, False, f"{_names(c)}: stated stopped {e.time_text} "
                               f"(±{clock.tolerance.seconds // 3600} h), {detail}", evidence)
            return None
        ok, evidence, detail = edge_matches(clock, e.window, _course(c), "start", merge=False)
        if ok is False:
            return verdict(c, False, f"{_names(c)}: stated given {e.time_text} "
                           f"(±{clock.tolerance.seconds // 3600} h), {detail}", evidence)
        return None
    span = None if c.ctx.note_type == "discharge_summary" else judged_part(e.time_text, c.ctx)
    if span is None:
        return None
    hits, timed = timed_within(_course(c), span)
    if timed and not hits:
        return verdict(c, False, f"{_names(c)}: stated given {e.time_text} ({span[0]:%Y-%m-%d %H:%M} to "
                       f"{span[1]:%H:%M}), no administration charted then", timed[:4])
    return None


#: a clock time that opens or closes a span ("since 0400", "until 1400"), not a dose's time
_OPEN_CLOCK = re.compile(r"\s*(?:since|from|until|till|by|through)\b", re.I)


def _told_after_name(c: Case) -> bool:
    """Whether the statement's time follows the drug's name in its own clause ("vanco IV dose
    at 2100"), not a time told before it, of another drug ("doses at 0830 and 1930) and vanc").
    """
    line, e = c.line(), c.entity
    if line is None or e.span is None or not e.time_text:
        return False
    after = line[e.span[1]:e.span[1] + 40]
    at = after.find(e.time_text.strip())
    return at >= 0 and not re.search(r"[,;()]", after[:at])


@functools.cache
def _stop_word() -> re.Pattern[str]:
    acts = terms()["actions"]
    words = sorted({*acts["clock_stop_prefixes"], *acts.get("interruptions", ())}, key=len, reverse=True)
    return re.compile(r"(?<![\w/])(?:" + "|".join(re.escape(w) for w in words) + r")[\w']*", re.I)


def clock_dates_stop(c: Case) -> bool:
    """Whether a stop or pause word stands between the statement's words and its clock time
    ("titrated 1 -> 9 u/hr, paused at 0200", "fentanyl off 1358"): the time then tells when
    the drug, or the rate it ran at, ended, not when it was given or began.
    """
    line, e = c.line(), c.entity
    if line is None or e.span is None or not e.time_text:
        return False
    at = line.find(e.time_text.strip(), e.span[1])
    return at >= 0 and _stop_word().search(line[e.span[1]:at]) is not None


def _in_own_clause(c: Case) -> bool:
    """Whether the statement's time is its own: told after the drug's name, or before it with
    no comma, semicolon or bracket between ("0500 free water 250 cc"), unlike a time of the
    drug listed before it ("vanc (last dose 0800), ASA 81, ranitidine 150"). A time the line
    does not show, or one inside the statement's words, is its own.
    """
    line, e = c.line(), c.entity
    told = (e.time_text or "").strip()
    if line is None or e.span is None or not told or told in e.text or line.find(told, e.span[1]) >= 0:
        return True
    before = line.rfind(told, 0, e.span[0])
    return before < 0 or not re.search(r"[,;()]", line[before + len(told):e.span[0]])


def _edge_window(c: Case) -> tuple[datetime, datetime] | None:
    """The span a dated start or stop claims: a part of the note's day ("early this AM")
    give or take the charting delay; the first day of a "since [date]" range; else the
    statement's window.
    """
    e = c.entity
    ws, we = (parse_time(e.window.start), parse_time(e.window.end)) if e.window else (None, None)
    if ws is None or we is None:
        return None
    text = re.sub(r"^(?:early|late)\s+", "", (e.time_text or "").strip(), flags=re.I)
    span = None if c.ctx.note_type == "discharge_summary" else judged_part(text, c.ctx)
    if span is not None:
        return span[0] - CHARTING_DELAY, span[1] + CHARTING_DELAY
    if _SINCE.match(e.time_text or "") and "[**" in (e.time_text or ""):  # "since [date]": that day
        return ws, min(we, ws + timedelta(days=1) - timedelta(seconds=1))
    day = counted_day(c)  # "stopped on HD 2": that day, not the day either side the window adds
    if day is not None and (a := parse_time(day.start)) and (b := parse_time(day.end)):
        return a, b
    return ws, we


#: a time relative to an event without naming its day ("before discharge", "late in the stay")
_VAGUE = re.compile(r"\s*(?:before|after|prior\s+to|by|until|till|during|through(?:out)?|over|late|in\s+the)\b", re.I)
#: a time stated as a course's beginning ("vanc/zosyn since [date]", "flagyl from HD 3")
_SINCE = re.compile(r"\s*(?:since|from)\b", re.I)


def dated_edge(c: Case) -> Verdict | None:
    """A dated start or stop ("started today", "added HD 2", "since [date]", "d/c'd [date]"):
    a course of the drug, not merely a row, must begin (or end) in the stated span. Every
    row of a drug starts and ends somewhere (order renewals, rate changes, hourly charting),
    so the edges compared are those of its courses (:func:`course_spans`) and of its drip
    runs (:func:`drip_runs`: a drip hung after boluses, or again after hours off); a restart
    or hold may be any run's edge (a pause of more than an hour, :func:`.clocktime.infusion_runs`).
    """
    e, action, actions = c.entity, _action(c), terms()["actions"]
    if not e.time_text or parse_clock(e.time_text) is not None or _VAGUE.match(e.time_text):
        return None  # a clock time is the clock edge rule's; "before discharge" names no day
    if not action and _SINCE.match(e.time_text):
        action = "started"  # "vanc/zosyn since [date]": the course began then
    span = _edge_window(c)
    if span is None:
        return None
    ws, we = span
    every = _course(c)
    drips = drip_runs(every)
    if action in actions["dated_start"]:  # an order's date may start a course its first charted dose follows
        edges = [(a, rs) for a, _, rs in course_spans(every) + drips]
        if action in actions.get("restarts", ()):
            edges += [(a, rs) for a, _, rs in infusion_runs(every)]
        hits = [rs for a, rs in edges if _edge_in(a, rs, "start", ws, we)]
        if not hits:
            shown = ", ".join(f"{a:%Y-%m-%d %H:%M}" for a, _ in edges[:4]) or "none"
            return verdict(c, False, f"{_names(c)}: no course started in {ws:%Y-%m-%d %H:%M} to {we:%Y-%m-%d %H:%M} "
                           f"(courses started {shown})", [r for _, rs in edges[:4] for r in rs[:1]])
        c.narrowed = [r for r in _rows(c) if any(r in rs for rs in hits)] or _rows(c)
    if action.startswith(tuple(actions["dated_stop_prefixes"])):
        if drips and (_med(c).route or "IV") == "IV":
            every = [r for r in every if _is_administration(r)]  # a drip's order outlives it
        ends = [(b, rs) for _, b, rs in course_spans(every) + drips]
        if action.startswith(tuple(actions.get("pauses", ()))):
            ends += [(b, rs) for _, b, rs in infusion_runs(every)]
        hits = [rs for b, rs in ends if _edge_in(b, rs, "end", ws, we)]
        if not hits:
            shown = ", ".join(f"{b:%Y-%m-%d %H:%M}" for b, _ in ends[:4]) or "none"
            return verdict(c, False, f"{_names(c)}: no course ended in {ws:%Y-%m-%d %H:%M} to {we:%Y-%m-%d %H:%M} "
                           f"(courses ended {shown})", [r for _, rs in ends[:4] for r in rs[-1:]])
        c.narrowed = [r for r in _rows(c) if any(r in rs for rs in hits)] or _rows(c)
    return None


def template_dose_time(c: Case) -> Verdict | None:
    """"Last dose of Antibiotics: Vancomycin - 1400": an ICU template's drug entry states
    when the drug was last given, a clock time or a part of the note's day; a charted
    administration must fall then (as :func:`timed_administration` checks a stated time).
    """
    e, m = c.entity, _med(c)
    got = _TEMPLATE_TIME.match(e.value or "") if str(m.section or "") == "icu_medications" else None
    if got is None:
        return None
    clock = parse_clock(got.group("time"))
    if clock is not None:
        ok, evidence, detail = edge_matches(clock, e.window, _course(c), "start", merge=False)
        if ok is False:
            return verdict(c, False, f"{_names(c)}: last dose stated at {got.group('time')} "
                           f"(±{clock.tolerance.seconds // 3600} h), {detail}", evidence)
        return None
    span = judged_part(got.group("time"), c.ctx)
    if span is not None:
        hits, timed = timed_within(_course(c), span)
        if timed and not hits:
            return verdict(c, False, f"{_names(c)}: last dose stated {got.group('time')}, no administration "
                           f"charted then", timed[:4])
    return None
