"""The cache of compiled dataclass methods (ehrlib.code_cache): a process that reads it
builds the same classes without compiling their methods; written only where and when
Python writes bytecode; a damaged file is ignored and rewritten. Each case runs in a fresh
process (the cache is a process policy: it changes how the dataclasses module compiles).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import ehrlib

_ROOT = Path(ehrlib.__file__).resolve().parent.parent

_SCRIPT = r"""
import dataclasses
from ehrlib import code_cache
ok = code_cache.install()

@dataclasses.dataclass(frozen=True, slots=True)
class Item:
    key: str
    value: int = 0
    tags: tuple = ()

@dataclasses.dataclass(order=True)
class Row:
    a: int
    b: "str" = "x"
    c: list = dataclasses.field(default_factory=list)

i = Item("k", 2)
assert i == Item("k", 2) and hash(i) == hash(Item("k", 2)) and repr(i) == "Item(key='k', value=2, tags=())"
try:
    i.key = "other"
except dataclasses.FrozenInstanceError:
    pass
else:
    raise AssertionError("frozen")
assert Row(1) < Row(2) and Row(1).c == [] and Row(1).c is not Row(1).c
assert Item.__init__.__annotations__ == {"key": str, "value": int, "tags": tuple, "return": None}
assert Item.__init__.__code__.co_filename == "<string>"
state = code_cache._state
print(ok, len(state.get("known", ())), len(state.get("used", ())))
"""


def _run(tmp_path: Path, *, write: bool = True) -> tuple[str, Path]:
    prefix = tmp_path / "pyc"
    env = {**os.environ, "PYTHONPATH": str(_ROOT), "PYTHONPYCACHEPREFIX": str(prefix)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, cwd=tmp_path,
                         check=True).stdout.strip()
    return out, prefix


def _files(prefix: Path) -> list[Path]:
    return sorted(prefix.rglob("ehrlib-dataclass-code.*.bin"))


def test_a_second_process_builds_the_same_classes_from_the_file(tmp_path):
    first, prefix = _run(tmp_path)
    assert first.split()[:2] == ["True", "0"]
    (path,) = _files(prefix)
    second, _ = _run(tmp_path)
    ok, known, used = second.split()
    assert ok == "True" and int(known) >= 8 and int(used) >= 8   # the two classes' methods
    assert _files(prefix) == [path]


def test_not_written_when_python_writes_no_bytecode(tmp_path):
    out, prefix = _run(tmp_path, write=False)
    assert out.split()[0] == "True" and not _files(prefix)


def test_a_damaged_file_is_ignored_and_rewritten(tmp_path):
    _, prefix = _run(tmp_path)
    (path,) = _files(prefix)
    path.write_bytes(path.read_bytes()[:-10] + b"\x00" * 10)
    out, _ = _run(tmp_path)
    assert out.split()[:2] == ["True", "0"]
    out, _ = _run(tmp_path)
    assert int(out.split()[2]) >= 8
