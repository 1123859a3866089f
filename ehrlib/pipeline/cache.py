"""The validation cache: the m most recently verified entities of a note, with their evidence.

Paper §4.4 / Appendix E.2: entities from one observation ("Abd: soft, distended") need the
same table rows, so re-running the tool loop for each is waste. The cache keeps the last
m (= 5) verified entities — entity, time context, claim, evidence rows and verdict —
in a sliding window; the verifier sees it first and may settle a related entity from it.

Determinism under concurrency: a cache belongs to one *lane* (by default one segment, the
unit whose entities share observations); a lane is verified sequentially in line order,
lanes run in parallel. So the cache a given entity sees depends only on the note, never on
thread timing. ``cache_scope="note"`` makes the whole note one lane (the paper's setting;
sequential verification).
"""
from __future__ import annotations

from collections import deque
from typing import Iterable

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict

__all__ = ["DEFAULT_CACHE_SIZE", "ValidationCache", "relatedness", "related_entries", "windows_overlap",
           "render_cache"]

DEFAULT_CACHE_SIZE = 5


class ValidationCache:
    """A sliding window of verified entities; not thread-safe (one lane, one thread)."""

    def __init__(self, size: int = DEFAULT_CACHE_SIZE) -> None:
        if size < 0:
            raise ValueError("cache size must be >= 0")
        self.size = size
        self._entries: deque[CacheEntry] = deque(maxlen=size or None)

    def __len__(self) -> int:
        return len(self._entries) if self.size else 0

    def snapshot(self) -> tuple[CacheEntry, ...]:
        """The current entries, oldest first (what the verifier is shown)."""
        return tuple(self._entries) if self.size else ()

    def add(self, entity: Entity, verdict: Verdict) -> None:
        """Remember a verified entity. Failed verdicts carry no evidence worth reusing."""
        if verdict.failure is not None or not self.size:
            return
        self._entries.append(CacheEntry(entity=entity, verdict=verdict, items=entity.items, window=entity.window))


def _day(value: str | None) -> str | None:
    return value[:10] if value else None


def windows_overlap(a: TimeSpan | None, b: TimeSpan | None) -> bool:
    """Whether two windows share a day (an open end matches anything)."""
    if a is None or b is None:
        return True
    a0, a1, b0, b1 = _day(a.start), _day(a.end), _day(b.start), _day(b.end)
    if a0 and b1 and a0 > b1:
        return False
    if b0 and a1 and b0 > a1:
        return False
    return True


def relatedness(entity: Entity, entry: CacheEntry) -> int:
    """How strongly a cached entry bears on ``entity``: 3 same observation group,
    2 same item in an overlapping window, 1 same line, 0 unrelated."""
    if entity.group is not None and entity.group == entry.entity.group:
        return 3
    keys = set(entity.item_keys) & set(entry.entity.item_keys)
    items = {(i.table, str(i.itemid)) for i in entity.items} & {(i.table, str(i.itemid)) for i in entry.items}
    if (keys or items) and windows_overlap(entity.window, entry.window):
        return 2
    if entity.line == entry.entity.line:
        return 1
    return 0


def related_entries(entity: Entity, entries: Iterable[CacheEntry]) -> tuple[CacheEntry, ...]:
    """Entries that bear on ``entity``, most related (then most recent) first."""
    scored = [(relatedness(entity, e), i, e) for i, e in enumerate(entries)]
    return tuple(e for s, _, e in sorted(scored, key=lambda t: (-t[0], -t[1])) if s > 0)


def render_cache(entries: Iterable[CacheEntry]) -> str:
    """The cache as numbered text for a prompt (index = position in the snapshot)."""
    lines = []
    for i, e in enumerate(entries):
        ev = ", ".join(f"{r.table}#{r.row_id}" for r in e.verdict.evidence_row_ids) or "none"
        items = ", ".join(f"{it.label} ({it.table})" for it in e.items) or "unaligned"
        window = f"{e.window.start or '?'} .. {e.window.end or '?'}" if e.window else "unspecified"
        label = e.verdict.label + (f"/{e.verdict.inconsistency_type}" if e.verdict.inconsistency_type else "")
        lines.append(f"[{i}] line {e.entity.line}: \"{e.entity.text}\" value={e.entity.value or ''} "
                     f"items={items} window={window} -> {label}; evidence: {ev}; reason: {e.verdict.reason}")
    return "\n".join(lines) if lines else "(empty)"
