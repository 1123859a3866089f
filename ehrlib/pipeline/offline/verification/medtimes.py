"""The time checks of medication statements: a start, stop or dose at a clock time, in a
part of the note's day, or on a date (rules of the :mod:`.medications` chain).
"""
from __future__ import annotations

import re

from ehrlib.pipeline.offline.verification.clocktime import edge_matches, parse_clock, part_of_day, timed_within
from ehrlib.pipeline.offline.verification.medrows import course as _course
from ehrlib.pipeline.offline.verification.medrows import med as _med
from ehrlib.pipeline.offline.verification.medrows import names as _names
from ehrlib.pipeline.offline.verification.medrows import rows as _rows
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.terms import terms
from ehrlib.pipeline.offline.verification.windows import parse_time, row_interval, tool_spec
from ehrlib.pipeline.records import Verdict

__all__ = ["clock_edge", "timed_administration", "dated_edge", "template_dose_time"]

#: an ICU medication template's entry "Vancomycin - 1400" / "Cefepime - last evening": the
#: time of the drug's last dose, after a dash, ending the entry (a rate would carry a unit)
_TEMPLATE_TIME = re.compile(r"^\s*-\s*(?:\[\*\*[^\]]*\*\*\]\s*)?(?P<time>(?:[01]?\d|2[0-3]):?[0-5]\d(?:\s*[ap]\.?m\.?)?"
                            r"|[a-z][a-z ]{2,24}?)\s*(?:[,;]|$)", re.I)


def _action(c: Case) -> str:
    return _med(c).action or ""


def clock_edge(c: Case) -> Verdict | None:
    """"started at 1600" / "off since 0400": a run of the drug must start/end at that clock
    time; a contradiction is returned, otherwise None (the other checks go on).
    """
    e, action, actions = c.entity, _action(c), terms()["actions"]
    clock = parse_clock(e.time_text)
    off = action.startswith(tuple(actions["clock_stop_prefixes"])) or (
        action.startswith("weaned") and "off" in e.text.lower())
    edge = "start" if action in actions["clock_start"] else "end" if off else None
    if clock is None or edge is None:
        return None
    ok, evidence, detail = edge_matches(clock, e.window, _course(c), edge)
    if ok is False:
        return verdict(c, False, f"{_names(c)}: stated {edge} {e.time_text} (±{clock.tolerance.seconds // 3600} h), "
                       f"{detail}", evidence)
    return None


def timed_administration(c: Case) -> Verdict | None:
    """"heparin SC given at 2100", "cefepime given overnight": a clock time or part of the
    note's day dates the administration, so a charted administration must start near that
    time (the clock rule's tolerance) or fall in that part of the day (give or take the same
    two hours of charting delay). Date-only orders cannot place a dose in the day: with no timed row
    of the drug in the admission there is nothing to contradict.
    """
    e, action, actions = c.entity, _action(c), terms()["actions"]
    if action not in actions.get("timed_administrations", ()) or not e.time_text:
        return None
    clock = parse_clock(e.time_text)
    if clock is not None:
        if action in actions["clock_start"]:
            return None  # a start at a clock time is the clock edge rule's
        ok, evidence, detail = edge_matches(clock, e.window, _course(c), "start", merge=False)
        if ok is False:
            return verdict(c, False, f"{_names(c)}: stated given {e.time_text} "
                           f"(±{clock.tolerance.seconds // 3600} h), {detail}", evidence)
        return None
    span = None if c.ctx.note_type == "discharge_summary" else part_of_day(e.time_text, c.ctx.default_window().start)
    if span is None:
        return None
    hits, timed = timed_within(_course(c), span)
    if timed and not hits:
        return verdict(c, False, f"{_names(c)}: stated given {e.time_text} ({span[0]:%Y-%m-%d %H:%M} to "
                       f"{span[1]:%H:%M}), no administration charted then", timed[:4])
    return None


def dated_edge(c: Case) -> Verdict | None:
    """A dated start or stop: an order must begin (or end) inside the window."""
    e, action, actions = c.entity, _action(c), terms()["actions"]
    if not e.time_text:
        return None
    ws, we = (parse_time(e.window.start), parse_time(e.window.end)) if e.window else (None, None)
    if action in actions["dated_start"]:
        starts = [r for r in _rows(c) if (iv := row_interval(r)) and ws and we and ws <= iv[0] <= we]
        if not starts:
            return verdict(c, False, f"{_names(c)}: no order started in {tool_spec(e.window)}", _rows(c)[:4])
        c.narrowed = starts
    if action.startswith(tuple(actions["dated_stop_prefixes"])):
        ends = [r for r in _rows(c) if (iv := row_interval(r)) and ws and we and ws <= iv[1] <= we]
        if not ends:
            return verdict(c, False, f"{_names(c)}: no order ended in {tool_spec(e.window)}", _rows(c)[:4])
        c.narrowed = ends
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
    span = part_of_day(got.group("time"), c.ctx.default_window().start)
    if span is not None:
        hits, timed = timed_within(_course(c), span)
        if timed and not hits:
            return verdict(c, False, f"{_names(c)}: last dose stated {got.group('time')}, no administration "
                           f"charted then", timed[:4])
    return None
