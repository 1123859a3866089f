"""Result numbers in the docs come from the data: each one quoted in README.md or docs/*.md
carries a marker naming the figures/*.csv row and column it comes from, and this test
recomputes it. A stale number fails with the file, line, quoted and fresh values.

Marker syntax (an HTML comment, invisible when rendered), right after the number::

    **0.784**<!-- bench_quality: corpus=realnotes_blind6 method=inspector f1 -->
    64 %<!-- bench_quality: corpus=realnotes_blind6 method=inspector alarm_precision *100 -->
    p50 2.5<!-- bench_tools: patient_scoped=true chartevents_rows>=30000000 p50_ms min -->

``FILE`` is a CSV stem under figures/; ``key=value``, ``key>=N`` or ``key~REGEX`` pick rows, after the
defaults in :data:`DEFAULTS` (quote values with spaces); then the column; optionally a
scale (``*100``, ``/1000``) and, when several rows match, ``min``, ``max`` or ``sum``. The
quoted number is compared at its own precision (0.784 against the value rounded to three
places). In the results sections every decimal number needs a marker, except settings
listed in :data:`NOT_RESULTS`.
"""
from __future__ import annotations

import csv
import math
import re
import shlex
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
#: row filters every marker on that file gets unless it names the key itself
DEFAULTS = {"bench_quality": {"scope": "all", "mode": "lenient"}}
#: README sections where every decimal number is a result and must carry a marker
STRICT_SECTIONS = ("## Results on embedded data",)
#: decimal numbers in those sections that are settings or targets, not results
NOT_RESULTS = frozenset({"0.5", "0.6", "0.75", "0.80", "1.5"})

_NUMBER = r"(?P<num>[+-]?\d[\d,]*(?:\.\d+)?)"
MARKED = re.compile(_NUMBER + r"(?P<unit>\s?(?:%|×|k|M|s|ms)?)\**<!--\s*(?P<spec>[a-z0-9_]+:.*?)\s*-->")
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


@dataclass(frozen=True, slots=True)
class Quote:
    """One marked number in a doc."""
    path: Path
    line: int
    text: str       # the number as written
    spec: str       # the marker's content


def quotes(path: Path) -> list[Quote]:
    """Every marked number of a Markdown file."""
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        out += [Quote(path, i, m.group("num"), m.group("spec")) for m in MARKED.finditer(line)]
    return out


@cache
def _rows(stem: str) -> tuple[dict[str, str], ...]:
    path = ROOT / "figures" / f"{stem}.csv"
    if not path.is_file():
        raise AssertionError(f"figures/{stem}.csv does not exist")
    with path.open(newline="", encoding="utf-8") as fh:
        return tuple(csv.DictReader(fh))


def _matches(row: dict[str, str], key: str, op: str, want: str) -> bool:
    have = row.get(key)
    if have is None:
        raise AssertionError(f"no column {key!r}")
    if op == "~":
        return re.fullmatch(want, have) is not None
    if op == ">=":
        return have != "" and float(have) >= float(want)
    return have == want


def fresh_value(spec: str) -> float:
    """The number a marker names, computed from its CSV."""
    stem, _, rest = spec.partition(":")
    words = shlex.split(rest)
    filters = dict(DEFAULTS.get(stem, {}))
    conditions: list[tuple[str, str, str]] = []
    plain = []
    for w in words:
        m = re.fullmatch(r"([^=<>~]+)(>=|=|~)(.*)", w)
        if m and m.group(2) == "=":
            filters[m.group(1)] = m.group(3)
        elif m:
            conditions.append((m.group(1), m.group(2), m.group(3)))
        else:
            plain.append(w)
    conditions += [(k, "=", v) for k, v in filters.items()]
    column, scale, agg = plain[0], 1.0, None
    for w in plain[1:]:
        if w[0] in "*/":
            scale = float(w[1:]) if w[0] == "*" else 1 / float(w[1:])
        elif w in ("min", "max", "sum"):
            agg = w
        else:
            raise AssertionError(f"unknown marker word {w!r}")
    rows = [r for r in _rows(stem) if all(_matches(r, k, op, v) for k, op, v in conditions)]
    if not rows:
        raise AssertionError(f"no row of figures/{stem}.csv matches {conditions}")
    if len(rows) > 1 and agg is None:
        raise AssertionError(f"{len(rows)} rows of figures/{stem}.csv match {conditions}; add min, max or sum")
    values = [float(r[column]) * scale for r in rows]
    return {"min": min, "max": max, "sum": sum, None: lambda v: v[0]}[agg](values)


def stale(q: Quote) -> str | None:
    """None when the quoted number equals the data at its precision, else the message."""
    try:
        value = fresh_value(q.spec)
    except AssertionError as exc:
        return f"{q.path.name}:{q.line}: marker <!-- {q.spec} -->: {exc}"
    text = q.text.replace(",", "")
    places = len(text.partition(".")[2])
    if math.isclose(float(text), value, abs_tol=0.5 * 10 ** -places + 1e-9):
        return None
    return f"{q.path.name}:{q.line}: {q.text} is stale; the data say {value:,.{places}f} ({q.spec})"


def unmarked_results(path: Path) -> list[str]:
    """Decimal numbers in the strict sections that carry no marker (and are no setting)."""
    out, strict = [], False
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("## "):
            strict = line.startswith(STRICT_SECTIONS)
        if not strict:
            continue
        bare = MARKED.sub("", line)   # what is left of the line once the marked numbers are gone
        out += [f"{path.name}:{i}: {m.group()}" for m in DECIMAL.finditer(bare) if m.group() not in NOT_RESULTS]
    return out


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_every_marked_number_matches_its_csv(path):
    problems = [msg for q in quotes(path) if (msg := stale(q)) is not None]
    assert problems == [], "\n".join(problems)


def test_readme_marks_its_numbers():
    assert len(quotes(ROOT / "README.md")) >= 40
    assert unmarked_results(ROOT / "README.md") == []


def _known_stems() -> set[str]:
    return ({p.stem for p in (ROOT / "notebooks").glob("*.ipynb")} | {p.stem for p in (ROOT / "figures").iterdir()}
            | {p.stem for p in (ROOT / "params").glob("*.yaml")})


@pytest.mark.parametrize("path", (*DOCS, ROOT / "CONTRIBUTING.md"), ids=lambda p: p.name)
def test_notebook_and_figure_names_exist(path):
    named = set(re.findall(r"\b\d\d_[a-z][a-z0-9_]*", path.read_text(encoding="utf-8")))
    assert sorted(named - _known_stems()) == []


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_named_evaluation_sets_exist(path):
    # the sealed set keeps its documented name; every other set is a corpus of the benchmarks
    known = {r["corpus"] for r in _rows("bench_quality")} | {r["set"] for r in _rows("bench_calibration")}
    known |= {"estimate_blind", "synthetic"}
    named = set(re.findall(r"`((?:realnotes|handwritten|synthetic|precision)[a-z0-9_]*)`",
                           path.read_text(encoding="utf-8")))
    assert sorted(named - known) == []


# --- the checker itself, on known answers ------------------------------------------------------

def test_marker_parsing_and_comparison(tmp_path, monkeypatch):
    figures = tmp_path / "figures"
    figures.mkdir()
    (figures / "t.csv").write_text("set,mode,f1,n\na,lenient,0.7837,10\na,harsh,0.5,20\nb,lenient,0.9,5\n",
                                   encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    _rows.cache_clear()
    doc = tmp_path / "d.md"
    doc.write_text("F1 **0.784**<!-- t: set=a mode=lenient f1 --> and 78 %<!-- t: set=a mode=lenient f1 *100 -->\n"
                   "stale 0.790<!-- t: set=a mode=lenient f1 -->; total 35<!-- t: mode=lenient n sum -->; "
                   "least 5<!-- t: n>=1 n min -->, most 20<!-- t: set~a|c n max -->\n", encoding="utf-8")
    found = quotes(doc)
    assert [q.text for q in found] == ["0.784", "78", "0.790", "35", "5", "20"]
    assert [stale(q) for q in found] == [
        None, None, "d.md:2: 0.790 is stale; the data say 0.784 (t: set=a mode=lenient f1)",
        "d.md:2: 35 is stale; the data say 15 (t: mode=lenient n sum)", None, None]
    assert "add min, max or sum" in stale(Quote(doc, 3, "1", "t: mode=lenient n"))
    assert unmarked_results(doc) == []
    _rows.cache_clear()


def test_unmarked_results_in_a_strict_section(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_text("## Other\n0.123\n## Results on embedded data\nF1 0.9<!-- t: f1 --> vs 0.812, "
                   "threshold 0.75\n", encoding="utf-8")
    assert unmarked_results(doc) == ["d.md:4: 0.812"]


# --- the tables of docs/calibration.md: generated from figures/bench_calibration.csv -----------------------


def test_the_calibration_tables_match_their_csv():
    from ehrlib.bench.calibration_doc import END, START, _read, doc_tables

    text = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    block = text.partition(START)[2].partition(END)[0].strip()
    fresh = doc_tables(_read(ROOT / "figures" / "bench_calibration.csv")).strip()
    assert block == fresh, "docs/calibration.md's tables are stale: python -m ehrlib.bench.calibration_doc"


def test_calibration_tables_on_known_answers():
    from ehrlib.bench.calibration_doc import doc_tables

    cols = ("model", "threshold", "chosen", "set", "ece", "alarm_auc", "alarms_before", "alarms_after",
            "alarm_precision_before", "alarm_precision_after", "inconsistent_recall_before",
            "inconsistent_recall_after", "f1_before", "f1_after")
    rows = [dict(zip(cols, v, strict=True)) for v in (
        ("logistic", "0.6", "0", "a", "0.1", "0.5", "10", "8", "0.5", "0.625", "0.8", "", "0.9", "0.85"),
        ("gbm", "0.6", "1", "a", "0.2", "0.7", "10", "6", "0.5", "0.6667", "0.8", "0.5", "0.9", "0.8"),
        ("gbm", "0.6", "1", "all", "0.05", "0.7", "10", "6", "0.5", "0.6667", "0.8", "0.5", "0.9", "0.8"),
        ("gbm", "0.75", "0", "all", "0.05", "0.7", "10", "3", "0.5", "1.0", "0.8", "0.3", "0.9", "0.7"))]
    text = doc_tables(rows)
    assert "| none (verifier) | – | 10 | 0.500 | 0.800 | 0.900 | – | – |" in text
    assert "| gbm | 0.6 (rule) | 6 | 0.667 | 0.500 | 0.800 | 0.050 | 0.700 |" in text
    assert "| gbm | 0.75 | 3 | 1.000 | 0.300 | 0.700 | 0.050 | 0.700 |" in text
    # the shipped model's column first; a missing value is a dash; a set without a row a dash
    assert "| a | 10, 0.500, 0.800, 0.900 | 0.200, 0.667, 0.500, 0.800 | 0.100, 0.625, –, 0.850 |" in text
    assert "| **pooled (real-patient sets)** | 10, 0.500, 0.800, 0.900 | 0.050, 0.667, 0.500, 0.800 | – |" in text
