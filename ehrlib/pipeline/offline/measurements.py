"""Measurement and output mentions: a concept name with its value, trend or repletion.

``HR 88 (80-110)``, ``UOP 850 cc``, ``Cr 1.4 on admission, improved to 0.5``, ``K 3.1,
repleted``, ``lactate downtrending``; blood gases written as a triple (``ABG
7.49/58/102``), an oxygen flow before or after its device (``2L NC``, ``nasal cannula 4 L``), a
pressure's range pair (``ABP 88-170/45-80``: a systolic and a diastolic statement), a setting's
change (``PEEP decreased 8 -> 5``: one claim) and a bound over the period (``MAPs > 65 all
shift``). A value is kept only when it is plausible for the concept and its unit fits ("62F"
after "A/P:" is an age, "on 4L" after "Resp:" an oxygen flow); which concept takes which rule (dose-like electrolyte
names, temperature, day totals, repletion drugs) is data (``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import MedicationClaim, NumericClaim, Reading, Trend
from ehrlib.pipeline.offline.lab_results import line_fluid, prose_fluid
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.mention import NUM, Mention, concept_flags, emit, line_clause, overlaps
from ehrlib.pipeline.offline.numparse import NUMBER
from ehrlib.pipeline.offline.output_volumes import states_period
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.scales import on_concept_scale
from ehrlib.pipeline.offline.trends import trend_word
from ehrlib.pipeline.offline.values import numeric_claim, parse_value

__all__ = ["measurement_mention", "blood_gas_and_flow_mentions", "plausible", "RANGE_PAIR_RULE",
           "DEVICE_FLOW_RULE", "SETTING_CHANGE_RULE", "PERIOD_BOUND_RULE"]

_FLAGS = concept_flags()
_TEMP = _FLAGS["temperature"]
_SETTINGS = frozenset(_FLAGS.get("setting_concepts", ()))
_REPLETION: Mapping[str, str] = _FLAGS["repletion"]
_REPLETION_DRUG = re.compile(r"\b(" + "|".join(_FLAGS["repletion_drug_words"]) + r")\b", re.I)
_TEMP_NOT = re.compile(_TEMP["not_before"], re.I)
#: a device noun right after a number makes the number the device's size ("8.0 ETT", "7.5 trach", "16 Fr")
_DEVICE_SIZE = re.compile(r"\s*(?:mm\s*)?(?:ett|et\s+tube|endotracheal|trach\w*|portex|shiley|bivona|fr\b|french)",
                          re.I)
#: a name of the mean arterial pressure ("MAP", "MAPs", "mean BP")
_MEAN_NAME = re.compile(r"\bmaps?\b|\bmean\b", re.I)
#: a share written before the name of what it is a share of ("4% bands", "on 40% FiO2")
_PERCENT_BEFORE = re.compile(r"(?<![\d.,/%])(?P<v>\d{1,3}(?:\.\d+)?)\s*%$")


def measurement_mention(raw: str, line: int, m: re.Match[str], concept: Concept, before: str, nxt: int | None,
                        out: list[Mention], taken: list[tuple[int, int]]) -> bool:
    """Emit the mention(s) of a measurement or output occurrence; False when it is none."""
    if (before.endswith(tuple("0123456789")) and concept.cid in _FLAGS["dose_names"]
            and not re.match(r"\s*[:=-]?\s*\d", raw[m.end():])):
        return False  # "40 mg IV", "20 K" are doses, "Na 135 K 4.2" is a panel
    if concept.cid in _TEMP["concepts"] and _TEMP_NOT.match(raw[m.end():]):
        return False
    goal_before = re.search(r"\b(?:goal|target|keep|maintain|if)\s+$", raw[max(0, m.start() - 12):m.start()], re.I)
    bound = _PERIOD_BOUND.match(raw, m.end())
    if bound and not goal_before and _WHOLE_PERIOD.search(bound.group("rest")):
        return _period_bound(line, m, concept, bound, out, taken)  # "MAPs > 65 all shift": every value of the period
    if re.match(r"\s*(?:goal\s*)?(?:[<>≤≥]=?|less than|greater than|below|above)\s*\d", raw[m.end():], re.I) or \
            goal_before:
        return True  # "MAP > 65", "transfuse for Hct < 21": a goal or trigger, not a charted value
    if concept.cid in _FLAGS["blood_pressure_values"] and _range_pair(raw, line, m, concept, out, taken):
        return True
    val = parse_value(raw[m.end():], concept)
    if val is not None and _MEAN_NAME.search(m.group(0)) and not any(k.startswith("diastolic") for k in val):
        # "MAP 40s", "MAPs 60s-70s": a name of the mean pressure states the mean, not the systolic
        val = {("mean" + k[len("systolic"):] if k.startswith("systolic") else k): x for k, x in val.items()}
    if val is not None and not plausible(val, concept):
        # "urine Cr 49", "___ 01:15PM URINE Creat-80": the serum range says nothing about another specimen's value
        other = "labevents" in concept.tables and any(f != "Blood" for f in (
            (prose_fluid(raw, m.start()) or ("Blood",))[0], line_fluid(raw[raw.rfind("\n", 0, m.start()) + 1:])))
        val = val if other else on_concept_scale(val, concept)
    if val is not None:
        after = raw[m.end() + int(val["_end"]):m.end() + int(val["_end"]) + 6]
        if re.match(r"\s*(?:[FM]\b|yo\b|y/o|y\.o|year)", after) or not _unit_fits(val.get("unit"), concept, after):
            val = None  # "A/P: 62F" is an age, "Resp: on 4L" an oxygen flow
        elif _DEVICE_SIZE.match(raw, m.end() + int(val["_end"])):
            val = None  # "Resp: 8.0 ETT": the number is the tube's size
        elif concept.cid in _FLAGS.get("volume_unit_concepts", ()) and not _VOLUME.match(str(val.get("unit") or "")):
            val = None  # "tolerating PO": a route word states a volume only with its unit
    if val is not None and any(o.kind == "interpretation" and o.start < m.end() + int(val["_end"]) and m.end() < o.end
                               for o in out):
        return True  # "T spiked to 102.1": the state's words already state the value
    if val is not None and str(val.get("unit") or "").lower() == "l" and concept.unit == "L/min":
        val["unit"] = concept.unit  # "O2 flow 10-15L": litres a minute
    if val is not None:
        end = m.end() + int(val.pop("_end"))
        # "Tbili 9.0, down-trending": a trend word that is the list item after the value is a
        # trend statement of its own, after the value's
        item_trend = _item_trend(raw, end) if "direction" not in val or "series" in val else None
        own_trend = None
        if item_trend is not None:
            ws = end + raw[end:].find(item_trend[1])
            own_trend = Mention(line, ws, ws + len(item_trend[1]), m.group(0).strip(), "trend", concept.cid,
                                item_trend[1], NumericClaim(trend=Trend(direction=item_trend[0], word=item_trend[1])))
        near = None if item_trend else trend_word(raw[end:end + 14])
        # the direction word qualifies this value only when nothing else is told between them: no list
        # break, no other number ("AP 169 Tbili 2.4 (up"), no sentence end or line break ("Hct 31.2. Hct stable")
        told = m.end() + len(raw[m.end():end].rstrip())  # the value's end before the blanks it took
        if near and "direction" not in val and not _TOLD_BETWEEN.search(raw[told:end + 14].split(near[1])[0]):
            val["direction"] = near[0]
            val["trend_word"] = near[1]
            end = end + raw[end:].find(near[1]) + len(near[1])
        if concept.cid in _TEMP["concepts"]:
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
        elif concept.kind == "output" and states_period(raw, end) and "/" not in str(val.get("unit") or ""):
            val["per_day"] = True  # "UOP 35 mL for the day", "I/O: ... OGT 300": the period's total
        elif concept.kind == "output" and float(val.get("value") or 0) >= _FLAGS["day_total_min"]:
            val["per_day"] = True  # "UOP ~1.5 L", "850 cc": a shift or day total, not one charting
        if re.match(r"\s*~|\s*(?:about|approx|approximately)\b", raw[m.end():m.end() + 12], re.I):
            val["approx"] = True
        if "series" in val and concept.kind != "output" and not (
                concept.cid in _SETTINGS and len(val["series"]) == 2):  # a setting's change is one claim
            _series_values(raw, line, m, concept, end, val, out, taken)
            if own_trend is not None:
                emit(out, taken, own_trend)
            _continuations(raw, line, m, concept, end, nxt, out, taken)
            _repletion(raw, line, concept, end, out, taken)
            return True
        kind = concept.kind if concept.kind == "output" else (
            "trend" if "series" in val or "direction" in val else
            "range" if any(k in val for k in ("min", "max", "systolic_min", "mean_min")) else "measurement")
        emit(out, taken, Mention(line, m.start(), end, m.group(0).strip(), kind, concept.cid,
                                 _value_text(raw[m.end():end], val), numeric_claim(val)))
        if own_trend is not None:
            emit(out, taken, own_trend)
        _continuations(raw, line, m, concept, end, nxt, out, taken)
        _repletion(raw, line, concept, end, out, taken)
        return True
    if concept.cid in _FLAGS.get("volume_unit_concepts", ()):
        return False  # a route word without a volume is no statement of this concept
    clause = line_clause(raw, m.end())
    tail = clause[:(nxt - m.end()) if nxt is not None and nxt - m.end() < len(clause) else len(clause)][:40]
    tw = trend_word(tail)
    if tw and tail.find(tw[1]) <= 20:
        end = m.end() + tail.find(tw[1]) + len(tw[1])
        normalized = tw[1].lower() in ("cleared", "normalized", "resolved", "normalizing")
        emit(out, taken, Mention(line, m.start(), end, m.group(0).strip(), "trend", concept.cid, tw[1],
                                 NumericClaim(trend=Trend(direction=tw[0], word=tw[1], normalized=normalized))))
        return True
    btw = trend_word(before[-25:]) if before else None
    if btw and re.search(r"(?:ing|ed)\s*$", before):
        emit(out, taken, Mention(line, m.start(), m.end(), m.group(0).strip(), "trend", concept.cid, btw[1],
                                 NumericClaim(trend=Trend(direction=btw[0], word=btw[1]))))
        return True
    pct = _PERCENT_BEFORE.search(before) if concept.unit == "%" else None
    if pct is not None and not overlaps(taken, pct.start(), m.end()):
        # a percentage unit makes a number directly before the name its value ("4% bands")
        val = parse_value(" " + pct.group(0), concept)
        if val is not None and plausible(val, concept):
            val.pop("_end", None)
            emit(out, taken, Mention(line, pct.start(), m.end(), m.group(0).strip(), "measurement", concept.cid,
                                     pct.group(0), numeric_claim(val)))
            return True
    return False


#: a bound after the name ("MAPs > 65", "SpO2 >= 92%", "HR below 100"), then the rest of its clause
_PERIOD_BOUND = re.compile(r"\s*:?\s*(?P<op>[<>≤≥]=?|less\s+than|greater\s+than|below|above|over|under)\s*"
                           r"(?P<v>" + NUM + r")\s*%?(?P<rest>[^.;,\n]{0,30})", re.I)
#: words that make a bound hold through the statement's whole period ("all shift", "throughout")
_WHOLE_PERIOD = re.compile(load_data("finding_states.yaml")["whole_period"]["timed"] + r"|\bthroughout\b", re.I)


def _period_bound(line: int, m: re.Match[str], concept: Concept, bound: re.Match[str], out: list[Mention],
                  taken: list[tuple[int, int]]) -> bool:
    """"MAPs > 65 all shift", "SpO2 >= 92% throughout": a bound every charted value of the period keeps,
    a claim about the whole window (:data:`ehrlib.pipeline.offline.verification.numbers.PERIOD_BOUND`).
    """
    v = float(bound.group("v").replace(",", ""))
    if not plausible({"value": v}, concept):
        return True
    above = bound.group("op")[0] in ">≥" or bound.group("op").lower().startswith(("greater", "above", "over"))
    reading = Reading(min=v, value=v) if above else Reading(max=v, value=v)
    emit(out, taken, Mention(line, m.start(), bound.end("v"), m.group(0).strip(), "range", concept.cid,
                             f"{bound.group('op')} {bound.group('v')}", NumericClaim(reading=reading, bound=True)))
    return True


#: a pressure's range pair, systolic range / diastolic range ("ABP 88-170/45-80", "PA 25-40/15-30")
_RANGE_PAIR = re.compile(r"\s*(?::|=)?\s*(?P<s1>\d{2,3})\s*-\s*(?P<s2>\d{2,3})\s*/\s*(?P<d1>\d{2,3})\s*-\s*"
                         r"(?P<d2>\d{2,3})(?![\d.])(?:\s*mm\s*hg\b)?", re.I)


def _range_pair(raw: str, line: int, m: re.Match[str], concept: Concept, out: list[Mention],
                taken: list[tuple[int, int]]) -> bool:
    """"ABP 88-170/45-80": the period's systolic range and its diastolic range, two statements;
    the diastolic one keeps the name (and so the monitor it was read on) in its text.
    """
    p = _RANGE_PAIR.match(raw, m.end())
    if p is None:
        return False
    s1, s2, d1, d2 = (float(p.group(g)) for g in ("s1", "s2", "d1", "d2"))
    if not (s1 <= s2 and d1 <= d2 and d2 <= s2 and plausible({"value": s1}, concept)
            and plausible({"value": s2}, concept)):
        return False
    name = m.group(0).strip()
    emit(out, taken, Mention(line, m.start(), p.end("s2"), name, "range", concept.cid,
                             raw[p.start("s1"):p.end("s2")], numeric_claim({"min": s1, "max": s2, "value": s1})))
    emit(out, taken, Mention(line, p.start("d1"), p.end(), f"{name} diastolic", "range", concept.cid,
                             raw[p.start("d1"):p.end()].strip(),
                             numeric_claim({"diastolic_min": d1, "diastolic_max": d2})))
    return True


def _value_text(written: str, val: dict[str, Any]) -> str:
    """The value as stated, without a results block's joining hyphen or abnormal flag
    ("Hgb-9.8*" states 9.8, not -9.8) when the parsed value is not negative.
    """
    text = written.strip(" :=")
    if re.match(r"-\d", text) and float(val.get("value") or 0) >= 0 or re.match(r"--\d", text):
        text = text[1:]  # "Base XS--5" states -5
    return text.rstrip("*").strip() or text


def _series_values(raw: str, line: int, m: re.Match[str], concept: Concept, end: int, val: dict[str, Any],
                   out: list[Mention], taken: list[tuple[int, int]]) -> None:
    """"Lactate 2.3 -> 4.7 -> 1.6", "Plt fell from 82 to 17", "Cr 3.3 (from 3.5)": each number of a
    series is its own claim, that the value was charted in the window, in the order written.

    A series states its values; whether the item rose or fell follows from them, so no
    direction claim is added (a direction is checked only where no values are given).
    The first value's mention spans the name, each later one its own number.
    """
    values = {float(x) for x in val["series"]}
    first = True
    for n in re.finditer(r"(?<![\d.,])(?:" + NUMBER + r")", raw[m.end():end]):
        v = float(n.group(0).replace(",", ""))
        if v not in values or not plausible({"value": v}, concept):
            continue
        s0, e0 = m.end() + n.start(), m.end() + n.end()
        attrs: dict[str, Any] = {"value": v}
        if val.get("unit"):
            attrs["unit"] = val["unit"]
        emit(out, taken, Mention(line, m.start() if first else s0, e0, m.group(0).strip(), "measurement",
                                 concept.cid, n.group(0), numeric_claim(attrs)))
        first = False
    taken.append((m.start(), end))


_CONTINUATION = re.compile(r"[,;]?\s*(?:and\s+|then\s+|but\s+|which\s+)?(?:briefly\s+|subsequently\s+|later\s+)?"
                           r"(?P<verb>improved|decreased|increased|rose|fell|dropped|worsened|came\s+down|went\s+up|"
                           r"weaned|reduced|"
                           r"trended\s+(?:down|up)|down-?trended|up-?trended|bumped|peaked|normalized|declined|"
                           r"(?:came\s+|went\s+)?back(?:\s+down|\s+up)?)"
                           r"(?:\s+again)?(?:\s+(?:to|at))?\s+(?:a\s+(?:peak|nadir|high|low)\s+of\s+)?"
                           r"(?P<v>" + NUM + r")"
                           r"|[,;]?\s*(?:and\s+|then\s+)?(?P<norm>cleared|normalized|resolved|came\s+down|"
                           r"trended\s+down)\b", re.I)


def _continuations(raw: str, line: int, m: re.Match[str], concept: Concept, end: int, nxt: int | None,
                   out: list[Mention], taken: list[tuple[int, int]]) -> None:
    """"Cr 1.4 on admission, improved to 0.5": a second statement about the same item."""
    limit = line_clause(raw, end)
    stop = len(limit) if nxt is None or nxt - end > len(limit) else max(nxt - end, 0)
    scope = raw[end:end + stop]
    for c in _CONTINUATION.finditer(scope):
        if c.group("norm"):
            s0, e0 = end + c.start("norm"), end + c.end("norm")
            if any(x.start <= s0 < x.end for x in out):
                continue
            emit(out, taken, Mention(line, s0, e0, f"{m.group(0).strip()} {c.group('norm')}", "trend", concept.cid,
                                     c.group("norm"), NumericClaim(trend=Trend(direction="down", word=c.group("norm"),
                                                                               normalized=True))))
            continue
        v = float(c.group("v").replace(",", ""))
        verb = c.group("verb")
        attrs: dict[str, Any] = {"value": v}
        peak = bool(re.search(r"peak", verb, re.I))
        if peak:
            attrs.update({"max": v, "max_lo": v})
        if not plausible(attrs, concept):
            continue
        # "Cr 1.4 on admission, improved to 0.5": with its origin stated, the change is a series, each
        # value its own claim (a peak: the maximum); a bare "rose to 2.3" keeps its direction claim
        s0, e0 = end + c.start("verb"), end + c.end()
        emit(out, taken, Mention(line, s0, e0, f"{m.group(0).strip()} {verb.split()[0]}",
                                 "range" if peak else "measurement", concept.cid, raw[s0:e0].strip(),
                                 numeric_claim(attrs)))


def _repletion(raw: str, line: int, concept: Concept, end: int, out: list[Mention],
               taken: list[tuple[int, int]]) -> None:
    """"K 3.1, repleted": the electrolyte replacement is a medication statement, unless the
    drug is named in the clause ("repleted with 40 mEq KCl" is found as the drug).
    """
    if concept.cid not in _REPLETION:
        return
    repl = re.match(r"[\s,]*(?:(?:this|last)\s+(?:am|pm|morning|evening|night)|today|overnight|yesterday)?[\s,]*"
                    r"(?:s/p\s+|and\s+|was\s+)?(repleted|replet(?:ing|ion)|replaced|repleated)\b", raw[end:end + 40],
                    re.I)
    if not repl:
        return
    rest = line_clause(raw, end + repl.end(1))
    if _REPLETION_DRUG.search(rest):
        return
    emit(out, taken, Mention(line, end + repl.start(1), end + repl.end(1), repl.group(1), "medication", "drug",
                             repl.group(1), MedicationClaim(drugs=(_REPLETION[concept.cid],), action="repleted",
                                                            repletes=concept.cid)))


_VOLUME = re.compile(r"^(?:l|ml|cc|mls)$", re.I)


def _unit_fits(unit: str | None, concept: Concept, after: str) -> bool:
    """A parsed unit that cannot belong to the concept ("4L" for a respiratory rate)."""
    if concept.kind == "output":  # a volume; a dose unit after the number makes it a dose ("PO 500 mg")
        return not re.match(r"\s*(?:mg|mcg|g|gm|grams?|units?|u|meq|mmol|tabs?|puffs?)\b", after, re.I)
    if unit in ("F", "C") and concept.cid not in _TEMP["concepts"]:
        return False
    if unit and _VOLUME.match(unit.strip()) and not _VOLUME.match(concept.unit or "") and (
            concept.cid not in _FLAGS["flow_unit_concepts"] or unit.strip().lower() != "l"):
        return False  # a volume is no lab's unit, but a tidal volume's own
    if re.match(r"\s*(?:L\b|lpm|nc\b|l/min)", after, re.I) and concept.cid not in _FLAGS["flow_unit_concepts"]:
        return False
    return True


def plausible(val: Mapping[str, Any], concept: Concept) -> bool:
    """Whether a parsed value can be this concept's (within its range; temperature in C or F)."""
    v = val.get("value", val.get("systolic", val.get("mean")))
    if v is None:
        return "systolic_min" in val or "mean_min" in val
    lo = concept.lo if concept.lo is not None else float("-inf")
    hi = concept.hi if concept.hi is not None else float("inf")
    if concept.cid in _TEMP["concepts"]:
        return any(a <= v <= b for a, b in _TEMP["plausible"])
    return lo <= float(v) <= hi


def _temperature_attrs(form: str, val: dict[str, Any]) -> None:
    v = val.get("value")
    if "unit" not in val or val["unit"] not in ("F", "C"):
        val["unit"] = "C" if v is not None and v < _TEMP["celsius_below"] else "F"
    if form.lower().replace(" ", "").replace("-", "") in _TEMP["max_forms"]:
        val.setdefault("max", v)
        val.setdefault("max_lo", v)


_O2_FLOW = re.compile(r"(?<![\d.])(?P<v>\d{1,2}(?:\.\d)?)\s*(?:L|lpm|l/min|liters?)(?:\b|(?=nc\b|nrb\b|"
                      r"fm\b))\s*(?:/\s*min\s*)?(?:of\s+o2\s+)?(?:via\s+)?"
                      r"(?P<dev>nc|nasal\s+cannula|fm|face\s*mask|face\s*tent|nrb|non-?rebreather|hfnc|high\s+flow|"
                      r"venti\s*mask|shovel\s*mask|o2)\b", re.I)
#: an oxygen device, then within its clause an oxygen flow ("nasal cannula 4 L", "trach mask FiO2 50%, 10-12 L")
_DEVICE_THEN_FLOW = re.compile(r"\b(?:nc|nasal\s+cannula|face\s*mask|face\s*tent|fm|nrb|non-?rebreather|hfnc|"
                               r"high\s+flow(?:\s+nc)?|venti\s*mask|shovel\s*mask|trach\s+mask|aerosol\s+mask|t-?piece|"
                               r"cool\s+aerosol|oxymizer)\b(?P<gap>[^.;:\n]{0,40}?)(?<![\d.\-])(?P<v>\d{1,2}(?:\.\d)?)"
                               r"(?:\s*-\s*(?P<v2>\d{1,2}(?:\.\d)?))?\s*(?:L|lpm|l/min|liters?)(?![A-Za-z])", re.I)
#: words between a device and a volume that make the volume no oxygen flow ("NC, UOP 1 L")
_NOT_FLOW_GAP = re.compile(r"\b(?:uop|urine|out(?:put)?|stool|given|bolus|ns|lr|fluid|i/o|total|neg(?:ative)?|"
                           r"pos(?:itive)?|even|in|x)\b|[+-]\s*$|\d", re.I)
_GAS_PANEL = (r"(?P<ph>[67]\.\d{1,2})\s*/\s*(?P<co2>\d{2,3})(?:\s*/\s*(?P<o2>\d{2,3})(?:\s*/\s*(?P<hco3>\d{1,2}))?)?"
              r"(?![\d/]|\.\d)")
#: a gas word, then what notes put between it and the values: "was", "here", "on AC", a clock time
_ABG = re.compile(r"\b(?P<w>[AV]BGs?|(?:arterial\s+|venous\s+|art\s+|blood\s+)?gas(?:es)?)\b"
                  r"(?:\s+(?:was|were|is|here|now|today|this\s+(?:am|morning)|repeat|of|at|on\s+[A-Za-z/%]+|"
                  r"\d{1,2}:\d{2}|[0-2]\d[0-5]\d)\b)*\s*[:=]?\s*" + _GAS_PANEL, re.I)
#: a pH-shaped triple needs no gas word: "1820 7.45/47/200" continuing a gas sentence
_BARE_GAS = re.compile(r"(?<![\d/.])(?P<ph>[67]\.\d{2})\s*/\s*(?P<co2>\d{2,3})\s*/\s*(?P<o2>\d{2,3})"
                       r"(?:\s*/\s*(?P<hco3>\d{1,2}))?(?![\d/]|\.\d)")


def blood_gas_and_flow_mentions(raw: str, line: int, out: list[Mention], taken: list[tuple[int, int]]) -> None:
    """Blood gases written as a triple and oxygen flows written before their device."""
    # blood gases written as a triple: "ABG 7.49/58/102" = pH / pCO2 / pO2 (/ HCO3)
    # a gas word may stand a few words before ("first gas was 7.04/63/137", "VBG 7.31/45"); a pH-shaped
    # triple is a gas without one; each analyte is one claim at the panel's time
    for pattern in (_ABG, _BARE_GAS):
        for m in pattern.finditer(raw):
            if overlaps(taken, m.start("ph"), m.end()) or not 6.8 <= float(m.group("ph")) <= 7.8:
                continue
            word = m.group("w") if "w" in pattern.groupindex else "gas"
            for group, (name, cid) in _FLAGS["blood_gas"].items():
                if m.group(group):
                    a, b = m.start(group), m.end(group)
                    emit(out, taken, Mention(line, a, b, f"{word} {name}", "measurement", cid, m.group(group),
                                             NumericClaim(reading=Reading(value=float(m.group(group)))),
                                             f"L{line}ABG{m.start()}"))
            taken.append((m.start(), m.end()))

    # oxygen flow written before its device: "2L NC", "4 L nasal cannula", "15L NRB"
    for m in _O2_FLOW.finditer(raw):
        if not overlaps(taken, m.start(), m.end()):
            emit(out, taken, Mention(line, m.start(), m.start() + len(m.group("v")) + 1, "O2 flow", "measurement",
                                     _FLAGS["o2_flow_concept"], m.group(0).strip(),
                                     NumericClaim(reading=Reading(value=float(m.group("v"))), unit="L/min")))
    # an oxygen flow after its device: "Face tent + nasal cannula 4 L", "trach mask ..., 10-12 L"
    for m in _DEVICE_THEN_FLOW.finditer(raw):
        gap = re.sub(r"\bfio2\s*\d{2,3}\s*%?|\d{2,3}\s*%", " ", m.group("gap"), flags=re.I)  # a FiO2 on the way
        if overlaps(taken, m.start("v"), m.end()) or _NOT_FLOW_GAP.search(gap):
            continue
        lo = float(m.group("v"))
        hi = float(m.group("v2")) if m.group("v2") else None
        if hi is not None and hi < lo:
            continue
        reading = Reading(value=lo, min=lo, max=hi) if hi is not None else Reading(value=lo)
        emit(out, taken, Mention(line, m.start("v"), m.end(), "O2 flow", "range" if hi is not None else "measurement",
                                 _FLAGS["o2_flow_concept"], raw[m.start("v"):m.end()].strip(),
                                 NumericClaim(reading=reading, unit="L/min")))


#: text between a value and a direction word that makes the word another statement's
_TOLD_BETWEEN = re.compile(r"[,;\n\d]|\.(?:\s|$)")
#: a trend word as the list item right after a value, closing it ("Tbili 9.0, down-trending through the day")
_ITEM_TREND = re.compile(r"\s*,\s*(?P<w>[A-Za-z][A-Za-z\- ]{1,22}?)(?=\s*(?:$|[,;.)]|\s(?:through|over|since|"
                         r"overnight|today|this|slowly|steadily|again|now|with|on|after)\b))")


def _item_trend(raw: str, end: int) -> tuple[str, str] | None:
    """(direction, word) of a trend word that is the whole list item after a value ending at ``end``."""
    m = _ITEM_TREND.match(raw, end)
    near = trend_word(m.group("w")) if m else None
    return near if near is not None and m is not None and near[1] == m.group("w").strip() else None


#: a list item that opens with its own name right before its number ("..., granular casts 9")
RANGE_PAIR_RULE = Rule("extract.range_pair", "A pressure written as a pair of ranges (ABP 88-170/45-80, PA "
                       "25-40/15-30) states two ranges of the period, the systolic and the diastolic, each its own "
                       "statement on the items of its part.", _range_pair, ("range",))
DEVICE_FLOW_RULE = Rule("extract.device_flow", "A flow in litres written after an oxygen device in its clause (nasal "
                        "cannula 4 L, trach mask 10-12 L) is the oxygen flow, unless an output or fluid word stands "
                        "between them.", blood_gas_and_flow_mentions, ("measurement", "range"))
SETTING_CHANGE_RULE = Rule("extract.setting_change", "Two values of a setting a clinician changes joined by an arrow "
                           "or from/to (PEEP decreased 8 -> 5) state one change: both values, in that order, at the "
                           "change's time; a lab series stays one claim per value.", measurement_mention, ("trend",))
PERIOD_BOUND_RULE = Rule("extract.period_bound", "A bound after an item's name with a whole-period word (MAPs > 65 all "
                         "shift) is a claim about every value of the period; without one, or after goal/keep, it is a "
                         "target and no statement.", _period_bound, ("range",))
