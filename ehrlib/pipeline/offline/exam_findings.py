"""Exam and nursing findings: a finding's name with the words that describe it.

``abd soft NT ND +BS``, ``1+ pitting edema BLE``, ``A&Ox3``, ``Code status: Full code``.
A finding runs to the next section label, sentence end or concept; a header ("Heart
rhythm: SR") makes one statement of its content; a self-describing finding (its name is
the observation: orientation, lung sounds, code status...) takes the adjective before it
and stops at a comma. Which findings describe themselves, and which rhythm carries a rate
("ST 90s-120s"), is data (``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import re
from dataclasses import replace

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import FindingClaim
from ehrlib.pipeline.offline.context import negated_before
from ehrlib.pipeline.offline.finding_attributes import attribute_values
from ehrlib.pipeline.offline.finding_sites import STATE_CHANGE
from ehrlib.pipeline.offline.lexicon import Concept, Lexicon
from ehrlib.pipeline.offline.measurements import plausible
from ehrlib.pipeline.offline.mention import Mention, concept_flags, emit, overlaps
from ehrlib.pipeline.offline.values import numeric_claim, parse_value

__all__ = ["finding_mention", "device_attribute_mention"]

_FLAGS = concept_flags()
#: a change between two states of one finding ("oriented x2 -> oriented x3 by noon"): two statements
_CHANGE = STATE_CHANGE
# a sentence end (not a decimal point: "ETT 7.5mm"), a semicolon or the next system label
_FINDING_STOP = re.compile(r"(?<!\d)\.(?!\d)|;|\b(?:HR|BP|RR|T|SpO2|Neuro|CV|Resp|GI|GU|Abd|Ext|Skin|Lungs?|Heart)\b"
                           r"\s*:", re.I)


def finding_mention(raw: str, line: int, m: re.Match[str], concept: Concept, lex: Lexicon, nxt: int | None,
                    out: list[Mention], taken: list[tuple[int, int]]) -> bool:
    """Emit the mention of a finding occurrence; False when it describes nothing."""
    stop = _FINDING_STOP.search(raw, m.end())
    end = stop.start() if stop else len(raw)
    if nxt is not None and nxt < end and nxt >= m.end():
        end = nxt  # the next concept starts its own observation
    if _attribute_mentions(raw, line, m, concept, end, out, taken):
        return True  # "R pupil 4mm and non-reactive": a size and a response, each its own claim
    header = bool(re.match(r"\s*:", raw[m.end():]))  # "Code status: Full code", "Orientation: x3"
    self_describing = concept.cid in _FLAGS["self_describing_findings"] and not header
    if self_describing and concept.cid not in _FLAGS["comma_spanning_findings"]:
        comma = re.search(r"[,.;]", raw[m.end():end])
        if comma:
            end = m.end() + comma.start()  # "arouses to voice, not following commands": two observations
    if header:
        colon_end = m.end() + raw[m.end():].index(":") + 1
        stop2 = re.search(r"[,.;]", raw[colon_end:])
        end = max(end, colon_end + (stop2.start() if stop2 else len(raw) - colon_end))
        if nxt is not None and m.end() < nxt < end:
            inner = lex.concept_re.match(raw[nxt:]) or lex.cased_re.match(raw[nxt:])   # the families' own flags
            inner_ids = {c.cid for c in lex.concepts_for(inner.group(0))} if inner else set()
            if concept.cid not in inner_ids:
                return False  # the content is a concept of its own
            # "Heart rhythm: SR", "Code status: Full code": one statement, named by its header
    later = None if header else _later_state(raw, m.end(), end, concept.cid)
    if later is not None:
        end = later[0]  # "BS absent -> present tonight": the first state, then the later one
    words = raw[m.end():end].strip(" :,-")
    negated = negated_before(raw[:m.start()])
    if self_describing:
        lead = raw[max(0, m.start() - 24):m.start()]
        adj = re.search(r"(?:\b(?:hypo|hyper)?active|\babsent|\bdiminished|\bclear|\bopen|\bsoft|\bfirm|\bnormal|"
                        r"\bpositive|\+)\s*$", lead, re.I)
        start = m.start() - (len(lead) - adj.start()) if adj else m.start()
        words = (raw[start:m.end()].strip() + ((" " + words) if words else "")).strip()
    else:
        start = m.start()
        grade = re.search(r"(?:\b(?:trace|[1-4]\s*\+|\+\s*[1-4]|open|pitting|non-?pitting|bilat(?:eral)?)\s*)+$",
                          raw[max(0, m.start() - 24):m.start()], re.I)
        if grade:
            words = (grade.group(0).strip() + " " + words).strip()
    prev = out[-1] if out else None
    if (prev is not None and prev.kind == "finding" and prev.concept == concept.cid and prev.line == line
            and start - prev.end <= 15 and not re.search(r"[,;.]", raw[prev.end:max(start, prev.end)])
            and not _CHANGE.search(raw[prev.start:start])):
        assert isinstance(prev.claim, FindingClaim)
        merged = (prev.claim.words + " " + words).strip()[:80]
        out[-1] = Mention(line, prev.start, max(prev.end, end), prev.text, "finding", concept.cid, merged,
                          replace(prev.claim, words=merged), prev.group)  # "Abdominal: open abdomen"
        taken.append((m.start(), end))
        return True
    if not words and not negated:
        return False
    grade = re.search(r"\b(trace|[1-4]\s*\+|\+\s*[1-4])", raw[max(0, m.start() - 12):end])
    claim = FindingClaim(words=words[:80], negated=bool(negated), grade=grade.group(1).replace(" ", "") if grade
                         else None)
    emit(out, taken, Mention(line, start, max(m.end(), min(end, m.end() + 80)), m.group(0).strip(), "finding",
                             concept.cid, words[:80] or ("no" if negated else None), claim, f"L{line}F{m.start()}"))
    if later is not None:
        _, s2, e2 = later
        w2 = raw[s2:e2].strip(" :,-")[:80]
        emit(out, taken, Mention(line, s2, e2, w2, "finding", concept.cid, w2, FindingClaim(words=w2),
                                 f"L{line}F{s2}"))
    if concept.cid in _FLAGS["rhythm_rates"] and not header:
        # "ST 90s-120s", "AF 110s": the rhythm carries its rate
        # "AF/flutter 77-112": a second rhythm joined by a slash shares the rate
        rate = re.match(r"(?:\s*/\s*[A-Za-z]+)?\s*(?:w/\s*|with\s+|at\s+|in\s+the\s+|,\s*)?(?=\d{2,3}s?\b)",
                        raw[m.end():])
        hr = lex.concepts.get(_FLAGS["rhythm_rates"][concept.cid])
        if rate is not None and hr is not None:
            val = parse_value(raw[m.end() + rate.end():], hr)
            if val is not None and plausible(val, hr):
                e2 = m.end() + rate.end() + int(val.pop("_end"))
                e2 = m.end() + rate.end() + len(raw[m.end() + rate.end():e2].rstrip())  # the value, not the gap after
                kind = "range" if any(k in val for k in ("min", "max")) else "measurement"
                out.append(Mention(line, m.start(), e2, f"{m.group(0).strip()} rate", kind, "heart_rate",
                                   raw[m.end() + rate.end():e2].strip(), numeric_claim(val)))
                taken.append((m.end(), e2))
    return True


def _later_state(raw: str, a: int, b: int, concept: str) -> tuple[int, int, int] | None:
    """(change start, later start, later end) when a change of state in ``raw[a:b]`` leads to
    a state of the concept's vocabulary ("LS rhonchi -> clear at bases by 1900"): the later
    state is a statement of its own, about its own time; else None.
    """
    change = _CHANGE.search(raw, a, b)
    if change is None:
        return None
    rest = raw[change.end():b]
    s2 = change.end() + len(rest) - len(rest.lstrip())
    e2 = s2 + len(rest.strip().rstrip(" :,-"))
    states = load_data("finding_states.yaml")["states"].get(concept) or ()
    if e2 <= s2 or not any(re.search(x["note"], raw[s2:e2], re.I) for x in states):
        return None
    return change.start(), s2, e2


#: a tube's size written right before its name ("8.0 ETT", "7.5mm ETT")
_LEAD_SIZE = re.compile(r"(?<![\d.,/])\d(?:\.\d)?\s*(?:mm)?\s*$")


def device_attribute_mention(raw: str, line: int, m: re.Match[str], concept: Concept, nxt: int | None,
                             out: list[Mention], taken: list[tuple[int, int]]) -> bool:
    """"ETT 7.5mm, 22 cm at the lip": a device named with its charted attributes right after
    it states those attributes (each its own claim); False when no value follows the name.
    """
    stop = _FINDING_STOP.search(raw, m.end())
    end = stop.start() if stop else len(raw)
    if nxt is not None and m.end() <= nxt < end:
        end = nxt
    # a size written right before the device ("8.0 ETT", "7.5 mm ETT") is its size attribute
    lead = _LEAD_SIZE.search(raw, 0, m.start())
    return _attribute_mentions(raw, line, m, concept, end, out, taken, adjacent=True,
                               lead=lead.start() if lead and not overlaps(taken, lead.start(), lead.end()) else None)


def _attribute_mentions(raw: str, line: int, m: re.Match[str], concept: Concept, end: int, out: list[Mention],
                        taken: list[tuple[int, int]], adjacent: bool = False, lead: int | None = None) -> bool:
    """One mention per attribute value of a finding that states several (``finding_attributes``);
    False when its words state none, so the finding is read as a whole (``adjacent``: only
    when the first value follows the name directly).
    """
    found = attribute_values(concept.cid, raw, m.start(), m.end(), end, lead)
    if not found or (adjacent and found[0].start > m.end()
                     and not re.fullmatch(r"[\s:,-]{0,3}", raw[m.end():found[0].start])):
        return False
    group = f"L{line}F{m.start()}"
    for i, v in enumerate(found):
        if v.side_start is not None:
            start = v.side_start  # "L sluggish"
        elif i == 0 and v.attribute.number:
            start = min(m.start(), v.start)  # "pupils 3mm": the name with its first size; "8.0 ETT"
        else:
            start = v.start  # "... and brisk"
        value = raw[v.start:v.end].strip()
        words = f"{v.side} {value}" if v.side else value
        stop = m.end() if v.start < m.start() else v.end  # a size before the name: "8.0 ETT"
        emit(out, taken, Mention(line, start, stop, raw[start:stop].strip(), "finding", v.attribute.concept, value,
                                 FindingClaim(words=words), group))
    taken.append((m.start(), m.end()))
    return True
