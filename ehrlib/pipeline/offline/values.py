"""Values written after a mention: numbers, units, ranges, blood pressures and series.

What notes write, and what it becomes (the parse, then a :class:`~ehrlib.pipeline.claims.NumericClaim`):

* ``HR 88 (80-110)``                     value 88, min 80, max 110
* ``BP 110/60(75) {95/50(62) - 130/80(90)}``  systolic/diastolic/mean + their min-max
* ``T 38.5C`` / ``Tm 101.2``             value + unit (°F/°C by unit or magnitude)
* ``Cr 1.2 <- 1.8 <- 2.3`` / ``WBC 14.2 -> 11.0`` / ``from 2.3 to 1.8``  a series, oldest first
* ``peaked at 2.3`` / ``nadir 7.1`` / ``up to 120s``   a max/min statement; ``110s`` a decade

Which concept takes a blood-pressure value is data (``offline_concept_flags.yaml``).
"""
from __future__ import annotations

import re
from typing import Any

from ehrlib.pipeline.claims import NumericClaim, claim_from_attributes
from ehrlib.pipeline.offline.clock_tokens import reads_as_clock
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.mention import NUM, concept_flags
from ehrlib.pipeline.offline.trends import TREND_VERB, verb_direction

__all__ = ["parse_bp", "parse_value", "numeric_claim"]

_BP_ONE = r"(?P<{p}s>\d{{2,3}})\s*/\s*(?P<{p}d>\d{{2,3}})(?:\s*\(\s*(?P<{p}m>\d{{2,3}})\s*\))?"
_BP = re.compile(
    _BP_ONE.format(p="v")
    + r"(?:\s*[\{\[(]\s*" + _BP_ONE.format(p="lo") + r"\s*(?:-|–|to)\s*" + _BP_ONE.format(p="hi") + r"\s*[\}\])])?")
_BP_DECADES = re.compile(r"(?P<s1>\d{2,3})s(?:\s*-\s*(?P<s2>\d{2,3})s)?(?:\s*/\s*(?P<d1>\d{2,"
                         r"3})s?(?:\s*-\s*(?P<d2>\d{2,3})s)?)?")


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


_UNIT = (r"(?:°\s*[FC]|deg(?:rees)?\s*[FC]?|[FC](?![A-Za-z])|%|mg/dl|mmol/l|meq/l|k/ul|g/dl|bpm|mmhg|cc/hr|ml/hr|cc/h|"
         r"ml/h|"
         r"cc|ml|l(?![A-Za-z])|kg|lbs?|ng/ml|iu/l|u/l|pg/ml|/min|insp/min|breaths/min|sec|s(?![A-Za-z]))")
_SEP = (r"(?:\+{1,2}(?=[\s:=\d]))?(?:-(?=-?\d))?[\s:=,~]*(?:(?:is|was|were|are|has\s+been|had\s+been|of|at|now|"
        r"remains|remained|stays|stayed|currently|with|on|initially|stable|about|approx\.?|approximately|ranged|ranging)\s+)*~?\s*"
        + TREND_VERB + r"?(?:(?:at|to)\s+)?(?:the\s+(?=\d+s\b))?")  # "to the 30s": a decade
_ARROWS = r"->|-->|→|=>|<-|<--|←|\bto\b"
#: a short note on one value of a series: "24.3 (AM) -> 25.8", "2.1 (0600) -> 1.7"
_NOTE = r"(?:\s*\((?![^()]*\d\.\d)[A-Za-z0-9:? ]{1,12}\))?"
_SERIES = re.compile(r"(?P<body>(?:" + NUM + r")" + _NOTE + r"(?:\s*(?:" + _ARROWS + r")\s*(?:" + NUM + r")" + _NOTE
                     + r")+)")
#: a dose or a count after a number ("2 gm", "40 mEq", "1 bag"): what was given, never a level
_DOSE_AFTER = re.compile(r"\s*(?:mg|mcg|g|gm|grams?|meq|mmol|units?|u|tabs?|amps?|bags?|vials?|doses?)\b", re.I)
_FROM_TO = re.compile(r"(?:(?:weaned|titrated|changed|went|going|gone|increased|decreased|improved|reduced|dropped|"
                      r"rose|fell|down|up|climbed)\s+)?from\s+(?P<a>" + NUM + r")\s*"
                      r"(?:" + _UNIT
                      + r")?\s*(?:to|->)\s*(?:a\s+)?(?:(?:peak|high|max(?:imum)?|nadir|low)\s+(?:of\s+)?)?"
                      r"(?P<b>" + NUM + r")", re.I)
_VALUE_FROM = re.compile(r"(?P<b>" + NUM + r")\**\s*(?:" + _UNIT
                         + r")?\s*(?:\(\s*|,\s*|\s+)(?:from|down\s+from|up\s+from|"
                         r"increased\s+from|decreased\s+from|prev(?:ious(?:ly)?)?|was)\s*(?P<a>" + NUM + r")\s*\)?",
                         re.I)
_MAXMIN = re.compile(r"(?P<w>peaked\s+at|peak(?:ing)?\s+(?:of|at)?|max(?:imum)?\s+(?:of)?|as\s+high\s+as|up\s+to|"
                     r"to\s+as\s+high\s+as|"
                     r"nadir(?:ed)?\s+(?:of|at)?|as\s+low\s+as|down\s+to|min(?:imum)?\s+(?:of)?|high(?:est)?\s+(?:of)?|"
                     r"low(?:est)?\s+(?:of)?|to\s+the|to|in\s+the|into\s+the|in\s+the\s+(?:low|mid|high|upper)|>|<|≥|≤)\s*"
                     r"(?P<v>" + NUM + r")(?P<dec>s)?", re.I)
_RANGE_WORD = re.compile(r"(?:(?:in|within)\s+the\s+)?(?P<a>" + NUM + r")\s*(?:-|–|to)\s*(?P<b>" + NUM + r")\s+range\b",
                         re.I)
_SINGLE = re.compile(r"(?P<v>" + NUM + r")\**(?P<dec>s)?(?:\s*-\s*(?P<v2>" + NUM + r")(?P<dec2>s)?)?\s*(?P<u>" + _UNIT
                     + r")?"
                     r"(?:\s*\(\s*(?P<lo>" + NUM + r")\s*-\s*(?P<hi>" + NUM + r")\s*\))?", re.I)


def _f(x: str) -> float:
    return float(x.replace(",", ""))


def _unit_norm(u: str | None) -> str | None:
    if not u:
        return None
    low = u.lower().replace(" ", "").replace("°", "").replace("deg", "").replace("rees", "")
    if low in ("f", "c"):
        return low.upper()
    return u.strip()


def parse_value(text: str, concept: Concept | None = None) -> dict[str, Any] | None:
    """Parse the value that follows a mention (``text`` starts right after the mention).

    Returns the parse in the numeric claim's flat form (:func:`numeric_claim` types it):
    ``value``/``unit``, ``min``/``max``, ``series`` (oldest first) and ``direction``, or
    ``None`` when no value follows.
    """
    m = re.match(_SEP, text, re.I)
    pos = m.end() if m else 0
    clock = re.match(r"\d{4}(?![\d.,]\d|\d)", text[pos:])
    if clock and reads_as_clock(text, pos, pos + 4):  # "ABG 0631: 7.42/...", "INR at 0348 10.2": the draw's time
        after = re.compile(r"\s*(?:\([^()]{0,20}\))?\s*[:,]?").match(text, pos + 4)
        m = re.compile(_SEP, re.I).match(text, after.end() if after else pos + 4)
        pos = m.end() if m else pos + 4
    rest = text[pos:]
    verb = re.search(TREND_VERB + r"(?:(?:at|to)\s+)?$", text[:pos], re.I)
    direction = verb_direction(verb.group(0), concept) if verb else None
    out = _parse_value_at(rest, concept, pos)
    if out is not None and len(out.get("series", ())) == 2 and re.search(r"\brang(?:ed|ing)\s+$", text[:pos], re.I):
        lo, hi = sorted(out.pop("series"))
        out.pop("direction", None)
        out.update({"min": lo, "max": hi, "value": lo})  # "K ranged 3.1 to 3.5": a range, not a trend
        return out
    stated_range = out is not None and bool(out.pop("_range", False))
    if out is not None and not direction and re.search(r"\bstable\b", text[:pos], re.I) and not stated_range:
        # "stable at 2.1", "stable in the 150s"; "stable in the 26-31 range" states its range instead
        out["direction"] = "stable"
        out["trend_word"] = "stable"
    if out is not None and verb is not None and direction and "direction" not in out:
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


def numeric_claim(parsed: dict[str, Any]) -> NumericClaim:
    """The claim of a parse (``_end`` removed): the parse's keys are the numeric claim's flat form."""
    claim = claim_from_attributes("measurement", parsed)
    assert isinstance(claim, NumericClaim)
    return claim


def _parse_value_at(rest: str, concept: Concept | None, pos: int) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if concept is not None and concept.cid in concept_flags()["blood_pressure_values"]:
        bp = parse_bp(rest)
        if bp is not None:
            end = int(bp.pop("_end"))
            bp["_end"] = pos + end
            return bp
    s = _SERIES.match(rest)
    if s and _DOSE_AFTER.match(rest, s.end()):
        # "Mg 1.5 -> 2 gm Mg sulfate": the arrow leads to the dose given for the value, not to a next value
        last = list(re.finditer(_ARROWS, s.group("body")))[-1]
        return _parse_value_at(rest[:s.start("body") + last.start()], concept, pos)
    if s:
        body = re.sub(r"\([^()]*\)", " ", s.group("body"))
        nums = [_f(x) for x in re.findall(r"(?<![\d.,])" + NUM, re.sub(_ARROWS, " ", body))]
        if re.search(_ARROWS, body).group(0) in ("<-", "<--", "←"):  # type: ignore[union-attr]  # a series has one
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
    rg = _RANGE_WORD.match(rest)
    if rg:  # "stable in the 26-31 range": the values of the period lie between the two
        lo, hi = sorted((_f(rg.group("a")), _f(rg.group("b"))))
        return {"min": lo, "max": hi, "value": lo, "_end": pos + rg.end(), "_range": True}
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
