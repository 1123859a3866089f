"""How well the ICD concept a statement resolved to fits it: enough to claim the code is missing?

A missing-code alarm says "this admission has no code for what the note states". That
claim rests on the resolved concept *being* the statement; two ways it is not:

- **a site or qualifier, not a condition.** An entry cut from a longer diagnosis ("left
  heel" of "Diabetic foot ulcer, left heel"; "retroperitoneum" of "... metastatic to liver,
  retroperitoneum"; "uncontrolled" of "DM2, uncontrolled") resolves only through the part
  of a title that follows its head ("Pressure ulcer *of left heel*", "Secondary diabetes
  mellitus ..., *uncontrolled*"). It names where or how, not what: the condition is its
  neighbour's, which is checked on its own. A phrase names a condition when it states a
  content word of some resolved title's head, the words before the first "of", "due to",
  "with", comma, ... ("Pneumonia, organism unspecified"; "Intestinal infection due to ...").
- **a neighbour, not the concept.** "Revision of AV graft" resolves to "Revision of pedicle
  or flap graft": each side states a word the other lacks ("AV"; "pedicle", "flap") and the
  statement covers no more than half of the title's content words. The dictionary has no
  title for the statement; its closest one shares only generic words (an action, "graft"),
  and what is billed for it cannot be told from that title.

Both leave the statement undecided by the billing; neither is an absence.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ehrlib.pipeline.offline.terminology import TermMatch, normalise, qualifier_words, word_covered

__all__ = ["title_head", "names_a_condition", "weak_concept"]

#: where a title's head ends: its first preposition, connective, comma or bracket
_HEAD_END = re.compile(r",|\(|\[|\b(?:of|due\s+to|with|without|in|for|at|to|from|following|by|on)\b", re.I)


def title_head(title: str) -> tuple[str, ...]:
    """The content words of a title's head, qualifiers left out: ``"Pressure ulcer of left
    heel"`` -> ``("pressure", "ulcer")``; ``"Secondary diabetes mellitus ..., uncontrolled"``
    -> ``("diabete", "mellitus")``.
    """
    head = _HEAD_END.split(title, maxsplit=1)[0]
    qualifiers = qualifier_words()
    return tuple(w for w in normalise(head) if w not in qualifiers)


def _form(m: TermMatch) -> frozenset[str]:
    return frozenset(m.form.split())


def names_a_condition(concepts: Sequence[TermMatch]) -> bool:
    """Whether the statement names a condition or procedure of some resolved title, not only
    a site or qualifier of one: its matched form states a word of the title's head (a title
    whose head has no content word of its own is taken as named). True when nothing resolved.
    """
    if not concepts:
        return True
    for m in concepts:
        head = title_head(m.title)
        form = _form(m)
        if not head or any(word_covered(w, form) for w in head):
            return True
    return False


def weak_concept(concepts: Sequence[TermMatch]) -> bool:
    """Whether the best resolved titles are neighbours of the statement rather than it: each
    of them (those as well covered as the best) leaves a content word of the statement
    unstated, states a content word the statement lacks, and has at most half of its content
    words stated by the statement.
    """
    if not concepts:
        return False
    best = (concepts[0].stated, concepts[0].coverage)
    top = [m for m in concepts if (m.stated, m.coverage) >= best]
    qualifiers = qualifier_words()
    for m in top:
        form = _form(m) - qualifiers
        title = frozenset(normalise(m.title)) - qualifiers
        if not form or not title:
            return False
        stated = {w for w in title if word_covered(w, form)}
        unstated = {w for w in form if not word_covered(w, title)}
        if not unstated or len(stated) == len(title) or 2 * len(stated) > len(title):
            return False
    return True
