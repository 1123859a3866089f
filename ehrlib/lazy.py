"""Packages whose exported names load their module on first use.

``ehrlib --help`` must not pay for pandas, DuckDB or SciPy, yet every command module
lives inside a package (``ehrlib.db.cli`` runs ``ehrlib/db/__init__.py`` first). A
package that calls :func:`lazy_package` lists its exports once, as imports under
``if TYPE_CHECKING:`` (so type checkers and readers see them); at run time those
imports are not executed, and each name is imported from its module when first read.
"""
from __future__ import annotations

import ast
import importlib
import sys
import types
from pathlib import Path
from typing import Any

__all__ = ["lazy_package", "exported_names"]


class _LazyPackage(types.ModuleType):
    """A package module that resolves its exported names on first access."""

    def __getattr__(self, name: str) -> Any:
        where = self.__dict__.get("_lazy_where", {})
        if name not in where:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[name]), name)
        self.__dict__[name] = value   # later reads are plain attribute lookups
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # loading a submodule sets it as an attribute of its package: a submodule named like
        # an export (``ehrlib.db.connect``, the module of ``connect``) must not hide the export
        if isinstance(value, types.ModuleType) and name in self.__dict__.get("_lazy_where", {}):
            return
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("_lazy_where", {})))


def exported_names(init_file: str | Path) -> dict[str, str]:
    """Map each name to its module: every ``from MODULE import NAME`` under ``if TYPE_CHECKING:`` in a
    package's ``__init__.py`` (absolute imports only).
    """
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    where: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
                    where.update({alias.asname or alias.name: stmt.module for alias in stmt.names})
    return where


def lazy_package(name: str) -> None:
    """Make package ``name`` (call with ``__name__`` from its ``__init__``) load its
    ``TYPE_CHECKING`` exports on first use instead of at import.
    """
    module = sys.modules[name]
    if module.__file__ is None:
        raise ImportError(f"{name} has no __init__ file to read its exports from")
    module.__dict__["_lazy_where"] = exported_names(module.__file__)
    module.__class__ = _LazyPackage
