"""Lab names inside drug and product names: the longer name wins.

"potassium phosphate 15 mmol" is a dose of a drug, not a phosphate of 15; "Albumin 5% 250
mL" is a colloid, not a serum albumin of 5. Concept names (labs, vitals, findings) and
drug/product names (the lexicon's drug forms and the patient's own order labels) are
arbitrated together with the one longest-match policy of :mod:`.spans`: a concept hit
that overlaps a longer product name is dropped before any value is read after it. On a
tie (a bare "potassium") the concept keeps the span, as it did before products were
considered; overlaps between concepts are left to the scanners' own order.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Sequence

from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.spans import Span, VocabularyMatcher, arbitrate

__all__ = ["product_terms", "concept_hits_outside_products", "RULE"]

#: an order label's name: its leading words, with a concentration ("Albumin 5%") but not
#: the dose, package or parenthesised brand that follow
_LABEL_NAME = re.compile(r"^\s*(?P<name>[A-Za-z][A-Za-z\-]*(?:\s+[A-Za-z][A-Za-z\-]*)*(?:\s+\d+(?:\.\d+)?\s*%)?)")


def product_terms(labels: Iterable[str]) -> tuple[str, ...]:
    """The multi-word product names of order labels (``"Albumin 5% (12.5g / 250mL)"`` ->
    ``"Albumin 5%"``); one-word names never outrank a concept name, so they are left out.
    """
    out: dict[str, None] = {}
    for label in labels:
        m = _LABEL_NAME.match(label or "")
        if m and len(re.findall(r"[A-Za-z]+|\d+(?:\.\d+)?%?", m.group("name"))) >= 2:
            out.setdefault(re.sub(r"\s+", " ", m.group("name").strip()), None)
    return tuple(out)


@functools.lru_cache(maxsize=64)
def _matcher(terms: tuple[str, ...]) -> VocabularyMatcher:
    return VocabularyMatcher({"product": {t.lower(): [t] for t in terms}})


def concept_hits_outside_products(raw: str, hits: Sequence[re.Match[str]], lex: Lexicon,
                                  patient_drugs: Iterable[str] = ()) -> list[re.Match[str]]:
    """``hits`` (concept-name matches in ``raw``) without those a longer product name covers."""
    products = [Span(m.start(), m.end(), "product", m.group(0).lower(), m.group(0), m.group(0))
                for m in lex.drug_re.finditer(raw)]
    products += _matcher(product_terms(patient_drugs)).candidates(raw)
    if not products:
        return list(hits)
    concepts = [Span(h.start(), h.end(), "concept", h.group(0), h.group(0), h.group(0)) for h in hits]
    kept = arbitrate(concepts + products, rank=("concept", "product"))
    winners = [k for k in kept if k.vocabulary == "product"]
    ends = [w.end for w in winners]   # kept spans do not overlap: ordered by start and by end at once

    def covered(h: re.Match[str]) -> bool:
        i = bisect.bisect_right(ends, h.start())   # the first winner ending after the hit starts
        while i < len(winners) and winners[i].start < h.end():
            if winners[i].end - winners[i].start > h.end() - h.start():
                return True
            i += 1
        return False

    return [h for h in hits if not covered(h)]


RULE = Rule("extract.product_name_span", "A concept name inside a longer drug or product name is part of that name "
            "(longest match over all vocabularies); the value after it is the product's dose.",
            concept_hits_outside_products)
