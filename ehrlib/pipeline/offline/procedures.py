"""Procedures and blood products: a device or procedure name with its action and side.

``s/p R IJ CVL placement``, ``extubated``, ``HD 3`` (a hospital day, not dialysis),
``transfused 2u PRBC``. Adjacent names of one procedure ("R IJ CVL") merge into one
mention. Which procedure abbreviation is a day count and which study name needs a body
part is data (``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ehrlib.pipeline.claims import MedicationClaim, ProcedureClaim
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.mention import Mention, concept_flags, emit
from ehrlib.pipeline.records import Segment

__all__ = ["procedure_mention", "procedure_mentions", "procedure_claim", "stated_side", "blood_product_mention",
           "listed_entries", "merge_entry_fragments", "aside_procedures", "prose_procedure_mentions", "shared_conjunct"]

_FLAGS = concept_flags()
_PROC_ACTION = re.compile(r"\b(?P<a>plac(?:ed|ement)|inserted|insertion|s/p|status\s+post|pulled|removed|d/c'?d|dc'?d|"
                          r"discontinued|exchanged|changed|re-?sited|intubated|extubated|started|initiated|underwent|"
                          r"obtained|performed|done)\b", re.I)
_SIDE = re.compile(r"\b(?P<s>R|L|right|left|rt|lt|bilat(?:eral)?)\b\.?\s*(?P<site>IJ|subclavian|SC|femoral|fem|radial|"
                   r"brachial|arm|"
                   r"antecubital|AC|chest|forearm)?", re.I)


def procedure_mention(raw: str, line: int, m: re.Match[str], concept: Concept, out: list[Mention],
                      taken: list[tuple[int, int]]) -> bool:
    """Emit the mention of a procedure occurrence; False when the word is not the procedure."""
    if concept.cid in _FLAGS["hospital_day_procedures"] and re.match(r"\s*#?\s*\d", raw[m.end():]):
        return False  # "HD 3" is a hospital day
    if concept.cid in _FLAGS["ct_concepts"] and m.group(0).lower() == "ct" and not re.match(
            _FLAGS["ct_concepts"][concept.cid], raw[m.end():], re.I):
        return False
    claim, action_text = procedure_claim(raw, m.start(), m.end())
    negated, action, side_letter = claim.negated, claim.action, claim.side
    prev = out[-1] if out else None
    if (prev is not None and prev.concept == concept.cid and prev.line == line and m.start() - prev.end <= 3
            and isinstance(prev.claim, ProcedureClaim)):
        # "R IJ CVL" is one line: this occurrence's action and side win, the earlier ones stay
        merged = replace(prev.claim, negated=negated, action=action or prev.claim.action,
                         side=side_letter or prev.claim.side)
        out[-1] = Mention(line, prev.start, m.end(), raw[prev.start:m.end()].strip(), "procedure", concept.cid,
                          prev.value, merged)
        taken.append((m.start(), m.end()))
        return True
    emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "procedure", concept.cid, action_text,
                             claim))
    return True


#: what ends a clause between a procedure's name and an action word ("CVL removed, PICC placed")
_ACTION_BREAK = re.compile(r"[,;.:]\s|\s(?:and|then|but|while|after|before)\s|\s[-–]+\s|\)", re.I)


def _bound_action(raw: str, start: int, end: int) -> re.Match[str] | None:
    """The action word bound to the name at ``raw[start:end]``: the nearest one within 30
    characters before or 40 after it with no clause break in between, so that in "CVL
    removed, PICC placed HD 4" the CVL is removed and the PICC placed.
    """
    best: tuple[int, re.Match[str]] | None = None
    lo = max(0, start - 30)
    for m in _PROC_ACTION.finditer(raw, lo, min(len(raw), end + 40)):
        if start <= m.start() < end or m.start() < end <= m.end():
            return m  # the name itself carries the action ("extubated", "CVL placement")
        gap = raw[m.end():start] if m.end() <= start else raw[end:m.start()]
        if _ACTION_BREAK.search(f" {gap} " if gap.strip() else gap):
            continue
        dist = start - m.end() if m.end() <= start else m.start() - end
        if best is None or dist < best[0]:
            best = (dist, m)
    return best[1] if best else None


#: what ends the list item or clause a side word belongs to ("L AC 18g, R femoral A-line")
_SIDE_BREAK = re.compile(r"[,;:]\s|\.\s|\s(?:and|then|but|with|w/)\s", re.I)


def stated_side(raw: str, start: int, end: int) -> re.Match[str] | None:
    """The side word of the procedure name at ``raw[start:end]``: the nearest one before it in
    its own list item or clause (at most 20 characters back; "L AC 18g, R femoral A-line": the
    A-line is right), else one within or just after the name ("A-line R radial").
    """
    lo = max(0, start - 20)
    cut = [m.end() for m in _SIDE_BREAK.finditer(raw, lo, start)]
    before = list(_SIDE.finditer(raw, cut[-1] if cut else lo, start))
    if before:
        return before[-1]
    return _SIDE.search(raw, start, min(len(raw), end + 5))


def procedure_claim(raw: str, start: int, end: int) -> tuple[ProcedureClaim, str | None]:
    """The claim of a procedure name at ``raw[start:end]`` (its action, side and negation
    from the words around it) with the action's text.
    """
    act = _bound_action(raw, start, end)
    side = stated_side(raw, start, end)
    claim = ProcedureClaim(negated=bool(negated_before(raw[:start])), action=act.group("a").lower() if act else None,
                           side=side.group("s").lower()[0] if side else None)
    return claim, act.group(0) if act else None


#: a count of units right before a product ("3 u PRBC", "6 units of FFP", "3 FFP") or right after it
#: ("FFP x2", "FFP 2 units")
_UNITS_BEFORE = re.compile(r"(?<![\d.])(\d{1,2})\s*(?:(?:u|units?|bags?)\b(?:\s+of)?\s*)?$", re.I)
_UNITS_AFTER = re.compile(r"\s*(?:x\s?(\d+)\b|,?\s*(\d+)\s*(?:u|units?|bags?)\b)", re.I)
#: what makes a count after a product the next product's ("FFP and 3 u PRBC", "FFP, 2 units cryo")
_NEXT_PRODUCT = re.compile(r"\s*(?:of\s+)?(?:prbcs?|rbcs?|ffp|plts?|platelets?|cryo\w*|packed|blood|albumin)\b", re.I)


def _units_of(raw: str, start: int, end: int) -> re.Match[str] | None:
    """The count of units a blood product's name binds: the one right before it, else one
    right after it that does not lead into another product; a count across a joiner ("FFP
    and 3 u PRBC") is the other product's.
    """
    # "3 u PRBC", or a name with its count ("1u PRBC")
    before = _UNITS_BEFORE.search(raw[max(0, start - 14):start]) or re.match(r"(\d+)\s*u", raw[start:end], re.I)
    if before:
        return before
    after = _UNITS_AFTER.match(raw, end)
    if after and not _NEXT_PRODUCT.match(raw, after.end()):
        return after
    return None


def blood_product_mention(raw: str, line: int, m: re.Match[str], concept: Concept, out: list[Mention],
                          taken: list[tuple[int, int]]) -> bool:
    """Emit the mention of a blood product ("2u PRBC"); "transfused" just before joins it."""
    amount = _units_of(raw, m.start(), m.end())
    negated = bool(negated_before(raw[:m.start()]))
    units = float(next(g for g in amount.groups() if g)) if amount else None
    prev = out[-1] if out else None
    if (prev is not None and prev.concept == concept.cid and prev.line == line and m.start() - prev.end <= 8
            and re.fullmatch(r"transfus\w*", prev.text, re.I) and isinstance(prev.claim, MedicationClaim)):
        merged = replace(prev.claim, drugs=(concept.cid,), negated=negated,  # "transfused 1u PRBC"
                         units=units if units is not None else prev.claim.units)
        out[-1] = Mention(line, prev.start, m.end(), raw[prev.start:m.end()].strip(), "medication", concept.cid,
                          None, merged)
        taken.append((m.start(), m.end()))
        return True
    emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "medication", concept.cid, None,
                             MedicationClaim(drugs=(concept.cid,), negated=negated, units=units)))
    return True


#: one entry of a listed procedures line: commas, semicolons and sentence ends outside
#: parentheses separate entries ("CABG x3 (LIMA-LAD, SVG-OM)" is one; "Transfusion. TIPS." two)
_ENTRY = re.compile(r"(?:\([^)]*\)?|[^,;(])+")
#: a sentence end between entries: after a word, before a capital or a list number ("cells. TIPS";
#: not "E. coli")
_STOP = re.compile(r"(?<=[a-z]{2})\.(?=\s+(?:[A-Z]|\d{1,2}[.)]\s))")
#: a bullet or number, and a section label ("PROCEDURES:"), before an entry
_BULLET = re.compile(r"^\s*(?:[A-Za-z][A-Za-z /&]{1,40}:\s*)?(?:[-*#•]|\d{1,2}[.)](?=\s))?\s*")


def listed_entries(text: str, head: int = 0) -> list[tuple[int, int]]:
    """The (start, end) of each entry of a listed procedures line from ``head``, without
    its label, bullet and surrounding blanks.
    """
    out = []
    for m in _ENTRY.finditer(_STOP.sub(";", text), head):
        body = text[m.start():m.end()]
        a = m.start() + len(_BULLET.match(body).group(0))  # type: ignore[union-attr]
        b = m.start() + len(body.rstrip(" ."))
        if b > a:
            out.append((a, b))
    return out


def merge_entry_fragments(text: str, mentions: list[Mention], names: Callable[[str], bool]) -> list[Mention]:
    """One listed procedure per entry: when several mentions fall inside one entry
    ("Transfusion" and "packed" of "Transfusion of packed red cells") and one ICD procedure
    title states the entry as a whole (``names``: "Total abdominal colectomy with end
    ileostomy" is two codes, two statements), they are fragments of one statement, which
    spans the entry and keeps the first procedure mention's concept and claim (its bedside check).
    """
    out = list(mentions)
    for a, b in listed_entries(text):
        inside = [m for m in out if a <= m.start and m.end <= b]
        if len(inside) < 2 or not names(text[a:b]):
            continue
        keep = next((m for m in inside if m.kind == "procedure"), inside[0])
        # a procedure-code mention is resolved by its value, which is its name: the entry's now
        value = text[a:b] if keep.kind == "diagnosis" else keep.value
        merged = replace(keep, start=a, end=b, text=text[a:b], value=value)
        out = sorted([m for m in out if m not in inside] + [merged], key=lambda m: (m.start, m.end))
    return out


def aside_procedures(line: int, text: str, mentions: list[Mention], names: Callable[[str], bool]) -> list[Mention]:
    """The parts of an entry's parenthesised aside that name an ICD procedure of their own
    ("LIMA to LAD" of "Coronary artery bypass grafting x2 (LIMA to LAD, SVG to OM)": the
    internal mammary graft has its own code), as procedure-code mentions; a part that names
    nothing ("SVG to OM") is a detail of its entry. Parts already covered by a mention are left.
    """
    out: list[Mention] = []
    for m in re.finditer(r"\(([^()]+)\)", text):
        for part in re.finditer(r"[^,;]+", m.group(1)):
            words = part.group(0).strip()
            if len(re.findall(r"[A-Za-z]", words)) < 3:
                continue
            a = m.start(1) + part.start() + part.group(0).index(words)
            b = a + len(words)
            # a mention inside the part is its statement already; the entry's own mention spans more
            if any(a <= x.start and x.end <= b for x in mentions if x.line == line) or not names(words):
                continue
            out.append(Mention(line, a, b, words, "diagnosis", "procedure_code", words))
    return out


#: a procedure told done in prose: "<name> placed", "<name> was inserted"
_DONE = re.compile(r"\b(?:(?:was|were)\s+)?(?:placed|inserted|performed)\b", re.I)
_CLAUSE_BREAK = re.compile(r"[.;:,()!?]|\b(?:and|then|with|after|before|s/p)\b|\s-\s", re.I)
_NAME_WORD = re.compile(r"[A-Za-z][\w/-]*")


def prose_procedure_mentions(text: str, line: int, mentions: list[Mention],
                             confident: Callable[[str], bool]) -> list[Mention]:
    """Procedures a progress note tells as done ("IVC filter placed by IR") that no
    vocabulary mention covers, as procedure-code mentions: the longest run of two to four
    words of the clause before the action word that names an ICD procedure confidently
    (``confident``). A negation or any other word the title lacks keeps the run from naming
    it ("filter not placed" names nothing).
    """
    out: list[Mention] = []
    for act in _DONE.finditer(text):
        start = max((m.end() for m in _CLAUSE_BREAK.finditer(text, max(0, act.start() - 60), act.start())),
                    default=max(0, act.start() - 60))
        words = list(_NAME_WORD.finditer(text, start, act.start()))[-4:]
        if not words or any(m.start < act.end() and words[0].start() < m.end for m in mentions):
            continue
        b = words[-1].end()
        for w in words[:-1]:  # one word alone ("stent placed") is too vague to name a procedure
            if confident(text[w.start():b]):
                out.append(Mention(line, w.start(), b, text[w.start():b], "diagnosis", "procedure_code",
                                   text[w.start():b]))
                break
    return out


def shared_conjunct(previous: str | None, words: str) -> str:
    """A one-word conjunct completed with the modifiers of the part before it ("anterior
    cervical discectomy and fusion": the fusion is an anterior cervical fusion); other parts as written.
    """
    head = previous.split() if previous else []
    if len(words.split()) == 1 and len(head) >= 2:
        return " ".join([*head[:-1], words])
    return words


def procedure_mentions(lines: Sequence[str], seg: Segment, found: Sequence[Mention]) -> list[Mention]:
    """Surgical procedures listed under "Major Surgical or Invasive Procedure" that no
    bedside concept covers ("Total abdominal colectomy"): checked as ICD procedure codes.
    """
    out: list[Mention] = []
    for i in range(seg.start_line, seg.end_line + 1):
        text = lines[i]
        head = 0
        if i == seg.start_line and ":" in text:
            head = text.index(":") + 1
        for ca, cb in listed_entries(text, head):  # "CABG x3 (LIMA-LAD, SVG-OM)" is one
            before: str | None = None
            for part in re.finditer(r"(?:(?!\s+(?:with|and|s/p)\s+).)+", text[ca:cb]):
                a = ca + part.start()
                b = a + len(part.group(0))
                # the connective that opens a later part is not the procedure's name ("and fusion")
                words = re.sub(r"^\s*(?:with|and|s/p)\s+", "", part.group(0), flags=re.I).strip()
                previous, before = before, words
                if len(re.findall(r"[A-Za-z]{3,}", words)) < 1 or any(m.line == i and m.start < b and a < m.end
                                                                       for m in found):
                    continue
                off = text.find(words, a)
                out.append(Mention(i, off, off + len(words), words, "diagnosis", "procedure_code",
                                   shared_conjunct(previous, words)))
    return out
