"""The charted site of a line: a stated side of a line is checkable against it.

"L radial A-line", "R subclavian HD catheter": the side and the vessel say where the line
sits. MetaVision records that in the procedure's location column; CareVue charts each
invasive line as a numbered slot of items ("INV Line#1 [Type]" A-Line, "INV Line#1 [Site]"
Left Radial), so a line statement naming a side and a vessel is also aligned to the
patient's site items, and the side rule reads the charted sites of that vessel. The site
items and the vessel words are data (``line_sites.yaml``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data

__all__ = ["with_site_items", "stated_location", "site_keys", "site_rows"]


@functools.cache
def _data() -> tuple[re.Pattern[str], tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]]:
    d = load_data("line_sites.yaml")
    return (re.compile(d["site_items"], re.I),
            tuple((re.compile(x["note"], re.I), re.compile(x["chart"], re.I)) for x in d["locations"]))


def stated_location(text: str, after: str = "") -> re.Pattern[str] | None:
    """The charted-value pattern of the vessel or limb a line's words name: one written right
    after its name ("PICC L upper arm", "A-line (R radial)"), else the last one before or in
    ``text`` (the one nearest the name: "R IJ CVL, L radial A-line" states radial for the
    A-line), or None.
    """
    for note, chart in _data()[1]:
        if re.match(r"\s*\(?\s*(?:(?:[RL]|right|left)\b\.?\s*)?(?:" + note.pattern + ")", after, re.I):
            return chart
    found = [(m.start(), chart) for note, chart in _data()[1] for m in note.finditer(text)]
    return max(found, key=lambda x: x[0])[1] if found else None


def with_site_items(text: str, after: str, side: str | None, items: Sequence[tuple[ItemRef, str]],
                    pairs: Sequence[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """``items`` and, when ``text`` states a side and a vessel, the patient's line-site items
    first (the side rule reads them; their rows also record the line).
    """
    if side not in ("r", "l") or not items or stated_location(text, after) is None:
        return list(items)
    site = _data()[0]
    extra = [(it, k) for it, k in pairs if it.table == "chartevents" and site.search(it.label or "")]
    return extra + [p for p in items if p not in extra]


def site_keys(items: Sequence[ItemRef], keys: Sequence[str]) -> list[str]:
    """The keys of the line-site items among an entity's aligned items."""
    site = _data()[0]
    return [k for it, k in zip(items, keys, strict=False) if k and site.search(it.label or "")]


def site_rows(text: str, after: str, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The site-item rows whose charted site is the vessel the words name (``stated_location``)."""
    where = stated_location(text, after)
    return [r for r in rows if where is not None and where.search(str(r.get("value") or ""))]
