"""Measurement mentions of slash panels: one mention per item, each with its own value.

``AST/ALT 310/205`` states an AST of 310 and an ALT of 205; ``Na/K 131/5.1`` a sodium and
a potassium; ``coags 13.1/30.2/1.1`` a PT, PTT and INR. Read name by name, the first
name takes the first number and the second name none (or the wrong one). The panel is
parsed whole by :func:`~.numparse.panel_items` (the flattened blood-count fishbone
``12.1 > 9.8 / 29.5 < 210`` by :func:`~.numparse.skeleton_items`) (names and values paired in order, or the
order of a panel definition) and each item whose name is a measurement concept with a
plausible value becomes a mention; the panel's span is then taken so no other scanner
re-reads it. Blood-pressure pairs are not panels (they are one concept, read by
:mod:`.values`).
"""
from __future__ import annotations

from ehrlib.pipeline.claims import NumericClaim, Reading
from ehrlib.pipeline.offline.lexicon import Concept, Lexicon
from ehrlib.pipeline.offline.mention import Mention, emit, overlaps
from ehrlib.pipeline.offline.numparse import panel_items, skeleton_items
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["panel_mentions", "RULE"]


def _measurement(lex: Lexicon, name: str) -> Concept | None:
    for c in lex.concepts_for(name):
        if c.kind == "measurement":
            return c
    return None


def _plausible(value: float, concept: Concept) -> bool:
    lo = concept.lo if concept.lo is not None else float("-inf")
    hi = concept.hi if concept.hi is not None else float("inf")
    return lo <= value <= hi


def panel_mentions(raw: str, line: int, lex: Lexicon, out: list[Mention], taken: list[tuple[int, int]]) -> None:
    """Emit the item mentions of every slash panel of ``raw`` not inside a span already taken.

    A panel is read only when every item names a measurement concept with a plausible
    value: a panel with one unknown or implausible item is not read as a panel at all
    (``I/O 1200/800`` is no lab pair), so the name-by-name scanners still see it.
    """
    panels: dict[int, list] = {}
    for item in (*skeleton_items(raw), *panel_items(raw)):
        panels.setdefault(item.start, []).append(item)
    for start, items in sorted(panels.items()):
        end = max(it.end for it in items)
        if overlaps(taken, start, end):
            continue
        found = [_measurement(lex, it.name) for it in items]
        concepts = [c for c in found if c is not None]
        if len(concepts) != len(found) or any(it.reading.value is None or not _plausible(it.reading.value, c)
                                              for c, it in zip(concepts, items, strict=True)):
            continue
        if len({c.cid for c in concepts}) != len(concepts) or any(
                c.cid in ("blood_pressure", "systolic_bp", "diastolic_bp") for c in concepts):
            continue
        for c, it in zip(concepts, items, strict=False):
            r = it.reading
            emit(out, taken, Mention(line, r.start, r.end, it.name, "measurement", c.cid,
                                     raw[r.start:r.end], NumericClaim(reading=Reading(value=r.value)),
                                     f"L{line}P{start}"))
        taken.append((start, end))


RULE = Rule("extract.slash_panel", "Slash-joined names followed by slash-joined values, or a named panel followed "
            "by its values, state one value per item, paired in order.", panel_mentions, ("measurement",))
