"""A procedure billed in the other ICD version: which billed code may be the one a statement names.

MIMIC-IV bills procedures before October 2015 in ICD-9-CM and later ones in ICD-10-PCS,
and the two versions word one procedure differently. An ICD-9 title names it as a
clinician would ("Laryngoscopy and other tracheoscopy", "Interruption of the vena cava",
"Injection or infusion of thrombolytic agent"); an ICD-10-PCS title builds it from axes, a
root operation, a body part, a device or substance and an approach ("Inspection of
Larynx, Via Natural or Artificial Opening Endoscopic", "Introduction of Other Thrombolytic
into Peripheral Vein, Percutaneous Approach"). No crosswalk for procedures ships with the
toolkit (the GEMs of :mod:`.icd_versions` are the diagnosis ones), so a statement resolved
to a title of one version is not shown missing by an admission billed in the other: a
billed code there naming the same body part or substance may be it, and which it is
cannot be told from the titles.

A shared word is a *distinctive* one: not a qualifier, and not one of the axis words every
procedure title carries (root operations, approaches, generic devices and substances;
``procedure_axis_words`` of ``terminology_synonyms.yaml``). A surgical compound word also
names its PCS title by parts: "laryngoscopy" is an inspection of the larynx
(``procedure_compounds``: the suffix's root operations, the organ root's first letters in a
body-part word).
"""
from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline import terminology as term
from ehrlib.pipeline.offline.terminology import TermMatch, Title

__all__ = ["is_pcs", "other_version_namesakes"]

#: the first letters of an organ root a body-part word must share ("laryn": larynx, laryngeal)
_ROOT_LETTERS = 5


def is_pcs(code: str) -> bool:
    """Whether a procedure code is ICD-10-PCS (seven characters) rather than ICD-9-CM (two to four digits)."""
    return len(code.replace(".", "").strip()) == 7


@functools.lru_cache(maxsize=1)
def _axis_words() -> frozenset[str]:
    words = load_data("terminology_synonyms.yaml")["procedure_axis_words"]
    return frozenset(t for w in words for t in term.normalise(str(w)))


@functools.lru_cache(maxsize=1)
def _compounds() -> tuple[tuple[str, frozenset[str]], ...]:
    """(suffix, the root operations it names), longest suffix first."""
    doc = load_data("terminology_synonyms.yaml")["procedure_compounds"]
    return tuple(sorted(((str(k), frozenset(str(v).lower() for v in ops)) for k, ops in doc.items()),
                        key=lambda x: -len(x[0])))


def _distinctive(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in words if len(w) >= 4 and w not in term.qualifier_words() and w not in _axis_words())


def _compound_names(word: str, title: Sequence[str]) -> bool:
    """Whether a surgical compound word ("laryngoscop") names a PCS title by its parts: the
    title's root operation is one its suffix names and a body-part word starts with its organ root.
    """
    for suffix, operations in _compounds():
        root = word[:-len(suffix)] if word.endswith(suffix) else ""
        if len(root) >= _ROOT_LETTERS and title and title[0] in operations:
            return any(w.startswith(root[:_ROOT_LETTERS]) for w in title[1:])
    return False


def other_version_namesakes(phrase: str, concepts: Sequence[TermMatch], billed: Sequence[Title]) -> tuple[Title, ...]:
    """The billed procedure codes of the version the resolved ``concepts`` are not in that may be
    the procedure ``phrase`` names: their title shares a distinctive word with the phrase (any of
    its forms) or with a best concept's title, or a surgical compound of the phrase names it by its
    parts, and it states no opposite of the phrase. () when a best concept is not a procedure, or
    the concepts are in both versions.
    """
    top = [m for m in concepts if (m.stated, m.coverage) >= (concepts[0].stated, concepts[0].coverage)]
    if not top or any(m.table != "procedures_icd" for m in top):
        return ()
    versions = {is_pcs(m.code) for m in top}
    if len(versions) != 1:
        return ()
    pcs = versions.pop()
    forms = term.phrase_forms(term.normalise(phrase))
    said = [w for f in forms for w in f]
    words = _distinctive([*said, *(w for m in top for w in term.normalise(m.title))])
    out = []
    for t in billed:
        if t.table != "procedures_icd" or is_pcs(t.code) == pcs or term.contradicts(forms, t.title):
            continue
        title = term.normalise(t.title)
        own = _distinctive(title)
        if any(term.word_covered(w, own) for w in words) or any(_compound_names(w, title) for w in said):
            out.append(t)
    return tuple(out)
