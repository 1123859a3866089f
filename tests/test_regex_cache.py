"""The disk cache of compiled regular expressions (ehrlib.regex_cache): a process that reads
the file compiles the same patterns without parsing them; a damaged file is rewritten; off
with the disk cache. Each case runs in a fresh process (the cache is a process policy: it
replaces the compiler of the process that installs it).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ehrlib

_ROOT = Path(ehrlib.__file__).resolve().parent.parent

_SCRIPT = r"""
import re, sys
from re import _compiler
original = _compiler.compile
from ehrlib import regex_cache
ok = regex_cache.install()
patterns = [(r"(?P<n>\d+)\s*mg\b", 0), (r"lactate|LACT", int(re.IGNORECASE)), (rb"\x00+", 0),
            ("|".join(f"word{i}" for i in range(300)), 0), (r"(a)(?:b)(?P<c>c)?", int(re.VERBOSE))]
for text, flags in patterns:
    got = _compiler.compile(text, flags)
    want = original(text, flags)
    assert got == want and got.groupindex == want.groupindex and got.groups == want.groups, text
    assert got.pattern == text and got.flags == want.flags
state = regex_cache._state
print(ok, len(state.get("known", ())), len(state.get("used", ())))
"""


def _run(tmp_path: Path, cache: str) -> tuple[str, str]:
    env = {**os.environ, "PYTHONPATH": str(_ROOT), "EHRLIB_CACHE_DIR": cache}
    proc = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, cwd=tmp_path,
                          check=True)
    return proc.stdout.strip(), proc.stderr


def _files(cache: Path) -> list[Path]:
    return sorted((cache / "packages").glob("regex-*.pkl"))


def test_a_second_process_compiles_from_the_file(tmp_path):
    cache = tmp_path / "cache"
    first, _ = _run(tmp_path, str(cache))
    assert first.split()[:2] == ["True", "0"]
    (path,) = _files(cache)
    second, _ = _run(tmp_path, str(cache))
    ok, known, used = second.split()
    assert ok == "True" and int(known) >= 6 and int(used) >= 6   # the five patterns and the probe
    assert _files(cache) == [path]


def test_a_damaged_file_is_rewritten(tmp_path):
    cache = tmp_path / "cache"
    _run(tmp_path, str(cache))
    (path,) = _files(cache)
    path.write_bytes(path.read_bytes()[:-20] + b"x" * 20)
    out, err = _run(tmp_path, str(cache))
    assert out.split()[:2] == ["True", "0"] and "damaged regex cache" in err
    out, _ = _run(tmp_path, str(cache))
    assert int(out.split()[2]) >= 6


@pytest.mark.parametrize("value", ["off", "0"])
def test_off_with_the_disk_cache(tmp_path, value):
    out, _ = _run(tmp_path, value)
    assert out.split()[0] == "False"
    assert not list(tmp_path.rglob("regex-*.pkl"))


def test_the_file_is_bounded_and_keeps_the_probe(tmp_path):
    script = ("import re\nfrom ehrlib import regex_cache\nregex_cache.MAX_ENTRIES = 8\nregex_cache.install()\n"
              "for i in range(30):\n    re.compile(f'bounded{i}[a-z]+')\n")
    env = {**os.environ, "PYTHONPATH": str(_ROOT), "EHRLIB_CACHE_DIR": str(tmp_path / "cache")}
    for _ in range(2):
        subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, check=True)
    (path,) = _files(tmp_path / "cache")
    from ehrlib import regex_cache
    from ehrlib.disk_cache import read_value_entry

    entries = read_value_entry(path, path.stem.rsplit("-", 1)[-1])
    assert 0 < len(entries) <= 8 and (entries[-1][0], entries[-1][1]) == regex_cache._PROBE


def test_a_few_cheap_new_patterns_do_not_rewrite_the_file(tmp_path):
    cache = tmp_path / "cache"
    _run(tmp_path, str(cache))
    (path,) = _files(cache)
    before = path.stat().st_mtime_ns, path.read_bytes()
    script = "import re\nfrom ehrlib import regex_cache\nregex_cache.install()\nre.compile('one new[a-z]+ pattern')\n"
    env = {**os.environ, "PYTHONPATH": str(_ROOT), "EHRLIB_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, check=True)
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
