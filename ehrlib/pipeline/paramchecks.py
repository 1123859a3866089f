"""Checks of one parameter value: its type, range and finiteness, as small reusable rules.

:mod:`ehrlib.pipeline.params` keeps one table ``field -> rule``; a rule takes the key's
name and the value as given (YAML, a notebook, the command line or code) and returns it
in the field's type, or raises a one-line ConfigError naming the key. Adding a parameter
is one line in that table.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ehrlib.errors import ConfigError, suggestion

__all__ = ["Rule", "integer", "number", "text", "choice", "switch", "names", "json_mapping", "MAX_TEXT_CHARS"]

#: a rule: (key, value) -> the value in the field's type, or ConfigError
Rule = Callable[[str, Any], Any]
#: paths, model names and ids are short; a megabyte "model name" is a mistake
MAX_TEXT_CHARS = 4096
_SWITCH_WORDS = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False}


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"in {low:g}..{high:g}"
    return f">= {low:g}" if low is not None else f"<= {high:g}"


def _in_range(name: str, value: float, low: float | None, high: float | None) -> None:
    if (low is not None and value < low) or (high is not None and value > high):
        raise ConfigError(f"{name} must be {_bounds(low, high)}, got {value!r}")


def integer(low: int | None = None, high: int | None = None) -> Rule:
    """A whole number in ``low..high`` (``5``, ``5.0`` and ``"5"`` are 5; ``true`` is not)."""
    def rule(name: str, value: Any) -> int:
        if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
            value = int(value.strip())
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{name} must be a whole number, got {_show(value)}")
        _in_range(name, value, low, high)
        return value
    return rule


def number(low: float | None = None, high: float | None = None) -> Rule:
    """A finite number in ``low..high`` (``.inf`` and ``.nan`` are refused)."""
    def rule(name: str, value: Any) -> float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{name} must be a number, got {_show(value)}") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{name} must be a number, got {_show(value)}")
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"{name} must be a finite number, got {value!r}")
        _in_range(name, value, low, high)
        return value
    return rule


def _text_value(name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ConfigError(f"{name} must be text, got {_show(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{name} must be text, got {value!r}")
    out = str(value)
    if len(out) > MAX_TEXT_CHARS:
        raise ConfigError(f"{name} is {len(out)} characters long; at most {MAX_TEXT_CHARS} are allowed")
    if any(ord(c) < 32 or ord(c) == 127 for c in out):
        raise ConfigError(f"{name} contains a control character or line break: {out[:60]!r}")
    return out


def text(check: Callable[[str], str] | None = None) -> Rule:
    """A line of text (a number is taken as its digits); ``check`` may refine it."""
    def rule(name: str, value: Any) -> str:
        out = _text_value(name, value)
        return check(out) if check is not None else out
    return rule


def choice(options: tuple[str, ...]) -> Rule:
    """One of ``options``."""
    def rule(name: str, value: Any) -> str:
        out = _text_value(name, value)
        if out not in options:
            raise ConfigError(f"{name} must be one of {', '.join(options)}, got {out[:60]!r}"
                              + suggestion(out, options))
        return out
    return rule


def switch(name: str, value: Any) -> bool:
    """on/off (also true/false, yes/no)."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower() if isinstance(value, str) else None
    if word in _SWITCH_WORDS:
        return _SWITCH_WORDS[word]
    raise ConfigError(f"{name} must be on|off, got {_show(value)}")


def names(allowed: tuple[str, ...] | None = None, what: str = "names") -> Rule:
    """A list of names (or one name, or a comma/space-separated string), each in ``allowed``."""
    def rule(name: str, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [v for v in value.replace(",", " ").split() if v] if allowed is not None else [value]
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{name} must be a list, got {_show(value)}")
        out = tuple(_text_value(f"{name}[{i}]", v) for i, v in enumerate(value))
        bad = [v for v in out if allowed is not None and v not in allowed]
        if bad:
            raise ConfigError(f"{name}: unknown {what} {bad[:5]}{suggestion(bad[0], allowed or ())} "
                              f"(expected some of {', '.join(allowed or ())})")
        return out
    return rule


def _json_like(path: str, value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"{path} must be a finite number, got {value!r}")
        return value
    if isinstance(value, (list, tuple)):
        return [_json_like(f"{path}[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        bad = [k for k in value if not isinstance(k, str)]
        if bad:
            raise ConfigError(f"{path}: keys must be text, got {bad[0]!r}")
        return {k: _json_like(f"{path}.{k}", v) for k, v in value.items()}
    raise ConfigError(f"{path}: {type(value).__name__} values are not allowed (text, numbers, lists, mappings)")


def json_mapping(sub_mappings: tuple[str, ...] = ()) -> Rule:
    """A mapping with text keys and plain values (what the manifest can record as JSON);
    the keys in ``sub_mappings`` must themselves hold mappings.
    """
    def rule(name: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{name} must be a mapping, got {_show(value)}")
        out = _json_like(name, value)
        for key in sub_mappings:
            if out.get(key) is not None and not isinstance(out[key], dict):
                raise ConfigError(f"{name}.{key} must be a mapping, got {_show(out[key])}")
        return dict(out)
    return rule


def _show(value: Any) -> str:
    """A short rendering of a bad value (a huge list is not echoed whole)."""
    shown = repr(value)
    return f"{type(value).__name__} {shown[:60]}{'...' if len(shown) > 60 else ''}"
