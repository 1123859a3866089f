"""Diagnoses named in the prose of a progress note: "admitted with X, Y and Z", "now with X".

Annotators label the diagnoses a physician or nursing note names for this stay ("78M
admitted with cholangitis and choledocholithiasis", "Dx: GI bleed, septic shock") against
the billed diagnosis codes. Past history ("h/o", "s/p", a one-liner's comorbidities before
the cue) and plans are not such statements, and every extra prediction costs precision,
so a list is read only after a cue (``diagnosis_wording.yaml``: ``prose``), up to the end
of its sentence or a stop word, and an item becomes a mention only when the caller's
``confident`` test (a confident ICD concept, :func:`.icd_match.names_icd_concept_strictly`)
holds. Parenthetical asides ("(clipped on EGD)") are skipped, offsets kept.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.diagnosis_parts import connective_pieces, split_compound
from ehrlib.pipeline.offline.mention import Mention

__all__ = ["prose_diagnosis_mentions", "reads_prose", "split_listed", "with_prose_diagnoses"]


@functools.lru_cache(maxsize=1)
def _config() -> tuple[re.Pattern[str], re.Pattern[str], frozenset[str], frozenset[str]]:
    doc = load_data("diagnosis_wording.yaml")["prose"]
    cue = re.compile("|".join(f"(?:{c})" for c in doc["cues"]), re.I)
    stop = re.compile(r"(?<![\w/])(?:" + "|".join(doc["stops"]) + r")(?![\w])", re.I)
    return cue, stop, frozenset(doc["note_types"]), frozenset(doc["sections"])


def reads_prose(note_type: str, section: str | None) -> bool:
    """Whether diagnosis prose of this note type and section kind is read."""
    _, _, types, sections = _config()
    return note_type in types and (section is None or section in sections)


_END = re.compile(r"[.;:!?](?:\s|$)|\n|\s{3,}")
_SEP = re.compile(r",|/|&|\band\b", re.I)


def prose_diagnosis_mentions(text: str, line: int, confident: Callable[[str], bool]) -> list[Mention]:
    """The diagnosis mentions of one paragraph (positions in ``text``, first line ``line``)."""
    cue, stop, _, _ = _config()
    flat = re.sub(r"\([^()]*\)|\[[^\[\]]*\]", lambda m: "\x00" * len(m.group(0)), text)
    out: list[Mention] = []
    for m in cue.finditer(flat):
        if m.group(0).lstrip().lower().startswith(("dx", "diagnos")) and text[:m.start()].strip():
            continue  # a "Dx:" header opens the paragraph only
        start = m.end()
        end = min(len(flat), start + 160)
        for pat in (_END, stop, cue):
            nxt = pat.search(flat, start, end)
            if nxt is not None:
                end = nxt.start()
        cuts = [start, *(x for s in _SEP.finditer(flat, start, end) for x in s.span()), end]
        for a, b in zip(cuts[::2], cuts[1::2], strict=True):
            raw = flat[a:b]
            phrase = raw.replace("\x00", " ").strip(" -")
            if len(re.findall(r"[A-Za-z]", phrase)) < 2:
                continue
            a += len(raw) - len(raw.replace("\x00", " ").lstrip(" -"))
            phrase = re.sub(r"\s+$", "", text[a:a + len(phrase)])
            if confident(phrase):
                out.append(Mention(line, a, a + len(phrase), phrase, "diagnosis", "diagnosis", phrase))
    return out


def with_prose_diagnoses(text: str, line: int, kept: list[Mention], found: list[Mention],
                         confident: Callable[[str], bool]) -> list[Mention]:
    """``kept`` (a paragraph's statements) with its prose diagnoses added. A diagnosis
    replaces the statements inside its span ("shock" in "cardiogenic shock"); an item the
    lexicon reads whole as a bedside state ("admitted with hypotension") is that state,
    which the non-statement rules judge (the admission reason is history), not a diagnosis.
    """
    states = {(m.start, m.end) for m in found if m.kind != "diagnosis"}
    dx = [d for d in prose_diagnosis_mentions(text, line, confident) if (d.start, d.end) not in states]
    if not dx:
        return kept
    rest = [m for m in kept if not any(d.start <= m.start and m.end <= d.end for d in dx)]
    return sorted([*rest, *dx], key=lambda m: (m.start, m.end))


def split_listed(m: Mention, names: Callable[[str], bool],
                 one_title: Callable[[str], bool] = lambda _: True) -> list[Mention]:
    """A listed entry that joins several diagnoses with commas ("Meningioma, encephalopathy,
    pneumonia") as one mention per diagnosis, when two or more parts name an ICD concept on
    their own (or their heads do, before a connective); otherwise the entry as written
    ("Pneumonia, organism unspecified" is one title). A part of a list that names none is
    still an entry, which the no-concept rule drops when nothing resolves it. Each part is then cut at its
    connectives (:func:`.diagnosis_parts.split_compound`; ``one_title`` keeps an entry
    one ICD title states whole, and keeps every entry by default).
    """
    cuts = [(x.start(), x.end()) for x in re.finditer(r"[^,;]+", m.text)]
    parts = [(a + len(m.text[a:b]) - len(m.text[a:b].lstrip()), m.text[a:b].strip()) for a, b in cuts]
    parts = [(a, p) for a, p in parts if p]

    def part_names(p: str) -> bool:
        pieces = connective_pieces(p)
        return names(p) or (len(pieces) > 1 and names(p[pieces[0][0]:pieces[0][1]]))

    named = [part_names(p) for _, p in parts]
    # two parts naming concepts of their own make the commas a list ("NSCLC, COPD, HTN, anemia"
    # with one abbreviation the dictionary lacks); a single one is a title with its qualifiers
    if sum(named) >= 2:
        listed = [Mention(m.line, m.start + a, m.start + a + len(p), p, m.kind, m.concept, p, m.claim, m.group)
                  for a, p in parts]
    else:
        listed = [m]
    return [claim for part in listed for claim in split_compound(part, names, one_title)]
