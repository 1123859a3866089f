"""The one clause splitter of the offline extractor.

A cue, a value or a trend word only belongs to a statement within the statement's own
clause. Where a clause ends depends on what is being bounded (a negation stops at a colon,
a temporal cue at "now", a mention's value at a flowsheet column gap), so the break sets
are named data in ``offline_context.yaml`` (``clause_breaks``) and this module is the one
implementation that cuts with them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError

__all__ = ["ClauseBreaks", "CLAUSE_REACH", "LIST_MARKER", "clause_breaks", "clause_before", "clause_after", "has_break",
           "mask_parentheticals"]

#: the longest clause looked at, in characters: a cue or value further away than this is not
#: within a statement's reach (ConText's scopes are a few words), and the bound keeps a
#: paragraph with thousands of mentions linear rather than quadratic
CLAUSE_REACH = 600

_CLOSED_PARENTHETICAL = re.compile(r"\([^()]*\)")

#: what opens a list item or a problem entry: "#", "# ", "3.", "3)", "-", "*", "•"
LIST_MARKER = r"#+\s*|\d{1,2}[.)]\s*|[-*\u2022]\s*"


@dataclass(frozen=True, slots=True)
class ClauseBreaks:
    """One named set of clause breaks.

    ``keep`` is ``"end"`` (the clause before a position starts where the last break ends)
    or ``"break_word"`` (one character into the last break, so a break word such as
    "but" or "now" stays inside the clause).
    """

    name: str
    pattern: re.Pattern[str]
    keep: str = "end"


@functools.cache
def clause_breaks(name: str) -> ClauseBreaks:
    """The break set ``name`` of ``offline_context.yaml``."""
    sets = load_data("offline_context.yaml")["clause_breaks"]
    if name not in sets:
        raise ConfigError(f"offline_context.yaml: no clause-break set {name!r}")
    entry = sets[name]
    return ClauseBreaks(name, re.compile(entry["pattern"]), entry.get("keep", "end"))


def clause_before(text: str, pos: int, breaks: str) -> str:
    """The clause that ends at ``pos``: ``text[:pos]`` from its last break on (at most
    :data:`CLAUSE_REACH` characters).

    Breaks are found in ``text[:pos]`` alone (a lookahead never sees past ``pos``).
    """
    b = clause_breaks(breaks)
    prefix = text[max(0, pos - CLAUSE_REACH):pos]
    last = None
    for last in b.pattern.finditer(prefix):  # noqa: B007 - keeps the last match
        pass
    if last is None:
        return prefix
    return prefix[last.start() + 1:] if b.keep == "break_word" else prefix[last.end():]


def clause_after(text: str, pos: int, breaks: str) -> str:
    """The clause that starts at ``pos``: ``text[pos:]`` up to its first break (at most
    :data:`CLAUSE_REACH` characters).

    The search runs on the whole text from ``pos``, so a lookbehind in the break pattern
    sees the characters before ``pos`` ("Dr. K." is not a sentence end).
    """
    end = min(len(text), pos + CLAUSE_REACH)
    m = clause_breaks(breaks).pattern.search(text, pos, end)
    return text[pos:m.start() if m else end]


def has_break(span: str, breaks: str) -> bool:
    """Whether ``span`` (a slice: its end counts as a text end) holds a break of the set."""
    return clause_breaks(breaks).pattern.search(span) is not None


@functools.lru_cache(maxsize=256)  # asked once per statement on the line: masked once per line
def mask_parentheticals(text: str) -> str:
    """``text`` with every closed parenthetical blanked (same length, nested ones too).

    A parenthetical is an aside with its own scope (ConText ends a cue's scope at its
    boundary): in "WBC 12 (known CML), Hgb 9" the cue "known" qualifies the aside, not
    Hgb. A parenthesis still open at the text's end is kept: the statement is inside it.
    """
    while True:
        masked = _CLOSED_PARENTHETICAL.sub(lambda m: " " * len(m.group(0)), text)
        if masked == text:
            return text
        text = masked
