"""corpus.stats: Table 1 and the Figure 6-9 breakdowns on a hand-counted corpus."""
from __future__ import annotations

from ehrlib.corpus.io import Corpus
from ehrlib.corpus.records import GoldEntity, Inconsistency, Note
from ehrlib.corpus.stats import (
    column_error_types,
    column_vs_missing,
    count_tokens,
    inconsistent_column_counts,
    summary,
    table1,
    type_by_note_type,
)


def _g(note, i, label="consistent", inc=None):
    return GoldEntity(note, f"{note}-{i}", 0, "x", label, inconsistency=inc)


def _corpus() -> Corpus:
    notes = (Note("d1", 1, 1, "discharge_summary", "2150-01-01", "WBC 14.2 on admission."),  # 7 tokens
             Note("d2", 2, 2, "discharge_summary", "2150-01-03", "Afebrile"),                   # 1 token
             Note("r1", 3, 3, "nursing", "2150-01-04", "HR 80, SR"))                                         # 4 tokens
    col = lambda t, *c: Inconsistency("column", c, t)  # noqa: E731
    gold = (_g("d1", 0), _g("d1", 1, "inconsistent", col("time", "charttime")),
            _g("d1", 2, "inconsistent", col("value", "valuenum", "charttime")),
            _g("d2", 0, "inconsistent", Inconsistency("missing")),
            _g("r1", 0), _g("r1", 1, "inconsistent", col("value", "value")),
            _g("r1", 2, "inconsistent", Inconsistency("missing")),
            _g("r1", 3, "inconsistent", col("time", "a", "b", "c", "d")))
    return Corpus(notes, gold, {})


def test_token_rule():
    assert count_tokens("WBC 14.2 on admission.") == 7  # WBC 14 . 2 on admission .


def test_table1_counts_and_means():
    t = table1(_corpus())
    assert list(t.index) == ["discharge_summary", "nursing", "total"]
    assert t.loc["discharge_summary", ["notes", "entities", "consistent", "inconsistent"]].tolist() == [2, 4, 1, 3]
    assert t.loc["nursing", "entities_per_note"] == 4.0
    assert t.loc["total", "inconsistent"] == 6 and t.loc["total", "tokens_per_note"] == 4.0
    assert t.loc["discharge_summary", "tokens_per_note"] == 4.0


def test_figure_breakdowns():
    c = _corpus()
    f6 = column_error_types(c)
    assert f6["count"].to_dict() == {"time": 2, "value": 2, "interpretation": 0, "trend": 0, "other": 0}
    assert f6.loc["time", "share"] == 0.5
    f7 = inconsistent_column_counts(c)
    assert f7["count"].tolist() == [2, 1, 0, 1]
    f8 = column_vs_missing(c)
    assert f8.loc["discharge_summary", ["column", "missing"]].tolist() == [2, 1]
    assert f8.loc["total", "missing_share"] == round(2 / 6, 3)
    f9 = type_by_note_type(c)
    assert f9.loc["discharge_summary", "time"] == 0.5 and f9.loc["nursing", "value"] == 0.5
    assert type_by_note_type(c, normalize=False).loc["nursing"].sum() == 2
    assert set(summary(c)) == {"table1", "fig6_column_error_types", "fig7_inconsistent_columns",
                               "fig8_column_vs_missing", "fig9_type_by_note_type"}
