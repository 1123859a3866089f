"""Known answers for trend phrases (ehrlib.pipeline.offline.trends)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.trends import trend_word, verb_direction


@pytest.mark.parametrize("text, want", [
    ("downtrending", ("down", "downtrending")), ("trending up since", ("up", "trending up")),
    ("remains stable", ("stable", "stable")), ("improving, then worse", ("improving", "improving")),
    ("seen today", None),
])
def test_trend_word_is_the_first_in_the_text(text: str, want: tuple[str, str] | None) -> None:
    assert trend_word(text) == want


@pytest.mark.parametrize("verb, want", [
    ("fell to ", "down"), ("rose to ", "up"), ("improved to ", "improving"), ("worsened ", "worsening"),
    ("normalized ", None), ("came back ", None), ("", None),
    ("drifted to ", None), ("drifted down to ", "down"), ("drifted up to ", "up"),
])
def test_verb_direction(verb: str, want: str | None) -> None:
    assert verb_direction(verb, None) == want


@pytest.mark.parametrize("text, want", [
    ("continues to climb despite diuresis", ("up", "continues to climb")),
    ("has continued to fall", ("down", "continued to fall")),
    ("Cr drifting up over 48h", ("up", "drifting up")),
    ("slowly drifted down", ("down", "drifted down")),
    ("expected to rise", ("up", "to rise")),
    ("continues on insulin", None),
])
def test_infinitive_and_drift_trend_phrases(text: str, want: tuple[str, str] | None) -> None:
    assert trend_word(text) == want
