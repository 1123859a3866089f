"""Candidate mentions in one line of a clinical note, with their values parsed.

What real notes write, and what each becomes (``Mention.attributes``):

* ``HR 88 (80-110)``                     value 88, min 80, max 110
* ``BP 110/60(75) {95/50(62) - 130/80(90)}``  systolic/diastolic/mean + their min-max
* ``Tm 101.2 Tc 99.1`` / ``T 38.5C``     value + unit (°F/°C by unit or magnitude); Tm is a max
* ``Cr 1.2 <- 1.8 <- 2.3`` / ``WBC 14.2 -> 11.0`` / ``from 2.3 to 1.8``  a trend series
* ``peaked at 2.3`` / ``nadir 7.1`` / ``up to 120s``   a max/min statement; ``110s`` a decade
* ``lactate downtrending`` / ``Cr stable``             a trend direction
* ``afebrile`` / ``febrile to 101.5`` / ``hypotensive`` an interpretation (negation is a value)
* ``abd soft NT ND +BS`` / ``1+ pitting edema BLE`` / ``A&Ox3``  a finding with its words
* ``vanc/zosyn started [**10-23**]`` / ``lasix 40 mg IV x1`` / ``levophed gtt``  medications
* ``s/p R IJ CVL placement`` / ``extubated``  procedures with side and action
* ``BCx 2/4 GPC in clusters`` / ``UCx NGTD``  microbiology specimen + organism/negative

Only mentions a table can check are returned: a lab name without a value, trend or
interpretation ("check lactate") is not a statement.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

from ehrlib.pipeline.offline.clauses import clause_after, clause_before
from ehrlib.pipeline.offline.context import cue, negated_before
from ehrlib.pipeline.offline.lexicon import Concept, Lexicon
from ehrlib.pipeline.offline.mention import Mention, clean_line
from ehrlib.pipeline.offline.microsens import is_susceptibility_name, parse_susceptibilities, susceptibility_mentions
from ehrlib.pipeline.offline.timex import parse_duration_days

__all__ = ["Mention", "find_mentions", "parse_bp", "parse_value", "clean_line", "negated_before"]

_NUM = r"-?\d+(?:\.\d+)?"


# --- values ---------------------------------------------------------------------------------

_BP_ONE = r"(?P<{p}s>\d{{2,3}})\s*/\s*(?P<{p}d>\d{{2,3}})(?:\s*\(\s*(?P<{p}m>\d{{2,3}})\s*\))?"
_BP = re.compile(
    _BP_ONE.format(p="v")
    + r"(?:\s*[\{\[(]\s*" + _BP_ONE.format(p="lo") + r"\s*(?:-|–|to)\s*" + _BP_ONE.format(p="hi") + r"\s*[\}\])])?")
_BP_DECADES = re.compile(r"(?P<s1>\d{2,3})s(?:\s*-\s*(?P<s2>\d{2,3})s)?(?:\s*/\s*(?P<d1>\d{2,3})s?(?:\s*-\s*(?P<d2>\d{2,3})s)?)?")


def parse_bp(text: str) -> dict[str, float] | None:
    """``110/60(75) {95/50(62) - 130/80(90)}`` -> systolic/diastolic/mean and their min/max.

    Appendix B.6: the parenthesised number is the mean; the braces give the period's
    minimum and maximum; the mean is compared with the mean-BP item and the min/max with
    the measurement range.
    """
    m = _BP.match(text)
    if m:
        out: dict[str, float] = {"systolic": float(m.group("vs")), "diastolic": float(m.group("vd"))}
        if m.group("vm"):
            out["mean"] = float(m.group("vm"))
        if m.group("los"):
            out.update({"systolic_min": float(m.group("los")), "diastolic_min": float(m.group("lod")),
                        "systolic_max": float(m.group("his")), "diastolic_max": float(m.group("hid"))})
            if m.group("lom") and m.group("him"):
                out.update({"mean_min": float(m.group("lom")), "mean_max": float(m.group("him"))})
        out["_end"] = float(m.end())
        return out
    m = _BP_DECADES.match(text)
    if m:
        # "SBP 80s-140s" / "BP 90s/50s": decades; min in [80, 89], max in [140, 149]
        s1 = float(m.group("s1"))
        s2 = float(m.group("s2")) if m.group("s2") else s1
        out = {"systolic_min": s1, "systolic_min_hi": s1 + 9, "systolic_max_lo": s2, "systolic_max": s2 + 9}
        if m.group("d1"):
            d1 = float(m.group("d1"))
            d2 = float(m.group("d2")) if m.group("d2") else d1
            out.update({"diastolic_min": d1, "diastolic_min_hi": d1 + 9, "diastolic_max_lo": d2,
                        "diastolic_max": d2 + 9})
        out["_end"] = float(m.end())
        return out
    return None


_UNIT = (r"(?:°\s*[FC]|deg(?:rees)?\s*[FC]?|[FC](?![A-Za-z])|%|mg/dl|mmol/l|meq/l|k/ul|g/dl|bpm|mmhg|cc/hr|ml/hr|cc/h|ml/h|"
         r"cc|ml|l(?![A-Za-z])|kg|lbs?|ng/ml|iu/l|u/l|pg/ml|/min|insp/min|breaths/min|sec|s(?![A-Za-z]))")
_TREND_VERB = (r"(?:(?:briefly\s+|then\s+|subsequently\s+|again\s+)?(?:climbed|rose|risen|increased|bumped|went\s+up|trended\s+up|"
               r"up-?trended|decreased|fell|dropped|declined|improved|worsened|came\s+down|trended\s+down|down-?trended|"
               r"normalized|peaked|nadired|was\s+up|was\s+down|(?:came\s+|went\s+)?back(?:\s+down|\s+up)?)(?:\s+again)?\s+)")
_SEP = r"(?:-(?=\d))?[\s:=,~]*(?:(?:is|was|were|are|has\s+been|had\s+been|of|at|now|remains|remained|currently|with|on|initially|stable|about|approx\.?|approximately)\s+)*~?\s*" + _TREND_VERB + r"?(?:(?:at|to)\s+)?"
_SERIES = re.compile(r"(?P<a>" + _NUM + r")\s*(?P<arrow>->|-->|→|=>|<-|<--|←|\bto\b)\s*(?P<b>" + _NUM + r")"
                     r"(?:\s*(?:->|-->|→|=>|<-|<--|←|\bto\b)\s*(?P<c>" + _NUM + r"))?(?:\s*(?:->|→|<-|←)\s*(?P<d>" + _NUM + r"))?")
_FROM_TO = re.compile(r"(?:(?:weaned|titrated|changed|went|increased|decreased|improved|reduced|dropped|rose|fell|"
                      r"down|up|climbed)\s+)?from\s+(?P<a>" + _NUM + r")\s*"
                      r"(?:" + _UNIT + r")?\s*(?:to|->)\s*(?:a\s+)?(?:(?:peak|high|max(?:imum)?|nadir|low)\s+(?:of\s+)?)?"
                      r"(?P<b>" + _NUM + r")", re.I)
_VALUE_FROM = re.compile(r"(?P<b>" + _NUM + r")\**\s*(?:" + _UNIT + r")?\s*(?:\(\s*|,\s*|\s+)(?:from|down\s+from|up\s+from|"
                         r"increased\s+from|decreased\s+from|prev(?:ious(?:ly)?)?|was)\s*(?P<a>" + _NUM + r")\s*\)?", re.I)
_MAXMIN = re.compile(r"(?P<w>peaked\s+at|peak(?:ing)?\s+(?:of|at)?|max(?:imum)?\s+(?:of)?|as\s+high\s+as|up\s+to|to\s+as\s+high\s+as|"
                     r"nadir(?:ed)?\s+(?:of|at)?|as\s+low\s+as|down\s+to|min(?:imum)?\s+(?:of)?|high(?:est)?\s+(?:of)?|"
                     r"low(?:est)?\s+(?:of)?|to\s+the|to|in\s+the|into\s+the|in\s+the\s+(?:low|mid|high|upper)|>|<|≥|≤)\s*"
                     r"(?P<v>" + _NUM + r")(?P<dec>s)?", re.I)
_SINGLE = re.compile(r"(?P<v>" + _NUM + r")\**(?P<dec>s)?(?:\s*-\s*(?P<v2>" + _NUM + r")(?P<dec2>s)?)?\s*(?P<u>" + _UNIT + r")?"
                     r"(?:\s*\(\s*(?P<lo>" + _NUM + r")\s*-\s*(?P<hi>" + _NUM + r")\s*\))?", re.I)
_TREND_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.I), d) for p, d in (
    (r"\b(?:down-?trending|trending\s+down|trended\s+down|decreas(?:ing|ed)|declin(?:ing|ed)|falling|fell|dropp(?:ing|ed)|"
     r"drop|down|downward|down-?trended|came\s+down|coming\s+down|lower(?:ing)?|cleared|normalized|normali[sz]ing|"
     r"resolv(?:ed|ing))\b", "down"),
    (r"\b(?:up-?trending|trending\s+up|trended\s+up|increas(?:ing|ed)|ris(?:ing|en)|rose|elevat(?:ing)|climb(?:ing|ed)|"
     r"up|upward|bump(?:ed)?|went\s+up|uptrended|peaked)\b", "up"),
    (r"\b(?:stable|unchanged|flat|steady|stabilized|at\s+baseline|plateau(?:ed)?)\b", "stable"),
    (r"\b(?:improv(?:ing|ed|ement)|better)\b", "improving"),
    (r"\b(?:worsen(?:ing|ed)|wors(?:e|t))\b", "worsening"),
))


def _f(x: str) -> float:
    return float(x)


def _unit_norm(u: str | None) -> str | None:
    if not u:
        return None
    low = u.lower().replace(" ", "").replace("°", "").replace("deg", "").replace("rees", "")
    if low in ("f", "c"):
        return low.upper()
    return u.strip()


_DOWN_VERB = re.compile(r"decreas|fell|drop|declin|improv|came\s+down|trended\s+down|down-?trend|normaliz|nadir|was\s+down", re.I)


def _verb_direction(verb: str, concept: Concept | None) -> str | None:
    if not verb:
        return None
    if re.search(r"improv|worsen", verb, re.I):
        return "improving" if re.search(r"improv", verb, re.I) else "worsening"
    if re.search(r"normaliz|\bback\b", verb, re.I):
        return None
    return "down" if _DOWN_VERB.search(verb) else "up"


def parse_value(text: str, concept: Concept | None = None) -> dict[str, Any] | None:
    """Parse the value that follows a mention (``text`` starts right after the mention).

    Returns attributes: ``value``/``unit``, ``min``/``max``, ``series`` (oldest first) and
    ``direction``, or ``None`` when no value follows.
    """
    m = re.match(_SEP, text, re.I)
    pos = m.end() if m else 0
    rest = text[pos:]
    verb = re.search(_TREND_VERB + r"(?:(?:at|to)\s+)?$", text[:pos], re.I)
    direction = _verb_direction(verb.group(0), concept) if verb else None
    out = _parse_value_at(rest, concept, pos)
    if out is not None and not direction and re.search(r"\bstable\b", text[:pos], re.I):
        out["direction"] = "stable"
        out["trend_word"] = "stable"
    if out is not None and direction and "direction" not in out:
        out["direction"] = direction
        out["trend_word"] = verb.group(0).strip()
        if "max" in out and direction in ("down", "improving") and "min" not in out:
            out.pop("max", None)  # "dropped to 8.9": the value reached, not a maximum
            out.pop("max_lo", None)
        if re.search(r"peak", verb.group(0), re.I) and "value" in out:
            out.setdefault("max", out["value"])
            out.setdefault("max_lo", out["value"])
            out.pop("direction", None)  # a peak is a maximum statement, not a direction
        elif re.search(r"nadir", verb.group(0), re.I) and "value" in out:
            out.setdefault("min", out["value"])
            out.pop("direction", None)
    return out


def _parse_value_at(rest: str, concept: Concept | None, pos: int) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if concept is not None and concept.cid == "blood_pressure":
        bp = parse_bp(rest)
        if bp is not None:
            end = int(bp.pop("_end"))
            bp["_end"] = pos + end
            return bp
    s = _SERIES.match(rest)
    if s:
        nums = [_f(x) for x in (s.group("a"), s.group("b"), s.group("c"), s.group("d")) if x is not None]
        if s.group("arrow") in ("<-", "<--", "←"):
            nums = nums[::-1]  # "Cr 1.2 <- 1.8 <- 2.3": newest first
        out.update({"series": nums, "value": nums[-1], "direction": _direction(nums), "_end": pos + s.end()})
        return out
    f = _FROM_TO.match(rest)
    if f:
        nums = [_f(f.group("a")), _f(f.group("b"))]
        return {"series": nums, "value": nums[-1], "direction": _direction(nums), "_end": pos + f.end()}
    vf = _VALUE_FROM.match(rest)
    if vf:
        nums = [_f(vf.group("a")), _f(vf.group("b"))]
        return {"series": nums, "value": nums[-1], "direction": _direction(nums), "_end": pos + vf.end()}
    mm = _MAXMIN.match(rest)
    if mm:
        word = mm.group("w").lower()
        v = _f(mm.group("v"))
        hi = v + 9 if mm.group("dec") else v
        if re.match(r"(nadir|as low|down to|min|low|<|≤)", word):
            out.update({"min": v, "min_hi": hi, "value": v})
        elif re.match(r"(in the|into the|to the)", word) and mm.group("dec"):
            out.update({"min": v, "max": hi, "value": v})
        else:
            out.update({"max": hi, "max_lo": v, "value": v})
        out["_end"] = pos + mm.end()
        return out
    sm = _SINGLE.match(rest)
    if sm:
        v = _f(sm.group("v"))
        if sm.group("dec"):
            if sm.group("v2"):  # "60s-90s": lowest in the 60s, highest in the 90s
                v2 = _f(sm.group("v2"))
                out.update({"min": v, "min_hi": v + 9, "max_lo": v2, "max": v2 + 9, "value": v})
            else:
                out.update({"min": v, "max": v + 9, "value": v})
        elif sm.group("v2") and not sm.group("lo"):
            # "HR 80-110": a range over the period
            v2 = _f(sm.group("v2"))
            out.update({"min": min(v, v2), "max": max(v, v2), "value": v})
        else:
            out["value"] = v
        if sm.group("u"):
            out["unit"] = _unit_norm(sm.group("u"))
        if sm.group("lo"):
            out.update({"min": _f(sm.group("lo")), "max": _f(sm.group("hi"))})
        out["_end"] = pos + sm.end()
        return out
    return None


def _direction(nums: list[float]) -> str:
    if len(nums) < 2 or nums[-1] == nums[0]:
        return "stable"
    return "up" if nums[-1] > nums[0] else "down"


def trend_word(text: str) -> tuple[str, str] | None:
    """(direction, word) of the first trend word in ``text``."""
    best: tuple[int, str, str] | None = None
    for pattern, direction in _TREND_WORDS:
        m = pattern.search(text)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), direction, m.group(0))
    return (best[1], best[2]) if best else None


_PROBLEM_HEADING = re.compile(r"^\s*(?:#+\s*|\d{1,2}[.)]\s*|[-*•]\s*)?(?:[A-Za-z/]+\s*){0,3}$")

#: "Hypotension: none", "Fever - resolved": a problem heading negated by what follows it
_NEG_AFTER = cue("negation_after_title")


# --- line scanning ---------------------------------------------------------------------------------

_DOSE = re.compile(r"(?P<dose>\d+(?:\.\d+)?)\s*(?P<unit>mg|mcg|g|gm|grams?|units?|u|meq|ml|cc|mg/kg|mcg/kg/min|mcg/min|mg/hr|units/hr|u/hr|l)\b", re.I)
_ROUTE = re.compile(r"\b(IV|IVP|PO|SC|SQ|SubQ|IM|PR|SL|NG|inh|neb|topical|gtt|drip|infusion)\b", re.I)
_FREQ = re.compile(r"\b(q\s?\d{1,2}h?|q\s?\d{1,2}\s?hrs?|qd|daily|bid|tid|qid|qhs|qod|prn|once|x\s?1|stat|weekly)\b", re.I)
_MED_ACTION = re.compile(r"\b(?P<a>start(?:ed)?|added|initiat(?:ed|e)|begun|began|given|gave|received|bolus(?:ed)?|load(?:ed)?|"
                         r"continued|continue|on|restart(?:ed)?|resumed|stopp?(?:ed)?|discontinued|d/c'?d|dc'?d|d/c|held|hold|"
                         r"weaned(?:\s+off)?|titrated\s+(?:up|down|off)|off|increased|decreased|switched|changed|completed|"
                         r"repleted|transfused|diuresed)\b", re.I)
_PROC_ACTION = re.compile(r"\b(?P<a>plac(?:ed|ement)|inserted|insertion|s/p|status\s+post|pulled|removed|d/c'?d|dc'?d|"
                          r"discontinued|exchanged|changed|re-?sited|intubated|extubated|started|initiated|underwent|"
                          r"obtained|performed|done)\b", re.I)
_SIDE = re.compile(r"\b(?P<s>R|L|right|left|rt|lt|bilat(?:eral)?)\b\.?\s*(?P<site>IJ|subclavian|SC|femoral|fem|radial|brachial|arm|"
                   r"antecubital|AC|chest|forearm)?", re.I)
_FINDING_STOP = re.compile(r"[.;]|\b(?:HR|BP|RR|T|SpO2|Neuro|CV|Resp|GI|GU|Abd|Ext|Skin|Lungs?|Heart)\b\s*:", re.I)


def _clause(text: str, start: int) -> str:
    return clause_after(text, start, "line_item")


def _overlaps(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    return any(a < e and s < b for a, b in spans)


def find_mentions(text: str, line: int, lex: Lexicon, patient_drugs: Iterable[str] = (),
                  section: str = "other") -> list[Mention]:
    """All checkable mentions of one line, left to right, without overlaps."""
    raw = clean_line(text)
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []
    group_n = 0

    def emit(m: Mention) -> None:
        out.append(m)
        taken.append((m.start, m.end))

    # 1. interpretation terms ("afebrile", "hypotensive to 80s")
    for m in lex.term_re.finditer(raw):
        term = lex.term_index.get(re.sub(r"\s+", " ", m.group(0).lower()))
        if term is None:
            continue
        if (_PROBLEM_HEADING.match(raw[:m.start()]) and not _NEG_AFTER.match(raw[m.end():])
                and re.match(r"\s*(?:[:/]|-\s|$|,\s*(?:s/p|resolved|improved))", raw[m.end():])):
            continue  # "# Hypokalemia:", "3. Anemia -": a problem list heading names a diagnosis
        negated = term.negated or negated_before(raw[:m.start()]) or bool(_NEG_AFTER.match(raw[m.end():]))
        attrs: dict[str, Any] = {"criterion": term.criterion, "negated": negated, "state": term.text}
        tail = raw[m.end():m.end() + 40]
        val = parse_value(tail) if re.match(r"\s*(?:to|at|with|in|x|\()", tail, re.I) or term.text.endswith(" to") else None
        if val and not re.match(r"\s*x\s*\d", tail):
            end = m.end() + int(val.pop("_end"))
            attrs.update({k: v for k, v in val.items() if k in ("value", "min", "max", "max_lo", "unit")})
        else:
            end = m.end()
        dur = parse_duration_days(raw[m.end():m.end() + 20]) if re.match(r"\s*(?:x|for)\s*\d", raw[m.end():m.end() + 8], re.I) else None
        if dur:
            attrs["duration_days"] = dur
        emit(Mention(line, m.start(), end, raw[m.start():end].strip(), "interpretation", term.criterion,
                     raw[m.start():end].strip(), attrs))

    # 2a. blood gases written as a triple: "ABG 7.49/58/102" = pH / pCO2 / pO2 (/ HCO3)
    for m in _ABG.finditer(raw):
        if _overlaps(taken, m.start(), m.end()):
            continue
        for name, cid, group in (("pH", "ph", "ph"), ("pCO2", "pco2", "co2"), ("pO2", "po2", "o2"),
                                 ("HCO3", "bicarbonate", "hco3")):
            if m.group(group):
                a, b = m.start(group), m.end(group)
                _emit(out, taken, Mention(line, a, b, f"{m.group('w')} {name}", "measurement", cid, m.group(group),
                                          {"value": float(m.group(group))}, f"L{line}ABG{m.start()}"))
        taken.append((m.start(), m.end()))

    # 2b. oxygen flow written before its device: "2L NC", "4 L nasal cannula", "15L NRB"
    for m in _O2_FLOW.finditer(raw):
        if not _overlaps(taken, m.start(), m.end()):
            _emit(out, taken, Mention(line, m.start(), m.start() + len(m.group("v")) + 1, "O2 flow", "measurement",
                                      "o2_flow", m.group(0).strip(), {"value": float(m.group("v")), "unit": "L/min"}))

    # 2. concept mentions: measurements, outputs, findings, procedures
    hits = [m for m in lex.concept_re.finditer(raw)] + [m for m in lex.cased_re.finditer(raw)]
    hits.sort(key=lambda h: (h.start(), -(h.end() - h.start())))
    starts = sorted({h.start() for h in hits if not re.match(r"\s*#?\s*\d", raw[h.end():])
                     or h.group(0).lower() not in ("hd", "day", "pod")} | {d.start() for d in lex.drug_re.finditer(raw)})
    for m in hits:
        if _overlaps(taken, m.start(), m.end()):
            continue
        candidates = lex.concepts_for(m.group(0))
        for concept in candidates:
            got = _concept_mention(raw, line, m, concept, lex, starts, out, taken)
            if got:
                break

    # 3. medications: lexicon names + the patient's own drug names
    out.extend(_medications(raw, line, lex, patient_drugs, taken))
    # 4. microbiology, and each antibiotic's susceptibility after an organism (.microsens)
    # (one claim qualifies its culture: "E. coli resistant to cipro"; a list is one statement per drug)
    micro = _microbiology(raw, line, lex, taken)
    claims = susceptibility_mentions(raw, micro, lex)
    for culture in micro:
        own = [c for c in claims if next(m for m in reversed(micro) if m.start <= c[0]) is culture]
        if len(own) == 1:
            out.append(replace(culture, attributes={**culture.attributes, "sensitivities": [own[0][2:]]}))
            continue
        out.append(culture)
        attrs = {k: v for k, v in culture.attributes.items() if k not in ("antibiotics", "susceptibility", "pan_sensitive")}
        out.extend(Mention(line, a, b, raw[a:b], "microbiology", "culture", level, {**attrs, "sensitivities": [(drug, level)]})
                   for a, b, drug, level in own)
    return sorted(out, key=lambda x: x.start)


_O2_FLOW = re.compile(r"(?<![\d.])(?P<v>\d{1,2}(?:\.\d)?)\s*(?:L|lpm|l/min|liters?)(?:\b|(?=nc\b|nrb\b|fm\b))\s*(?:/\s*min\s*)?(?:of\s+o2\s+)?(?:via\s+)?"
                      r"(?P<dev>nc|nasal\s+cannula|fm|face\s*mask|face\s*tent|nrb|non-?rebreather|hfnc|high\s+flow|"
                      r"venti\s*mask|shovel\s*mask|o2)\b", re.I)
_ABG = re.compile(r"\b(?P<w>ABG|VBG|gas|blood gas)\s*[:=]?\s*(?:on\s+\S+\s+)?(?P<ph>[67]\.\d{1,2})\s*/\s*(?P<co2>\d{2,3})"
                  r"\s*/\s*(?P<o2>\d{2,3})(?:\s*/\s*(?P<hco3>\d{1,2}))?", re.I)


def _next_start(starts: list[int], after: int) -> int | None:
    return next((x for x in starts if x > after), None)


_CONTINUATION = re.compile(r"[,;]?\s*(?:and\s+|then\s+|but\s+|which\s+)?(?:briefly\s+|subsequently\s+|later\s+)?"
                           r"(?P<verb>improved|decreased|increased|rose|fell|dropped|worsened|came\s+down|went\s+up|"
                           r"trended\s+(?:down|up)|down-?trended|up-?trended|bumped|peaked|normalized|declined|"
                           r"(?:came\s+|went\s+)?back(?:\s+down|\s+up)?)"
                           r"(?:\s+again)?(?:\s+(?:to|at))?\s+(?:a\s+(?:peak|nadir|high|low)\s+of\s+)?(?P<v>" + _NUM + r")"
                           r"|[,;]?\s*(?:and\s+|then\s+)?(?P<norm>cleared|normalized|resolved|came\s+down|trended\s+down)\b", re.I)


def _concept_mention(raw: str, line: int, m: re.Match[str], concept: Concept, lex: Lexicon, starts: list[int],
                     out: list[Mention], taken: list[tuple[int, int]]) -> bool:
    """Emit the mention(s) of one concept occurrence; False when this concept does not fit."""
    before = raw[:m.start()].rstrip()
    nxt = _next_start(starts, m.start())
    if concept.kind in ("measurement", "output"):
        if (before.endswith(tuple("0123456789")) and concept.cid in ("magnesium", "potassium", "calcium")
                and not re.match(r"\s*[:=-]?\s*\d", raw[m.end():])):
            return False  # "40 mg IV", "20 K" are doses, "Na 135 K 4.2" is a panel
        if concept.cid == "temperature" and re.match(r"\s*(?:cell|wave|score)", raw[m.end():], re.I):
            return False
        if re.match(r"\s*(?:goal\s*)?(?:[<>≤≥]=?|less than|greater than|below|above)\s*\d", raw[m.end():], re.I) or \
                re.search(r"\b(?:goal|target|keep|maintain|if)\s+$", raw[max(0, m.start() - 12):m.start()], re.I):
            return True  # "MAP > 65", "transfuse for Hct < 21": a goal or trigger, not a charted value
        val = parse_value(raw[m.end():], concept)
        if val is not None and not _plausible(val, concept):
            val = None
        if val is not None:
            after = raw[m.end() + int(val["_end"]):m.end() + int(val["_end"]) + 6]
            if re.match(r"\s*(?:[FM]\b|yo\b|y/o|y\.o|year)", after) or not _unit_fits(val.get("unit"), concept, after):
                val = None  # "A/P: 62F" is an age, "Resp: on 4L" an oxygen flow
        if val is not None:
            end = m.end() + int(val.pop("_end"))
            near = trend_word(raw[end:end + 14])
            if near and "direction" not in val and not re.search(r"[,;]", raw[end:end + 14].split(near[1])[0]):
                val["direction"] = near[0]
                val["trend_word"] = near[1]
                end = end + raw[end:].find(near[1]) + len(near[1])
            if concept.cid == "temperature":
                _temperature_attrs(m.group(0), val)
            if concept.kind == "output" and str(val.get("unit") or "").lower() in ("l",):
                for k in ("value", "min", "max", "min_hi", "max_lo"):
                    if k in val:
                        val[k] = float(val[k]) * 1000  # "UOP 3.6 L"
                val["unit"] = "mL"
            tail = raw[end:end + 30]
            rate = re.match(r"\s*(?:cc|ml|mls)?\s*(?:/|per)\s*(?:hr|h|hour)\b", tail, re.I)
            day = re.match(r"\s*(?:cc|ml|mls|l)?\s*(?:/|per|over|in|q)\s*(?:the\s+)?(?:day|24\s*h(?:rs?|ours?)?|24h)\b|"
                           r"\s*(?:cc|ml|mls)?\s*(?:daily|per\s+day)", tail, re.I)
            if rate:
                val["per_hour"] = True
                end += rate.end()
            elif day and concept.kind == "output":
                val["per_day"] = True
                end += day.end()
            elif concept.kind == "output" and float(val.get("value") or 0) >= 400:
                val["per_day"] = True  # "UOP ~1.5 L", "850 cc": a shift or day total, not one charting
            if re.match(r"\s*~|\s*(?:about|approx|approximately)\b", raw[m.end():m.end() + 12], re.I):
                val["approx"] = True
            kind = concept.kind if concept.kind == "output" else (
                "trend" if "series" in val or "direction" in val else
                "range" if any(k in val for k in ("min", "max", "systolic_min")) else "measurement")
            _emit(out, taken, Mention(line, m.start(), end, m.group(0).strip(), kind, concept.cid,
                                      raw[m.end():end].strip(" :="), val))
            _continuations(raw, line, m, concept, end, nxt, out, taken)
            _repletion(raw, line, concept, end, out, taken)
            return True
        clause = _clause(raw, m.end())
        tail = clause[:(nxt - m.end()) if nxt is not None and nxt - m.end() < len(clause) else len(clause)][:40]
        tw = trend_word(tail)
        if tw and tail.find(tw[1]) <= 20:
            end = m.end() + tail.find(tw[1]) + len(tw[1])
            val2 = {"direction": tw[0], "trend_word": tw[1]}
            if tw[1].lower() in ("cleared", "normalized", "resolved", "normalizing"):
                val2["normalized"] = True
            _emit(out, taken, Mention(line, m.start(), end, m.group(0).strip(), "trend", concept.cid, tw[1], val2))
            return True
        btw = trend_word(before[-25:]) if before else None
        if btw and re.search(r"(?:ing|ed)\s*$", before):
            _emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "trend", concept.cid, btw[1],
                                      {"direction": btw[0], "trend_word": btw[1]}))
            return True
        return False
    if concept.kind == "finding":
        stop = _FINDING_STOP.search(raw, m.end())
        end = stop.start() if stop else len(raw)
        if nxt is not None and nxt < end and nxt >= m.end():
            end = nxt  # the next concept starts its own observation
        header = bool(re.match(r"\s*:", raw[m.end():]))  # "Code status: Full code", "Orientation: x3"
        self_describing = concept.cid in _SELF_DESCRIBING and not header
        if self_describing and concept.cid not in ("lung_sounds", "skin"):
            comma = re.search(r"[,.;]", raw[m.end():end])
            if comma:
                end = m.end() + comma.start()  # "arouses to voice, not following commands": two observations
        if header:
            colon_end = m.end() + raw[m.end():].index(":") + 1
            stop2 = re.search(r"[,.;]", raw[colon_end:])
            end = max(end, colon_end + (stop2.start() if stop2 else len(raw) - colon_end))
            if nxt is not None and m.end() < nxt < end:
                inner = re.match(lex.concept_re.pattern, raw[nxt:], re.I) or re.match(lex.cased_re.pattern, raw[nxt:])
                inner_ids = {c.cid for c in lex.concepts_for(inner.group(0))} if inner else set()
                if concept.cid not in inner_ids:
                    return False  # the content is a concept of its own
                # "Heart rhythm: SR", "Code status: Full code": one statement, named by its header
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
            lead = re.search(r"(?:\b(?:trace|[1-4]\s*\+|\+\s*[1-4]|open|pitting|non-?pitting|bilat(?:eral)?)\s*)+$",
                             raw[max(0, m.start() - 24):m.start()], re.I)
            if lead:
                words = (lead.group(0).strip() + " " + words).strip()
        prev = out[-1] if out else None
        if (prev is not None and prev.kind == "finding" and prev.concept == concept.cid and prev.line == line
                and start - prev.end <= 15 and not re.search(r"[,;.]", raw[prev.end:max(start, prev.end)])):
            merged = (str(prev.attributes.get("words") or "") + " " + words).strip()[:80]
            out[-1] = Mention(line, prev.start, max(prev.end, end), prev.text, "finding", concept.cid, merged,
                              {**prev.attributes, "words": merged}, prev.group)  # "Abdominal: open abdomen"
            taken.append((m.start(), end))
            return True
        if not words and not negated:
            return False
        grade = re.search(r"\b(trace|[1-4]\s*\+|\+\s*[1-4])", raw[max(0, m.start() - 12):end])
        attrs: dict[str, Any] = {"words": words[:80], "negated": negated}
        if grade:
            attrs["grade"] = grade.group(1).replace(" ", "")
        _emit(out, taken, Mention(line, start, max(m.end(), min(end, m.end() + 80)), m.group(0).strip(), "finding",
                                  concept.cid, words[:80] or ("no" if negated else None), attrs, f"L{line}F{m.start()}"))
        if concept.cid == "heart_rhythm" and not header:
            # "ST 90s-120s", "AF 110s": the rhythm carries its rate
            rate = re.match(r"\s*(?:w/\s*|with\s+|at\s+|in\s+the\s+|,\s*)?(?=\d{2,3}s?\b)", raw[m.end():])
            hr = lex.concepts.get("heart_rate")
            if rate is not None and hr is not None:
                val = parse_value(raw[m.end() + rate.end():], hr)
                if val is not None and _plausible(val, hr):
                    e2 = m.end() + rate.end() + int(val.pop("_end"))
                    kind = "range" if any(k in val for k in ("min", "max")) else "measurement"
                    out.append(Mention(line, m.start(), e2, f"{m.group(0).strip()} rate", kind, "heart_rate",
                                       raw[m.end() + rate.end():e2].strip(), val))
                    taken.append((m.end(), e2))
        return True
    if concept.kind == "procedure":
        if concept.cid == "dialysis" and re.match(r"\s*#?\s*\d", raw[m.end():]):
            return False  # "HD 3" is a hospital day
        if concept.cid == "imaging_ct" and m.group(0).lower() == "ct" and not re.match(
                r"\s*(?:head|chest|abd|a/p|scan|torso|c-spine|pe)", raw[m.end():], re.I):
            return False
        window = raw[max(0, m.start() - 30):m.end() + 40]
        act = _PROC_ACTION.search(window)
        side = _SIDE.search(raw[max(0, m.start() - 20):m.end() + 5])
        attrs = {"negated": negated_before(raw[:m.start()])}
        if act:
            attrs["action"] = act.group("a").lower()
        if side:
            attrs["side"] = side.group("s").lower()[0]
        prev = out[-1] if out else None
        if prev is not None and prev.concept == concept.cid and prev.line == line and m.start() - prev.end <= 3:
            out[-1] = Mention(line, prev.start, m.end(), raw[prev.start:m.end()].strip(), "procedure", concept.cid,
                              prev.value, {**prev.attributes, **attrs})  # "R IJ CVL" is one line
            taken.append((m.start(), m.end()))
            return True
        _emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "procedure", concept.cid,
                                  act.group(0) if act else None, attrs))
        return True
    if concept.kind == "medication":  # blood products
        amount = re.search(r"(\d+)\s*(?:u|units?|bags?)\b", raw[max(0, m.start() - 10):m.end() + 15], re.I)
        attrs = {"drugs": [concept.cid], "negated": negated_before(raw[:m.start()])}
        if amount:
            attrs["units"] = float(amount.group(1))
        prev = out[-1] if out else None
        if (prev is not None and prev.concept == concept.cid and prev.line == line and m.start() - prev.end <= 8
                and re.fullmatch(r"transfus\w*", prev.text, re.I)):
            out[-1] = Mention(line, prev.start, m.end(), raw[prev.start:m.end()].strip(), "medication", concept.cid,
                              None, {**prev.attributes, **attrs})  # "transfused 1u PRBC"
            taken.append((m.start(), m.end()))
            return True
        _emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "medication", concept.cid, None, attrs))
        return True
    return False


_SELF_DESCRIBING = ("orientation", "consciousness", "heart_rhythm", "lung_sounds", "skin", "pupils", "stool",
                    "bowel_sounds", "code_status", "o2_device", "ectopy", "ventilator_mode")


def _emit(out: list[Mention], taken: list[tuple[int, int]], m: Mention) -> None:
    out.append(m)
    taken.append((m.start, m.end))


def _continuations(raw: str, line: int, m: re.Match[str], concept: Concept, end: int, nxt: int | None,
                   out: list[Mention], taken: list[tuple[int, int]]) -> None:
    """"Cr 1.4 on admission, improved to 0.5": a second statement about the same item."""
    limit = _clause(raw, end)
    stop = len(limit) if nxt is None or nxt - end > len(limit) else max(nxt - end, 0)
    scope = raw[end:end + stop]
    for c in _CONTINUATION.finditer(scope):
        if c.group("norm"):
            s0, e0 = end + c.start("norm"), end + c.end("norm")
            if any(x.start <= s0 < x.end for x in out):
                continue
            _emit(out, taken, Mention(line, s0, e0, f"{m.group(0).strip()} {c.group('norm')}", "trend", concept.cid,
                                      c.group("norm"), {"direction": "down", "trend_word": c.group("norm"),
                                                        "normalized": True}))
            continue
        v = float(c.group("v"))
        verb = c.group("verb")
        attrs: dict[str, Any] = {"value": v, "trend_word": verb}
        d = _verb_direction(verb, concept)
        if re.search(r"peak", verb, re.I):
            attrs.update({"max": v, "max_lo": v})
        elif d:
            attrs["direction"] = d
        if not _plausible(attrs, concept):
            continue
        s0, e0 = end + c.start("verb"), end + c.end()
        _emit(out, taken, Mention(line, s0, e0, f"{m.group(0).strip()} {verb.split()[0]}", "trend" if d else "range",
                                  concept.cid, raw[s0:e0].strip(), attrs))


def _repletion(raw: str, line: int, concept: Concept, end: int, out: list[Mention],
               taken: list[tuple[int, int]]) -> None:
    """"K 3.1, repleted": the electrolyte replacement is a medication statement, unless the
    drug is named in the clause ("repleted with 40 mEq KCl" is found as the drug)."""
    if concept.cid not in _REPLETION:
        return
    repl = re.match(r"[\s,]*(?:(?:this|last)\s+(?:am|pm|morning|evening|night)|today|overnight|yesterday)?[\s,]*"
                    r"(?:s/p\s+|and\s+|was\s+)?(repleted|replet(?:ing|ion)|replaced|repleated)\b", raw[end:end + 40], re.I)
    if not repl:
        return
    rest = _clause(raw, end + repl.end(1))
    if re.search(r"\b(kcl|potassium|k-dur|mag(?:nesium)?\s*(?:sulfate|oxide)|calcium|neutra-?phos|phos)\b", rest, re.I):
        return
    _emit(out, taken, Mention(line, end + repl.start(1), end + repl.end(1), repl.group(1), "medication", "drug",
                              repl.group(1), {"drugs": [_REPLETION[concept.cid]], "action": "repleted",
                                              "negated": False, "for": concept.cid}))


_VOLUME = re.compile(r"^(?:l|ml|cc|mls)$", re.I)


def _unit_fits(unit: str | None, concept: Concept, after: str) -> bool:
    """A parsed unit that cannot belong to the concept ("4L" for a respiratory rate)."""
    if concept.kind == "output":
        return True
    if unit in ("F", "C") and concept.cid != "temperature":
        return False
    if unit and _VOLUME.match(unit.strip()):
        return False
    if re.match(r"\s*(?:L\b|lpm|nc\b|l/min)", after, re.I) and concept.cid not in ("fio2",):
        return False
    return True


_REPLETION = {"potassium": "potassium chloride", "magnesium": "magnesium sulfate", "calcium": "calcium gluconate",
              "phosphate": "sodium phosphate"}


def _plausible(val: Mapping[str, Any], concept: Concept) -> bool:
    v = val.get("value", val.get("systolic"))
    if v is None:
        return "systolic_min" in val
    lo = concept.lo if concept.lo is not None else float("-inf")
    hi = concept.hi if concept.hi is not None else float("inf")
    if concept.cid == "temperature":
        return 30 <= v <= 45 or 90 <= v <= 110
    return lo <= float(v) <= hi


def _temperature_attrs(form: str, val: dict[str, Any]) -> None:
    v = val.get("value")
    if "unit" not in val or val["unit"] not in ("F", "C"):
        val["unit"] = "C" if v is not None and v < 50 else "F"
    if form.lower().replace(" ", "").replace("-", "") in ("tmax", "tm", "maxtemp"):
        val.setdefault("max", v)
        val.setdefault("max_lo", v)


def _medications(raw: str, line: int, lex: Lexicon, patient_drugs: Iterable[str],
                 taken: list[tuple[int, int]]) -> list[Mention]:
    out: list[Mention] = []
    spans: list[tuple[int, int, list[str]]] = []
    for m in lex.drug_re.finditer(raw):
        word = re.sub(r"\s+", " ", m.group(0).lower())
        if word in ("neo", "lr", "ns", "hd") and not re.search(r"(gtt|drip|bolus|\d|iv|ml|l\b|cc|@|at|,|and)", raw[m.end():m.end() + 12], re.I):
            continue
        if word in lex.drug_classes and re.match(r"\s*:", raw[m.end():]):
            continue  # "Last dose of Antibiotics:" is a header
        names = list(lex.drug_classes.get(word, ())) or [lex.drugs[word]]
        if word == "levo" and re.match(r"[\s@:-]*(?:gtt|drip|infusion|at\s+)?[\s@]*\d*\.?\d*\s*(?:mcg|gtt|drip)", raw[m.end():m.end() + 20], re.I):
            names = ["norepinephrine"]  # "levo 0.8 mcg/kg/min" is levophed; "levo/flagyl" levofloxacin
        spans.append((m.start(), m.end(), names))
    known = {s for s, _, _ in spans}
    words: set[str] = set()
    for d in patient_drugs:
        head = re.split(r"[^a-z]+", (d or "").lower().strip())
        head = [w for w in head if w]
        if head and len(head[0]) >= 5:
            words.add(head[0])
    if words:
        for m in re.finditer(r"(?<![A-Za-z])([A-Za-z][A-Za-z]{4,})(?![A-Za-z])", raw):
            w = m.group(1).lower()
            if w in words and m.start() not in known and not any(a <= m.start() < b for a, b, _ in spans):
                spans.append((m.start(), m.end(), [lex.drugs.get(w, w)]))
    spans.sort()
    # "resistant to ciprofloxacin" names a susceptibility, not an order
    spans = [sp for sp in spans if not re.search(r"(?:resistant|sensitive|susceptible|resistance)\s+(?:to\s+)?"
                                                 r"(?:[a-z/\-]+\s*(?:,|and|/)\s*)*$", raw[max(0, sp[0] - 60):sp[0]], re.I)]
    spans = [sp for sp in spans if not is_susceptibility_name(raw, sp[0], sp[1])]  # "levo R", "R to cipro"
    deduped: list[tuple[int, int, list[str]]] = []
    for sp in spans:
        if deduped and re.fullmatch(r"\s*[(/]\s*", raw[deduped[-1][1]:sp[0]]) and (
                set(sp[2]) & set(deduped[-1][2]) or raw[deduped[-1][1]:sp[0]].strip() == "("):
            a, _, names = deduped[-1]
            deduped[-1] = (a, sp[1], names)  # "Piperacillin/Tazobactam (Zosyn)", "Midazolam (Versed)": one drug
            continue
        deduped.append(sp)
    spans = deduped
    # "vanc/zosyn started 10-23": slash-joined drugs share the clause's attributes
    for s, e, names in spans:
        if _overlaps(taken, s, e):
            continue
        clause = clause_after(raw, e, "line_item")
        nxt = next((a for a, _, _ in spans if a > s), None)
        own = clause[: (nxt - e) if nxt is not None and nxt - e > 0 and not re.fullmatch(r"\s*[/,&+]\s*(?:and\s*)?",
                                                                                       raw[e:nxt]) else len(clause)]
        attrs: dict[str, Any] = {"drugs": names}
        dose = _DOSE.search(own[:40])
        if dose:
            per = re.match(r"\s*(?:/\s*kg\s*)?/\s*(?:hr|h|hour|min)\b|\s*per\s+(?:hr|hour|min)", own[dose.end():dose.end() + 12], re.I)
            unit = dose.group("unit").lower()
            if per or "/" in unit:
                attrs.update({"rate": float(dose.group("dose")), "rate_unit": unit + (per.group(0).strip() if per else "")})
                attrs["infusion"] = True
            else:
                attrs.update({"dose": float(dose.group("dose")), "dose_unit": unit})
        route = _ROUTE.search(raw[s:e] + own[:50]) or _ROUTE.search(raw[max(0, s - 10):s])
        if route:
            r = route.group(1).upper()
            attrs["route"] = {"SQ": "SC", "SUBQ": "SC", "IVP": "IV", "DRIP": "IV", "GTT": "IV", "INFUSION": "IV"}.get(r, r)
            if r in ("GTT", "DRIP", "INFUSION"):
                attrs["infusion"] = True
        freq = _FREQ.search(own[:50])
        if freq:
            attrs["freq"] = freq.group(1).lower()
        near = raw[max(0, s - 25):s]
        lead = clause_before(near, len(near), "phrase")
        act = _MED_ACTION.search(own[:60]) or _MED_ACTION.search(lead)
        if act:
            attrs["action"] = act.group("a").lower()
        dur = parse_duration_days(own[:60])
        before_dur = re.search(r"(\d{1,2})[-\s]day\s+(?:course|trial)\s+of\s+(?:\w+\s+)?$", raw[max(0, s - 30):s], re.I)
        if dur:
            attrs["duration_days"] = dur
        elif before_dur:
            attrs["duration_days"] = float(before_dur.group(1))  # "a 7-day course of levofloxacin"
        day_n = re.match(r"[\s/a-z,]*?\bday\s*#?\s*(\d{1,2})\b", own[:30], re.I)
        if day_n:
            attrs["course_day"] = int(day_n.group(1))  # "vanc/zosyn day 5"
        if re.match(r"\W*(?:not\s+(?:yet\s+)?(?:started|given|initiated|restarted)|(?:was\s+)?held|on\s+hold)\b", own, re.I):
            attrs["negated_after"] = True
        attrs["negated"] = negated_before(raw[:s]) or bool(attrs.pop("negated_after", False))
        if len(names) > 1 and not any(k in attrs for k in ("action", "dose", "rate", "duration_days", "course_day")):
            continue  # a bare class word ("Abx changed", "sedation") names no checkable order
        kind = "infusion" if attrs.get("infusion") else "medication"
        value = raw[e:e + len(own)].strip()[:60] or None
        out.append(Mention(line, s, e, raw[s:e].strip(), kind, "drug", value, attrs))
    return out


_BARE_SPECIMENS = ((re.compile(r"\bsputum\b", re.I), "sputum|bronch"), (re.compile(r"\burine\b", re.I), "urine"),
                   (re.compile(r"\bblood\b", re.I), "blood"), (re.compile(r"\bwound(?:\s+swab)?\b", re.I), "wound|swab"),
                   (re.compile(r"\bstool\b", re.I), "stool|feces"),
                   (re.compile(r"\b(?:joint|synovial)\s+fluid\b", re.I), "joint|synovial|fluid"),
                   (re.compile(r"\bpericardial\s+fluid\b", re.I), "pericardial|fluid"),
                   (re.compile(r"\bcsf\b", re.I), "csf"), (re.compile(r"\bswab\b", re.I), "swab"))
_MICRO_CONTEXT = re.compile(r"^[\s:(`\d/\-)]*(?:cx|cultures?|grew|growing|grows|sent|ngtd|no\s+growth|"
                            r"(?:was|were|is|are)\s+(?:positive|negative|pending|sent)|positive|negative|pending|w/|with|"
                            r"from\s+`*[\d/-]+`*\s+(?:grew|growing|positive|negative|w/))", re.I)


def _microbiology(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    out: list[Mention] = []
    specimens = list(lex.specimens)
    for pattern, word in _BARE_SPECIMENS:
        # a bare specimen is a culture only when culture words follow ("sputum grew yeast")
        specimens.append((re.compile(pattern.pattern + r"(?=" + _MICRO_CONTEXT.pattern[1:] + r")", re.I), word))
    for pattern, table_word in specimens:
        for m in pattern.finditer(raw):
            if _overlaps(taken, m.start(), m.end()):
                continue
            clause = _clause(raw, m.end())[:80]
            nxt_spec = min((x.start() for pat, _ in specimens for x in pat.finditer(clause) if x.start() > 0),
                           default=len(clause))
            clause = clause[:nxt_spec]
            attrs: dict[str, Any] = {"specimen": table_word}
            for opat, oword in lex.organisms:
                om = opat.search(clause)
                if om:
                    attrs["organism"] = oword
                    attrs["organism_text"] = om.group(0)
                    break
            if "organism" not in attrs and lex.micro_negative.search(clause[:40]):
                attrs["negative"] = True
            elif "organism" not in attrs and re.search(r"\b(?:positive|pos)\b|\(\+\)|\+\s*$", clause[:40], re.I):
                attrs["positive"] = True
            sens = re.search(r"\b(sensitive|susceptible|resistant|pan-?sensitive)\s+to\s+([A-Za-z/\- ,]+)", clause, re.I)
            if sens:
                attrs["susceptibility"] = "R" if sens.group(1).lower().startswith("res") else "S"
                names = [a.strip().lower() for a in re.split(r",|/|\band\b", sens.group(2)) if a.strip()]
                attrs["antibiotics"] = [a for a in names if len(a.split()) <= 2][:4]
            if parse_susceptibilities(clause, lex)[1]:
                attrs["pan_sensitive"] = True  # per-antibiotic claims are their own statements (find_mentions)
            if re.search(r"\bpending\b", clause, re.I) and "organism" not in attrs:
                attrs["pending"] = True
            end = m.end()
            for key in ("organism_text",):
                if key in attrs:
                    end = m.end() + clause.find(attrs[key]) + len(attrs[key])
            out.append(Mention(line, m.start(), end, m.group(0).strip(), "microbiology", "culture",
                               clause.strip()[:80] or None, attrs))
            taken.append((m.start(), end))
    return out
