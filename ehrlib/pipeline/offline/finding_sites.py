"""Exam and nursing statements about a charted body site, device or observation.

Flowsheets chart one categorical item per site and side ("Dorsal PedPulse L", "RLL Lung
Sounds", "LL Strength/Movement", "Sputum Color"); notes name the site in shorthand and
several sides at once ("weak DP/PT pulses", "diminished at both bases", "no movement LLE",
"sputum thick, blood tinged"). A phrase that names a site (``finding_sites.yaml``) and
states a value of one of its value classes is one statement about every item of the
patient the site's label pattern and the phrase's positions name: sides (right, left,
both) and levels (upper, lower), written as words or as codes (RLL, LUE, bibasilar). A
phrase naming the site but no value of its classes, or a site the patient has no item for,
is no statement. Verification (:func:`judge_site_finding`) reads the stated and charted
values as the class's states: one charted state agreeing is consistent, a named item whose
charted states only exclude the stated one is a contradiction, anything else no claim.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data

__all__ = ["SITE_CONCEPT", "SITE_SECTIONS", "STATE_CHANGE", "SiteStatement", "site_statements",
           "named_sites", "item_states", "stated_states", "opposed", "graded", "numbered_by"]

#: ``claim.concept`` of the entities built from site statements
SITE_CONCEPT = "site_finding"
#: the section kinds whose phrases may be site statements (bedside observations of the window)
SITE_SECTIONS: frozenset[str] = frozenset(load_data("finding_sites.yaml")["sections"])
#: a change between two states of one finding ("oriented x2 -> oriented x3", "amber -> yellow"):
#: each side is a statement of its own, about its own time
STATE_CHANGE = re.compile(r"->|→|\bthen\b|\b(?:changed|improved|progressed|went)\s+to\b", re.I)


@dataclass(frozen=True, slots=True)
class ValueClass:
    """How one kind of value of a site is written and charted (pulse strength, sputum colour)."""

    cid: str
    label: re.Pattern[str] | None
    states: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...]  # (state, note, chart)
    opposed: frozenset[frozenset[str]]
    graded: tuple[tuple[str, ...], ...] = ()  # tiers of states, normal first


@dataclass(frozen=True, slots=True)
class Site:
    """A charted site: how notes name it, which item labels chart it, its value classes."""

    sid: str
    note: re.Pattern[str]
    label: re.Pattern[str]
    classes: tuple[ValueClass, ...]
    guarded: bool = False
    numbered: re.Pattern[str] | None = None  # the items whose values say which number a wound is


@dataclass(frozen=True, slots=True)
class SiteStatement:
    """A site phrase of one line: its span, the value words as written and the items it names."""

    start: int
    end: int
    value: str
    items: tuple[tuple[ItemRef, str], ...]
    value_start: int = -1  # where its first value word starts (the site's name may come before)


def _re(x: str) -> re.Pattern[str]:
    return re.compile(x, re.I)


@functools.cache
def _data() -> tuple[tuple[Site, ...], Mapping[str, Any]]:
    raw = load_data("finding_sites.yaml")
    classes = {cid: ValueClass(cid, _re(c["label"]) if c.get("label") else None,
                               tuple((s, _re(v["note"]), _re(v["chart"])) for s, v in c["states"].items()),
                               frozenset(frozenset(p) for p in c.get("opposed") or ()),
                               tuple(tuple(t) for t in c.get("graded") or ()))
               for cid, c in raw["classes"].items()}
    sites = tuple(Site(sid, _re(s["note"]), _re(s["label"]), tuple(classes[c] for c in s["classes"]),
                       bool(s.get("guarded")), _re(s["numbered"]) if s.get("numbered") else None)
                  for sid, s in raw["sites"].items())
    return sites, raw["positions"]


def _positions(text: str) -> tuple[set[str], set[str]]:
    """(sides, levels) a phrase names: words ("both bases") and codes ("RLL", "BLE")."""
    pos = _data()[1]
    sides = {s for s in ("right", "left", "both") if re.search(pos["note"][s], text, re.I)}
    levels = {v for v in ("upper", "lower") if re.search(pos["note"][v], text, re.I)}
    for w in re.findall(r"[a-z]+", text.lower()):
        if w in pos["codes"]:
            side, level = pos["codes"][w]
            sides.add(side)
            levels.add(level)
    return sides, levels


def _label_position(label: str) -> tuple[str | None, str | None]:
    lab = _data()[1]["label"]
    side = next((s for s in ("right", "left") if re.search(lab[s], label, re.I)), None)
    level = next((v for v in ("upper", "lower") if re.search(lab[v], label, re.I)), None)
    return side, level


def _fits(label: str, sides: set[str], levels: set[str]) -> bool:
    side, level = _label_position(label)
    side_ok = not sides or "both" in sides or side is None or side in sides
    level_ok = not levels or level is None or level in levels
    return side_ok and level_ok


def _values(site: Site, text: str, a: int, b: int) -> list[tuple[int, int, ValueClass]]:
    """Value words of the site's classes in ``text[a:b]`` (longest first, no overlaps)."""
    found = [(m.start(), m.end(), vc) for vc in site.classes for _, note, _ in vc.states
             for m in note.finditer(text, a, b) if m.end() > m.start()]
    found.sort(key=lambda x: (x[0], -(x[1] - x[0])))
    out: list[tuple[int, int, ValueClass]] = []
    for v in found:
        if not any(v[0] < o[1] and o[0] < v[1] for o in out):
            out.append(v)
    return out


_FILLER = frozenset({"and", "with", "w", "some", "amt", "amount", "of", "a", "in", "noted", "sputum", "urine", "at",
                     "drainage"})


# words that date or place a state in the shift ("intact by 1100", "copious thin after bronch")
_WHEN = re.compile(r"(?:then|by|at|since|after|before|until|from|overnight|tonight|today|this|am|pm|morning|afternoon|"
                   r"evening|noon|midnight|mn|now|later|earlier|initially|briefly|bronch|suctioning|suction|turning|"
                   r"shift|hrs?|h|min)$")


def _continues(site: Site, text: str, a: int, b: int) -> tuple[list[tuple[int, int, ValueClass]], bool] | None:
    """The value words of a following comma phrase made only of values of the site's classes
    ("Sputum thick, blood tinged"), and whether the phrase dates them apart ("gag absent
    overnight, intact by 1100": a later state, a statement of its own); else None.
    """
    vals = _values(site, text, a, b)
    if not vals:
        return None
    rest = text[a:b]
    for v0, v1, _ in sorted(vals, reverse=True):
        rest = rest[:v0 - a] + " " + rest[v1 - a:]
    words = re.findall(r"[a-z]+", rest.lower())
    if not all(w in _FILLER or _WHEN.match(w) for w in words):
        return None
    return vals, any(w not in _FILLER for w in words) or bool(re.search(r"\d{3,4}", rest))


def _parts(text: str, vals: list[tuple[int, int, ValueClass]]) -> list[list[tuple[int, int, ValueClass]]]:
    """The values split at each change of state between them ("thick tan -> copious")."""
    parts: list[list[tuple[int, int, ValueClass]]] = [[]]
    for v in vals:
        if parts[-1] and STATE_CHANGE.search(text, parts[-1][-1][1], v[0]):
            parts.append([])
        parts[-1].append(v)
    return parts


_INDICATION = re.compile(r"\b(?:for|after|before|during|prn|if)\s+$", re.I)
# a device after a volume is that output's source ("UOP 2.4 L via foley", "stool 1,600 mL per
# flexiseal"): a detail of the output statement, not a statement of its own
_OUTPUT_ROUTE = re.compile(r"\d\s*(?:ml|cc|l|liters?)\s+(?:via|per|through|thru|from|in)\s+$", re.I)
_TAIL = re.compile(r"(?:\s*(?:pulses?|bilat\w*|b/l|on both sides|throughout)\b)+", re.I)


def site_statements(text: str, items: Sequence[tuple[ItemRef, str]]) -> list[SiteStatement]:
    """The site statements of one line of an exam / nursing system, aligned to ``items``."""
    sites = _data()[0]
    chunks = [(m.start(), m.end()) for m in re.finditer(r"[^,;.:()]+", text)]
    named = [[(s, m) for s in sites for m in s.note.finditer(text, a, b)] for a, b in chunks]
    out: list[SiteStatement] = []
    for ci, (a, b) in enumerate(chunks):
        by_classes: dict[tuple[str, ...], list[tuple[Site, re.Match[str]]]] = {}
        for s, m in named[ci]:
            by_classes.setdefault(tuple(vc.cid for vc in s.classes), []).append((s, m))
        for group in by_classes.values():
            site = group[0][0]
            vals = _values(site, text, a, b)
            if not vals:
                continue
            starts = [m.start() for _, m in group] + [v[0] for v in vals]
            ends = [m.end() for _, m in group] + [v[1] for v in vals]
            near = [(v[0], v[1]) for v in vals] + [(m.start(), m.end()) for s, m in group if not s.guarded]
            guarded_ok = [(s, m) for s, m in group if not s.guarded or any(
                0 <= x - m.end() <= 2 or 0 <= m.start() - y <= 2 for x, y in near)]
            if not guarded_ok:
                continue  # "PT": only a pulse when a pulse value is written right next to it
            if all(any(v0 <= m.start() < v1 for v0, v1, _ in vals) for _, m in group) and \
                    _INDICATION.search(text, a, min(starts)):
                continue  # "haldol for agitation", "emesis after turning": a reason or a time, not an observation
            if all(any(v0 <= m.start() < v1 for v0, v1, _ in vals) for _, m in group) and \
                    _OUTPUT_ROUTE.search(text, 0, min(starts)):
                continue
            parts = _parts(text, vals)
            j = ci + 1
            while j < len(chunks) and text[chunks[j - 1][1]:chunks[j][0]] == "," and not named[j]:
                more = _continues(site, text, *chunks[j])
                if more is None:
                    break
                if more[1]:
                    parts += _parts(text, more[0])  # a later state, dated apart
                else:
                    parts[-1] += more[0]
                j += 1
            sides, levels = _positions(text[a:max(b, parts[-1][-1][1])])
            labels = [s.label for s, _ in guarded_ok]
            names = [(m.start(), m.end()) for _, m in guarded_ok]
            for k, part in enumerate(parts):
                own = [n for n in names if (k == 0 and n[0] < part[0][0]) or part[0][0] <= n[0] < part[-1][1]]
                start = min([part[0][0]] + [n[0] for n in own])
                end = max([part[-1][1]] + [n[1] for n in own])
                if len(parts) == 1:
                    start, end = min(starts), max([end] + ends)
                if tail := _TAIL.match(text, end, max(b, end)):
                    end = tail.end()  # "DP/PT pulses bilat": the site's noun and sides written after it
                st = _statement(text, items, site, labels, part, start, end, (sides, levels))
                if st is not None:
                    out.append(st)
    return _merge_asides(text, sorted(out, key=lambda st: st.start))


def _statement(text: str, items: Sequence[tuple[ItemRef, str]], site: Site, labels: Sequence[re.Pattern[str]],
               vals: Sequence[tuple[int, int, ValueClass]], start: int, end: int,
               where: tuple[set[str], set[str]]) -> SiteStatement | None:
    """The statement of ``vals`` about the patient's items of the site that chart their classes."""
    stated = {vc.cid for _, _, vc in vals}
    hits = tuple((it, k) for it, k in items
                 if any(p.search(it.label or "") for p in labels)
                 and any(vc.cid in stated and (vc.label is None or vc.label.search(it.label or ""))
                         for vc in site.classes)
                 and _fits(it.label or "", *where))
    if not hits:
        return None
    if site.numbered is not None:  # a numbered wound: the items whose values tell which one it is
        hits += tuple((it, k) for it, k in items if site.numbered.search(it.label or ""))
    return SiteStatement(start, end, ", ".join(text[v0:v1] for v0, v1, _ in vals), hits, vals[0][0])


def _merge_asides(text: str, found: list[SiteStatement]) -> list[SiteStatement]:
    """A statement of the same items in brackets right after another is its aside: one
    statement ("calm (Riker 4)").
    """
    out: list[SiteStatement] = []
    for st in found:
        prev = out[-1] if out else None
        if prev is not None and prev.items == st.items and re.fullmatch(r"\s*\(\s*", text[prev.end:st.start]):
            close = re.match(r"\s*\)", text[st.end:])
            end = st.end + (close.end() if close else 0)
            out[-1] = SiteStatement(prev.start, end, f"{prev.value}, {st.value}", prev.items, prev.value_start)
        else:
            out.append(st)
    return out


def _site_of(label: str) -> Site | None:
    return next((s for s in _data()[0] if s.label.search(label)), None)


def _classes_of(label: str) -> tuple[ValueClass, ...]:
    site = _site_of(label)
    if site is None:
        return ()
    return tuple(vc for vc in site.classes if vc.label is None or vc.label.search(label))


def stated_states(label: str, value: str) -> set[str]:
    """The states of the item's classes that a note's value words name."""
    return {s for vc in _classes_of(label) for s, note, _ in vc.states if note.search(value)}


def item_states(label: str, charted: str) -> set[str]:
    """The states of the item's classes that a charted value names."""
    return {s for vc in _classes_of(label) for s, _, chart in vc.states if chart.search(charted)}


def opposed(label: str, stated: set[str], charted: set[str]) -> bool:
    """Whether a charted state of the item's classes excludes a stated one."""
    pairs = {p for vc in _classes_of(label) for p in vc.opposed}
    return any(frozenset((x, y)) in pairs for x in stated for y in charted)


def numbered_by(label: str) -> re.Pattern[str] | None:
    """The label regex (number as its group) of the items naming the numbers of the item's
    site, when that site is charted per number (Incision Drainage #2); else None.
    """
    site = _site_of(label)
    return site.numbered if site is not None else None


def graded(label: str) -> tuple[tuple[str, ...], ...]:
    """The tiers (normal first) of the item's graded class, empty when it has none."""
    return next((vc.graded for vc in _classes_of(label) if vc.graded), ())


def named_sites(labels: Sequence[str], text: str) -> list[int] | None:
    """Indexes of the items (by label) a finding's words name by their positions ("crackles
    at the bases": the lower lobes), or None when a label is of no site.
    """
    if not labels or any(_site_of(x) is None for x in labels):
        return None
    sides, levels = _positions(text)
    return [i for i, x in enumerate(labels) if _fits(x, sides, levels)]
