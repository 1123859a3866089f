"""Packaging: declared dependencies cover every import, installs agree, the lock covers them.

The import check reads `pyproject.toml` and the source tree, never a list kept here, so a
dependency someone adds (or forgets to add) is judged by the same rule:

- an import at module level, outside ``try/except ImportError``, runs on ``import ehrlib.x``
  and must be a core dependency (``pip install ehrlib`` with no extras must import it);
- an import inside a function, or guarded by ``try/except ImportError``, may come from an
  extra; a guarded import that no extra declares must at least be named in the docs, so a
  user can find out what installing it changes.
"""
from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import yaml

from conftest import REPO_ROOT

_IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def _project() -> dict:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]


def _expand(project: dict, extra: str, seen: frozenset = frozenset()) -> list[str]:
    """The requirements of one extra, with self-references (``ehrlib[notebooks]``) expanded."""
    out = []
    for req in project["optional-dependencies"][extra]:
        if _name(req) == project["name"]:
            inner = re.search(r"\[(.*)\]", req).group(1)
            for sub in (s.strip() for s in inner.split(",")):
                if sub not in seen:
                    out += _expand(project, sub, seen | {extra})
        else:
            out.append(req)
    return out


@dataclass(frozen=True, slots=True)
class _Import:
    module: str  # top-level name
    path: str
    line: int
    module_level: bool
    guarded: bool


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(k, ast.Name) and k.id in _IMPORT_ERRORS for k in kinds)


def _imports_in(path: Path, source: str) -> list[_Import]:
    found: list[_Import] = []

    def visit(node: ast.AST, module_level: bool, guarded: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            module_level = False
        if isinstance(node, ast.Try) and any(_catches_import_error(h) for h in node.handlers):
            for child in node.body:
                visit(child, module_level, True)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, module_level, guarded)
            return
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top not in sys.stdlib_module_names and top not in ("__future__", "ehrlib"):
                found.append(_Import(top, str(path.relative_to(REPO_ROOT)), node.lineno, module_level, guarded))
        for child in ast.iter_child_nodes(node):
            visit(child, module_level, guarded)

    visit(ast.parse(source), True, False)
    return found


def _third_party_imports() -> list[_Import]:
    found = []
    for path in sorted((REPO_ROOT / "ehrlib").rglob("*.py")):
        found += _imports_in(path, path.read_text(encoding="utf-8"))
    return found


@functools.cache
def _installed_providers() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    """Distribution names that provide top-level `module` (its own name when not installed)."""
    installed = _installed_providers().get(module, [])
    return {_name(d) for d in installed} or {_name(module)}


def _undeclared(imports: list[_Import], project: dict, docs: str) -> list[str]:
    core = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for e in project.get("optional-dependencies", {}) for r in _expand(project, e)}
    problems = []
    for imp in imports:
        dists = _distributions(imp.module)
        where = f"{imp.path}:{imp.line} imports {imp.module}"
        if dists & core:
            continue
        if imp.module_level and not imp.guarded:
            extra_note = " (it is only in an extra: import it inside the function that needs it)" if dists & extras else ""
            problems.append(f"{where}: not a core dependency in pyproject.toml{extra_note}")
        elif not dists & extras and not (imp.guarded and any(d in docs for d in dists | {imp.module})):
            problems.append(f"{where}: declared neither as a core dependency nor in an extra")
    return problems


def _docs_text() -> str:
    files = [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", *(REPO_ROOT / "docs").glob("*.md")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files if p.exists()).lower()


def test_every_third_party_import_is_declared():
    imports = _third_party_imports()
    assert {i.module for i in imports} >= {"duckdb", "pandas"}, "the import scan found nothing"
    problems = _undeclared(imports, _project(), _docs_text())
    assert not problems, "\n".join(problems)


def test_import_check_catches_an_undeclared_import(tmp_path):
    """The rule itself: module-level extras, unknown packages and guarded imports."""
    project = {"name": "ehrlib", "dependencies": ["pandas>=2"],
               "optional-dependencies": {"notebooks": ["papermill"], "dev": ["ehrlib[notebooks]", "pytest"]}}
    source = (
        "import os\nimport pandas as pd\nimport nosuchpkg_xyz\nimport papermill\n"
        "def f():\n    import papermill\n    import otherpkg_xyz\n"
        "try:\n    import guardedpkg_xyz\nexcept ImportError:\n    pass\n"
        "try:\n    import documentedpkg_xyz\nexcept (ModuleNotFoundError, OSError):\n    pass\n"
    )
    path = REPO_ROOT / "ehrlib" / "probe.py"
    imports = _imports_in(path, source)
    problems = _undeclared(imports, project, docs="install documentedpkg_xyz for ...")
    lines = sorted(int(p.split(":")[1].split()[0]) for p in problems)
    # 3: unknown at module level; 4: an extra at module level; 7: unknown in a function;
    # 9: guarded but neither in an extra nor documented. 2, 6 and 13 are fine.
    assert lines == [3, 4, 7, 9], problems


def test_environment_yml_matches_pyproject():
    """environment.yml installs what `make install` does: core, notebooks and dev."""
    project = _project()
    wanted = {_name(r): r for r in project["dependencies"]}
    wanted.update({_name(r): r for r in _expand(project, "dev")})
    env = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    pip_block = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    have = {_name(r): r for r in pip_block if not r.startswith("-")}
    assert set(have) == set(wanted), (
        f"only in pyproject: {sorted(set(wanted) - set(have))}; only in environment.yml: {sorted(set(have) - set(wanted))}"
    )
    for name, requirement in wanted.items():
        assert have[name].replace(" ", "") == requirement.replace(" ", ""), f"{name}: version specs differ"


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, _, version = line.partition("==")
            pins[_name(name)] = version.split(";")[0].strip()
    return pins


def test_constraints_pin_every_installed_requirement():
    """constraints.txt (from `make lock`) pins each requirement of core + dev, within its bounds."""
    from packaging.requirements import Requirement

    project = _project()
    pins = _pins(REPO_ROOT / "constraints.txt")
    missing, outside = [], []
    for req in map(Requirement, project["dependencies"] + _expand(project, "dev")):
        name = _name(req.name)
        if name not in pins:
            missing.append(name)
        elif not req.specifier.contains(pins[name], prereleases=True):
            outside.append(f"{name}=={pins[name]} outside {req.specifier}")
    assert not missing and not outside, f"run `make lock`: not pinned {missing}; {outside}"
    assert project["name"] not in pins, "the package itself must not be pinned"


def test_console_script_declared():
    project = _project()
    assert project["scripts"]["ehrlib"] == "ehrlib.cli:main"


def test_license_and_citation_agree_with_pyproject():
    project = _project()
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (REPO_ROOT / "LICENSE").read_text().startswith("MIT License")
    cff = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text())
    assert cff["version"] == project["version"] and cff["license"] == "MIT"
    paper = cff["preferred-citation"]
    assert paper["title"] and paper["authors"] and paper["year"]
