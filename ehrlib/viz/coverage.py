"""Coverage marks: what happened to each line of a note, so silence is never mistaken for
"all consistent".

A line is **checked** (a finding sits on it), **out of scope** (the run excluded what it
says, and the mark names why: the scope decision of a statement on it, the non-statement
rule that dropped a mention on it, or the section rule of its segment, e.g. a past
medical history section is history), **nothing checkable found** (the run read it and
extracted nothing), or **blank**. When the run failed on the note, or did not record its
segments, the non-blank lines are **not checked** / **not recorded** instead: the viewer
does not claim what the run did not say.

Section scopes come from the offline pipeline's section rules (``offline_sections.yaml``,
read as data): ``past`` (history), ``plan`` (future), ``claims`` (billing codes only).
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache

from ehrlib.datafiles import load_data
from ehrlib.viz.run_records import NoteRecord

__all__ = ["COVERAGE_KINDS", "LineMark", "classify_lines", "coverage_counts", "section_scopes"]

#: mark kinds in the order the header counts them, with the words shown for each
COVERAGE_KINDS = {"checked": "checked", "out_of_scope": "out of scope", "nothing": "nothing checkable found",
                  "not_checked": "not checked (note failed)", "not_recorded": "coverage not recorded",
                  "blank": "blank"}
_SCOPE_WORDS = {"past": "history", "plan": "plans and instructions", "claims": "billing codes only"}


@dataclass(frozen=True, slots=True)
class LineMark:
    """One line's coverage: a :data:`COVERAGE_KINDS` key and why."""
    kind: str
    reason: str = ""


@cache
def section_scopes() -> dict[str, str]:
    """Section kind -> its scope (active | past | plan | claims) from the section rules."""
    return {str(s["kind"]): str(s.get("scope") or "active")
            for s in load_data("offline_sections.yaml").get("sections") or ()}


def _section_mark(record: NoteRecord, line: int) -> LineMark | None:
    for seg in record.segments:
        if seg.start_line <= line <= seg.end_line:
            scope = section_scopes().get(seg.section, "active")
            if scope != "active":
                return LineMark("out_of_scope", f"section rule: '{seg.title}' is a {seg.section} section "
                                                f"({_SCOPE_WORDS.get(scope, scope)})")
            return None
    return None


def classify_lines(lines: Sequence[str], checked: Collection[int], record: NoteRecord | None) -> list[LineMark]:
    """One :class:`LineMark` per line; ``checked`` are the lines with a finding."""
    out: list[LineMark] = []
    for n, text in enumerate(lines):
        if not text.strip():
            out.append(LineMark("blank"))
        elif record is not None and record.failed:
            out.append(LineMark("not_checked", f"the run failed on this note: {record.failure}"))
        elif n in checked:
            out.append(LineMark("checked", "a finding on this line"))
        elif record is None or not record.structure_recorded:
            out.append(LineMark("not_recorded", "the run recorded no segments or statements for this note"))
        else:
            out.append(_unchecked(record, n))
    return out


def _unchecked(record: NoteRecord, n: int) -> LineMark:
    scoped = [s for s in record.statements if s.line == n and s.status != "active"]
    if scoped:
        why = "; ".join(dict.fromkeys(f"'{s.text}' is {s.status}" + (f" ({s.reason})" if s.reason else "")
                                      for s in scoped))
        return LineMark("out_of_scope", f"scope: {why}")
    dropped = [d for d in record.dropped if d.line == n]
    if dropped:
        why = "; ".join(dict.fromkeys(f"'{d.text}' by {d.rule_id}" for d in dropped))
        return LineMark("out_of_scope", f"not a checkable statement: {why}")
    if (mark := _section_mark(record, n)) is not None:
        return mark
    if any(s.line == n for s in record.statements):
        return LineMark("nothing", "a statement was extracted here but the run gave no finding for it")
    return LineMark("nothing", "no checkable statement found")


def coverage_counts(marks: Sequence[LineMark]) -> dict[str, int]:
    """Lines per mark kind (every kind present, zeros included)."""
    return {k: sum(1 for m in marks if m.kind == k) for k in COVERAGE_KINDS}
