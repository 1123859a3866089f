"""One tracer records every tool call (the single source for trace graphs)."""
from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any

from ehrlib.corpus.records import ToolCallRecord

__all__ = ["Tracer"]


class Tracer:
    """Collects :class:`ToolCallRecord` s in call order.

    ``step`` is set by the caller (the verification loop's turn number) with
    :meth:`set_step`; ``call_id`` is ``<prefix>-<n>``, unique within the tracer, so a
    run's records can be joined back to the model turn that made them.
    """

    def __init__(self, prefix: str = "call") -> None:
        self._prefix = prefix
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self._records: list[ToolCallRecord] = []
        self._step: int | None = None

    def set_step(self, step: int | None) -> None:
        """Set the model step recorded with the next calls."""
        self._step = step

    def record(self, tool: str, args: Mapping[str, Any], n_rows: int, ms: float,
               error: str | None) -> ToolCallRecord:
        """Record one tool call."""
        with self._lock:
            rec = ToolCallRecord(tool=tool, args=dict(args), n_rows=n_rows, ms=round(ms, 3), error=error,
                                 call_id=f"{self._prefix}-{next(self._counter)}", step=self._step)
            self._records.append(rec)
        return rec

    @property
    def records(self) -> tuple[ToolCallRecord, ...]:
        """The calls recorded so far."""
        with self._lock:
            return tuple(self._records)

    @property
    def count(self) -> int:
        """How many calls are recorded (without copying them; no ``__len__``: an empty tracer stays truthy)."""
        with self._lock:
            return len(self._records)

    def since(self, start: int) -> tuple[ToolCallRecord, ...]:
        """The calls recorded after the first ``start`` ones (one entity's, without copying the note's)."""
        with self._lock:
            return tuple(self._records[start:])

    def clear(self) -> None:
        """Forget the recorded calls."""
        with self._lock:
            self._records.clear()
