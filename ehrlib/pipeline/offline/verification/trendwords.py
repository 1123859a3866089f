"""Trend statements with a stated origin: "down to 1.1 from 2.3", "up to 14 from 9.2",
"Cr improved to 1.0 from 1.4", "rose from 2.0 to 4.3".

The claim has three parts, each checked against the table (:data:`.trends.STATED_ORIGIN`):
the new value is recorded in the entity's window, the origin is one of the values
recorded before it (the previous three, within a three-day look-back: "from" means the
previous measurement, not any earlier one), and the direction word agrees with the sign
of new - origin ("improved"/"worsened" through the concept's ``lower_is_worse``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.verification.qualifiers import normal_range

__all__ = ["StatedOrigin", "parse_origin", "direction_of", "day_over_day", "day_over_day_values", "toward_reference"]

_WORDS = load_data("verification_terms.yaml")["trend_words"]
_UP: tuple[str, ...] = tuple(_WORDS["up"])
_DOWN: tuple[str, ...] = tuple(_WORDS["down"])
_QUAL: tuple[str, ...] = tuple(_WORDS["qualitative"])
_WORD = "|".join(sorted((re.escape(w).replace(r"\ ", r"\s+") for w in _UP + _DOWN + _QUAL), key=len, reverse=True))
_NUM = r"\d+(?:\.\d+)?"
_TO_FROM = re.compile(rf"\b(?P<dir>{_WORD})\s+(?:to\s+)?(?P<to>{_NUM})\s*\*?\s*(?:[a-zA-Z/%]{{1,6}}\s*)?"
                      rf"\(?from\s+(?:a\s+\w+\s+of\s+)?(?P<frm>{_NUM})", re.I)
_FROM_TO = re.compile(rf"\b(?P<dir>{_WORD})\s+from\s+(?P<frm>{_NUM})\s*\*?\s*(?:[a-zA-Z/%]{{1,6}}\s*)?to\s+"
                      rf"(?:a\s+\w+\s+of\s+)?(?P<to>{_NUM})", re.I)

#: "<dir> Y -> X": a setting's change written with an arrow ("PEEP decreased 8 -> 5", "FiO2 weaned 60 -> 40%")
_ARROW = re.compile(rf"\b(?P<dir>{_WORD})\s+(?P<frm>{_NUM})\s*%?\s*(?:->|-->|→|=>)\s*(?P<to>{_NUM})", re.I)
#: the clock time the change is told at, right after it ("... -> 5 at 1400", "... to 5 by 2100")
_AT_CLOCK = re.compile(r"\s*(?:%|[a-zA-Z/]{1,6})?\s*(?:at|by|@|around|~)\s*~?(?P<clock>(?:[01]\d|2[0-3])[0-5]\d)(?!\d)",
                       re.I)


@dataclass(frozen=True, slots=True)
class StatedOrigin:
    """A direction word with its new and origin values (and the clock time the change is told at)."""

    word: str
    new: float
    origin: float
    clock: str | None = None


def parse_origin(text: str) -> StatedOrigin | None:
    """The first "<dir> to X from Y" / "<dir> from Y to X" / "<dir> Y -> X" of a statement's text."""
    m = _TO_FROM.search(text) or _FROM_TO.search(text) or _ARROW.search(text)
    if m is None:
        return None
    at = _AT_CLOCK.match(text, m.end()) if m.re is not _TO_FROM else None
    return StatedOrigin(re.sub(r"\s+", " ", m.group("dir").lower()), float(m.group("to")), float(m.group("frm")),
                        at.group("clock") if at else None)


def direction_of(word: str, lower_is_worse: bool | None) -> str | None:
    """Rising | falling for a direction word; None when "improved" has no known polarity."""
    if word in _UP:
        return "rising"
    if word in _DOWN:
        return "falling"
    if lower_is_worse is None:
        return None
    better = "rising" if lower_is_worse else "falling"
    worse = "falling" if lower_is_worse else "rising"
    return better if word.startswith("improv") else worse


def day_over_day(rows: Sequence[Mapping[str, Any]], tol: float, relative: float = 0.05) -> str | None:
    """A progress note's trend word read as clinicians mean it: the latest value against
    the last value of the previous day with values (the previous draw, not a neighbour
    within the same day), rising/falling beyond a dead band of max(tol, ``relative`` x the
    reference), else stable. None without values on two different days.
    """
    pair = day_over_day_values(rows)
    if pair is None:
        return None
    ref, last_v = pair
    band = max(tol, relative * abs(ref))
    if abs(last_v - ref) <= band:
        return "stable"
    return "rising" if last_v > ref else "falling"


def day_over_day_values(rows: Sequence[Mapping[str, Any]]) -> tuple[float, float] | None:
    """(the previous draw day's last value, the latest value) of :func:`day_over_day`."""
    timed = [(str(r.get("time")), float(r["valuenum"])) for r in rows if r.get("valuenum") is not None
             and r.get("time")]
    if not timed:
        return None
    timed.sort()
    last_t, last_v = timed[-1]
    earlier = [v for t, v in timed if t[:10] < last_t[:10]]
    if not earlier:
        return None
    return earlier[-1], last_v


def toward_reference(word: str | None, concept: str | None, first: float) -> str | None:
    """The direction "improving" ("worsening") states for an analyte either side of whose
    reference interval is abnormal (pCO2, sodium): toward the interval from the side the
    values start on (away from it), "falling" or "rising"; None from inside it or without one.
    """
    rng = normal_range(concept, first) if concept and word in ("improving", "worsening") else None
    if rng is None or rng[0] <= first <= rng[1]:
        return None
    better = "falling" if first > rng[1] else "rising"
    return better if word == "improving" else {"falling": "rising", "rising": "falling"}[better]
