"""Which records of a run folder are current: a note rerun (``ehrlib run --retry-failed``,
or a resumed note that had crashed) appends a new attempt, and its earlier attempt's lines
stay in the append-only data files. The ledger (``progress.jsonl``) says where each
attempt's lines are: entry *i* wrote each data file from the previous entry's offset to
its own. Readers take a note's lines from its last attempt only, and its outcome (``status``,
``failure``) from its last ledger entry.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ehrlib.pipeline.runlock import read_ledger_lines

__all__ = ["LEDGER_FILE", "note_outcomes", "current_lines"]

LEDGER_FILE = "progress.jsonl"


def note_outcomes(run_dir: str | os.PathLike[str]) -> dict[str, Mapping[str, Any]]:
    """Each attempted note's last ledger entry (``status``: ok | failed | error, and for a
    failed note its ``failure``), in ledger order; {} for a folder without a ledger.
    """
    entries, _ = read_ledger_lines(Path(run_dir) / LEDGER_FILE)
    out: dict[str, Mapping[str, Any]] = {}
    for e in entries:
        out.pop(e["note_id"], None)
        out[e["note_id"]] = e
    return out


def _superseded(entries: list[dict[str, Any]], name: str) -> list[tuple[int, int]]:
    """Byte ranges of ``name`` written by attempts a later attempt of the same note replaced."""
    last = {e["note_id"]: i for i, e in enumerate(entries)}
    ranges, start = [], 0
    for i, e in enumerate(entries):
        end = int((e.get("offsets") or {}).get(name, start))
        if last[e["note_id"]] != i and end > start:
            ranges.append((start, end))
        start = max(start, end)
    return ranges


def current_lines(run_dir: str | os.PathLike[str], name: str) -> list[bool]:
    """For each non-blank line of the data file ``name``, whether it belongs to its note's
    last attempt (every line is current in a folder without a ledger or without reruns).
    """
    path = Path(run_dir) / name
    if not path.exists():
        return []
    entries, _ = read_ledger_lines(Path(run_dir) / LEDGER_FILE)
    ranges = _superseded(entries, name)
    keep: list[bool] = []
    pos = 0
    with open(path, "rb") as fh:
        for raw in fh:
            if raw.strip():
                keep.append(not any(a <= pos < b for a, b in ranges))
            pos += len(raw)
    return keep
