"""The one loader for the package's data files (``ehrlib/data/*.yaml`` and ``*.json``).

Vocabularies, cue words, concept flags, criteria and prices are data, not code; every
module reads them through :func:`load_data`, which caches the parsed document and, when a
JSON Schema of the same stem exists under ``ehrlib/data/schemas/``, validates it once so a
typo in a vocabulary fails at load with the file and the offending path rather than as a
silent miss at match time.
"""
from __future__ import annotations

import functools
import importlib.resources
import json
from typing import Any

import yaml

from ehrlib.errors import ConfigError

__all__ = ["load_data", "data_text", "parse_data_yaml"]

#: libyaml's parser where PyYAML was built with it: the same documents, 5-10x faster than
#: the pure-Python one (a fresh process parses ~20 data files before its first note)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def data_text(name: str) -> str:
    """The text of ``ehrlib/data/<name>`` (``name`` may contain ``/``)."""
    ref = importlib.resources.files("ehrlib").joinpath("data", *name.split("/"))
    try:
        return ref.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"package data file ehrlib/data/{name} is missing (broken install?)") from None


def parse_data_yaml(text: str) -> Any:
    """Parse one of the package's own YAML files (trusted, bounded: not user input, which
    goes through :mod:`ehrlib.yamlfiles`) with the safe loader, in C when available.
    """
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)


@functools.cache
def load_data(name: str) -> Any:
    """Parse ``ehrlib/data/<name>`` (YAML or JSON by extension), checked against
    ``ehrlib/data/schemas/<stem>.schema.json`` when that schema exists.

    The result is cached and shared: callers must not mutate it.
    """
    text = data_text(name)
    doc = json.loads(text) if name.endswith(".json") else parse_data_yaml(text)
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    schema_ref = importlib.resources.files("ehrlib").joinpath("data", "schemas", f"{stem}.schema.json")
    if schema_ref.is_file():
        from ehrlib.jsonschemas import validation_errors  # deferred: only files with a schema pay for it

        schema = json.loads(schema_ref.read_text(encoding="utf-8"))
        errors = sorted(validation_errors(doc, schema), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.path) or "(top level)"
            raise ConfigError(f"ehrlib/data/{name}: {where}: {err.message}"
                              + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""))
    return doc
