r"""Which number a release gives a note's first line, and shifting its labels to ours.

Every record in this project indexes ``note.text.split("\\n")`` from 0. A release that
writes line positions may count from 0 or from 1, and says so nowhere in the files. The
labels themselves tell: an annotated entity is text of its note, so it should appear on
the line its position names. :func:`detect_line_base` first rules out a count some
position does not fit (line 0 when counting from 1, one past the last line when counting
from 0); if both fit, it counts, for each, how many entities appear on the line it implies
and takes the one with more hits (0 on a tie, the project's own count). The import
records the counts next to the choice, so a reader can see how clear the evidence was.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ehrlib.corpus.records import GoldEntity, Note

__all__ = ["LineBase", "detect_line_base", "shift_lines"]

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class LineBase:
    """The base chosen (0 or 1), how it was chosen, and the hits behind it."""

    base: int
    chosen_by: str
    hits: Mapping[int, int]
    entities: int

    @property
    def offset(self) -> int:
        """What is added to a written position to get our 0-based line."""
        return -self.base

    def describe(self) -> dict[str, object]:
        """The JSON form recorded in import.json."""
        return {"line_base": self.base, "line_offset": self.offset, "chosen_by": self.chosen_by,
                "entities_on_their_line": {str(b): n for b, n in self.hits.items()}, "entities": self.entities}


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def _on_line(entity: str, line: str) -> bool:
    name = _norm(entity)
    return bool(name) and name in _norm(line)


def detect_line_base(notes: Mapping[str, Note], gold: Iterable[GoldEntity], given: int | None = None) -> LineBase:
    """The base of ``gold``'s line numbers: ``given`` (0 or 1) if set; else the only one
    every position fits (a position 0 rules out counting from 1, a position equal to the
    note's line count rules out counting from 0); else the one under which more entities
    appear on their line (0 on a tie).
    """
    gold = list(gold)
    hits = {0: 0, 1: 0}
    fits = {0: True, 1: True}
    for g in gold:
        note = notes.get(g.note_id)
        if note is None:
            continue
        lines = note.lines
        fits[1] = fits[1] and g.line >= 1
        fits[0] = fits[0] and g.line < len(lines)
        for base in hits:
            i = g.line - base
            if 0 <= i < len(lines) and _on_line(g.entity, lines[i]):
                hits[base] += 1
    if given is not None:
        return LineBase(given, "given", hits, len(gold))
    if fits[0] != fits[1]:
        return LineBase(0 if fits[0] else 1, "the only count every position fits", hits, len(gold))
    return LineBase(1 if hits[1] > hits[0] else 0, "entities found on their line", hits, len(gold))


def shift_lines(gold: Iterable[GoldEntity], notes: Mapping[str, Note], base: LineBase
                ) -> tuple[list[GoldEntity], int]:
    """``gold`` on 0-based lines, and how many labels fell outside their note (left out)."""
    kept, outside = [], 0
    for g in gold:
        line = g.line + base.offset
        if not 0 <= line < len(notes[g.note_id].lines):
            outside += 1
            continue
        kept.append(g if line == g.line else dataclasses.replace(g, line=line))
    return kept, outside
