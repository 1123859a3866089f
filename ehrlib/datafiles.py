"""The one loader for the package's data files (``ehrlib/data/*.yaml`` and ``*.json``).

Vocabularies, cue words, concept flags, criteria and prices are data, not code; every
module reads them through :func:`load_data`, which caches the parsed document and, when a
JSON Schema of the same stem exists under ``ehrlib/data/schemas/``, validates it once so a
typo in a vocabulary fails at load with the file and the offending path rather than as a
silent miss at match time.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.resources
import json
from pathlib import Path
from typing import Any

import yaml

from ehrlib.disk_cache import cached_package_value, code_digest
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

    The result is cached and shared: callers must not mutate it. A fresh process reads the
    checked document from the user disk cache (:func:`ehrlib.disk_cache.cached_package_value`,
    keyed by the file, its schema and this module) rather than parsing and validating again:
    parsing ~20 files and importing the validator cost about a third of a second per start.
    """
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    files = importlib.resources.files("ehrlib")
    ref = files.joinpath("data", *name.split("/"))
    schema_ref = files.joinpath("data", "schemas", f"{stem}.schema.json")
    schema_text = schema_ref.read_text(encoding="utf-8") if schema_ref.is_file() else None
    if not isinstance(ref, Path) or not ref.is_file():   # not a plain file (a zipped install): no cache
        return _checked(name, schema_text)
    digest = code_digest(__file__) + hashlib.sha256((schema_text or "").encode("utf-8")).hexdigest()[:16]
    return cached_package_value(f"data-{name.replace('/', '-')}", ref, digest,
                                lambda: _checked(name, schema_text), _same, _same)


def _same(doc: Any) -> Any:
    return doc


def _checked(name: str, schema_text: str | None) -> Any:
    """The parsed file, validated against its schema (``schema_text``) when it has one."""
    text = data_text(name)
    doc = json.loads(text) if name.endswith(".json") else parse_data_yaml(text)
    if schema_text is not None:
        from ehrlib.jsonschemas import validation_errors  # deferred: only files with a schema pay for it

        errors = sorted(validation_errors(doc, json.loads(schema_text)), key=lambda e: list(e.path))
        if errors:
            err = errors[0]
            where = "/".join(str(p) for p in err.path) or "(top level)"
            raise ConfigError(f"ehrlib/data/{name}: {where}: {err.message}"
                              + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""))
    return doc
