"""Findings as flat rows: one row per verified statement, the same for every consumer.

:func:`finding_row` is the one definition of a finding row. :class:`Findings` (what
:class:`ehrlib.Verifier` returns), the exports of ``ehrlib report`` (``findings.jsonl``,
``findings.csv``, ``findings.parquet``) and the notebooks' ``note_findings`` frame are all
built from it, so a column means the same thing everywhere. The columns and their
meaning are documented in ``docs/findings_schema.md``; every row carries
:data:`SCHEMA_VERSION`, raised whenever a column is renamed, removed or changes meaning.

Every cell is a scalar (text, number, boolean or null): row references are written as
``table#row_id`` separated by spaces, so JSONL, CSV and Parquet hold the same values.
"""
from __future__ import annotations

import dataclasses
import html
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from ehrlib.corpus.io import iter_jsonl, write_jsonl
from ehrlib.corpus.records import Note, Prediction, RowRef, TimeSpan
from ehrlib.errors import DataError
from ehrlib.pipeline.summary import method_verdict

if TYPE_CHECKING:  # types only: building rows never loads pandas or the viewer
    import pandas as pd

    from ehrlib.pipeline.inspector import NoteResult

__all__ = ["SCHEMA_VERSION", "COLUMNS", "Finding", "Findings", "finding_row"]

#: version of the finding row (named, so it never reads as the corpus records' own
#: ``schema_version``); see docs/findings_schema.md for what each version holds
SCHEMA_VERSION = "findings/1"


@dataclass(frozen=True, slots=True)
class Finding:
    """One verified statement of a note and what the method concluded about it."""

    schema_version: str
    run_id: str | None
    note_id: str
    note_type: str | None
    hadm_id: int | None
    line: int
    entity_id: str | None
    #: the statement's text as extracted from the note
    statement: str
    #: contradiction | missing | unverified | consistent (a failed check is unverified)
    verdict: str
    #: the verdict withheld for low confidence (then ``verdict`` is unverified), else None
    withheld_verdict: str | None
    #: calibrated probability that the verdict is right; None when uncalibrated
    confidence: float | None
    reason: str
    #: the time the statement was checked against, as text ("start – end", or one time)
    window: str | None
    window_start: str | None
    window_end: str | None
    time_basis: str | None
    #: every evidence row, deciding rows first ("labevents#123 chartevents#9")
    evidence: str
    #: the rows that decided the verdict (a subset of ``evidence``)
    deciding: str
    #: labels of the table items the statement was aligned to, "; "-separated
    items: str
    value: str | None
    rule_id: str | None
    from_cache: bool
    n_tool_calls: int
    failure: str | None
    #: where ``confidence`` comes from: "calibrator", or "logprobs" (an LLM's own probability
    #: of its label); None without a confidence. Added after findings/1's first columns:
    #: a file written before it reads with None here.
    confidence_source: str | None = None


#: columns a findings/1 file may lack (added at the end later), read as None
_LATER = ("confidence_source",)
#: column names in order (the CSV header, the frame's columns)
COLUMNS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Finding))


def _rows_text(refs: Sequence[RowRef]) -> str:
    return " ".join(f"{r.table}#{r.row_id}" for r in refs)


def _window_text(window: TimeSpan | None) -> str | None:
    if window is None or (window.start is None and window.end is None):
        return None
    if window.start == window.end:
        return window.start
    return f"{window.start or '…'} – {window.end or '…'}"


def _withheld(p: Prediction) -> str | None:
    """The verdict a low-confidence alarm would have had (None when nothing was withheld)."""
    if p.abstained_from is None or p.label != "unverified" or p.failure:
        return None
    return method_verdict(dataclasses.replace(p, label=p.abstained_from))


def finding_row(p: Prediction, note: Note | None = None) -> Finding:
    """The row of one prediction (``note`` adds its type and admission): the one row definition."""
    window = p.time_window
    return Finding(
        schema_version=SCHEMA_VERSION, run_id=p.run_id or None, note_id=p.note_id,
        note_type=note.note_type if note is not None else None, hadm_id=note.hadm_id if note is not None else None,
        line=p.line, entity_id=p.entity_id, statement=p.entity, verdict=method_verdict(p),
        withheld_verdict=_withheld(p), confidence=p.confidence, reason=p.reason, window=_window_text(window),
        window_start=window.start if window else None, window_end=window.end if window else None,
        time_basis=p.time_basis, evidence=_rows_text(p.evidence_row_ids), deciding=_rows_text(p.deciding_row_ids),
        items="; ".join(i.label for i in p.items), value=p.value, rule_id=p.rule_id, from_cache=p.from_cache,
        n_tool_calls=len(p.tool_calls), failure=p.failure, confidence_source=p.confidence_source)


@dataclass(frozen=True, slots=True)
class Findings(Sequence[Finding]):
    """An immutable sequence of :class:`Finding` rows, with what rendering them needs.

    ``predictions`` are the records behind the rows (same order; empty for findings read
    back from a file), ``notes`` and ``results`` the notes and their pipeline results (for
    the viewer's coverage marks), ``db`` the database the evidence rows come from.
    """

    rows: tuple[Finding, ...] = ()
    predictions: tuple[Prediction, ...] = field(default=(), repr=False)
    notes: tuple[Note, ...] = field(default=(), repr=False)
    results: tuple[NoteResult, ...] = field(default=(), repr=False, compare=False)
    db: str | None = field(default=None, repr=False, compare=False)
    #: notes that could not be verified: (note_id, one-line reason), in input order
    failures: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, predictions: Iterable[Prediction], notes: Iterable[Note] = (), *,
           results: Sequence[NoteResult] = (), db: str | os.PathLike[str] | None = None,
           failures: Iterable[tuple[str, str]] = ()) -> Findings:
        """The findings of these predictions, each row with its note's type and admission."""
        preds, notes = tuple(predictions), tuple(notes)
        by_id = {n.note_id: n for n in notes}
        return cls(tuple(finding_row(p, by_id.get(p.note_id)) for p in preds), preds, notes, tuple(results),
                   None if db is None else str(db), tuple(failures))

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> Finding: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Finding, ...]: ...

    def __getitem__(self, index: int | slice) -> Finding | tuple[Finding, ...]:
        return self.rows[index]

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.rows)

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for r in self.rows:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        what = "".join(f", {n} {v}" for v, n in sorted(counts.items()))
        failed = f"; {len(self.failures)} note(s) failed (see .failures)" if self.failures else ""
        return f"<Findings: {len(self.rows)} in {len({r.note_id for r in self.rows})} note(s){what}{failed}>"

    def to_frame(self) -> pd.DataFrame:
        """One row per finding, the columns of :data:`COLUMNS`."""
        import pandas as pd  # deferred: heavy, and only frames need it

        frame = pd.DataFrame([dataclasses.astuple(r) for r in self.rows], columns=list(COLUMNS))
        # integers stay integers where a value may be missing (no note: no admission)
        return frame.astype({"hadm_id": "Int64", "line": "int64", "n_tool_calls": "int64",
                             "confidence": "float64", "from_cache": "bool"})

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        """Write one JSON object per finding (atomically); returns the path."""
        return write_jsonl(self.rows, path, schema_version=SCHEMA_VERSION)

    @classmethod
    def read_jsonl(cls, path: str | os.PathLike[str]) -> Findings:
        """Findings written by :meth:`to_jsonl` or ``ehrlib report`` (rows only: no page to render)."""
        rows = []
        for lineno, rec in iter_jsonl(path):
            if rec.get("schema_version") != SCHEMA_VERSION:
                raise DataError(f"{path}:{lineno}: findings schema version {rec.get('schema_version')!r}, "
                                f"this ehrlib reads {SCHEMA_VERSION!r}")
            missing = [c for c in COLUMNS if c not in rec and c not in _LATER]
            if missing:
                raise DataError(f"{path}:{lineno}: finding without column(s) {missing}")
            values: dict[str, Any] = {c: rec.get(c) for c in COLUMNS}
            rows.append(Finding(**values))
        return cls(tuple(rows))

    def _repr_html_(self) -> str:
        """The viewer's page of each note (inline styles: renders in untrusted notebooks)."""
        return _page(self)


def _note_record(result: NoteResult) -> Any:
    """What the viewer's coverage marks need of one note, from its in-memory result (a run
    reads the same from its files, :mod:`ehrlib.viz.run_records`).
    """
    # deferred: ehrlib.viz loads matplotlib; only rendering needs these records
    from ehrlib.viz.run_records import Dropped, NoteRecord, SegmentInfo, Statement

    scope = {d.entity_id: d for d in result.scope}
    statements = tuple(Statement(e.entity_id, e.line, e.text, scope[e.entity_id].status if e.entity_id in scope
                                 else "active", scope[e.entity_id].reason if e.entity_id in scope else "")
                       for e in result.entities)
    dropped = tuple(Dropped(int(getattr(d, "line", -1)), str(getattr(d, "text", "")), str(d.rule_id))
                    for r in result.stage_records for d in r.dropped if getattr(d, "rule_id", None))
    return NoteRecord(result.note_id, "ok", None, tuple(f"{stage}: {msg}" for stage, _, msg in result.failures),
                      True, tuple(SegmentInfo(s.start_line, s.end_line, s.title, s.section) for s in result.segments),
                      statements, dropped)


def _page(findings: Findings) -> str:
    """Each note's viewer fragment, evidence rows read from ``findings.db`` when it opens."""
    from ehrlib.viz.evidence import EvidenceReader  # deferred: the viewer loads matplotlib
    from ehrlib.viz.finding_panel import evidence_order
    from ehrlib.viz.viewer import findings_fragment

    failed = "".join(f"<li><b>{html.escape(note_id)}</b>: {html.escape(why)}</li>"
                     for note_id, why in findings.failures)
    failed = f"<div><p>{len(findings.failures)} note(s) not verified:</p><ul>{failed}</ul></div>" if failed else ""
    if not findings.notes:
        return failed + f"<p>{len(findings.rows)} findings (read from a file: no note to show)</p>"
    records = {r.note_id: _note_record(r) for r in findings.results}
    parts = []
    with EvidenceReader(findings.db) as reader:
        for note in findings.notes:
            preds = [(i, p) for i, p in enumerate(findings.predictions) if p.note_id == note.note_id]
            evidence = ({i: reader.rows(note.subject_id, evidence_order(p)) for i, p in preds}
                        if reader.error is None else None)
            parts.append(findings_fragment(note, preds, evidence=evidence, record=records.get(note.note_id)))
    return failed + "".join(parts)
