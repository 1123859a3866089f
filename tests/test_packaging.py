"""The pip (pyproject) and conda (environment.yml) installs must carry the same packages."""
from __future__ import annotations

import re
import tomllib

import yaml

from conftest import REPO_ROOT


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r): r for r in project["dependencies"]}
    wanted.update({_name(r): r for r in project["optional-dependencies"]["dev"]})
    env = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    pip_block = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    have = {_name(r): r for r in pip_block if not r.startswith("-e")}
    assert set(have) == set(wanted), (
        f"only in pyproject: {sorted(set(wanted) - set(have))}; only in environment.yml: {sorted(set(have) - set(wanted))}"
    )
    for name, requirement in wanted.items():
        assert have[name].replace(" ", "") == requirement.replace(" ", ""), f"{name}: version specs differ"


def test_console_script_declared():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["ehrlib"] == "ehrlib.cli:main"
