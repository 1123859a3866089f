"""Susceptibility claims of a culture statement ("sensitive to ceftriaxone", "R to levo",
"(levo R, CTX S)", "oxacillin-resistant", "pan-sensitive"), checked against the
interpretation column of the organism's rows by
:mod:`ehrlib.pipeline.offline.verification.microbiology`.

Rules:

* Antibiotic names are normalised through the lexicon's drug map (``levo`` ->
  levofloxacin, ``CTX`` -> ceftriaxone) and matched to the row's antibiotic by the
  first six letters of the generic name (MIMIC writes ``PIPERACILLIN/TAZO``).
* A claim "S" is met by an S row of that antibiotic, "R" by R, "I" by I; a claim is
  contradicted when the organism has rows for that antibiotic and none with the stated
  interpretation. An antibiotic never tested is not judged.
* "pan-sensitive" is contradicted by any R row of the organism, except the antibiotics the
  report itself states resistant ("pan-sensitive (cefazolin R)").
* A report goes on past a semicolon when the next clause opens with a susceptibility
  ("S to cefepime, meropenem; R to cipro").
* A susceptibility word binds to the drug next to it: "resistant to X, Y" binds forward
  over the list, but a list item followed by its own level word ("resistant to X,
  Y sensitive") ends the list there and binds backward to that word.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.clauses import CLAUSE_REACH
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["parse_susceptibilities", "is_susceptibility_name", "susceptibility_mentions", "report_end",
           "pan_sensitive_span", "opens_report", "continues_report", "REPORT_LINE_RULE"]

_LEVEL = {"sensitive": "S", "susceptible": "S", "sens": "S", "s": "S", "resistant": "R", "resistance": "R",
          "r": "R", "res": "R", "intermediate": "I", "i": "I"}
_WORD = r"(?!(?:sensitive|susceptible|resistant|intermediate|to|and)\b)[A-Za-z][A-Za-z\-]{1,24}"
#: antibiotic-shaped words the drug map may lack (oxacillin, nitrofurantoin, tobramycin...)
_AB_SHAPE = re.compile(r"cillin|mycin|micin|floxacin|^cef|penem|cycline|bactam|^vanc|sulfa|^bactrim|nitrofur|"
                       r"linezolid|dapto|rifamp|^tobra|^genta|^amika|^clinda|^erythro|colistin|aztreonam", re.I)
_LIST = rf"{_WORD}(?:\s*(?:,|/|and|&)\s*{_WORD}){{0,5}}"
#: single letters only upper-case ("levo R", "R to cipro"); words in any case
_LVL = r"(?P<lvl>sensitive|susceptible|resistant|intermediate|(?-i:[SRI]))"
_PREFIX = re.compile(rf"\b(?:{_LVL}|(?P<sens>sens(?:itivity)?))\s+to\s+(?P<abs>{_LIST})", re.I)
_SUFFIX = re.compile(rf"\b(?P<ab>{_WORD}(?:/{_WORD})?)\s*(?:-|:)?\s*{_LVL}\b(?!\s*(?:x\b|\d))", re.I)
#: a level before the name: "R to levo", "pan-sensitive incl cipro and nitrofurantoin", or a bare
#: capital letter ("R ampicillin, penicillin R")
_NAME_BEFORE = re.compile(r"(?:\b(?:(?-i:[SRI])|sensitive|susceptible|resistant|sens(?:itivity)?)\s+"
                          r"(?:to|incl(?:uding|\.)?)\s+(?:[a-z\-]+\s*(?:,|/|and|&)\s*)*"
                          r"|(?<![\w-])(?-i:[SRI])\s+)$",
                          re.I)
_NAME_AFTER = re.compile(r"\s*(?:-|:)?\s*(?:(?-i:[SRI])|sensitive|susceptible|resistant)\b(?!/|\s*(?:x\b|\d))", re.I)
_CULTURE_CONTEXT = re.compile(r"\b(?:cx|cultures?|grew|growing|isolate|sensitiv|resistan|susceptib|MRSA|MSSA|coli|"
                              r"klebsiella|staph|strep|pseudomonas|enterococ|GNR|GPC|GNRs|GPCs|VRE|organism)", re.I)
_PAN = re.compile(r"\bpan-?\s?(?:sensitive|susceptible|sens)\b", re.I)


@functools.cache
def _abbreviations() -> dict[str, str]:
    """The antibiotic abbreviations of susceptibility reports ("amp", "oxa") -> generic names."""
    terms = load_data("verification_terms.yaml")["susceptibility_abbreviations"]
    return {str(k).lower(): str(v) for k, v in terms.items()}


def _generic(word: str, lex: Lexicon) -> str | None:
    w = word.strip(" -").lower()
    if not w:
        return None
    generic = lex.drugs.get(w) or _abbreviations().get(w)
    if generic is not None:
        return generic
    if _AB_SHAPE.search(w):
        return w
    if len(w) >= 4:
        return next((g for g in lex.drugs.values() if g.startswith(w) and _AB_SHAPE.search(g)), None)
    return None


def _suffix_generic(name: str, lex: Lexicon) -> str | None:
    """The generic of a name written before its level: one drug ("pip/tazo S"), else the
    word next to the level ("vanc/zosyn R": zosyn).
    """
    whole = lex.drugs.get(name.strip(" -").lower())
    return whole or _generic(name.split("/")[-1], lex)


def _names(part: str, lex: Lexicon) -> list[tuple[str, str, int]]:
    """(generic, surface, offset) of a list item: one drug name ("pip/tazo") or, failing
    that, its slash parts ("vanc/zosyn").
    """
    whole = lex.drugs.get(part.strip(" -").lower())
    if whole is not None or "/" not in part:
        g = whole or _generic(part, lex)
        return [(g, part, 0)] if g is not None else []
    out, pos = [], 0
    for piece in part.split("/"):
        g = _generic(piece, lex)
        if g is not None:
            out.append((g, piece, pos))
        pos += len(piece) + 1
    return out


def _prefix_parts(text: str, m: re.Match[str]) -> list[tuple[str, int]]:
    """(item, offset in ``text``) of a "resistant to X, Y" list, up to the first item after
    the first that carries its own level word ("resistant to vanc, linezolid sensitive":
    linezolid is sensitive, only vanc is resistant).
    """
    out: list[tuple[str, int]] = []
    pos = m.start("abs")
    for part in re.split(r"(\s*(?:,|\band\b|&)\s*)", m.group("abs")):
        if part and not re.fullmatch(r"\s*(?:,|\band\b|&)\s*", part):
            if out and _NAME_AFTER.match(text, pos + len(part)):
                break
            out.append((part, pos))
        pos += len(part)
    return out


def parse_susceptibilities(clause: str, lex: Lexicon) -> tuple[list[tuple[str, str]], bool]:
    """([(generic antibiotic, S|R|I)], pan-sensitive) stated in a culture clause."""
    found: list[tuple[str, str]] = []
    for m in _PREFIX.finditer(clause):
        level = _LEVEL[(m.group("lvl") or "s").lower()]
        for part, _ in _prefix_parts(clause, m):
            for g, _, _ in _names(part, lex):
                if (g, level) not in found:
                    found.append((g, level))
    for m in _SUFFIX.finditer(clause):
        gen = _suffix_generic(m.group("ab"), lex)
        if gen is not None and (gen, _LEVEL[m.group("lvl").lower()]) not in found:
            found.append((gen, _LEVEL[m.group("lvl").lower()]))
    return found, bool(_PAN.search(clause))


def is_susceptibility_name(raw: str, start: int, end: int) -> bool:
    """Whether a drug word at raw[start:end] names a susceptibility ("R to levo",
    "levo R", "ceftriaxone-sensitive"), not an order.
    """
    if not _CULTURE_CONTEXT.search(raw, max(0, start - 2 * CLAUSE_REACH), end + 2 * CLAUSE_REACH):
        return False
    return bool(_NAME_BEFORE.search(raw[max(0, start - 30):start]) or _NAME_AFTER.match(raw[end:end + 16]))


#: a sentence ends at ". " or ";" but not at a genus initial ("E. coli", "S. aureus")
_SENTENCE_END = re.compile(r"(?:;|(?<!\b[A-Za-z])\.)(?:\s|$)")
def pan_sensitive_span(raw: str, start: int, end: int) -> tuple[int, int] | None:
    """(start, end) of the first "pan-sensitive" in ``raw[start:end]`` before a sentence end."""
    stop = re.search(r"(?<!\b[A-Za-z])\.(?:\s|$)", raw[start:end])
    m = _PAN.search(raw, start, start + stop.start() if stop else end)
    return (m.start(), m.end()) if m else None


def opens_report(text: str, lex: Lexicon, at: int = 0) -> bool:
    """Whether ``text[at:]`` (leading space skipped) opens with a susceptibility ("S to
    cefepime", "Meropenem S", "levo-R"): the rest of an organism's report.
    """
    lead = len(text) - len(text[at:].lstrip())
    suffix = _SUFFIX.match(text, lead)
    return bool(_PREFIX.match(text, lead) or suffix and _suffix_generic(suffix.group("ab"), lex) is not None)


def continues_report(prev: str, nxt: str, lex: Lexicon) -> bool:
    """Whether line ``nxt`` carries on the susceptibility report of line ``prev``: it opens
    with a susceptibility and ``prev`` names a culture or organism, or is such a line itself.
    """
    return bool(prev.strip()) and opens_report(nxt, lex) and (
        bool(_CULTURE_CONTEXT.search(prev)) or opens_report(prev, lex))


def report_end(text: str, lex: Lexicon) -> int:
    """Where an organism's susceptibility report ends in ``text``: at the sentence end, unless
    the clause after it opens with one more susceptibility ("S to cefepime, meropenem; R to
    cipro" reports both levels of one organism; "KLEBSIELLA. Meropenem S, cefepime I" its
    antibiogram on the lines after the organism).
    """
    pos = 0
    while (m := _SENTENCE_END.search(text, pos)) is not None:
        if not opens_report(text, lex, m.end()):
            return m.start()
        pos = m.end()
    return len(text)


def susceptibility_mentions(raw: str, cultures: Sequence[Any], lex: Lexicon) -> list[tuple[int, int, str, str]]:
    """(start, end, generic antibiotic, S|R|I) of every antibiotic claim that follows a
    culture mention with an organism on the line, up to the next culture or sentence end:
    each is its own statement ("BCx E. coli - S to pip/tazo, R to ceftriaxone" makes two).
    """
    out: list[tuple[int, int, str, str]] = []
    starts = sorted(c.start for c in cultures)
    for c in cultures:
        if not getattr(c.claim, "organism", None):
            continue
        stop = min([s for s in starts if s > c.start] + [len(raw)])
        stop = c.end + report_end(raw[c.end:stop], lex)
        seg = raw[c.start:stop]
        for m in _PREFIX.finditer(seg):
            level = _LEVEL[(m.group("lvl") or "s").lower()]
            for part, pos in _prefix_parts(seg, m):
                for g, sub, off in _names(part, lex):
                    out.append((c.start + pos + off, c.start + pos + off + len(sub), g, level))
        for m in _SUFFIX.finditer(seg):
            gen = _suffix_generic(m.group("ab"), lex)
            if gen is not None and not any(a <= c.start + m.start("ab") < b for a, b, _, _ in out):
                out.append((c.start + m.start("ab"), c.start + m.end("ab"), gen, _LEVEL[m.group("lvl").lower()]))
    return sorted(out)


REPORT_LINE_RULE = Rule("extract.report_continuation", "A line opening with a susceptibility (Meropenem S, R to "
                        "cipro) under a culture or organism line carries on that organism's report, so its "
                        "antibiotics are the organism's susceptibilities, not orders.", continues_report,
                        ("microbiology",))
