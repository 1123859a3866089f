"""Paragraphs: a note's hard-wrapped lines joined into the texts statements run across.

Notes wrap mid-sentence ("Creatinine rose from 2.0 to a / peak of 4.3"), so a line that
goes on from the one before it is read with it; a new list item, heading, results stamp or
table row starts a new paragraph, as does a line opening with an item's name after a line
that ended on a value (a list of values ends with its line: "... PO4 5.6" / "Hgb stable"),
and an organism's antibiogram on the lines under it continues its report
(:func:`ehrlib.pipeline.offline.microsens.continues_report`).
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.long_text import piece_spans
from ehrlib.pipeline.offline.microsens import continues_report
from ehrlib.pipeline.offline.numparse import is_table_row
from ehrlib.pipeline.offline.statement_time import is_stamped
from ehrlib.pipeline.offline.units import canonical_unit
from ehrlib.pipeline.records import Segment

__all__ = ["Paragraph", "paragraphs"]


@dataclass(frozen=True, slots=True)
class Paragraph:
    """Consecutive lines read as one text: notes are hard-wrapped mid-sentence
    ("Creatinine rose from 2.0 to a / peak of 4.3"), so statements cross line ends.
    """

    lines: tuple[int, ...]
    offsets: tuple[int, ...]
    text: str

    def locate(self, pos: int) -> tuple[int, int]:
        """(line, column) of a paragraph offset."""
        k = max(i for i, off in enumerate(self.offsets) if off <= pos)
        return self.lines[k], pos - self.offsets[k]


_NEW_ITEM = re.compile(r"\s*(?:-(?!>)|[*#•]|\d{1,2}[.)]\s|\[\*\*\d|[A-Z][A-Za-z0-9 /&]{1,28}:|[A-Z]{2,}[A-Z /&]*:)")


#: a line that ends on a value ("Ca 8.1 Mg 2.3 PO4 5.6", "WBC 10.3*")
_ENDS_WITH_VALUE = re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?\s*[%*]?\s*$")
_FIRST_WORD = re.compile(r"\s*([A-Za-z][A-Za-z0-9]*)")


def _opens_with_item(line: str) -> bool:
    """Whether a line opens with the name of an item of the lexicon (a lab, a vital, a drug), not with a
    unit in lower case that a value on the line before goes on with ("lisinopril 20" / "mg daily").
    """
    m = _FIRST_WORD.match(line)
    if m is None or (m.group(1)[0].islower() and canonical_unit(m.group(1)) is not None):
        return False
    return bool(load_lexicon().concepts_for(m.group(1)))


def _continues(prev: str, nxt: str) -> bool:
    if not prev.strip() or not nxt.strip() or _NEW_ITEM.match(nxt) or is_stamped(prev) or is_stamped(nxt) \
            or is_table_row(prev):
        return False
    if continues_report(prev, nxt, load_lexicon()):
        return True  # "Sputum: KLEBSIELLA." then "  Meropenem S, cefepime I": the organism's antibiogram
    if _ENDS_WITH_VALUE.search(prev) and _opens_with_item(nxt):
        return False  # "... Mg 2.3 PO4 5.6" then "  Hgb stable from last evening": a new statement, not a wrap
    if re.search(r"[.:;]\s*$", prev) and not re.match(r"\s*(?:->|→|[a-z])", nxt):
        return False
    return len(prev.rstrip()) >= 45


def paragraphs(lines: Sequence[str], seg: Segment) -> list[Paragraph]:
    """The segment's lines as paragraphs, an overlong one read in pieces (:mod:`.long_text`);
    blank lines are left out.
    """
    out: list[Paragraph] = []
    cur: list[int] = []

    def flush() -> None:
        if cur:
            offs, parts, pos = [], [], 0
            for i in cur:
                offs.append(pos)
                parts.append(lines[i])
                pos += len(lines[i]) + 1
            text = " ".join(parts)
            # an overlong paragraph (a pasted log, a 1 MB line) is read in pieces: see .long_text
            for a, b in piece_spans(text, offs):
                k = bisect.bisect_right(offs, a) - 1
                j = max(bisect.bisect_left(offs, b), k + 1)
                out.append(Paragraph(tuple(cur[k:j]), tuple(off - a for off in offs[k:j]), text[a:b]))

    for i in range(seg.start_line, seg.end_line + 1):
        if lines[i].isspace() or not lines[i]:
            flush()  # a blank line continues nothing and holds no statement: no paragraph
            cur = []
        elif cur and _continues(lines[cur[-1]], lines[i]):
            cur.append(i)
        else:
            flush()
            cur = [i]
    flush()
    return out
