"""Table names as a model sees them: the database's own physical names.

Inside ehrlib every table has its logical (MIMIC-III, lower-case) name, and item keys
are logical (``labevents:51301``) so one key means one item on every schema. A model
exploring a database must not learn those names, though, when the database hides them:
on the perturbed schema (paper Appendix M) the tables are renamed so that a model
cannot fall back on what it memorised about MIMIC. :class:`TableNames` renders every
logical table name in model-facing text (tool output text, tool descriptions, traced
arguments) with the physical name, lower-cased (``lab_results:51301``), and reads such
names back to logical ones in a model's arguments. On MIMIC-III and MIMIC-IV the
logical names are the physical ones, and both directions are the identity.

Structured results (``ToolResult.rows``/``summary``) stay logical: they are evidence
for ehrlib's own records, never shown to a model.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.schema import SchemaMap

__all__ = ["TableNames", "table_names"]

#: flavors whose physical table names differ from the logical ones and must not leak
_HIDING_FLAVORS = frozenset({"perturbed"})


class TableNames:
    """Logical <-> model-facing table names of one schema (identity unless it hides names)."""

    def __init__(self, out: Mapping[str, str]) -> None:
        self._out = dict(out)
        self._in = {v: k for k, v in self._out.items()}
        self._out_re = self._pattern(self._out)
        self._in_re = self._pattern(self._in)

    @staticmethod
    def _pattern(names: Mapping[str, str]) -> re.Pattern[str] | None:
        if not names:
            return None
        # longest first, so inputevents_mv is not read as inputevents + _mv; word boundaries
        # on both sides (letters, digits and "_" are word characters)
        alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        return re.compile(rf"(?<![A-Za-z0-9_])({alternatives})(?![A-Za-z0-9_])", re.IGNORECASE)

    @property
    def hides(self) -> bool:
        return bool(self._out)

    def outward(self, text: str) -> str:
        """``text`` with every logical table name replaced by the model-facing name."""
        if self._out_re is None or not text:
            return text
        return self._out_re.sub(lambda m: self._out[m.group(1).lower()], text)

    def inward(self, value: Any) -> Any:
        """A model's argument with model-facing table names read back as logical ones:
        a whole value that is a table name, or a key's ``<table>:`` head."""
        if self._in_re is None or not isinstance(value, str):
            return value
        head, sep, rest = value.partition(":")
        name = self._in.get(head.strip().lower())
        if name is not None:
            return f"{name}{sep}{rest}"
        return value

    def outward_args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {k: self.outward(v) if isinstance(v, str) else v for k, v in args.items()}


def table_names(schema: SchemaMap) -> TableNames:
    """The naming of ``schema``: physical names (lower case) when it hides the logical ones."""
    if schema.flavor not in _HIDING_FLAVORS:
        return TableNames({})
    return TableNames({logical: t.name.lower() for logical, t in schema.tables.items()})
