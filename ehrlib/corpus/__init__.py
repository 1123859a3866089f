"""Notes, gold labels and predictions: records, JSONL I/O, format adapters, statistics."""
from __future__ import annotations

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
]
