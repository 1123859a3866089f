"""Section -> table routing: which tables may judge an entry of a given section.

Summary sections restate the billing: an entry under "Major Surgical or Invasive
Procedure" is checked against the billed procedure codes and one under "Discharge
Diagnosis" against the billed diagnosis codes, never against a chart event that happens
to share a word (the annotation protocol's rule). The routes are data
(``section_tables.yaml``), keyed by the section kinds the sectionizer assigns.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable

from ehrlib.datafiles import load_data

__all__ = ["tables_for_section", "route"]


@functools.lru_cache(maxsize=1)
def _routes() -> dict[str, tuple[str, ...]]:
    return {str(k): tuple(v) for k, v in load_data("section_tables.yaml")["routes"].items()}


def tables_for_section(kind: str | None) -> tuple[str, ...] | None:
    """The only tables entries of section ``kind`` are checked against; ``None``: any."""
    return _routes().get(kind) if kind else None


def route(kind: str | None, tables: Iterable[str]) -> tuple[str, ...]:
    """``tables`` (candidate evidence tables, in order) kept to those section ``kind``
    allows; an empty result means no table may judge the entry.
    """
    allowed = tables_for_section(kind)
    return tuple(tables) if allowed is None else tuple(t for t in tables if t in allowed)
