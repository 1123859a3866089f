"""The order a drip's rate change claims ("increased 5.8 -> 8 mg/hr", "weaned from 2 to
0.5 mg/hr"): a rule of the :mod:`.medications` chain. Each rate is checked on its own by the
rate rule; this one reads their order against the charted rates.
"""
from __future__ import annotations

import re

from ehrlib.pipeline.offline.verification.deciding import num
from ehrlib.pipeline.offline.verification.doses import rate_matches
from ehrlib.pipeline.offline.verification.medrows import med as _med
from ehrlib.pipeline.offline.verification.medrows import names as _names
from ehrlib.pipeline.offline.verification.session import Case, verdict
from ehrlib.pipeline.offline.verification.windows import row_interval
from ehrlib.pipeline.records import Verdict

__all__ = ["rate_change", "change_of"]

#: the rate a change starts from, right before the step ("5.8 -> 8 mg/hr", "from 2 mg/hr to 0.5"):
#: a number, its unit, then an arrow or "to" (in the step's own words when it begins with "to")
_FROM_RATE = re.compile(r"(?<![\d.])(?P<a>\d+(?:\.\d+)?)\s*(?:[a-z]+(?:/[a-z]+)*\s*)?(?P<arrow>-+>|→|>|\bto\b)?\s*$",
                        re.I)


#: a change told after the drug's name, from its own rate ("gtt increased 5.8 -> 8 mg/hr", "weaned from
#: 160 mcg/min down to 10")
_TO_RATE = re.compile(r"(?<![\d.])(?P<a>\d+(?:\.\d+)?)\s*(?:[a-z]+(?:/[a-z]+)*\s*)?"
                      r"(?:-+>|→|(?:(?:down|up|back)\s+)?\bto\b)\s*~?"
                      r"(?P<b>\d+(?:\.\d+)?)", re.I)


def change_of(line: str, span: tuple[int, int], text: str, rate: float) -> tuple[float, float] | None:
    """(old, new) rate of a change a rate claim belongs to: the claim's rate is the new one
    ("-> 8 mg/hr", "to 0.5 mg/hr" after "from 2 mg/hr") or the old one of the change told
    right after the drug's name ("Midazolam gtt increased 5.8 -> 8 mg/hr").
    """
    before = line[max(0, span[0] - 30):span[0]]
    got = _FROM_RATE.search(before)
    if got is not None and (got.group("arrow") or re.match(r"\s*to\b", text, re.I)) and not re.search(
            r"[;.]\s", before[got.start():]):
        old = float(got.group("a"))
        return (old, rate) if abs(old - rate) > 1e-9 else None
    after = _TO_RATE.search(line[span[1]:span[1] + 40])
    if after is not None and abs(float(after.group("a")) - rate) < 1e-9 and not re.search(
            r"[;,]", line[span[1]:span[1] + after.start()]):
        new = float(after.group("b"))
        return (rate, new) if abs(new - rate) > 1e-9 else None
    return None


def rate_change(c: Case) -> Verdict | None:
    """"increased 5.8 -> 8 mg/hr": a change claims its order as well as its rates: a row at
    the new rate must begin after a row at the old one in the statement's window. Each rate
    is checked on its own by the rate rule; this rule only reads their order.
    """
    e, m, line = c.entity, _med(c), c.line()
    if m.rate is None or line is None or e.span is None or not m.infusion:
        return None
    change = change_of(line, e.span, e.text, float(m.rate))
    if change is None:
        return None
    old, new, unit = change[0], change[1], m.rate_unit or ""
    rated = sorted(((iv[0], r) for r in c.item_rows()[0] if (r.get("extra") or {}).get("rate") is not None
                    and (iv := row_interval(r))), key=lambda x: x[0])
    at_old = [t for t, r in rated if rate_matches(old, unit, r)]
    at_new = [t for t, r in rated if rate_matches(new, unit, r)]
    if at_old and at_new and not any(t > min(at_old) for t in at_new):
        return verdict(c, False, f"{_names(c)}: stated change {num(old)} -> {num(new)} {unit}, but {num(new)} "
                       f"was charted only before {num(old)} (last at {max(at_new):%Y-%m-%d %H:%M}, first {num(old)} at "
                       f"{min(at_old):%Y-%m-%d %H:%M})", [r for _, r in rated][:4])
    return None
