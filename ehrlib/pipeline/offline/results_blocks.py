"""Results blocks: a heading's draw stamp dates every results line under it.

A note copies a draw as a block: a heading with the draw's clock time or date, then the
values on the heading's own line and on the lines under it, often indented::

    Labs (0453): Na 142 K 3.1 Cl 101
                 Ca 8.5 Phos 3.8
                 WBC 6.9 Hgb 9.9 Plt 373

The stamp is the time of every value of the block, not only of those on its own line. The
block runs over the lines of results that follow the heading (name-value lists) up to a
blank line, a new heading or results record, or a line of prose ("Hgb drifting down since
admission": a statement with a time of its own words). Hard-wrapped notes join such a
prose line to the results line above it (:mod:`.paragraphs`), so without the block the
prose line's time would date the values before it.

Pure functions over the note's lines; :mod:`.extract` uses the stamp's resolved time and
:mod:`.verification.draws` its clock.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ehrlib.pipeline.offline.clauses import mask_parentheticals
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.statement_time import is_stamped
from ehrlib.pipeline.offline.timex import TimeContext, resolve_line
from ehrlib.pipeline.records import Anchor, TimeRef

__all__ = ["BlockStamp", "block_stamp", "heading_stamp", "is_results_line", "block_time", "in_aside", "RULE"]

_CLOCK = r"(?:[01]?\d|2[0-3]):[0-5]\d(?:\s*[AP]M)?|(?:[01]\d|2[0-3])[0-5]\d"
_DATE = r"\[\*\*[\d-]+\*\*\]|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?"
#: a heading stamped with a draw's time: a short label ("Labs", "AM labs", "CHEM 7", "ADMISSION
#: LABS"), then a date and/or a clock time (in parentheses or after "@"/"at"), then a colon
_HEADING = re.compile(r"^\s*(?:[#*\-]+\s*)?(?P<label>[A-Za-z][A-Za-z0-9/&'\-]*(?:[ \t]+[A-Za-z0-9/&'\-]+){0,3}?)"
                      r"[ \t]*(?:\(|@|\bat\b)?[ \t]*"
                      r"(?P<stamp>(?P<date>" + _DATE + r")?[ \t]*(?P<clock>" + _CLOCK + r")?)"
                      r"[ \t]*\)?[ \t]*:(?P<rest>.*)$", re.I)
#: one result: a name, then its value ("K 3.1", "Hct 35.2*", "WBC-6.9", "HCO3: 30", "Plt Ct-201")
_PAIR = re.compile(r"[A-Za-z][A-Za-z0-9+]*(?:\s[A-Za-z][A-Za-z]*)?\s*(?:[:=]\s*|-(?=[<>\d.-])|\s+)"
                   r"(?:[<>]=?)?-?(?:" + NUMBER + r")\*?(?:\s?%)?(?![\w/])")
#: what may stand between results: separators and flags
_FILLER = re.compile(r"[\s,;/|*]+|--?")
#: a line that opens something new: a label with a colon ("CBC:", "ABG 0322:", "Micro:")
_LABEL = re.compile(r"^\s*(?:[#*\-]+\s*)?[A-Za-z][A-Za-z0-9 /&'\-()]{0,30}:")
#: how many of a results line's characters may be words of no result (units, a short comment)
_OTHER_SHARE = 0.3
#: how far above a line its block's heading may be
_MAX_LINES = 12
#: a longer line is no line of results (and a pasted log's megabyte line is not scanned per statement)
_MAX_CHARS = 400


@dataclass(frozen=True, slots=True)
class BlockStamp:
    """The stamp of a results block: the heading's line, its clock (hour, minute) if it
    writes one, and the stamp's span in that line.
    """

    line: int
    clock: tuple[int, int] | None
    span: tuple[int, int]


def is_results_line(text: str) -> bool:
    """Whether ``text`` lists results only: one or more name-value pairs, with asides in
    parentheses, separators and at most a short share of other words (units, a flag word).
    """
    if len(text) > _MAX_CHARS:
        return False
    masked = mask_parentheticals(text)
    pairs = list(_PAIR.finditer(masked))
    if not pairs:
        return False
    rest = _FILLER.sub("", _PAIR.sub(" ", masked))
    return len(rest) <= _OTHER_SHARE * len(_FILLER.sub("", masked))


def _clock(text: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"(?P<h>\d{1,2}):?(?P<m>\d{2})\s*(?P<ap>[AP]M)?", text.strip(), re.I)
    if m is None:
        return None
    hour, minute, ap = int(m.group("h")), int(m.group("m")), (m.group("ap") or "").upper()
    hour += 12 if ap == "PM" and hour < 12 else 0
    hour = 0 if ap == "AM" and hour == 12 else hour
    return (hour, minute) if hour < 24 and minute < 60 else None


def heading_stamp(text: str, line: int = 0) -> BlockStamp | None:
    """The stamp of ``text`` when it heads a results block: a stamped label and a colon,
    with nothing after the colon or results only ("Labs (0453): Na 142 K 3.1"); None for a
    heading of prose ("Exam (1600): extubated, drowsy") or without a clock time or date.
    """
    m = _HEADING.match(text) if len(text) <= _MAX_CHARS else None
    if m is None or not (m.group("date") or m.group("clock")) or is_stamped(text):
        return None
    rest = m.group("rest")
    if rest.strip() and not is_results_line(rest):
        return None
    clock = _clock(m.group("clock")) if m.group("clock") else None
    return BlockStamp(line, clock, (m.start("stamp"), m.end("stamp")))


def block_stamp(lines: Sequence[str], i: int) -> BlockStamp | None:
    """The stamp heading the results block that holds line ``i`` (the heading's own line
    included), or None: line ``i`` and every line between it and the heading must list
    results, with no blank line, new label or results record between.
    """
    if not 0 <= i < len(lines):
        return None
    own = heading_stamp(lines[i], i)
    if own is not None:
        return own
    for j in range(i, max(i - _MAX_LINES, -1), -1):
        text = lines[j]
        if j < i and (stamp := heading_stamp(text, j)) is not None:
            return stamp
        if not text.strip() or is_stamped(text) or _LABEL.match(text) or not is_results_line(text):
            return None
    return None


def in_aside(text: str, pos: int) -> bool:
    """Whether ``text[pos]`` stands inside a closed parenthetical aside: in a block, "WBC 8.2
    (from 7.0)", "Na 149 (145 yesterday)" give another draw's value there, not the stamp's.
    """
    return 0 <= pos < len(text) and mask_parentheticals(text)[pos] == " " != text[pos]


def block_time(lines: Sequence[str], line: int, own: TimeRef | None, own_at: tuple[int, int] | None,
               tctx: TimeContext, anchors: Sequence[Anchor] = (), *, text: str = "", pos: int = -1) -> TimeRef | None:
    """The time of a statement on ``lines[line]`` whose governing time (by its clause and
    sentence) is ``own``, written at ``own_at`` (line, column): inside a results block, ``own`` only
    when it is written on the statement's own line outside the stamp ("CK 165 on arrival"), else
    the stamp's resolved date or time (None when it resolves to none, "Labs (0453)": the
    segment's window stays, and the verification reads the draw at the stamp's clock).
    Outside a block, or for a value in an aside of its paragraph ``text`` (at ``pos``: "(from
    7.0)", "(1.4 / yesterday)" wrapped onto the next line), ``own``: an aside gives another
    time's value.
    """
    stamp = block_stamp(lines, line)
    if stamp is None or in_aside(text, pos):
        return own
    if own is not None and own_at is not None and own_at[0] == line \
            and not (own_at[0] == stamp.line and stamp.span[0] <= own_at[1] < stamp.span[1]):
        return own
    refs = resolve_line(lines[stamp.line], stamp.line, tctx, anchors)
    return next((r for r in refs if r.span is not None and r.span[0] < stamp.span[1] and r.span[1] > stamp.span[0]),
                None)


RULE = Rule("time.block_stamp", "A results block's stamp (a clock time or date heading it) dates every results "
            "line of the block, indented continuation lines too, up to a blank line, a new heading or record, or a "
            "line of prose; a time written on a result's own line still dates that result.", block_stamp)
