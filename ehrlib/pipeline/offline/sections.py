"""Rule-based note segmentation: section headers, problem headers and hospital-day markers.

Paper §4.1 splits a note into topic-coherent segments so that later stages reason
locally. Offline, the segments are the note's own structure: section headers of the
three note types (``ehrlib/data/offline_sections.yaml``), problem headers of an
assessment/plan or hospital course ("# Hypotension:", "1. AKI -"), and day markers
("HD 3:", "POD 2 -", "[**10-23**]:"). A day-marker segment's default window is that day;
otherwise the protocol's default applies (Appendix B.4): the note date for physician and
nursing notes, the hospitalization for discharge summaries, widened by one day each side.

medspaCy's sectionizer was evaluated and not used: medspacy 1.3 pulls spacy<3.8 /
thinc 8.2 / blis 0.7, whose compiled extensions are built against numpy 1.x; in a
scratch venv with our numpy 2.4 ``import medspacy`` fails with "numpy.dtype size
changed, may indicate binary incompatibility", and keeping it would force numpy 1.26
on the whole stack. Its default section rules also cover only discharge-summary headers.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache, lru_cache

from ehrlib.corpus.records import TimeSpan
from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.timex import TimeContext, day_window, fmt, parse_datetime, resolve_line
from ehrlib.pipeline.records import Segment

__all__ = ["SectionRule", "section_rules", "section_scope", "match_header", "segment_lines", "default_window",
           "note_time_context", "heading_window"]

_BODY_SYSTEM_KINDS = ("exam", "nursing_system")
#: sections whose entries are problems ("# Sepsis:", "1. AKI -")
_PROBLEM_PARENTS = ("hospital_course", "assessment_plan")
_INHERITING_PARENTS = ("exam", "hospital_course", "assessment_plan", "nursing_system", "events",
                       "discharge_condition", "vitals")


@dataclass(frozen=True, slots=True)
class SectionRule:
    """A section header pattern and the kind and scope of the section it opens."""
    kind: str
    scope: str
    pattern: re.Pattern[str]


@lru_cache(maxsize=1)
def section_rules() -> tuple[SectionRule, ...]:
    """The header rules from ``ehrlib/data/offline_sections.yaml`` (validated once)."""
    data = load_data("offline_sections.yaml")
    rules: list[SectionRule] = []
    try:
        for entry in data["sections"]:
            for header in entry["headers"]:
                rules.append(SectionRule(entry["kind"], entry["scope"],
                                         re.compile(r"(?:" + header + r")", re.I)))
    except (KeyError, TypeError, re.error) as exc:
        raise ConfigError(f"offline_sections.yaml is malformed: {exc}") from None
    return tuple(rules)


@lru_cache(maxsize=1)
def _inferred_kinds() -> tuple[tuple[str, re.Pattern[str]], ...]:
    data = load_data("offline_sections.yaml")
    try:
        return tuple((e["kind"], re.compile(e["words"], re.I)) for e in data.get("inferred", ()))
    except (KeyError, TypeError, re.error) as exc:
        raise ConfigError(f"offline_sections.yaml is malformed: {exc}") from None


#: a heading's parenthesised qualifier ("Vitals (last 24h):", "Labs (today):"): it says
#: when or from where, it does not rename the section
_QUALIFIER = r"(?:[ \t]*\((?P<qualifier>[^()\n]{1,30})\))?"
#: a heading the section list does not know: ALL-CAPS words, or a Title-Case phrase of two
#: to five words ("Pertinent Admission Labs"), then an optional qualifier and a colon
_CAPS_HEADING = re.compile(r"^\s*(?:[#*\-]+\s*)?(?P<title>[A-Z][A-Z0-9/&'\-]*(?:[ \t]+[A-Z0-9/&'\-()]+){0,6})"
                           + _QUALIFIER + r"\s*:(?P<rest>.*)$")
_TITLE_HEADING = re.compile(r"^\s*(?:[#*\-]+\s*)?(?P<title>[A-Z][a-z]+(?:[ \t]+(?:[A-Z][a-z]*|on|of|at|and|to|for|in|"
                            r"the|labs?|data|results?|this|today|yesterday|overnight|morning|evening|AM|PM)){1,4})"
                            + _QUALIFIER + r"\s*:(?P<rest>.*)$")
_TRAILING_QUALIFIER = re.compile(r"\s*\([^()]{1,30}\)$")


def _heading_kind(line: str, parent: str) -> tuple[str, str] | None:
    """``(kind, title)`` of a heading no section rule knows, else None.

    A line that starts with a heading opens a new segment, so an unknown heading is never
    swallowed into the section before it. Its kind comes from its words (``inferred`` in
    ``offline_sections.yaml``: "LABORATORY DATA ON ADMISSION" -> results); a heading with
    none of them continues an active parent section and is otherwise a generic active
    section, so values under it never take an out-of-scope section's scope. A name that
    is a concept of the lexicon ("WBC:", "Lactate:") labels a value, not a section, as
    does a heading followed by a number ("PEEP: 5").
    """
    m = _CAPS_HEADING.match(line) or _TITLE_HEADING.match(line)
    if m is None:
        return None
    title = m.group("title").strip()
    if sum(ch.isalpha() for ch in title) < 4 or re.match(r"\s*[-+]?\d", m.group("rest")) or \
            load_lexicon().concepts_for(title):
        return None
    if m.group("qualifier"):
        title = f"{title} ({m.group('qualifier')})"  # kept: the qualifier may state the section's time
    for kind, words in _inferred_kinds():
        if words.search(_TRAILING_QUALIFIER.sub("", title)):
            return kind, title
    return (parent if section_scope(parent) == "active" and parent != "admission_info" else "other"), title


_MOMENT = re.compile(r"^(?:(?P<admission>admission|admit|arrival|presentation)|(?P<discharge>discharge))\b", re.I)


#: a label of a results line naming a moment of the stay ("Admission:", "On admission:", "Discharge labs:")
_MOMENT_LABEL = re.compile(r"^\s*(?P<title>(?:on\s+|at\s+|upon\s+)?(?:admission|admit|arrival|presentation|discharge)"
                           r"(?:\s+labs?)?)\s*:", re.I)


#: a line opening with a label of its own ("Peaks: ...", "diff: PMN 80%")
_ENTRY_LABEL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9 /()&,.\-]{0,40}:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _open(starts: list[tuple[int, str, str, TimeSpan]], entry: tuple[int, str, str, TimeSpan]) -> None:
    """Open a segment at ``entry``'s line, replacing one a moment's end opened there."""
    if starts and starts[-1][0] == entry[0]:
        starts.pop()
    starts.append(entry)


def heading_window(title: str, tctx: TimeContext | None) -> TimeSpan | None:
    """The time a results heading states ("Labs this AM", "Admission labs", "DISCHARGE"):
    the values under it are that time's, not the note's default window. ``None`` when the
    heading states no time.
    """
    if tctx is None:
        return None
    refs = resolve_line(title, 0, tctx)
    if refs:
        return refs[0].window
    m = _MOMENT.match(title.strip())
    anchor = tctx.anchors.get(m.lastgroup) if m and m.lastgroup else None
    return day_window(anchor, tctx.widen_days, tctx.widen_days) if anchor is not None else None


@cache
def section_scope(kind: str) -> str:
    """Active | past | plan | claims for a section kind (unknown kinds are active)."""
    return next((r.scope for r in section_rules() if r.kind == kind), "active")


_HEADER = re.compile(r"^\s*(?:[#*\-]+\s*)?(?P<title>[A-Za-z0-9][A-Za-z0-9 /&,\-\(\)'.]{0,60}?)\s*(?::|\s-\s|"
                     r"$)(?P<rest>.*)$")
_PROBLEM = re.compile(r"^\s*(?:#\s*|\d{1,2}[.)]\s+)(?P<title>[A-Za-z][^:]{1,70}?)\s*(?::|\s-\s|$)")
_DAY_MARKER = re.compile(
    r"^\s*(?:(?:HD|hospital\s+day|POD|post-?op(?:erative)?\s+day|ICU\s+day|day)\s*#?\s*\d{1,2}"
    r"|\[\*\*(?:\d{4}-)?\d{1,2}-\d{1,2}\*\*\]|\d{1,2}/\d{1,2}(?:/\d{2,4})?)"
    r"(?:\s*\([^)]*\))?\s*(?::|-|–)", re.I)


@cache
def _nursing_systems() -> frozenset[str]:
    """Headers that open a system of a nursing note's shift assessment ("Social:")."""
    return frozenset(load_data("offline_sections.yaml").get("nursing_systems") or ())


def _classify(title: str, note_type: str) -> SectionRule | None:
    """The rule of a known title; a trailing parenthesised qualifier ("Vitals (last 24h)")
    is tried away when the whole title is unknown.
    """
    t = re.sub(r"\s+", " ", title.strip().lower())
    if note_type == "nursing" and t in _nursing_systems():
        return SectionRule("nursing_system", "active", re.compile(re.escape(t)))  # "Social: family visited"
    for cand in dict.fromkeys((t, _TRAILING_QUALIFIER.sub("", t))):
        for rule in section_rules():
            if rule.pattern.fullmatch(cand):
                if rule.kind in _BODY_SYSTEM_KINDS and note_type == "nursing":
                    return SectionRule("nursing_system", "active", rule.pattern)
                return rule
    return None


def match_header(line: str, note_type: str) -> tuple[str, str] | None:
    """``(kind, title)`` when ``line`` opens a section, else None.

    A header is a known title followed by a colon (content may follow on the line), or a
    known title alone on its line (``HOSPITAL COURSE``). One- and two-letter headers
    ("A:", "P:") are headers only when no number follows, so "P: 88" stays a pulse.
    """
    m = _HEADER.match(line)
    if not m:
        return None
    title, rest = m.group("title").strip(), m.group("rest")
    has_colon = ":" in line[m.start("title"):m.end("title") + 3] or bool(re.match(r"\s*:", line[m.end("title"):]))
    rule = _classify(title, note_type)
    if rule is None:
        return None
    if not has_colon and rest.strip():
        return None
    if len(title) <= 2 and re.match(r"\s*[\d\-+.]", rest):
        return None
    return rule.kind, title


def default_window(note_type: str, admission: TimeSpan, note_day: str | None, widen_days: float = 1.0) -> TimeSpan:
    """The protocol's window for statements with no time of their own (Appendix B.4)."""
    if note_type == "discharge_summary" or not note_day:
        start, end = parse_datetime(admission.start), parse_datetime(admission.end)
        return TimeSpan(fmt(start.replace(hour=0, minute=0, second=0)) if start else None,
                        fmt(end.replace(hour=23, minute=59, second=59)) if end else None) \
            if (start or end) else TimeSpan(None, None)
    day = parse_datetime(note_day)
    if day is None:
        return TimeSpan(None, None)
    return day_window(day, widen_days, widen_days)


def segment_lines(lines: Sequence[str], note_type: str, admission: TimeSpan, note_day: str | None,
                  tctx: TimeContext | None = None, widen_days: float = 1.0) -> tuple[Segment, ...]:
    """Contiguous segments covering every line once, in order.

    Body-system headers (Abd:, CV:, Neuro:) inside an exam, hospital course or assessment
    keep the parent's kind, so "CV: on levophed" in a hospital course stays active course.
    """
    base_window = default_window(note_type, admission, note_day, widen_days)
    starts: list[tuple[int, str, str, TimeSpan]] = []  # (line, title, kind, window)
    parent = "other"
    moment_scope: tuple[int, TimeSpan] | None = None  # (indent of a moment label, the window it interrupted)
    gap = False
    for i, line in enumerate(lines):
        if not line or line.isspace():
            gap = moment_scope is not None
            continue  # a blank line heads nothing (and a pasted log may hold 100,000 of them)
        if moment_scope is not None and (gap or (_ENTRY_LABEL.match(line) is not None
                                                  and _indent(line) <= moment_scope[0])):
            # a blank line, or an entry labelled at the label's own depth ("Peaks: ..."), ends the moment's lines
            starts.append((i, "results", "results", moment_scope[1]))
            moment_scope, gap = None, False
        header = match_header(line, note_type)
        problem = _PROBLEM.match(line) if parent in _PROBLEM_PARENTS else None
        if problem is not None and not _DAY_MARKER.match(line):
            # "# EtOH:", "2. Renal -" in an assessment or a course is one of its problems, whatever
            # section its title could also name: it keeps the parent's kind and scope
            _open(starts, (i, header[1] if header else problem.group("title").strip(), parent, base_window))
            moment_scope = None
            continue
        if header is None and (unknown := _heading_kind(line, parent)) is not None:
            # the parent section goes on after it; a results heading may state its time
            window = (heading_window(unknown[1], tctx) if unknown[0] == "results" else None) or base_window
            _open(starts, (i, unknown[1], unknown[0], window))
            moment_scope = None
            continue
        if header is not None:
            kind, title = header
            window = (heading_window(title, tctx) if kind == "results" else None) or base_window
            if kind in _BODY_SYSTEM_KINDS and parent in _INHERITING_PARENTS and parent not in _BODY_SYSTEM_KINDS:
                kind = parent
            else:
                parent = kind
            _open(starts, (i, title, kind, window))
            moment_scope = None
            continue
        moment = _MOMENT_LABEL.match(line) if parent == "results" and tctx is not None else None
        if moment is not None:
            # "Admission:  WBC 0.3, Hgb 7": a label naming a moment of the stay dates its line of results
            # and the lines wrapped under it, as a results heading of that moment would
            title = moment.group("title").strip()
            moment_scope = (_indent(line), starts[-1][3] if starts else base_window)
            _open(starts, (i, title, "results", heading_window(title, tctx) or base_window))
            continue
        day = _DAY_MARKER.match(line)
        if day is not None and tctx is not None:
            refs = resolve_line(line[:day.end()], i, tctx)
            window = refs[0].window if refs else base_window
            _open(starts, (i, day.group(0).strip(" :-–"), parent if parent != "other" else "hospital_course", window))
            moment_scope = None
            continue
    if not starts or starts[0][0] != 0:
        starts.insert(0, (0, "preamble", "admission_info" if note_type == "discharge_summary" else "other",
                          base_window))
    segments: list[Segment] = []
    for idx, (start, title, kind, window) in enumerate(starts):
        end = starts[idx + 1][0] - 1 if idx + 1 < len(starts) else max(len(lines) - 1, 0)
        segments.append(Segment(idx, start, end, title, kind, window))
    return tuple(segments)


def note_time_context(note_type: str, admittime: str | None, dischtime: str | None, note_day: str | None,
                      extra: Mapping[str, str | None] | None = None, widen_days: float = 1.0,
                      icu_stays: Sequence[TimeSpan] = ()) -> TimeContext:
    """A :class:`TimeContext` from the admission row, the ICU stays and the note date."""
    anchors: dict[str, datetime] = {}
    for name, value in (("admission", admittime), ("discharge", dischtime), *(extra or {}).items()):
        t = parse_datetime(value)
        if t is not None:
            anchors[name] = t
    ref = parse_datetime(note_day) if note_type != "discharge_summary" else None
    ref = ref or anchors.get("discharge") or anchors.get("admission") or parse_datetime(note_day) or datetime(2100, 1,
                                                                                                              1)
    return TimeContext(ref, anchors, widen_days, tuple(icu_stays), note_type == "discharge_summary")

