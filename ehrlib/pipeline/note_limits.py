"""Input limits per note: what a run refuses to process, as a recorded per-note failure.

The offline path is linear in note length (``ehrlib bench --only note_length``), but a
corpus can still hold a 50 MB log pasted as a note, and an LLM backend would send it
whole. Past ``max_note_chars`` characters, or a line of more than ``max_line_chars``,
the note fails on its own (``DataError``, recorded in ``failures.jsonl``); the rest of
the run goes on. Both limits are run parameters.
"""
from __future__ import annotations

from ehrlib.corpus.records import Note
from ehrlib.errors import DataError

__all__ = ["check_note_size"]


def check_note_size(note: Note, max_chars: int, max_line_chars: int) -> None:
    """DataError if the note, or one of its lines, is longer than allowed."""
    if len(note.text) > max_chars:
        raise DataError(f"note {note.note_id}: {len(note.text):,} characters, more than max_note_chars "
                        f"({max_chars:,}); raise the limit to process it")
    if len(note.text) > max_line_chars:        # no line can be longer than the whole text
        longest, at = max((len(line), i) for i, line in enumerate(note.lines))
        if longest > max_line_chars:
            raise DataError(f"note {note.note_id}: line {at} has {longest:,} characters, more than "
                            f"max_line_chars ({max_line_chars:,}); raise the limit to process it")
