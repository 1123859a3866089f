"""JSON Schema validation for data files and model replies, without the slow format extras.

``jsonschema`` probes optional format libraries when it is first imported; one of them
(``rfc3987_syntax``, installed alongside Jupyter) compiles a grammar on import and costs
seconds on every CLI start and every pipeline process. ehrlib validates structure only,
never the ``iri`` formats that library serves, so the first import here hides it from
``jsonschema``; other code that imports ``rfc3987_syntax`` itself still gets it.
"""
from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

__all__ = ["validation_errors", "best_error"]

_SLOW_OPTIONAL = ("rfc3987_syntax",)


def _jsonschema() -> ModuleType:
    if "jsonschema" not in sys.modules:
        hidden = [name for name in _SLOW_OPTIONAL if name not in sys.modules]
        for name in hidden:
            sys.modules[name] = None  # type: ignore[assignment]  # import of it raises ImportError
        try:
            import jsonschema  # deferred: the first import must see the slow extras hidden
        finally:
            for name in hidden:
                sys.modules.pop(name, None)
    import jsonschema  # deferred: already imported above or by the caller's process (cheap)

    return jsonschema


def validation_errors(doc: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """Every violation of ``schema`` (JSON Schema 2020-12) in ``doc``, as jsonschema errors."""
    return iter(_jsonschema().Draft202012Validator(schema).iter_errors(doc))


def best_error(doc: Any, schema: Mapping[str, Any]) -> Any | None:
    """The most relevant violation (jsonschema's ``best_match``), or None when ``doc`` is valid."""
    js = _jsonschema()
    return js.exceptions.best_match(js.Draft202012Validator(schema).iter_errors(doc))
