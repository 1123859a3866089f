"""Judging a statement about charted body sites (lung sounds per lobe, pulses per limb, bowel
sounds per quadrant) from each named item's rows: the shared judgement of the site rules in
:mod:`.findings`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.pipeline.offline.finding_sites import graded, item_states, opposed, stated_states
from ehrlib.pipeline.offline.verification.prevailing import prevailing_items
from ehrlib.pipeline.records import Entity

__all__ = ["judge_site_finding"]

Rows = list[Mapping[str, Any]]


def judge_site_finding(e: Entity, rows_of: Sequence[tuple[str, Sequence[Mapping[str, Any]]]],
                       words: str | None = None, timed: bool = True) -> tuple[bool | None, str, Rows]:
    """(consistent?, reason, evidence) of a site statement from each named item's rows in the
    window (label, rows): unless ``timed`` (it has its own time), a normal state that every
    charted item's day mostly contradicts with a worse one is wrong; else a charted value
    agreeing on any named item confirms it; otherwise an item whose charted states exclude
    the stated ones contradicts it; ``None``: no charted value speaks to the words.
    """
    agree: Rows = []
    against: tuple[str, Rows] | None = None
    judged: list[tuple[str, list[tuple[Mapping[str, Any], set[str]]], set[str]]] = []
    words = e.value or "" if words is None else words
    for label, rows in rows_of:
        stated = stated_states(label, words)
        if not stated:
            continue
        charted = [(r, item_states(label, str(r.get("value") or ""))) for r in rows]
        judged.append((label, charted, stated))
        agree += [r for r, st in charted if st & stated][:2]
        opposite = [r for r, st in charted if st and opposed(label, stated, st)]
        if opposite and against is None:
            against = (label, opposite)
    if not timed and (prevail := prevailing_items(e.window, judged, graded, opposed)) is not None:
        label, rows = prevail
        shown = ", ".join(sorted({str(r.get("value")) for r in rows})[:4])
        return False, f"{e.text}: note says {words}; on the statement's day {label} mostly charts {shown}", rows[:4]
    if agree:
        return True, f"{e.text}: {words} charted in the window", agree[:4]
    if against is not None:
        label, rows = against
        shown = ", ".join(sorted({str(r.get("value")) for r in rows})[:4])
        return False, f"{e.text}: note says {words}; {label} charts {shown}", rows[:4]
    return None, f"{e.text}: charted values neither match nor contradict", []
