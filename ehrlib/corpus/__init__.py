"""Notes, gold labels and predictions: records, JSONL I/O, format adapters, statistics."""
from __future__ import annotations

from ehrlib.corpus.io import (  # noqa: E402 - after the records it builds on
    Corpus,
    load_corpus,
    read_gold,
    read_manifest,
    read_notes,
    read_predictions,
    write_json,
    write_jsonl,
)
from ehrlib.corpus.records import (
    SCHEMA_VERSION,
    GoldEntity,
    Inconsistency,
    ItemRef,
    Judgement,
    Note,
    Prediction,
    RecordError,
    RowRef,
    TimeSpan,
    ToolCallRecord,
    Usage,
    from_dict,
    to_dict,
)

__all__ = [
    "SCHEMA_VERSION", "GoldEntity", "Inconsistency", "ItemRef", "Judgement", "Note", "Prediction",
    "RecordError", "RowRef", "TimeSpan", "ToolCallRecord", "Usage", "from_dict", "to_dict",
    # JSONL I/O (ehrlib.corpus.io); statistics live in ehrlib.corpus.stats, adapters in
    # ehrlib.corpus.adapters (imported on demand: they pull in pandas)
    "Corpus", "load_corpus", "read_gold", "read_manifest", "read_notes", "read_predictions", "write_json",
    "write_jsonl",
]
