"""Which numbered wound a site statement is about, read from the window's chartings.

Flowsheets chart each surgical incision under a number: "Incision Site #2" holds where the
wound is ("Thoracotomy - Right") and "Incision Drainage #2", "Incision Drainage Amount #2"
describe that wound. A note names the wound by its place ("R thoracotomy with large
sanguinous drainage", "neck incision scant serosanguinous"), so the statement (whose items
include every number's site item, ``finding_sites.yaml`` ``numbered``) is about the number
whose site item's charted values in the window its place words name. A word matches a
charted word when one starts with the other (four letters at least: "crani" and
"Craniotomy"), a side letter (R, L) the charted side. The number with the most matching
words wins; when none does, or two tie, a patient charting one number keeps it and one
charting several leaves the statement unjudged (the wound cannot be told).
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.pipeline.offline.finding_sites import numbered_by
from ehrlib.pipeline.offline.verification.session import Case

__all__ = ["at_numbered_site", "numbered_rows"]

RowsOf = list[tuple[str, Sequence[Mapping[str, Any]]]]

_SIDES = {"r": "right", "rt": "right", "l": "left", "lt": "left"}
_NUMBER = re.compile(r"#\s*(\d+)\s*$")
#: words naming the wound itself or its description, never where it is
_GENERIC = frozenset({"incision", "incisions", "wound", "wounds", "site", "drainage", "dressing", "with"})


def _words(text: str) -> set[str]:
    return {_SIDES.get(w, w) for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 or w in _SIDES}


def _same(a: str, b: str) -> bool:
    """Words of one stem: a common start of five letters, or all of the shorter ("neck")."""
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return n >= min(5, len(a), len(b)) and (n >= 4 or a == b)


def _score(said: set[str], charted: set[str]) -> int:
    return sum(1 for w in said if any(_same(w, c) for c in charted))


def numbered_rows(phrase: str, rows_of: RowsOf) -> RowsOf:
    """``rows_of`` (label, rows) kept to the items of the wound ``phrase`` names, without the
    site items themselves; unchanged when no item is numbered, empty when the wound cannot
    be told.
    """
    by = numbered_by(_described(rows_of))
    sites = [(label, m.group(1), rows) for label, rows in rows_of if by is not None and (m := by.search(label))]
    if not sites:
        return rows_of
    said = _words(phrase) - _GENERIC
    scores: dict[str, int] = {}
    for _, n, rows in sites:
        charted = {w for r in rows for w in _words(str(r.get("value") or ""))}
        scores[n] = max(scores.get(n, 0), _score(said, charted))
    best = max(scores.values(), default=0)
    chosen = [n for n, s in scores.items() if s == best] if best else []
    numbers = {m.group(1) for label, _ in rows_of if (m := _NUMBER.search(label))}
    if len(chosen) != 1:
        if len(numbers) != 1:
            return []
        chosen = sorted(numbers)
    site_labels = {label for label, _, _ in sites}
    return [(label, rows) for label, rows in rows_of if label not in site_labels
            and (m := _NUMBER.search(label)) is not None and m.group(1) == chosen[0]]


def _described(rows_of: RowsOf) -> str:
    """The label of the first described item (not a site item) of a numbered statement."""
    return next((label for label, _ in rows_of if numbered_by(label) is not None), "")


def at_numbered_site(c: Case, rows_of: RowsOf) -> RowsOf:
    """:func:`numbered_rows` with the statement's phrase: its line from the phrase start
    (after the last comma, semicolon or colon before it) to its end.
    """
    line, span = c.line(), c.entity.span
    if not line or span is None:
        return rows_of
    a = max((m.end() for m in re.finditer(r"[,;:.]", line[:span[0]])), default=0)
    return numbered_rows(line[a:span[1]], rows_of)
