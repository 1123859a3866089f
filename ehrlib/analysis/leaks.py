"""Does a run on the perturbed schema reveal the original MIMIC names?

The perturbed-schema experiment (paper Appendix M) only means something if nothing a
model sees spells an original table or column name. The database itself is checked at
build time (:mod:`ehrlib.db.perturb`); this module checks what a run's tools put in
front of the model: every recorded tool call (tool, arguments, error text) and any
tool output text a caller collected.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ehrlib import schema
from ehrlib.db.perturb import original_table_names

__all__ = ["original_names", "leaked_in", "leaked_names"]

_TOKEN = re.compile(r"[A-Za-z0-9_]+")
#: suffixes that make a one-word column name an identifier, not an English word (FLUID is a word)
_ID_SUFFIXES = ("ITEMID", "ORDERID", "CGID", "TIME", "UOM")


def original_names() -> frozenset[str]:
    """Upper-case original table names, and original column names the perturbed schema
    renamed (a column it keeps, such as SUBJECT_ID, is no leak). Columns named by a plain
    word (RATE, VALUE, AMOUNT) are left out: a tool may say "rate" without naming a column;
    identifiers count (an underscore, a digit, or an identifier suffix: ITEMID, CHARTTIME, VALUEUOM)."""
    kept = {c.upper() for t in schema.PERTURBED.tables.values() for c in t.columns.values() if c}
    kept |= {t.name.upper() for t in schema.PERTURBED.tables.values()}
    renamed = {c.upper() for t in schema.MIMIC3.tables.values() for c in t.columns.values() if c} - kept
    distinctive = {c for c in renamed if "_" in c or any(ch.isdigit() for ch in c) or c.endswith(_ID_SUFFIXES)}
    return frozenset(original_table_names() | distinctive)


def leaked_in(texts: Iterable[str]) -> Counter[str]:
    """Original names found in ``texts`` (tool outputs, trace lines), with counts."""
    names = original_names()
    hits: Counter[str] = Counter()
    for text in texts:
        hits.update(t for t in _TOKEN.findall(text) if t.upper() in names)
    return hits


def leaked_names(run_dir: str | os.PathLike[str]) -> Counter[str]:
    """Original names found in a run's tool trace (``tool_calls.jsonl``), with counts."""
    lines = (Path(run_dir) / "tool_calls.jsonl").read_text(encoding="utf-8").splitlines()
    return leaked_in(json.dumps([r.get("tool"), r.get("args"), r.get("error")]) for r in map(json.loads, lines))
