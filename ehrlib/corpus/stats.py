r"""Corpus statistics as DataFrames: the paper's Table 1 and the breakdowns of Figures 6-9.

Inputs are the records (or a loaded :class:`~ehrlib.corpus.io.Corpus`), so the same
functions describe the synthetic corpus, an EHRCon/EHR-ReasonCon corpus read through the
adapters, or a subset (one split, one note type). Tokens are counted with a simple
word/punctuation rule (``\w+|[^\w\s]``), stated here because the paper does not name
its tokenizer: compare token means across corpora counted the same way only.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import pandas as pd

from ehrlib.corpus.io import Corpus
from ehrlib.corpus.records import NOTE_TYPES, GoldEntity, Note

__all__ = [
    "count_tokens",
    "table1",
    "column_error_types",
    "inconsistent_column_counts",
    "column_vs_missing",
    "type_by_note_type",
    "summary",
    "TIME_COLUMNS",
]

_TOKEN = re.compile(r"\w+|[^\w\s]")
#: logical columns that carry an event's time (Figure 6's "time" group)
TIME_COLUMNS = frozenset({"charttime", "chartdate", "starttime", "endtime", "startdate", "enddate", "storetime"})
_TYPES = ("time", "value", "interpretation", "trend", "other")


def count_tokens(text: str) -> int:
    """Words and punctuation marks in ``text`` (the tokenizer the corpus statistics use)."""
    return len(_TOKEN.findall(text))


def _frame(gold: Iterable[GoldEntity], notes: Sequence[Note]) -> pd.DataFrame:
    note_type = {n.note_id: n.note_type for n in notes}
    rows = []
    for g in gold:
        inc = g.inconsistency
        rows.append({
            "note_id": g.note_id, "note_type": note_type.get(g.note_id, "unknown"), "label": g.label,
            "kind": inc.kind if inc else None, "type": (inc.type if inc else None),
            "n_columns": len(inc.columns) if inc else 0,
        })
    return pd.DataFrame(rows, columns=["note_id", "note_type", "label", "kind", "type", "n_columns"])


def _order(types: Iterable[str]) -> list[str]:
    present = list(dict.fromkeys(types))
    return [t for t in NOTE_TYPES if t in present] + sorted(t for t in present if t not in NOTE_TYPES)


def table1(notes: Sequence[Note] | Corpus, gold: Sequence[GoldEntity] | None = None) -> pd.DataFrame:
    """Per note type and in total: notes, entities, consistent, inconsistent, mean entities
    per note and mean tokens per note (paper Table 1).
    """
    notes, gold = _unpack(notes, gold)
    df = _frame(gold, notes)
    out = []
    for nt in [*_order(n.note_type for n in notes), "total"]:
        these = [n for n in notes if nt == "total" or n.note_type == nt]
        ents = df if nt == "total" else df[df.note_type == nt]
        n = len(these)
        out.append({
            "note_type": nt, "notes": n, "entities": len(ents),
            "consistent": int((ents.label == "consistent").sum()),
            "inconsistent": int((ents.label == "inconsistent").sum()),
            "entities_per_note": round(len(ents) / n, 2) if n else 0.0,
            "tokens_per_note": round(sum(count_tokens(x.text) for x in these) / n, 1) if n else 0.0,
        })
    return pd.DataFrame(out).set_index("note_type")


def column_error_types(gold: Sequence[GoldEntity] | Corpus) -> pd.DataFrame:
    """Figure 6: column-level inconsistencies by type (time, value, interpretation, trend, other)."""
    _, gold = _unpack(gold, None) if isinstance(gold, Corpus) else ((), gold)
    types = [g.inconsistency.type or "other" for g in gold
             if g.inconsistency is not None and g.inconsistency.kind == "column"]
    counts = pd.Series(types, dtype="object").value_counts().reindex(_TYPES, fill_value=0)
    total = int(counts.sum())
    return pd.DataFrame({"count": counts.astype(int),
                         "share": (counts / total).round(3) if total else counts.astype(float)}).rename_axis("type")


def inconsistent_column_counts(gold: Sequence[GoldEntity] | Corpus) -> pd.DataFrame:
    """Figure 7: how many columns disagree per column-inconsistent entity (1, 2, 3, 4+)."""
    _, gold = _unpack(gold, None) if isinstance(gold, Corpus) else ((), gold)
    ns = [max(1, len(g.inconsistency.columns)) for g in gold
          if g.inconsistency is not None and g.inconsistency.kind == "column"]
    labels = ["1", "2", "3", "4+"]
    counts = pd.Series([labels[min(n, 4) - 1] for n in ns], dtype="object").value_counts().reindex(labels, fill_value=0)
    total = int(counts.sum())
    return pd.DataFrame({"count": counts.astype(int),
                         "share": (counts / total).round(3) if total else counts.astype(float)}
                        ).rename_axis("n_columns")


def column_vs_missing(notes: Sequence[Note] | Corpus, gold: Sequence[GoldEntity] | None = None) -> pd.DataFrame:
    """Figure 8: column inconsistency vs missing evidence, per note type and in total."""
    notes, gold = _unpack(notes, gold)
    df = _frame(gold, notes)
    df = df[df.label == "inconsistent"]
    out = []
    for nt in [*_order(n.note_type for n in notes), "total"]:
        sub = df if nt == "total" else df[df.note_type == nt]
        col, miss = int((sub.kind == "column").sum()), int((sub.kind == "missing").sum())
        total = col + miss
        out.append({"note_type": nt, "column": col, "missing": miss,
                    "column_share": round(col / total, 3) if total else 0.0,
                    "missing_share": round(miss / total, 3) if total else 0.0})
    return pd.DataFrame(out).set_index("note_type")


def type_by_note_type(notes: Sequence[Note] | Corpus, gold: Sequence[GoldEntity] | None = None,
                      normalize: bool = True) -> pd.DataFrame:
    """Figure 9: column-inconsistency types by note type (row shares when ``normalize``)."""
    notes, gold = _unpack(notes, gold)
    df = _frame(gold, notes)
    df = df[df.kind == "column"].assign(type=lambda d: d["type"].fillna("other"))
    rows = _order(n.note_type for n in notes)
    table = pd.crosstab(df.note_type, df.type).reindex(index=rows, columns=list(_TYPES), fill_value=0)
    if normalize:
        sums = table.sum(axis=1).replace(0, 1)
        table = table.div(sums, axis=0).round(3)
    return table.rename_axis(index="note_type", columns="type")


def summary(corpus: Corpus) -> dict[str, pd.DataFrame]:
    """All of the above for one corpus, keyed by figure/table name."""
    return {
        "table1": table1(corpus),
        "fig6_column_error_types": column_error_types(corpus),
        "fig7_inconsistent_columns": inconsistent_column_counts(corpus),
        "fig8_column_vs_missing": column_vs_missing(corpus),
        "fig9_type_by_note_type": type_by_note_type(corpus),
    }


def _unpack(notes, gold) -> tuple[list[Note], list[GoldEntity]]:
    if isinstance(notes, Corpus):
        return list(notes.notes), list(notes.gold)
    if gold is None:
        raise TypeError("pass a Corpus or both notes and gold")
    return list(notes), list(gold)
