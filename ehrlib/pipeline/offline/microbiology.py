"""Microbiology mentions: a culture's specimen with its organism, negative or pending result.

``BCx 2/4 GPC in clusters``, ``UCx NGTD``, ``sputum grew yeast``, ``E. coli resistant to
cipro``. A bare specimen word ("sputum", "urine") is a culture only when culture words
follow. Each antibiotic's susceptibility after an organism (:mod:`.microsens`) qualifies
its culture: one claim joins the culture mention, a list is one statement per drug.
"""
from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import MicrobiologyClaim
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention, line_clause, overlaps
from ehrlib.pipeline.offline.microsens import parse_susceptibilities, susceptibility_mentions

__all__ = ["microbiology_mentions", "culture_starts"]

_BARE_SPECIMENS = ((re.compile(r"\bsputum\b", re.I), "sputum|bronch"), (re.compile(r"\burine\b", re.I), "urine"),
                   (re.compile(r"\bblood\b", re.I), "blood"), (re.compile(r"\bwound(?:\s+swab)?\b", re.I),
                                                               "wound|swab"),
                   (re.compile(r"\bstool\b", re.I), "stool|feces"),
                   (re.compile(r"\b(?:joint|synovial)\s+fluid\b", re.I), "joint|synovial|fluid"),
                   (re.compile(r"\bpericardial\s+fluid\b", re.I), "pericardial|fluid"),
                   (re.compile(r"\bcsf\b", re.I), "csf"), (re.compile(r"\bswab\b", re.I), "swab"))
_MICRO_CONTEXT = re.compile(r"^[\s:(`\d/\-)]*(?:cx|cultures?|gram\s+stain|grew|growing|grows|sent|ngtd|no\s+growth|"
                            r"(?:was|were|is|are)\s+(?:positive|negative|pending|sent)|positive|negative|pending|w/|with|"
                            r"from\s+`*[\d/-]+`*\s+(?:grew|growing|positive|negative|w/))", re.I)


_BARE = (*_BARE_SPECIMENS, (re.compile(r"\bbile\b", re.I), "bile"), (re.compile(r"\btissue\b", re.I), "tissue"))


def _coordinated(but: str) -> str:
    """Specimens named together share the culture words after the last ("blood, urine and
    sputum cultures"); the same word again ("tan sputum, sputum cx") is no coordination.
    """
    others = "|".join(p.pattern for p, _ in _BARE if p.pattern != but)
    return r"(?:\s*(?:,|&|/|\band\b)\s*(?:" + others + r"))*"


def _bare_specimens(lex: Lexicon) -> list[tuple[re.Pattern[str], str]]:
    """The bare specimen words, each a culture only when culture words or an organism follow
    ("sputum grew yeast", "Sputum: GNRs", "bile and sputum cx sent").
    """
    organisms = "|".join(p.pattern for p, _ in lex.organisms)
    result = r"(?:" + _MICRO_CONTEXT.pattern[1:] + r"|[\s:(`\d/\-)]*(?:>\s*\d+\s*k\s+)?(?:" + organisms + r"))"
    return [(re.compile(p.pattern + r"(?=" + _coordinated(p.pattern) + result + r")", re.I), word) for p, word in _BARE]


_ANY_COORDINATED = re.compile(_coordinated(""), re.I)


@functools.cache
def _implications() -> tuple[tuple[re.Pattern[str], str, tuple[str, str]], ...]:
    terms = load_data("verification_terms.yaml")["organism_implied"]
    return tuple((re.compile(k, re.I), v["organism"], (v["antibiotic"], v["level"])) for k, v in terms.items())


def _implied(organism_text: str) -> dict[str, Any]:
    """"MRSA": S. aureus with oxacillin R, one organism claim and one susceptibility claim."""
    for pat, organism, claim in _implications():
        if pat.search(organism_text):
            return {"organism": organism, "sensitivities": (claim,)}
    return {}


def _cultures(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    out: list[Mention] = []
    specimens = [*lex.specimens, *_bare_specimens(lex)]
    for pattern, table_word in specimens:
        for m in pattern.finditer(raw):
            if overlaps(taken, m.start(), m.end()):
                continue
            clause = line_clause(raw, m.end())[:80]
            # a coordinated specimen reads the result of the last one named with it
            chain = _ANY_COORDINATED.match(clause)
            skip = chain.end() if chain else 0
            nxt_spec = min((x.start() for pat, _ in specimens for x in pat.finditer(clause) if x.start() > skip),
                           default=len(clause))
            if not skip and not clause[:nxt_spec].strip() and nxt_spec < len(clause) and (pattern, table_word) not in \
                    lex.specimens:
                continue  # "stool C. diff positive": the bare word is the named test's specimen
            clause = clause[:nxt_spec]
            attrs: dict[str, Any] = {"specimen": table_word}  # the MicrobiologyClaim's fields
            # the organism named first (ties: the lexicon's more specific pattern)
            hits = [(om.start(), i, om.group(0), oword) for i, (opat, oword) in enumerate(lex.organisms)
                    if (om := opat.search(clause))]
            if hits:
                _, _, otext, oword = min(hits)
                attrs["organism"] = oword
                attrs["organism_text"] = otext
                attrs.update(_implied(otext))
            # a test named with its result ("C. diff negative", "C. diff toxin positive")
            own = m.group(0) + " " if re.search(r"\b(?:positive|pos|negative|neg)\b|[+-]\s*$", m.group(0), re.I) else ""
            if "organism" not in attrs and lex.micro_negative.search(own + clause[:60]):
                attrs["negative"] = True
            elif "organism" not in attrs and re.search(r"\b(?:positive|pos)\b|\(\+\)|\+\s*$",
                                                       own + clause[:40], re.I):
                attrs["positive"] = True
            sens = re.search(r"\b(sensitive|susceptible|resistant|pan-?sensitive)\s+to\s+([A-Za-z/\- ,]+)", clause,
                             re.I)
            if sens:
                attrs["susceptibility"] = "R" if sens.group(1).lower().startswith("res") else "S"
                names = [a.strip().lower() for a in re.split(r",|/|\band\b", sens.group(2)) if a.strip()]
                attrs["antibiotics"] = tuple(a for a in names if len(a.split()) <= 2)[:4]
            if parse_susceptibilities(clause, lex)[1]:
                attrs["pan_sensitive"] = True  # per-antibiotic claims are their own statements (find_mentions)
            if re.search(r"\bpending\b", clause, re.I) and "organism" not in attrs:
                attrs["pending"] = True
            end = m.end()
            for key in ("organism_text",):
                if key in attrs:
                    end = m.end() + clause.find(attrs[key]) + len(attrs[key])
            out.append(Mention(line, m.start(), end, m.group(0).strip(), "microbiology", "culture",
                               clause.strip()[:80] or None, MicrobiologyClaim(**attrs)))
            taken.append((m.start(), end))
    return out


def _organism_before(raw: str, start: int, end: int, lex: Lexicon) -> tuple[str, str] | None:
    """(table words, note words) of the organism named last in ``raw[start:end]``."""
    best: tuple[int, str, str] | None = None
    for opat, oword in lex.organisms:
        for om in opat.finditer(raw, start, end):
            if best is None or om.start() > best[0]:
                best = (om.start(), oword, om.group(0))
    return (best[1], best[2]) if best else None


def culture_starts(raw: str, lex: Lexicon) -> set[int]:
    """Where a named culture ("sputum cx", "BCx") begins: the observation before it ends there."""
    return {m.start() for pattern, _ in lex.specimens for m in pattern.finditer(raw)
            if not raw[m.start() - 1:m.start()].isalnum() and not raw[m.end():m.end() + 1].isalnum()}


def microbiology_mentions(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    """The culture mentions of one line, each with its susceptibility statements."""
    out: list[Mention] = []
    micro = _cultures(raw, line, lex, taken)
    claims = susceptibility_mentions(raw, micro, lex)
    for culture in micro:
        found = culture.claim
        assert isinstance(found, MicrobiologyClaim)  # what _cultures builds
        own = [c for c in claims if next(m for m in reversed(micro) if m.start <= c[0]) is culture]
        if len(own) == 1:
            out.append(replace(culture, claim=replace(found, sensitivities=(*found.sensitivities, own[0][2:]))))
            continue
        out.append(culture)
        # each antibiotic's statement keeps the culture, not the culture's summary susceptibility
        own_claim = replace(found, antibiotics=(), susceptibility=None, pan_sensitive=False)
        for a, b, drug, level in own:
            # each antibiotic is tested on the organism named last before it ("E. coli (S to x) and
            # Klebsiella (R to y)")
            org = _organism_before(raw, culture.start, a, lex)
            claim = replace(own_claim, organism=org[0], organism_text=org[1]) if org else own_claim
            out.append(Mention(line, a, b, raw[a:b], "microbiology", "culture", level,
                               replace(claim, sensitivities=((drug, level),))))
    return out
