"""Data-driven fallback for categorical exam / nursing findings the lexicon does not name.

The hand-written finding vocabulary (``offline_lexicon.yaml``) covers a dozen exam items;
nursing notes chart many more ("Pain: 3/10", "Skin: warm, dry", "Pupils: brisk"). Instead of
growing the vocabulary, a phrase "<item words>: <value words>" (or "<item> <value>") inside an
exam / nursing-system segment is aligned to the patient's own categorical chartevents items
whose label contains the item words and whose charted text values (TopV, the item profile)
contain the value words. Only when both match is an entity emitted, so free prose never
becomes a statement. Verification (:mod:`ehrlib.pipeline.offline.verification.findings`)
compares the stated value with what was charted in the window: a match is consistent, only
clearly opposite values are a contradiction, and anything else is not judged as missing
(the item has records; the words may simply differ).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.offline.finding_sites import SITE_CONCEPT, SITE_SECTIONS, site_statements
from ehrlib.pipeline.records import Entity, Segment

__all__ = ["DATA_CONCEPT", "data_findings", "superseded", "narrow_by_modality", "normalise_value"]

#: ``claim.concept`` of the entities this module emits
DATA_CONCEPT = "data_finding"

#: word lists of the fallback (``charted_findings.yaml``): see that file for each one
_DATA = load_data("charted_findings.yaml")
_SECTIONS: tuple[str, ...] = tuple(_DATA["sections"])
_ITEM_ABBREV: Mapping[str, str] = _DATA["item_abbreviations"]
_VALUE_ABBREV: Mapping[str, str] = _DATA["value_abbreviations"]
_STOP = frozenset(_DATA["stop_words"])
_GENERIC = frozenset(_DATA["generic_label_words"])
_EMPTY = frozenset(_DATA["empty_values"])


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9+/-]+", text.lower()) if w not in _STOP]


def normalise_value(text: str) -> frozenset[str]:
    """Lower-case words of a value with ward abbreviations expanded ("NT" -> non-tender)."""
    out: set[str] = set()
    for w in _words(text):
        w = w.strip("/-+") or w
        out.update(_VALUE_ABBREV.get(w, w).split())
    return frozenset(w for w in out if len(w) >= 2)


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&+/-]*")
#: what may stand between a finding's name and a site statement it heads: "Lungs: faint ..."
_PHRASE_END = re.compile(r"[,;.:()]")
_LEAD = re.compile(r"[\s:-]*(?:[A-Za-z]+\s+)?")


def _categorical(profile: Sequence[str]) -> list[str]:
    return [str(v) for v in profile if v and re.search(r"[A-Za-z]{2,}", str(v))]


def _chunk_words(text: str, a: int, b: int) -> list[tuple[str, int, int]]:
    """(expanded word, start, end) of ``text[a:b]``: "LS" gives "lung" and "sounds"."""
    out: list[tuple[str, int, int]] = []
    for m in _WORD.finditer(text, a, b):
        w = m.group(0).lower().strip("/-+")
        for x in (_ITEM_ABBREV.get(w) or _VALUE_ABBREV.get(w) or w).split():
            out.append((x, m.start(), m.end()))
    return out


# the label and value words below are memoised: every phrase of every line reads the same
# patient items and their charted values again

@functools.lru_cache(maxsize=16384)
def _label_words(label: str) -> tuple[str, ...]:
    words = [x for w in re.findall(r"[a-z]{2,}", label.lower()) for x in _ITEM_ABBREV.get(w, w).split()]
    return tuple(w for w in words if len(w) >= 3 and w not in _GENERIC)


@functools.lru_cache(maxsize=65536)
def _value_words(value: str) -> tuple[str, ...]:
    return tuple(w for w in re.findall(r"[a-z][a-z-]+", value.lower()) if w not in _STOP)


@functools.lru_cache(maxsize=8192)
def _value_forms(values: tuple[str, ...]) -> tuple[tuple[str, str, tuple[str, ...], bool], ...]:
    """(value, stripped lower case, words of a multi-word value, acronym?) of each categorical,
    non-empty charted value of a profile, for :func:`_value_only`.
    """
    out = []
    for v in _categorical(values):
        low = v.strip().lower()
        if low in _EMPTY:
            continue
        vw = tuple(w for w in re.split(r"[\s/-]+", v.lower()) if w and w not in _STOP and re.fullmatch(r"[a-z]+", w))
        out.append((v, low, vw, _acronym(v)))
    return tuple(out)


def _find(words: Sequence[tuple[str, int, int]], target: Sequence[str], exclude: set[int]
          ) -> list[tuple[str, int, int]] | None:
    """Each target word as a chunk word (prefix match of 5 letters), or None."""
    got: list[tuple[str, int, int]] = []
    for t in target:
        hit = next((w for k, w in enumerate(words) if k not in exclude and (w[0] == t or (
            len(t) >= 5 and len(w[0]) >= 5 and w[0][:5] == t[:5]))), None)
        if hit is None:
            return None
        got.append(hit)
    return got


def _match(words: Sequence[tuple[str, int, int]], items: Sequence[tuple[ItemRef, str]],
           profile: Callable[[str], Sequence[str]]) -> tuple[list[tuple[ItemRef, str]], str, int, int] | None:
    """The items a chunk names (a label word) with a charted value it states (all its words)."""
    best: tuple[list[tuple[ItemRef, str]], str, int, int] | None = None
    for it, k in items:
        lab = _label_words(it.label or "")
        found = next((h for w in lab if (h := _find(words, [w], set()))), None)
        if found is None:
            continue
        used = {i for i, w in enumerate(words) if w[1] == found[0][1]}
        for v in _categorical(profile(k)):
            if v.strip().lower() in _EMPTY:
                continue
            vw = _value_words(v)
            hit = _find(words, vw, used) if vw else None
            if hit is None:
                continue
            a = min(h[1] for h in (*found, *hit))
            b = max(h[2] for h in (*found, *hit))
            if best is None or len(vw) > len(best[1].split()):
                best = ([(it, k)], " ".join(vw), a, b)
            elif best[1] == " ".join(vw) and (best[2], best[3]) == (a, b):
                best[0].append((it, k))
    return best


def _split_words(words: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Chunk words with "/" and "-" joins split ("calm/cooperative", "aerosol-cool")."""
    return [(p, a, b) for w, a, b in words for p in re.split(r"[/-]", w) if p]


def _acronym(value: str) -> bool:
    return bool(re.fullmatch(r"[A-Z]{3,5}", value.strip()))


def _named(label: str, chunk: set[str]) -> int:
    """How many chunk words write a word of the label, whole or in part ("pedal pulses" both
    write "PedPulse": a shared first syllable, a word inside the compound).
    """
    def hit(c: str, w: str) -> bool:
        return len(c) >= 3 and (w[:3] == c[:3] or (len(c) >= 5 and c.rstrip("s") in w))
    words = _label_words(label)
    return sum(any(hit(c, w) for w in words) for c in chunk)


Form = tuple[str, str, tuple[str, ...], bool]


class _ValueIndex:
    """The value forms of a patient's charted items, and which items a chunk word can start
    one of :func:`_value_only`'s matches in: a multi-word value by its first word, an acronym
    by itself. Built on the first chunk that asks, kept for the note's other chunks (every
    phrase of every line reads the same items and values again).
    """

    def __init__(self, items: Sequence[tuple[ItemRef, str]], profile: Callable[[str], Sequence[str]]) -> None:
        self.forms: list[tuple[Form, ...]] = [_value_forms(tuple(profile(k))) for _, k in items]
        self.by_word: dict[str, list[int]] = {}
        self.by_acronym: dict[str, list[int]] = {}
        for n, forms in enumerate(self.forms):
            for _, low, vw, acronym in forms:
                if acronym:
                    self.by_acronym.setdefault(low, []).append(n)
                if len(vw) >= 2 and not all(w in _GENERIC for w in vw):
                    self.by_word.setdefault(vw[0], []).append(n)

    def candidates(self, split: Sequence[tuple[str, int, int]]) -> list[int]:
        """Positions of the items that may chart a value the chunk states, in item order (a
        superset: :func:`_value_only` still checks each of their values).
        """
        got: set[int] = set(self.by_acronym.get(split[0][0], ())) if split else set()
        for w, _, _ in split:
            got.update(self.by_word.get(w, ()))
        return sorted(got)


#: id(pairs) -> (pairs, profile, chartevents items, their value index once built): one entry
#: per note being extracted (its pairs list is made once per note, ``.extract``)
_INDEXES: dict[int, tuple[Sequence[tuple[ItemRef, str]], Callable[[str], Sequence[str]],
                          list[tuple[ItemRef, str]], list[_ValueIndex]]] = {}
_MAX_INDEXES = 16


def _charted(pairs: Sequence[tuple[ItemRef, str]], profile: Callable[[str], Sequence[str]]
             ) -> tuple[list[tuple[ItemRef, str]], list[_ValueIndex]]:
    """The patient's labelled chartevents items and a holder of their value index, made
    once per pairs list (the entry holds the list, so its id names no other list meanwhile).
    """
    got = _INDEXES.get(id(pairs))
    if got is not None and got[0] is pairs and got[1] is profile:
        return got[2], got[3]
    items = [(it, k) for it, k in pairs if it.table == "chartevents" and it.label]
    if len(_INDEXES) >= _MAX_INDEXES:
        _INDEXES.clear()
    _INDEXES[id(pairs)] = (pairs, profile, items, [])
    return items, _INDEXES[id(pairs)][3]


def _value_only(text: str, words: Sequence[tuple[str, int, int]], items: Sequence[tuple[ItemRef, str]],
                profile: Callable[[str], Sequence[str]], index: list[_ValueIndex] | None = None
                ) -> tuple[list[tuple[ItemRef, str]], str, int, int] | None:
    """The items a chunk names by a charted value alone: a value of two or more words written
    in order without a gap ("weak palpable", "light yellow", "calm/cooperative"), or an
    upper-case acronym value opening the chunk and written in upper case ("PEG in place", not
    "off propofol" for a charted "OFF"). Of the items charting that
    value, those whose label words the chunk names most ("pedal pulses" -> Dorsal PedPulse,
    not Radial Pulse) are kept; when no label word tells them apart they must be one item
    charted per side.
    """
    split = _split_words(words)
    found: dict[tuple[str, int, int], list[tuple[ItemRef, str]]] = {}
    if index is not None and not index:
        index.append(_ValueIndex(items, profile))
    held = index[0] if index else None
    for n in held.candidates(split) if held is not None else range(len(items)):
        it, k = items[n]
        for v, low, vw, acronym in held.forms[n] if held is not None else _value_forms(tuple(profile(k))):
            if acronym and split and split[0][0] == low and _acronym(text[split[0][1]:split[0][2]]):
                a, b = split[0][1], split[0][2]
            elif len(vw) >= 2 and not all(w in _GENERIC for w in vw):
                at = next((i for i in range(len(split) - len(vw) + 1)
                           if all(split[i + j][0] == w for j, w in enumerate(vw))), None)
                if at is None:
                    continue
                a, b = split[at][1], split[at + len(vw) - 1][2]
            else:
                continue
            found.setdefault((" ".join(vw) or v.lower(), a, b), []).append((it, k))
    if not found:
        return None
    (value, a, b), hits = max(found.items(), key=lambda kv: (kv[0][2] - kv[0][1], -kv[0][1]))
    chunk = {w for w, x, _ in split if not a <= x < b}
    best = max(_named(it.label or "", chunk) for it, _ in hits)
    kept = [(it, k) for it, k in hits if _named(it.label or "", chunk) == best]
    stems = {re.sub(r"\b(?:right|left|r|l)\b|[\[\]()]", "", (it.label or "").lower()).strip() for it, _ in kept}
    if best == 0 and len(stems) > 1:
        return None  # several items chart the value and the chunk names none of them
    if best:
        a = min(a, words[0][1])  # "DP pulses weak palpable": the statement starts at the item's name
    return kept, value, a, b


def data_findings(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                  profile: Callable[[str], Sequence[str]], taken: Iterable[tuple[int, tuple[int, int] | None]]
                  ) -> list[Entity]:
    """Finding entities of ``seg`` aligned to the patient's categorical chartevents items.

    ``taken`` are (line, span) of entities already extracted: a phrase (text between
    commas, semicolons, colons, periods) in which one starts is left to the vocabulary, so
    covered findings keep their behaviour, except for a charted value alone outside every
    taken span ("SpO2 96% on aerosol cool neb": the device is a statement of its own).
    """
    sites_here = seg.section in SITE_SECTIONS
    if seg.section not in _SECTIONS and not sites_here:
        return []
    occupied: dict[int, list[tuple[int, int]]] = {}
    for line, span in taken:
        if span is not None:
            occupied.setdefault(line, []).append(span)
    items, index = _charted(pairs, profile)
    out: list[Entity] = []
    for i in range(seg.start_line, seg.end_line + 1):
        text = lines[i]
        if not text or text.isspace():
            continue  # a blank line states nothing
        used = occupied.get(i, [])
        sited: list[tuple[int, int]] = []
        for st in site_statements(text, items) if sites_here else ():
            a = max((m.end() for m in _PHRASE_END.finditer(text, 0, st.start)), default=0)
            if any(a <= x < st.end and max(st.start, st.value_start) < y for x, y in used):
                continue  # a statement of its phrase reads these words ("LS clear bilat"); a device before
                # them ("Foley w/ icteric urine"), a procedure naming the site ("R thoracotomy with large
                # sanguinous drainage") or one running on from an earlier phrase does not
            sited.append((st.start, st.end))
            out.append(_data_entity(text, i, seg, st.items, st.value, st.start, st.end, SITE_CONCEPT))
        for ch in re.finditer(r"[^,;.:()]+", text) if seg.section in _SECTIONS else ():
            if any(x < ch.end() and ch.start() < y for x, y in sited):
                continue  # a site statement ("weak DP/PT pulses") already reads this phrase
            words = _chunk_words(text, ch.start(), ch.end())
            if len(_split_words(words)) < 2:
                continue
            # a statement may run on over a comma ("edema both legs, DP pulses weak palpable"): the
            # phrase is free unless a statement starts in it ("Foley draining ...": the vocabulary's);
            # a value alone is free where no statement covers it ("SpO2 96% on aerosol cool neb")
            alone = _value_only(text, words, items, profile, index)
            if alone is not None and any(alone[2] < y and x < alone[3] for x, y in used):
                alone = None
            if any(ch.start() <= x < ch.end() for x, _ in used):
                if alone is not None:
                    hits, value, a, b = alone
                    out.append(_data_entity(text, i, seg, hits, value, a, b))
                continue
            got = _match(words, items, profile)
            chunk = {w for w, _, _ in _split_words(words)}
            if alone is not None and (got is None or _named(alone[0][0][0].label or "", chunk)
                                      > _named(got[0][0][0].label or "", chunk)):
                got = alone  # the value's item the phrase names best ("pedal pulses": not the radial pulse)
            if got is None:
                continue
            hits, value, a, b = got
            out.append(_data_entity(text, i, seg, hits, value, a, b))
    return out


def superseded(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]], found: Sequence[Entity]
               ) -> list[Entity]:
    """``found`` without the findings whose words are a site statement under the finding's
    name ("Lungs: crackles at R base"): the site statement names the lobes, the heading
    names none of its own, so the statement is the site phrase, not the heading.
    """
    if seg.section not in SITE_SECTIONS:
        return list(found)
    items = [(it, k) for it, k in pairs if it.table == "chartevents" and it.label]
    sites: dict[int, list[tuple[int, set[str]]]] = {}

    def heads(e: Entity) -> bool:
        if e.kind != "finding" or e.span is None or e.claim.concept in (DATA_CONCEPT, SITE_CONCEPT):
            return False
        if e.line not in sites:
            sites[e.line] = [(st.start, {k for _, k in st.items})
                             for st in site_statements(lines[e.line], items)]
        name_end = e.span[0] + len(e.text)
        text = lines[e.line]
        return any(name_end <= a < e.span[1] and keys & set(e.item_keys) and _LEAD.fullmatch(text[name_end:a])
                   for a, keys in sites[e.line])
    return [e for e in found if not heads(e)]


def _data_entity(text: str, i: int, seg: Segment, hits: Sequence[tuple[ItemRef, str]], value: str, a: int, b: int,
                 concept: str = DATA_CONCEPT) -> Entity:
    # a site statement names every side it covers ("DP/PT": four items), a numbered wound every number
    n = 3 if concept == DATA_CONCEPT else 12
    return Entity(
        entity_id=f"L{i}:{a}", line=i, text=text[a:b], kind="finding", segment=seg.index,
        value=value, claim=Claim(concept=concept, section=seg.section),
        items=tuple(it for it, _ in hits[:n]), item_keys=tuple(k for _, k in hits[:n]), time_text=None,
        window=seg.default_window, source="ontology", span=(a, b))


_MODALITIES = tuple((re.compile(x["note"], re.I), re.compile(x["label"], re.I))
                    for x in load_data("offline_concept_flags.yaml").get("item_modalities") or ())


def narrow_by_modality(text: str, items: Sequence[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The items of the modality a statement names ("art BP" -> arterial, "NBP" -> cuff
    pressures), or all of them when it names none or the patient has no such item.
    """
    for note, label in _MODALITIES:
        if note.search(text):
            kept = [(it, k) for it, k in items if label.search(it.label or "")]
            return kept or list(items)
    return list(items)
