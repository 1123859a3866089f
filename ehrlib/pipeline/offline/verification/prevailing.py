"""The prevailing state of a graded finding on the statement's own day.

A finding whose states are graded from normal to worst (bowel sounds normoactive to absent,
flatus passed or not, the GCS responses, pulse strength, reflexes, cough effort) is
reported asymmetrically: an abnormal state is a finding as soon as it was observed once
("hypoactive BS" on a day charted Present but once is still true), while a normal or better
state written without a time of its own ("active BS", "passing flatus", "localizes to
pain") summarises how the patient was on the day the note is about. A flowsheet charts
such an item every few hours, so the day's chartings say which state held: one charting of
the stated state among many of a worse state that excludes it is an outlier, not the state
the note reports. The rule reads the chartings of the window's core day (the tools' window
is widened a day each way for charting delays; a window already narrowed to a stated part
of the day is read whole) and calls the statement contradicted when the chartings of worse,
excluding states are at least two and twice those agreeing with it. A statement that
carries its own time ("at 1400", "overnight", "absent -> present tonight") is left to the
window rules, which read the stated time.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.windows import core_window, in_window
from ehrlib.pipeline.records import Verdict

__all__ = ["MIN_AGAINST", "OWN_TIME", "day_charted", "has_own_time", "prevailing_against", "prevailing_items",
           "prevailing_state_rule", "rank_of"]

Rows = list[Mapping[str, Any]]

#: the fewest worse chartings of the day that can outweigh the stated state
MIN_AGAINST = 2

#: words giving a statement a time of its own within the note's day: a clock time, a part
#: of the day or shift, a bound, or a change between two states
OWN_TIME = re.compile(
    r"\b\d{3,4}\b|\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\b(?:at|since|until|by|after|before|from|then|now|initially|"
    r"briefly|later|earlier|intermittent\w*|episod\w*|overnight|tonight|today|this|morning|afternoon|evening|"
    r"night|noon|midnight|am|pm|shift|started|stopped|changed)\b|->|→", re.I)


def rank_of(tiers: Sequence[Sequence[str]], states: Iterable[str]) -> int | None:
    """The best (lowest) tier index of ``states`` among graded ``tiers`` (best first); None
    when none of them is graded.
    """
    found = [i for i, tier in enumerate(tiers) for s in states if s in tier]
    return min(found) if found else None


def has_own_time(line: str | None, span: tuple[int, int] | None, time_text: str | None) -> bool:
    """Whether the statement's clause (its line cut at sentence marks around its span) or its
    extracted time gives it a time of its own.
    """
    if time_text:
        return True
    if not line or span is None:
        return False
    a = max((m.end() for m in re.finditer(r"[.;]\s", line[:span[0]])), default=0)
    m = re.compile(r"[.;](?:\s|$)").search(line, span[1])
    return bool(OWN_TIME.search(line[a:m.start() if m else len(line)]))


def day_charted(window: TimeSpan | None, charted: Iterable[tuple[Mapping[str, Any], set[str]]]
                ) -> list[tuple[Mapping[str, Any], set[str]]]:
    """The rows of the statement's day (the widened window's core day) that name a state."""
    day = core_window(window)
    return [] if day is None else [(r, st) for r, st in charted if st and in_window(r, day)]


def prevailing_against(window: TimeSpan | None, charted: Iterable[tuple[Mapping[str, Any], set[str]]],
                       stated: set[str], tiers: Sequence[Sequence[str]],
                       excludes: Callable[[set[str]], bool]) -> Rows | None:
    """The rows of the statement's day charting a worse state that excludes the stated one,
    when they prevail (at least ``MIN_AGAINST`` and twice the agreeing ones); else None.

    ``charted`` pairs each row of the window with the states its value names; ``tiers``
    grades the finding's states best first; ``excludes`` says whether a row's states
    exclude the stated ones.
    """
    mine = rank_of(tiers, stated)
    if mine is None:
        return None
    rows = day_charted(window, charted)
    agree = [r for r, st in rows if st & stated]
    against = [r for r, st in rows if not st & stated and excludes(st)
               and (rank := rank_of(tiers, st)) is not None and rank > mine]
    if len(against) >= MIN_AGAINST and len(against) >= 2 * len(agree):
        return against
    return None


Charted = list[tuple[Mapping[str, Any], set[str]]]


def prevailing_items(window: TimeSpan | None, judged: Sequence[tuple[str, Charted, set[str]]],
                     tiers_of: Callable[[str], Sequence[Sequence[str]]],
                     opposed: Callable[[str, set[str], set[str]], bool]) -> tuple[str, Rows] | None:
    """(label, rows) of a site statement's first item whose day prevails against the stated
    states, when every named item charting on that day does ("intact bilat" with one side
    mostly absent is still confirmed by the other); ``judged`` holds (label, charted, stated).
    """
    found: list[tuple[str, Rows]] = []
    charting = 0
    for label, charted, stated in judged:
        if not day_charted(window, charted):
            continue
        charting += 1
        rows = prevailing_against(window, charted, stated, tiers_of(label), functools.partial(opposed, label, stated))
        if rows is not None:
            found.append((label, rows))
    return found[0] if found and len(found) == charting else None


def prevailing_state_rule(vocab: Callable[[], Mapping[str, Any]], states: Callable[[str, str, str], set[str]],
                          stated_of: Callable[[Case], set[str]]) -> Rule[Any]:
    """The rule for vocabulary findings, bound to the finding vocabulary and its readers
    (``verification/findings.py``).
    """

    def _prevailing_state(c: Case) -> Verdict | None:
        """"active BS" on a day charted Hypoactive but once: the day's prevailing charted
        state is worse and excludes the stated one.
        """
        e, concept = c.entity, str(c.entity.claim.concept)
        opposites = vocab()["opposites"].get(concept)
        tiers = (vocab().get("graded") or {}).get(concept)
        stated = stated_of(c)
        if not opposites or not tiers or not stated or has_own_time(c.line(), e.span, e.time_text):
            return None
        excluding = {o for st in stated for o in opposites.get(st, ())}
        charted = [(r, states(concept, str(r.get("value") or "").lower(), "chart")) for r in c.item_rows()[0]]
        against = prevailing_against(e.window, charted, stated, tiers, lambda st: bool(st & excluding))
        if against is None:
            return None
        shown = ", ".join(sorted({str(r.get("value")) for r in against})[:4])
        return verdict(c, False, f"{e.text}: note says {', '.join(sorted(stated))}; the statement's day mostly "
                       f"charts {shown}", against[:4])

    return Rule("findings.prevailing_state", "A normal or better graded state stated without a time of its own "
                "summarises the statement's day: it is contradicted when that day's chartings of worse states "
                "excluding it are at least two and twice those agreeing with it.", _prevailing_state, ("finding",))
