"""What a run recorded about each note beyond its predictions, as the viewer needs it.

- the note's outcome: the ledger (``progress.jsonl``; the last line of a note wins, as a
  rerun retries a note that crashed) says ``ok``, ``failed`` or ``error``; the reason is a
  failure field of that line or the note-level line of ``failures.jsonl``;
- stage failures of a note that otherwise finished (``failures.jsonl``, and the
  ``failures`` of its ``stages.jsonl`` records): some of its text went unchecked;
- the note-level ``stages.jsonl`` record: segments with their section kinds, the
  extracted statements, their scope decisions, and the mentions each extraction stage
  dropped with the rule that dropped them (what :mod:`ehrlib.viz.coverage` reads).

Every file is optional and read tolerantly (a torn last line is skipped): a run written
before a field existed still gets its pages.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ehrlib.pipeline.attempts import current_lines

__all__ = ["Dropped", "NoteRecord", "SegmentInfo", "Statement", "read_note_records"]

#: ledger statuses of a note that produced no usable result
FAILED_STATUSES = ("failed", "error", "lost")
#: fields of a ledger line or failure record that may carry the reason, first found wins
_REASON_FIELDS = ("failure", "error", "reason", "message")


@dataclass(frozen=True, slots=True)
class SegmentInfo:
    """A segment of the note: its lines (inclusive), header title and section kind."""
    start_line: int
    end_line: int
    title: str
    section: str


@dataclass(frozen=True, slots=True)
class Statement:
    """An extracted statement and its scope decision (``active`` is verified)."""
    entity_id: str
    line: int
    text: str
    status: str = "active"
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Dropped:
    """A candidate mention an extraction stage dropped, with the rule that dropped it."""
    line: int
    text: str
    rule_id: str


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """One note's outcome and recorded structure (empty tuples when not recorded)."""
    note_id: str
    status: str = "ok"
    #: why the note failed (``status`` failed/error); None for a note that finished
    failure: str | None = None
    #: ``"<stage>: <message>"`` of each recoverable stage failure of a finished note
    stage_failures: tuple[str, ...] = ()
    #: whether the run wrote the note-level stages record (segments, statements, scope)
    structure_recorded: bool = False
    segments: tuple[SegmentInfo, ...] = ()
    statements: tuple[Statement, ...] = ()
    dropped: tuple[Dropped, ...] = ()

    @property
    def failed(self) -> bool:
        """Whether the note produced no usable result."""
        return self.status in FAILED_STATUSES or self.failure is not None


def _lines(path: Path, skip: tuple[str, ...] = (), *, current: bool = False) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file; a line holding every string of ``skip`` is not parsed
    (a cheap filter: most stage records carry nothing the viewer needs). ``current``: only
    the lines of each note's last attempt (a note rerun with ``--retry-failed`` keeps its
    earlier attempt's lines in the file; its old stage failures are history).
    """
    if not path.is_file():
        return
    keep = current_lines(path.parent, path.name) if current else []
    with path.open(encoding="utf-8") as fh:
        k = -1
        for raw in fh:
            if not raw.strip():
                continue
            k += 1
            if current and k < len(keep) and not keep[k]:
                continue
            if skip and all(s in raw for s in skip):
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                continue  # a torn last line of an interrupted run
            if isinstance(rec, dict) and rec.get("note_id") is not None:
                yield rec


def _reason(rec: Mapping[str, Any]) -> str | None:
    for key in _REASON_FIELDS:
        value = rec.get(key)
        if isinstance(value, Mapping):
            value = value.get("message") or value.get("error") or json.dumps(value, ensure_ascii=False)
        if value:
            return str(value)
    return None


def _int(value: Any, default: int = -1) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def _structure(output: Mapping[str, Any]) -> dict[str, Any]:
    segments = tuple(SegmentInfo(_int(s.get("start_line")), _int(s.get("end_line")), str(s.get("title") or ""),
                                 str(s.get("section") or "other"))
                     for s in output.get("segments") or () if isinstance(s, Mapping))
    scope = {str(d.get("entity_id")): d for d in output.get("scope") or () if isinstance(d, Mapping)}
    statements = []
    for e in output.get("entities") or ():
        if not isinstance(e, Mapping):
            continue
        decision = scope.get(str(e.get("entity_id")), {})
        statements.append(Statement(str(e.get("entity_id")), _int(e.get("line")), str(e.get("text") or ""),
                                    str(decision.get("status") or "active"), str(decision.get("reason") or "")))
    return {"structure_recorded": True, "segments": segments, "statements": tuple(statements)}


def read_note_records(run_dir: str | os.PathLike[str]) -> dict[str, NoteRecord]:
    """Note id -> :class:`NoteRecord` for every note any of the run's files mentions."""
    run_dir = Path(run_dir)
    fields: dict[str, dict[str, Any]] = {}
    failures: dict[str, list[str]] = {}
    dropped: dict[str, list[Dropped]] = {}
    for entry in _lines(run_dir / "progress.jsonl"):
        status = str(entry.get("status") or "ok")
        fields[str(entry["note_id"])] = {"status": status, "failure": _reason(entry)
                                         if status in FAILED_STATUSES or entry.get("failure") else None}
    for rec in _lines(run_dir / "failures.jsonl", current=True):
        nid, stage = str(rec["note_id"]), str(rec.get("stage") or "note")
        if stage == "note":
            f = fields.setdefault(nid, {"status": "failed"})  # no ledger line: the failure stands
            if f.get("status") in FAILED_STATUSES:  # a later "ok" is a rerun that succeeded
                f["failure"] = f.get("failure") or _reason(rec)
        else:
            failures.setdefault(nid, []).append(f"{stage}: {_reason(rec) or 'failed'}")
    for rec in _lines(run_dir / "stages.jsonl", skip=('"failures": []', '"dropped": []'), current=True):
        nid, stage = str(rec["note_id"]), str(rec.get("stage") or "")
        if stage == "note":
            fields.setdefault(nid, {}).update(_structure(rec.get("output") or {}))
            continue
        for msg in rec.get("failures") or ():
            failures.setdefault(nid, []).append(f"{stage}: {msg}")
        for d in rec.get("dropped") or ():
            if isinstance(d, Mapping) and d.get("rule_id"):
                dropped.setdefault(nid, []).append(Dropped(_int(d.get("line")), str(d.get("text") or ""),
                                                           str(d["rule_id"])))
    out: dict[str, NoteRecord] = {}
    for nid in {*fields, *failures, *dropped}:
        f = fields.get(nid, {})
        status = str(f.get("status") or "ok")
        failure = f.get("failure")
        if status in FAILED_STATUSES and not failure:
            failure = f"{status} (no reason recorded)"
        out[nid] = NoteRecord(nid, status, failure, tuple(dict.fromkeys(failures.get(nid, ()))),
                              bool(f.get("structure_recorded")), f.get("segments", ()), f.get("statements", ()),
                              tuple(dropped.get(nid, ())))
    return out
