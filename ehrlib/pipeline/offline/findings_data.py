"""Data-driven fallback for categorical exam / nursing findings the lexicon does not name.

The hand-written finding vocabulary (``offline_lexicon.yaml``) covers a dozen exam items;
nursing notes chart many more ("Pain: 3/10", "Skin: warm, dry", "Pupils: brisk"). Instead of
growing the vocabulary, a phrase "<item words>: <value words>" (or "<item> <value>") inside an
exam / nursing-system segment is aligned to the patient's own categorical chartevents items
whose label contains the item words and whose charted text values (TopV, the item profile)
contain the value words. Only when both match is an entity emitted, so free prose never
becomes a statement. Verification compares the stated value with what was charted in the
window: a match is consistent, only clearly opposite values are a contradiction, and
anything else is not judged as missing (the item has records; the words may simply differ).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.claims import Claim
from ehrlib.pipeline.records import Entity, Segment

__all__ = ["DATA_CONCEPT", "data_findings", "judge_data_finding", "normalise_value"]

#: ``claim.concept`` of the entities this module emits
DATA_CONCEPT = "data_finding"

_SECTIONS = ("exam", "nursing_system")  # the section kinds of offline_sections.yaml that hold exam systems

#: ward abbreviations of item words -> label words
_ITEM_ABBREV: Mapping[str, str] = {
    "ls": "lung sounds", "abd": "abdomen", "bs": "bowel sounds", "resp": "respiratory", "neuro": "neuro",
    "ext": "extremities", "rul": "right upper lobe", "lul": "left upper lobe", "rll": "right lower lobe",
    "lll": "left lower lobe", "rue": "right upper extremity", "lue": "left upper extremity",
    "rle": "right lower extremity", "lle": "left lower extremity", "r": "right", "l": "left", "gu": "urine", "uo": "urine", "o2": "o2", "loc": "level of consciousness",
}
#: value abbreviations -> charted words
_VALUE_ABBREV: Mapping[str, str] = {
    "nt": "non-tender", "nd": "non-distended", "ra": "room air", "nc": "nasal cannula", "dim": "diminished",
    "diminshed": "diminished", "cdi": "clean dry intact", "c/d/i": "clean dry intact", "wnl": "within normal limits",
    "nsr": "normal sinus", "brisk": "brisk", "neg": "negative", "pos": "positive", "hypo": "hypoactive",
    "hyper": "hyperactive", "abs": "absent", "intact": "intact", "perrl": "brisk", "wdl": "within defined limits",
}
#: value words that exclude each other (a stated word vs a charted one)
_OPPOSED: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"clear"}), frozenset({"diminished", "crackles", "rhonchi", "wheezes", "coarse", "absent", "rales"})),
    (frozenset({"soft"}), frozenset({"firm", "rigid"})),
    (frozenset({"non-tender", "nontender"}), frozenset({"tender"})),
    (frozenset({"non-distended", "nondistended"}), frozenset({"distended"})),
    (frozenset({"warm"}), frozenset({"cool", "cold"})),
    (frozenset({"dry"}), frozenset({"diaphoretic", "clammy", "moist"})),
    (frozenset({"present", "active"}), frozenset({"absent"})),
    (frozenset({"regular"}), frozenset({"irregular"})),
    (frozenset({"hypoactive"}), frozenset({"hyperactive"})),
)
_STOP = frozenset({"and", "or", "with", "the", "a", "of", "to", "on", "in", "at", "x", "is", "are", "pt", "but"})


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9+/-]+", text.lower()) if w not in _STOP]


def normalise_value(text: str) -> frozenset[str]:
    """Lower-case words of a value with ward abbreviations expanded ("NT" -> non-tender)."""
    out: set[str] = set()
    for w in _words(text):
        w = w.strip("/-+") or w
        out.update(_VALUE_ABBREV.get(w, w).split())
    return frozenset(w for w in out if len(w) >= 2)


#: label words too generic to name an item by themselves ("Skin Color": the item word is "skin")
_GENERIC = frozenset({"color", "type", "level", "assessment", "status", "right", "left", "size", "source",
                      "present", "location", "amount", "quality", "character", "activity", "response", "appearance",
                      "site", "method", "drainage", "sounds", "pattern", "effort", "tube", "strength", "movement"})
#: charted values that say nothing categorical on their own
_EMPTY = frozenset({"yes", "no", "none", "normal", "not applicable", "not assessed", "unable to assess", "other",
                    "done", "not done", "positive", "negative", "intact"})
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9&+/-]*")


def _value_in(stated: frozenset[str], charted: str) -> bool:
    return bool(stated) and stated <= normalise_value(charted)


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


def _label_words(label: str) -> list[str]:
    words = [x for w in re.findall(r"[a-z]{2,}", label.lower()) for x in _ITEM_ABBREV.get(w, w).split()]
    return [w for w in words if len(w) >= 3 and w not in _GENERIC]


def _value_words(value: str) -> list[str]:
    return [w for w in re.findall(r"[a-z][a-z-]+", value.lower()) if w not in _STOP]


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


def data_findings(lines: Sequence[str], seg: Segment, pairs: Sequence[tuple[ItemRef, str]],
                  profile: Callable[[str], Sequence[str]], taken: Iterable[tuple[int, tuple[int, int] | None]]
                  ) -> list[Entity]:
    """Finding entities of ``seg`` aligned to the patient's categorical chartevents items.

    ``taken`` are (line, span) of entities already extracted: a phrase (text between
    commas, semicolons, colons, periods) holding one is left to the vocabulary, so covered
    findings keep their behaviour and one phrase never yields two statements.
    """
    if seg.section not in _SECTIONS:
        return []
    occupied: dict[int, list[tuple[int, int]]] = {}
    for line, span in taken:
        if span is not None:
            occupied.setdefault(line, []).append(span)
    items = [(it, k) for it, k in pairs if it.table == "chartevents" and it.label]
    out: list[Entity] = []
    for i in range(seg.start_line, seg.end_line + 1):
        text = lines[i]
        used = occupied.get(i, [])
        for ch in re.finditer(r"[^,;.:()]+", text):
            words = _chunk_words(text, ch.start(), ch.end())
            if len(words) < 2:
                continue
            got = _match(words, items, profile)
            if got is None:
                continue
            hits, value, a, b = got
            if any(ch.start() < y and x < ch.end() for x, y in used):
                continue  # the phrase already carries a statement ("Foley draining ..."): the vocabulary's
            out.append(Entity(
                entity_id=f"L{i}:{a}", line=i, text=text[a:b], kind="finding", segment=seg.index,
                value=value, claim=Claim(concept=DATA_CONCEPT, section=seg.section),
                items=tuple(it for it, _ in hits[:3]), item_keys=tuple(k for _, k in hits[:3]), time_text=None,
                window=seg.default_window, source="ontology", span=(a, b)))
    return out


def judge_data_finding(e: Entity, rows: Sequence[Mapping[str, Any]]) -> tuple[bool | None, str, list[Mapping[str, Any]]]:
    """(consistent?, reason, evidence) from the item's rows in the entity's window.

    ``None`` means not judged: no charted value of the window speaks to the stated words.
    """
    stated = normalise_value(e.value or "")
    valued = [r for r in rows if re.search(r"[A-Za-z]", str(r.get("value") or ""))]
    hits = [r for r in valued if _value_in(stated, str(r.get("value")))]
    if hits:
        return True, f"{e.text}: {e.value} charted in the window", hits[:4]
    against = [r for r in valued if _opposed(stated, normalise_value(str(r.get("value"))))]
    if against and len(against) == len(valued):
        shown = ", ".join(sorted({str(r.get("value")) for r in against})[:4])
        return False, f"{e.text}: note says {e.value}; table charts {shown}", against[:4]
    return None, f"{e.text}: charted values neither match nor contradict", valued[:3]


def _opposed(stated: frozenset[str], charted: frozenset[str]) -> bool:
    return any((stated & x and charted & y) or (stated & y and charted & x) for x, y in _OPPOSED)
