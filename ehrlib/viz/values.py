"""How the viewer writes a charted value: at the precision it was recorded with.

MIMIC stores many measurements as single-precision floats and exports them with many more
digits than that precision holds, so a temperature charted as 96.6 reads
``96.599998474121094``, an amount of 80 mg ``80.0000061035`` and a rate ``0.0186154749``.
A single-precision number carries about seven significant digits; the digits beyond are
noise, and a reviewer should read 96.6, 80 and 0.018615475. So a value written with nine
or more significant digits is shown with the fewest decimal places that stay within
single-precision rounding of it (a relative 2^-23); one written with fewer (``7.1``,
``140.0``, ``19.966833``, ``Negative``) is shown as recorded. :func:`format_value` is the
one place the viewer turns a value into text.
"""
from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

__all__ = ["format_value"]

#: a plain decimal number as a table writes it (no thousands separators, no units)
_NUMBER = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: more significant digits than single precision holds (it guarantees 6, needs at most 9 to round-trip):
#: a text this long is a binary float printed out, not a value someone wrote
_NOISE_DIGITS = 9
#: single precision: 24 significant bits, so a stored value lies within this relative distance
_SINGLE = Decimal(2) ** -23


def _positional(number: Decimal) -> str:
    """A number without an exponent or trailing fractional zeros (``1.4E+2`` -> ``140``);
    one too large or too small to read positionally keeps its exponent.
    """
    if number and not -7 <= number.adjusted() <= 15:
        return str(number)
    out = format(number, "f")
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return "0" if out in ("", "-0") else out


def _significant(number: Decimal) -> int:
    """Significant digits as written (``96.599998474121094`` -> 17, ``140.0`` -> 4)."""
    return len(number.as_tuple().digits) if number else 1


def _at_single_precision(number: Decimal) -> str:
    """``number`` rounded to the fewest decimal places that keep it within single-precision
    rounding of itself (``96.599998474121094`` -> ``96.6``); never alters whole digits
    beyond rounding.
    """
    allowed = abs(number) * _SINGLE
    for places in range(0, 20):
        rounded = number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
        if abs(rounded - number) <= allowed:
            return _positional(rounded)
    return _positional(number)


def _decimal(number: Decimal) -> str:
    if not number.is_finite():
        return str(number)
    return _at_single_precision(number) if _significant(number) >= _NOISE_DIGITS else _positional(number)


def format_value(value: Any, text: Any = None) -> str | None:
    """A charted value as the viewer shows it; None when there is none.

    ``text`` is the row's recorded text value (preferred when present), ``value`` its
    numeric value: ``96.599998474121094`` (either form) reads ``96.6``, the number
    ``140.0`` reads ``140``, ``7`` reads ``7``; any other text (``140.0``, ``Negative``,
    ``<0.5``, ``11-20``) is kept as recorded.
    """
    if text is not None and str(text).strip():
        written = str(text).strip()
        if _NUMBER.fullmatch(written) and _significant(number := Decimal(written)) >= _NOISE_DIGITS:
            return _at_single_precision(number)
        return written
    if value is None or isinstance(value, (bool, int)):
        return None if value is None else str(value)
    if isinstance(value, float):
        return _decimal(Decimal(repr(value))) if math.isfinite(value) else str(value)
    if isinstance(value, Decimal):
        return _decimal(value)
    return format_value(None, value)
