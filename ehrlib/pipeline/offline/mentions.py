"""Candidate mentions in one line of a clinical note, with their values parsed.

What real notes write, and which module reads it (each emits :class:`~.mention.Mention`
records whose ``claim`` carries what the statement says, typed):

* ``afebrile`` / ``febrile to 101.5`` / ``hypotensive``  :mod:`.interpretations`
* ``HR 88 (80-110)`` / ``BP 110/60(75)`` / ``Cr 1.2 <- 1.8`` / ``UOP 850 cc`` / ``ABG 7.49/58/102``
  :mod:`.measurements` (values: :mod:`.values`; trend words: :mod:`.trends`)
* ``abd soft NT ND +BS`` / ``1+ pitting edema BLE`` / ``A&Ox3``  :mod:`.exam_findings`
* ``s/p R IJ CVL placement`` / ``extubated`` / ``2u PRBC``  :mod:`.procedures`
* ``vanc/zosyn started [**10-23**]`` / ``lasix 40 mg IV x1``  :mod:`.medications`
* ``Vanco-33.9*`` / ``dilantin 6.2`` / ``vanc 1 g IV (trough 14.2)``  :mod:`.drug_levels`
* ``BCx 2/4 GPC in clusters`` / ``UCx NGTD``  :mod:`.microbiology`

Negation and other context cues come from :mod:`.context`. Only mentions a table can
check are returned: a lab name without a value, trend or interpretation ("check lactate")
is not a statement. Scanners run in a fixed order and a later one never takes a span an
earlier one took.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

from ehrlib.pipeline.claims import InterpretationClaim, NumericClaim, Reading
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.drug_levels import drug_level_mentions
from ehrlib.pipeline.offline.event_items import EventForm, event_item_mentions
from ehrlib.pipeline.offline.exam_findings import device_attribute_mention, finding_mention
from ehrlib.pipeline.offline.interpretations import criterion_concepts, interpretation_mentions
from ehrlib.pipeline.offline.later_values import later_values
from ehrlib.pipeline.offline.lexicon import Concept, Lexicon
from ehrlib.pipeline.offline.measurements import blood_gas_and_flow_mentions, measurement_mention
from ehrlib.pipeline.offline.medications import medication_mentions
from ehrlib.pipeline.offline.mention import Mention, clean_line, concept_flags, overlaps
from ehrlib.pipeline.offline.microbiology import culture_starts, listed_cultures, microbiology_mentions
from ehrlib.pipeline.offline.output_volumes import drop_site_devices, output_volume_mentions, positioned_outputs
from ehrlib.pipeline.offline.panel_mentions import panel_mentions
from ehrlib.pipeline.offline.procedures import blood_product_mention, procedure_mention
from ehrlib.pipeline.offline.product_spans import concept_hits_outside_products
from ehrlib.pipeline.offline.trends import trend_word
from ehrlib.pipeline.offline.unit_denominators import outside_unit_denominators
from ehrlib.pipeline.offline.values import parse_bp, parse_value
from ehrlib.pipeline.offline.ventilator import ventilator_mentions

#: ``find_mentions`` is the entry point; the others are re-exported from their owning modules
__all__ = ["Mention", "find_mentions", "parse_bp", "parse_value", "clean_line", "negated_before", "trend_word"]

_DAY_COUNT_FORMS = tuple(concept_flags()["day_count_forms"])
_VOLUME_UNIT_CONCEPTS = frozenset(concept_flags().get("volume_unit_concepts", ()))


#: what makes a platelet word the blood product: units, a bag or pack counted before it or after it
#: ("2 units of platelets", "plts x1", "platelets 1 pack"), or "transfused" before it
_PLATELET_BEFORE = re.compile(r"(?:\b\d{1,2}\s*(?:u|units?|bags?|packs?|doses?)\s+(?:of\s+)?|"
                              r"\b(?:transfus(?:ed|ing|e)|pheresis)\s+"
                              r"(?:\d{1,2}\s*(?:u|units?|bags?|packs?)\s+(?:of\s+)?)?)$", re.I)
_PLATELET_AFTER = re.compile(r"\s*(?:x\s?\d{1,2}\b(?!\s*(?:k|10\^?\d))|\d{1,2}\s*(?:u|units?|bags?|packs?)\b|"
                             r"(?:was\s+|were\s+)?transfused\b)", re.I)


def platelet_product(raw: str, start: int, end: int) -> bool:
    """Whether a platelet word names the transfused product rather than the platelet count."""
    return bool(_PLATELET_BEFORE.search(raw[max(0, start - 24):start]) or _PLATELET_AFTER.match(raw, end))


def find_mentions(text: str, line: int, lex: Lexicon, patient_drugs: Iterable[str] = (),
                  section: str = "other", event_forms: Sequence[EventForm] = (),
                  micro_tests: tuple[tuple[re.Pattern[str], str], ...] = ()) -> list[Mention]:
    """All checkable mentions of one line, left to right, without overlaps; ``event_forms``
    and ``micro_tests`` name the patient's own procedure items and microbiology tests.
    """
    raw = clean_line(text)
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []
    interpretation_mentions(raw, line, lex, out, taken)
    blood_gas_and_flow_mentions(raw, line, out, taken)
    panel_mentions(raw, line, lex, out, taken)
    ventilator_mentions(raw, line, out, taken)  # "AC 500 x 12", "Vt 550 x 20", "-> rate 10"
    out.extend(positioned_outputs(raw, line, taken))  # "JP medial 190": which drain, and its volume
    out.extend(listed_cultures(raw, line, lex, taken))  # "pan-cultured: blood, sputum, stool"

    # concept mentions: measurements, outputs, findings, procedures; a concept's name ends
    # the previous concept's observation, unless it is a day count ("HD 3", "POD 2")
    hits = [m for m in lex.concept_re.finditer(raw)] + [m for m in lex.cased_re.finditer(raw)]
    hits = outside_unit_denominators(raw, concept_hits_outside_products(raw, hits, lex, patient_drugs))  # "u/hr"
    hits.sort(key=lambda h: (h.start(), -(h.end() - h.start())))
    starts = sorted({h.start() for h in hits if not re.match(r"\s*#?\s*\d", raw[h.end():])
                     or h.group(0).lower() not in _DAY_COUNT_FORMS} | {d.start() for d in lex.drug_re.finditer(raw)}
                    | culture_starts(raw, lex))
    for m in hits:
        if overlaps(taken, m.start(), m.end()):
            continue
        for concept in lex.concepts_for(m.group(0)):
            if (concept.cid == "platelets" and "transfusion" in lex.concepts
                    and platelet_product(raw, m.start(), m.end())):
                concept = lex.concepts["transfusion"]  # "2 units of platelets", "plts x1": the product, not the count
            if _concept_mention(raw, line, m, concept, lex, starts, out, taken):
                break

    out.extend(drug_level_mentions(raw, line, lex, taken))  # "Vanco-33.9*", "dilantin 6.2": levels, not doses
    out.extend(medication_mentions(raw, line, lex, patient_drugs, taken))
    cultures = microbiology_mentions(raw, line, lex, taken, micro_tests)
    # a drug word inside a culture's test name ("influenza DFA negative") names the test
    out = [m for m in out if m.kind != "medication" or not any(
        c.start <= m.start and m.end <= c.end and c.end - c.start > m.end - m.start for c in cultures)]
    out.extend(cultures)
    out.extend(event_item_mentions(raw, line, event_forms, taken))  # the patient's own procedure items
    out.extend(output_volume_mentions(raw, line, taken, out))  # "chest tubes put out 430 cc"
    # further values of an analyte, once every other scanner has taken its doses and counts
    analytes = {c.cid: c for h in hits for c in lex.concepts_for(h.group(0)) if c.kind == "measurement"}
    # a route word that stated no volume ("15 gm PO, 3.6") ends no analyte's values
    stated = {o.start for o in out}
    stops = sorted({h.start() for h in hits if any(c.kind in ("measurement", "output") and (
        c.cid not in _VOLUME_UNIT_CONCEPTS or h.start() in stated) for c in lex.concepts_for(h.group(0)))})
    # a state told with its value carries its item's later values ("febrile to 104.3 this AM, 98.2 at 2300")
    states = _state_values(out, lex)
    analytes.update({a.concept: lex.concepts[a.concept] for a in states})
    out.extend(later_values(raw, line, [*out, *states], taken, stops, analytes))
    return sorted(drop_site_devices(raw, out), key=lambda x: x.start)


def _concept_mention(raw: str, line: int, m: re.Match[str], concept: Concept, lex: Lexicon, starts: list[int],
                     out: list[Mention], taken: list[tuple[int, int]]) -> bool:
    """Emit the mention(s) of one concept occurrence; False when this concept does not fit."""
    k = bisect.bisect_right(starts, m.start())   # starts are sorted: the next analyte name after this one
    nxt = starts[k] if k < len(starts) else None
    if concept.kind in ("measurement", "output"):
        return measurement_mention(raw, line, m, concept, raw[:m.start()].rstrip(), nxt, out, taken)
    if concept.kind == "finding":
        return finding_mention(raw, line, m, concept, lex, nxt, out, taken)
    if concept.kind == "procedure":
        return (device_attribute_mention(raw, line, m, concept, nxt, out, taken)
                or procedure_mention(raw, line, m, concept, out, taken))
    if concept.kind == "medication":  # blood products
        return blood_product_mention(raw, line, m, concept, out, taken)
    return False


def _state_values(out: Sequence[Mention], lex: Lexicon) -> list[Mention]:
    """The value of each valued state ("febrile to 104.3") read as a value of the one item its
    criterion reads (temperature), as an anchor for that item's later values; not emitted.
    """
    anchors: list[Mention] = []
    for m in out:
        claim = m.claim
        if m.kind != "interpretation" or not isinstance(claim, InterpretationClaim) or claim.negated \
                or claim.reading.value is None:
            continue
        read = criterion_concepts(lex, claim.criterion)
        if len(read) == 1:
            cid = next(iter(read))
            anchors.append(Mention(m.line, m.start, m.end, m.text, "measurement", cid, m.value,
                                   NumericClaim(reading=Reading(value=claim.reading.value))))
    return anchors
