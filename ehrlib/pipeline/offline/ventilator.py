"""Ventilator settings written in the ventilator's shorthand.

A ventilator setting is a (setting, value) pair bound to the setting named nearest before
the value, but the ventilator's shorthand leaves names out. After a volume-control mode
("AC 500 x 12", "A/C 450/14") or a tidal-volume name ("Vt 550 x 20") two numbers are the set
tidal volume (mL) and the set breath rate, and one number in a tidal volume's range ("AC
450") is the tidal volume alone; in a ventilator clause a bare "rate" ("-> rate
10") is the set rate, not the patient's respiratory rate. The mode word itself states the
charted Ventilator Mode ("AC" is charted "Assist Control" or "CMV/ASSIST/AutoFlow"),
judged by mode class (``finding_states.yaml`` ``ventilator_mode``). A mode word counts only in a
ventilator context: a setting after it, a cue before it ("on", "back on", "mode:"), or an
arrow to or from another mode; "AC/HS" fingersticks are meal times. On a ventilator line or
after a setting, "MAP" with values of a few cmH2O is the mean airway pressure. The words are
data (``ventilator.yaml``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import FindingClaim
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mention import Mention, emit, overlaps
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.values import numeric_claim, parse_value

__all__ = ["ventilator_mentions", "RULE", "AIRWAY_MEAN_RULE"]

#: volume x rate right after a mode or a tidal-volume name ("500 x 12", ": 450/14", "550cc x 20")
_VOL_X_RATE = re.compile(r"\s*:?\s*(?:(?:vt|tv)\s*)?(?P<a>\d{3,4})\s*(?:ml|cc)?\s*(?:x|/|×)\s*(?P<b>\d{1,2})(?![\d.])",
                         re.I)
#: a tidal volume alone after a volume-control mode ("AC 450, FiO2 0.8")
_VOL_ONLY = re.compile(r"\s*:?\s*(?:(?:vt|tv)\s*)?(?P<a>\d{3,4})\s*(?:ml|cc)?(?![\d.]|\s*(?:x|/|×|%))", re.I)
#: a pressure pair after a pressure mode ("PS 12/5", "CPAP/PSV 10/5")
_PRESSURES = re.compile(r"\s*:?\s*\d{1,2}\s*/\s*\d{1,2}(?![\d.])")
#: "MAP" in a ventilator clause: the mean airway pressure, a few cmH2O ("; MAP 13-14")
_AIRWAY_MAP = re.compile(r"(?<![A-Za-z])MAPs?(?![A-Za-z])")
#: a line headed as the ventilator's ("Vent:", "Ventilator settings:")
_VENT_LINE = re.compile(r"^\W*(?:vent(?:ilator)?(?:\s+settings)?|settings)\s*:", re.I)
#: the number of a rate word ("rate 10", "rate of 14", "rate decreased to 12")
_RATE_VALUE = re.compile(r"\s*(?:(?:of|to|at|is|was|(?:de|in)creased\s+to|changed\s+to)\s+)?(?P<n>\d{1,2})"
                         r"(?![\d.%/]|\s*(?:cc|ml|mg|mcg|units?|%))", re.I)
#: a heading naming the mode right before it
_HEADING = re.compile(r"\b(?:ventilator|vent)\s+mode\s*:?\s*$", re.I)
_ARROW = re.compile(r"\s*(?:->|→|-->|>)\s*")


@functools.cache
def _data() -> Mapping[str, re.Pattern[str]]:
    d = load_data("ventilator.yaml")
    flags = {"modes": 0, "volume_modes": 0, "context": re.I, "not_after": re.I, "vt_words": re.I, "rate_words": re.I}
    return {k: re.compile(d[k], f) for k, f in flags.items()}


def _numeric(line: int, start: int, end: int, text: str, concept: str, value: str, unit: str) -> Mention:
    return Mention(line, start, end, text, "measurement", concept, value,
                   numeric_claim({"value": float(value), "unit": unit}))


def _volume_and_rate(raw: str, line: int, name_start: int, x: re.Match[str], out: list[Mention],
                     taken: list[tuple[int, int]]) -> None:
    """The tidal volume and the set rate of "500 x 12" (``x`` matched after the name)."""
    a, b = int(x.group("a")), int(x.group("b"))
    if not (150 <= a <= 1200 and 4 <= b <= 40):
        return
    if not overlaps(taken, x.start("a"), x.end("a")):
        emit(out, taken, _numeric(line, name_start, x.end("a"), raw[name_start:x.end("a")].strip(),
                                  "tidal_volume", x.group("a"), "mL"))
    if not overlaps(taken, x.start("b"), x.end("b")):
        emit(out, taken, _numeric(line, x.start("b"), x.end("b"), x.group("b"), "vent_rate", x.group("b"),
                                  "insp/min"))


def ventilator_mentions(raw: str, line: int, out: list[Mention], taken: list[tuple[int, int]]) -> None:
    """Emit the ventilator modes, volume x rate settings and set rates of one line."""
    d = _data()
    modes = [m for m in d["modes"].finditer(raw) if not overlaps(taken, m.start(), m.end())
             and not d["not_after"].match(raw[m.end():])]
    vent_clause_starts: list[int] = []
    for i, m in enumerate(modes):
        volume_mode = bool(d["volume_modes"].match(m.group(0)))
        x = _VOL_X_RATE.match(raw, m.end()) if volume_mode else None
        vol = _VOL_ONLY.match(raw, m.end()) if volume_mode and x is None else None
        if vol and not 150 <= int(vol.group("a")) <= 1200:
            vol = None
        pressures = _PRESSURES.match(raw, m.end())
        arrow = (i + 1 < len(modes) and _ARROW.fullmatch(raw[m.end():modes[i + 1].start()])) or (
            i > 0 and _ARROW.fullmatch(raw[modes[i - 1].end():m.start()]))
        cue = d["context"].search(raw[max(0, m.start() - 25):m.start()])
        if not (x or vol or pressures or arrow or cue):
            continue
        head = _HEADING.search(raw, 0, m.start())
        if head:  # "Ventilator mode: AC": the heading names what the mode word states
            taken.append((head.start(), head.end()))
        emit(out, taken, Mention(line, m.start(), m.end(), m.group(0), "finding", "ventilator_mode", m.group(0),
                                 FindingClaim(words=m.group(0))))
        vent_clause_starts.append(m.start())
        if x:
            _volume_and_rate(raw, line, x.start("a"), x, out, taken)
        elif vol and not overlaps(taken, vol.start("a"), vol.end("a")):
            emit(out, taken, _numeric(line, vol.start("a"), vol.end("a"), vol.group("a"), "tidal_volume",
                                      vol.group("a"), "mL"))

    for v in d["vt_words"].finditer(raw):
        x = _VOL_X_RATE.match(raw, v.end())
        if x and not overlaps(taken, v.start(), v.end()):
            _volume_and_rate(raw, line, v.start(), x, out, taken)
            vent_clause_starts.append(v.start())
    _airway_means(raw, line, vent_clause_starts, out, taken)
    for r in d["rate_words"].finditer(raw):
        n = _RATE_VALUE.match(raw, r.end())
        opened = [s for s in vent_clause_starts if s < r.start() and not re.search(r"[.;]\s", raw[s:r.start()])]
        if n is None or not opened or overlaps(taken, r.start(), n.end("n")) or \
                re.search(r"(?:heart|resp\w*|pulse|drip|infusion|pump)\s+$", raw[:r.start()], re.I):
            continue
        if 4 <= int(n.group("n")) <= 40:
            emit(out, taken, _numeric(line, r.start(), n.end("n"), raw[r.start():n.end("n")], "vent_rate",
                                      n.group("n"), "insp/min"))


def _airway_means(raw: str, line: int, vent_starts: list[int], out: list[Mention],
                  taken: list[tuple[int, int]]) -> None:
    """"Vent: AC 500 x 14, PEEP 10; MAP 13-14": in a ventilator line or after a mode or a setting on the
    line, "MAP" with values of a few cmH2O is the mean airway pressure, not the mean arterial pressure.
    """
    concept = load_lexicon().concepts.get("mean_airway_pressure")
    if concept is None:
        return
    for a in _AIRWAY_MAP.finditer(raw):
        in_vent = _VENT_LINE.match(raw) or any(s < a.start() for s in vent_starts)
        if overlaps(taken, a.start(), a.end()) or not in_vent:
            continue
        val = parse_value(raw[a.end():], concept)
        if val is None or "series" in val:
            continue
        nums = [float(val[k]) for k in ("value", "min", "max") if val.get(k) is not None]
        if not nums or not all(concept.lo is not None and concept.hi is not None and concept.lo <= v <= concept.hi
                               for v in nums):
            continue  # "MAP 65-80" is the arterial mean even on a ventilator line
        end = a.end() + int(val.pop("_end"))
        kind = "range" if "min" in val and "max" in val else "measurement"
        emit(out, taken, Mention(line, a.start(), end, a.group(0), kind, "mean_airway_pressure",
                                 raw[a.end():end].strip(" :"), numeric_claim(val)))


RULE = Rule("extract.ventilator_shorthand", "A ventilator setting is bound to the setting named nearest before it; "
            "after a volume-control mode or a tidal-volume name two numbers are the set tidal volume x the set rate, "
            "a bare rate in a ventilator clause is the set rate, and a mode word in a ventilator context is a claim "
            "about the charted mode.", ventilator_mentions, ("measurement", "finding"))
AIRWAY_MEAN_RULE = Rule("extract.airway_mean", "On a ventilator line or after a ventilator setting, MAP with values "
                        "of a few cmH2O is the mean airway pressure; values of an arterial pressure stay the mean "
                        "arterial pressure.", _airway_means, ("measurement", "range"))
