"""The package's shape: no import cycles, no upward imports, deferred imports explained, small modules.

The import graph is derived from the source with ``ast`` (module-level and function-level
imports, relative imports resolved), not from what happens to be imported at runtime, so
an import hidden inside a function counts like any other. The layer order is the
``layers`` block of ``docs/architecture.md``.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ehrlib"
MAX_LINES = 500
#: long modules owned by the rule-engine rewrite (issue 10, offline part); they get a
#: ``Size:`` reason or are split there
SIZE_EXCEPTIONS = frozenset({"ehrlib/pipeline/offline/mentions.py"})


@lru_cache(maxsize=1)
def modules() -> dict[str, tuple[Path, bool]]:
    """{dotted name: (path, is package __init__)} of every module under ehrlib/."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


def _targets(name: str, is_pkg: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    """The ehrlib modules one import statement names (``from a import b`` names ``a.b`` when
    that is a module, else ``a``); names outside the package are dropped."""
    if isinstance(node, ast.Import):
        raw = [a.name for a in node.names]
    else:
        if node.level:
            base = name.split(".") if is_pkg else name.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        raw = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
    out = []
    for target in raw:
        if target.split(".")[0] != "ehrlib":
            continue
        while target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if target != name:
            out.append(target)
    return out


def import_graph(mods: dict[str, tuple[Path, bool]]) -> dict[str, set[str]]:
    known = set(mods)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (path, is_pkg) in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(_targets(name, is_pkg, node, known))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in graph.get(v, ()):
                    found.append(sorted(comp))
    return found


def read_layers(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """``[(layer, prefixes)]`` bottom first, from the fenced ``layers`` block."""
    m = re.search(r"```layers\n(.*?)```", text, re.S)
    if m is None:
        raise AssertionError("docs/architecture.md has no ```layers block")
    out = []
    for line in m.group(1).splitlines():
        if line.strip():
            layer, _, names = line.partition(":")
            out.append((layer.strip(), tuple(n.strip() for n in names.split(",") if n.strip())))
    return out


def layer_of(module: str, layers: list[tuple[str, tuple[str, ...]]]) -> int | None:
    """Index of the layer whose entry is the longest prefix of ``module`` (``ehrlib`` is exact)."""
    best: tuple[int, int] | None = None
    for i, (_, prefixes) in enumerate(layers):
        for p in prefixes:
            hit = module == p if p == "ehrlib" else module == p or module.startswith(p + ".")
            if hit and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return best[0] if best else None


def upward_imports(graph: dict[str, set[str]], layers: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    out = []
    for src, targets in sorted(graph.items()):
        for dst in sorted(targets):
            ls, ld = layer_of(src, layers), layer_of(dst, layers)
            if ls is not None and ld is not None and ld > ls:
                out.append(f"{src} ({layers[ls][0]}) -> {dst} ({layers[ld][0]})")
    return out


@pytest.fixture(scope="module")
def layers() -> list[tuple[str, tuple[str, ...]]]:
    return read_layers((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))


def test_no_import_cycles():
    assert cycles(import_graph(modules())) == []


def test_no_upward_imports(layers):
    assert upward_imports(import_graph(modules()), layers) == []


def test_every_module_has_a_layer(layers):
    assert [m for m in modules() if layer_of(m, layers) is None] == []


def test_function_local_imports_say_why_they_are_deferred():
    unexplained = []
    for name, (path, _) in modules().items():
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                for body in (getattr(node, f, None) for f in ("body", "orelse", "finalbody")):
                    if not isinstance(body, list):
                        continue
                    group: list[ast.stmt] = []
                    for stmt in [*body, None]:
                        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                            group.append(stmt)
                            continue
                        if group:  # one comment covers a run of consecutive imports
                            span = lines[max(group[0].lineno - 2, 0):group[-1].end_lineno]
                            if not any("# deferred:" in line for line in span):
                                unexplained.append(f"{name}:{group[0].lineno}")
                        group = []
    assert sorted(set(unexplained)) == []


def test_modules_stay_small_or_say_why():
    long = []
    for name, (path, _) in modules().items():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) <= MAX_LINES or rel in SIZE_EXCEPTIONS:
            continue
        doc = ast.get_docstring(ast.parse(text)) or ""
        if not re.search(r"^Size: \S", doc, re.M):
            long.append(rel)
    assert long == []


# --- the checks themselves, on known answers ------------------------------------------------

def test_cycle_finder_on_known_graphs():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_relative_and_from_imports_resolve(tmp_path):
    known = {"ehrlib.pkg", "ehrlib.pkg.a", "ehrlib.pkg.b", "ehrlib.other"}
    rel = ast.parse("from . import b\nfrom ..other import x\nfrom ehrlib.pkg.b import thing\nimport os").body
    got = [t for node in rel for t in _targets("ehrlib.pkg.a", False, node, known)]
    assert got == ["ehrlib.pkg.b", "ehrlib.other", "ehrlib.pkg.b"]


def test_upward_import_is_reported():
    layers = [("low", ("ehrlib.low",)), ("high", ("ehrlib.high",))]
    assert upward_imports({"ehrlib.low.x": {"ehrlib.high.y"}, "ehrlib.high.y": set()}, layers) == [
        "ehrlib.low.x (low) -> ehrlib.high.y (high)"]
    assert upward_imports({"ehrlib.high.y": {"ehrlib.low.x"}, "ehrlib.low.x": set()}, layers) == []
