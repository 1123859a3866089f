"""The candidate-mention record every scanner of :mod:`.mentions` produces, and its helpers.

Kept apart from the scanners so that the modules that consume mentions (non-statement
filtering, extraction) and the scanners themselves share one record without importing
each other.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.clauses import clause_after
from ehrlib.pipeline.offline.numparse import NUMBER

__all__ = ["Mention", "NUM", "clean_line", "concept_flags", "emit", "line_clause", "overlaps"]

#: a number as notes write it ("-2", "7.49", "12,400": thousands groups per .numparse)
NUM = r"-?(?:" + NUMBER + r")"


@dataclass(frozen=True, slots=True)
class Mention:
    """One candidate statement: its span in the scanned text, kind, concept, value text and
    parsed claim (:mod:`ehrlib.pipeline.claims`).
    """

    line: int
    start: int
    end: int
    text: str
    kind: str
    concept: str
    value: str | None = None
    claim: Claim = field(default_factory=Claim)
    group: str | None = None


def clean_line(text: str) -> str:
    """De-identification brackets masked with backticks of the same length (offsets stay
    valid; not spaces, which would read as a flowsheet column gap).
    """
    return re.sub(r"\[\*\*|\*\*\]", lambda m: "`" * len(m.group(0)), text)


def overlaps(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    """Whether ``[s, e)`` overlaps a span already taken."""
    return any(a < e and s < b for a, b in spans)


def emit(out: list[Mention], taken: list[tuple[int, int]], m: Mention) -> None:
    """Append ``m`` and mark its span taken."""
    out.append(m)
    taken.append((m.start, m.end))


def line_clause(text: str, start: int) -> str:
    """The rest of the clause from ``start`` (a sentence end, a column gap or a bar ends it)."""
    return clause_after(text, start, "line_item")


def concept_flags() -> Mapping[str, Any]:
    """Which concept gets which parsing rule (``offline_concept_flags.yaml``; cached, read-only)."""
    return load_data("offline_concept_flags.yaml")
