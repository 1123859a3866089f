"""The stay's diagnoses and procedures as a progress note states them: the identification
sentence ("one-liner") and the assessment's problem headings.

A physician or nursing note opens with a sentence that identifies the patient by age and
sex and lists why they are here ("67F w/ ESRD, admitted with line sepsis c/b septic shock,
s/p tunneled line removal"), and its assessment is a list of problem headings ("# ATN on
CKD: renally dose", "3. Septic shock -"). Both name the admission's diagnoses and
procedures, which annotators check against the billed ICD codes. Such a list is written in
shorthand with connectives instead of sentences, so the list is cut at its connectives
(commas, slashes, "and", "w/", "with", "c/b", "s/p", "now", "after", parentheses) into
parts, and a part becomes a statement only when the caller's ``confident`` test holds (it
names an ICD concept confidently: .icd_match). Words after "on" up to the next comma are
a treatment ("ATN on CRRT", "AF on amio"), not a part. Past history stays out: a part
after a history cue ("h/o", "hx", "PMH", "remote") is skipped, as are the parts after it,
until a cue of this stay ("admitted", "presenting", "now", "c/b") opens a new run.
The cues are data (``diagnosis_wording.yaml``: ``stay_problems``).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.icd_match import names_icd_concept_closely
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.terminology import normalise, qualifier_words, search_forms

__all__ = ["identification_span", "heading_span", "list_parts", "stay_problem_mentions", "with_stay_problems",
           "concept_key", "stay_reads"]


@functools.lru_cache(maxsize=1)
def _reads() -> frozenset[str]:
    return frozenset(load_data("diagnosis_wording.yaml")["stay_problems"]["read"])


def stay_reads() -> frozenset[str]:
    """What ``stay_problems.read`` of ``diagnosis_wording.yaml`` says is read."""
    return _reads()


@functools.lru_cache(maxsize=1)
def _config() -> dict[str, re.Pattern[str]]:
    doc = load_data("diagnosis_wording.yaml")["stay_problems"]

    def words(key: str) -> re.Pattern[str]:
        return re.compile(r"(?<![\w/])(?:" + "|".join(doc[key]) + r")(?![\w])", re.I)

    return {"opening": re.compile(doc["opening"], re.I), "history": words("history"), "present": words("present"),
            "joins": words("joins"), "treatment": words("treatment"), "heading": re.compile(doc["heading"], re.I)}


_END = re.compile(r"(?<!\b[A-Z])\.(?:\s|$)|[;:!?](?:\s|$)|\s{3,}")


def identification_span(text: str) -> tuple[int, int] | None:
    """The list of the identification sentence opening ``text`` (after its age and sex, to
    the end of the sentence), or None when ``text`` opens with none.
    """
    m = _config()["opening"].match(text)
    if m is None:
        return None
    end = _END.search(text, m.end())
    return m.end(), end.start() if end else len(text)


def heading_span(text: str) -> tuple[int, int] | None:
    """The title of a problem heading ("# ATN on CKD: ...", "2. Septic shock - ..."), or None."""
    m = _config()["heading"].match(text)
    if m is None:
        return None
    return m.start("title"), m.end("title")


_SPLIT = re.compile(r"[,;()\[\]+&]|(?<=[A-Za-z]{2})\s*/\s*(?=[A-Za-z]{2})")


def list_parts(text: str, start: int, end: int, past: bool = False) -> list[tuple[int, int]]:
    """The (start, end) of each part of the list ``text[start:end]``, cut at its connectives;
    parts after a history cue (to the next cue of this stay) and treatments after "on" left out.
    """
    cfg = _config()
    cuts: list[tuple[int, int, str]] = []  # (start, end, kind) of each separator
    for m in _SPLIT.finditer(text, start, end):
        cuts.append((m.start(), m.end(), "sep"))
    for kind in ("joins", "history", "present", "treatment"):
        for m in cfg[kind].finditer(text, start, end):
            cuts.append((m.start(), m.end(), kind))
    cuts.sort(key=lambda c: (c[0], -c[1]))  # the longest cue at a position wins
    out: list[tuple[int, int]] = []
    pos, treating = start, False
    for a, b, kind in [*cuts, (end, end, "sep")]:
        if a < pos:
            continue
        if not past and not treating:
            piece = text[pos:a]
            lead = len(piece) - len(piece.lstrip(" -.:"))
            trail = len(piece.rstrip(" -.:"))
            if trail > lead:
                out.append((pos + lead, pos + trail))
        if kind == "history":
            past = True
        elif kind == "present":
            past = False
        # a treatment runs to the next separator ("on amio/heparin, DM2": DM2 is a part again)
        treating = kind == "treatment" or (treating and text[a:b].strip() == "/")
        pos = b
    return out


def stay_problem_mentions(text: str, line: int, confident: Callable[[str], str | None]) -> list[Mention]:
    """The diagnosis and procedure mentions of the identification sentence or problem
    heading opening ``text`` (a paragraph; positions in it, first line ``line``).
    ``confident`` names the ICD concept kind a part states ("diagnosis", "procedure_code")
    or None.
    """
    reads = _reads()
    span = (identification_span(text) if "identification" in reads else None) or (
        heading_span(text) if "headings" in reads else None)
    if span is None:
        return []
    out: list[Mention] = []
    opening_past = "comorbidities" not in reads and span == identification_span(text)
    for a, b in list_parts(text, *span, past=opening_past):
        phrase = text[a:b]
        if len(re.findall(r"[A-Za-z]", phrase)) < 2:
            continue
        concept = confident(phrase)
        if concept is not None:
            out.append(Mention(line, a, b, phrase, "diagnosis", concept, phrase))
    return out


def concept_key(phrase: str) -> frozenset[str]:
    """The content words of a diagnosis name in ICD wording (synonyms applied, qualifiers
    out): "MSSA PNA" and "MSSA pneumonia" share one key.
    """
    forms = search_forms(phrase)
    words = set(forms[0].split()) if forms else set(normalise(phrase))
    return frozenset(words - qualifier_words())


def with_stay_problems(text: str, line: int, kept: list[Mention], found: list[Mention],
                       confident: Callable[[str], str | None],
                       stated: frozenset[frozenset[str]] = frozenset()) -> list[Mention]:
    """``kept`` (a paragraph's statements) with the stay problems of its opening list added.
    A diagnosis replaces the statements inside its span ("hypoxemic" of "Hypoxemic resp
    failure" is the diagnosis's word, not a hypoxia claim); a part the lexicon reads whole
    as a bedside state or event ("# Hypokalemia", "trach") is that statement, and a part
    another diagnosis statement already covers, or one the note stated before (``stated``:
    :func:`concept_key` of its earlier diagnoses), is not stated twice.
    """
    taken = {(m.start, m.end) for m in found if m.kind != "diagnosis"}
    dx_spans = [(m.start, m.end) for m in kept if m.kind == "diagnosis"]
    dx = [d for d in stay_problem_mentions(text, line, confident) if (d.start, d.end) not in taken
          and not any(a < d.end and d.start < b for a, b in dx_spans) and concept_key(d.text) not in stated]
    if not dx:
        return kept
    rest = [m for m in kept if not any(d.start <= m.start and m.end <= d.end for d in dx)]
    return sorted([*rest, *dx], key=lambda m: (m.start, m.end))


def concept_tests(tools: object) -> tuple[Callable[[str], bool], Callable[[str], bool]]:
    """The diagnosis and procedure tests of a one-liner's parts, as ``stay_problems.read`` asks:
    a procedure only when this stay billed it ("billed_procedures": "CAD s/p CABG" names a
    remote operation, which is history) and no diagnosis unless "diagnoses" is read.
    """
    reads = stay_reads()
    procedure = functools.partial(names_icd_concept_closely, tools, tables=("procedures_icd",),
                                  billed_only="billed_procedures" in reads)

    def diagnosis(phrase: str) -> bool:
        return "diagnoses" in reads and names_icd_concept_closely(tools, phrase)

    return diagnosis, procedure


def stay_concept(diagnosis: Callable[[str], bool], procedure: Callable[[str], bool], phrase: str) -> str | None:
    """The kind of ICD concept a part of a one-liner or problem heading names confidently."""
    if diagnosis(phrase):
        return "diagnosis"
    return "procedure_code" if procedure(phrase) else None
