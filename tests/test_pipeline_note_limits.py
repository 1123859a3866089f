"""Per-note size limits, and the long-text pieces that keep the extractor linear."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import Note
from ehrlib.errors import DataError
from ehrlib.pipeline.note_limits import check_note_size
from ehrlib.pipeline.offline.long_text import piece_spans


def _note(text: str) -> Note:
    return Note("n", 1, 2, "nursing", "2150-01-01", text)


def test_limits():
    check_note_size(_note("a\n" * 10), 100, 10)
    with pytest.raises(DataError, match="max_note_chars"):
        check_note_size(_note("a" * 101), 100, 1000)
    with pytest.raises(DataError, match="line 1 has 11 characters"):
        check_note_size(_note("ok\n" + "b" * 11 + "\nok"), 100, 10)


def test_pieces_cover_the_text_in_order():
    assert piece_spans("short", ()) == [(0, 5)]
    text = "Sentence one here. " * 5000
    spans = piece_spans(text, (), limit=1000)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(b1 == a2 for (_, b1), (a2, _) in zip(spans, spans[1:]))
    assert all(0 < b - a <= 1000 for a, b in spans)
    assert all(text[b - 2:b] == ". " for _, b in spans[:-1])          # cut after a sentence end


def test_pieces_prefer_line_starts_then_spaces():
    text = "y" * 3000
    starts = list(range(0, 3000, 70))
    assert all(a in starts for a, _ in piece_spans(text, starts, limit=1000)[1:])
    assert piece_spans("z" * 2500, (), limit=1000) == [(0, 1000), (1000, 2000), (2000, 2500)]   # hard cut
