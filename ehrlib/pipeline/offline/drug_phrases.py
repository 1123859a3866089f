"""Which drug a phrase's words speak of, and whether they say it was given.

The medication scanner (:mod:`.medications`) reads a drug's name and the words around it;
these readers decide three things it asks of those words: whether words right after the name
deny the drug was given ("held", "not needed", "refused"), whether the name stands as the last
dose of a course ("Last dose of Antibiotics: cefazolin"), and whether a later dose in the
clause is still the drug's or belongs to another name the lexicon does not know ("thiamine
100 mg, folate 1 mg"); the same reading ends a drug's own list item where the next item
names something else before its number (:func:`own_item`). The cue words live in
``offline_context.yaml``.
"""
from __future__ import annotations

import re

from ehrlib.pipeline.offline.context import cue

__all__ = ["denied_after", "last_dose", "named_before", "own_item"]

#: words right after a drug that deny it was given ("held", "not yet started")
_NEGATED_AFTER = cue("negation_after_drug")
#: a need denied right after a drug ("not needed", "refused"): negated, over hours the note does not date
_NEED_DENIED_AFTER = cue("need_denied_after_drug")
_LAST_DOSE = cue("last_dose")
#: words that may stand right before a later dose of the same drug ("and 10 mg", "another 5 mg")
_DOSE_JOINTS = frozenset(("then", "and", "plus", "another", "additional", "extra", "repeat", "repeated", "second",
                          "third", "further", "with", "gave", "given", "received", "got", "bolus", "push", "dose",
                          "doses", "of", "at", "by", "to", "am", "pm", "x", "total", "again", "more", "now", "later",
                          "prn", "daily", "bid", "tid", "qid", "qhs", "qd", "hrs", "hr", "h"))
_ROUTE_WORD = re.compile(r"IVP?|PO|SC|SQ|SubQ|IM|PR|SL|NG|GT|PEG", re.I)
#: a list break and the next item's words up to its number ("..., folate 1 mg", "; nimodipine x21d")
_NEXT_ITEM = re.compile(r"(?:[,;]|\s(?:and|\+)(?=\s))\s*(?P<head>[A-Za-z][A-Za-z\-]*(?:\s+[A-Za-z][A-Za-z\-]*)?)"
                        r"\s+(?:x\s?)?\d")
#: a word that heads a predicate or a modifier, not a name: a participle, a gerund, an adverb
_VERB_FORM = re.compile(r"[a-z]{3,}(?:ed|ing|ly)", re.I)
#: words that head a further detail of the same drug rather than another item ("up to 0.25", "for 7 days",
#: "last dose 0800"): joints, prepositions, times and the drug's own attribute nouns
_ITEM_CONTINUES = _DOSE_JOINTS | frozenset((
    "up", "down", "from", "for", "over", "via", "per", "in", "on", "until", "since", "through", "after", "before",
    "last", "next", "first", "each", "every", "initially", "currently", "still", "approx", "approximately", "about",
    "around", "range", "ranging", "between", "max", "maximum", "min", "minimum", "rate", "day", "days", "week",
    "weeks", "hd", "pod", "q", "qam", "qpm", "hs", "morning", "evening", "night", "tonight", "today", "overnight",
    "yesterday", "this", "also", "only", "ordered", "due", "scheduled", "running", "infusing", "at", "@"))


def denied_after(own: str) -> bool:
    """Whether the words right after a drug's name (``own``) deny it was given: a stop or
    hold ("held", "not yet started") or a need denied ("not needed", "refused").
    """
    return bool(_NEGATED_AFTER.match(own) or _NEED_DENIED_AFTER.match(own))


def last_dose(before: str, after: str) -> bool:
    """Whether a drug is named as the last dose given ("Last dose of Antibiotics: cefazolin",
    "last ceftriaxone dose"): a bare "last" before the name needs "dose" after it.
    """
    m = _LAST_DOSE.search(before)
    return m is not None and ("dose" in m.group(0).lower() or re.match(r"\s*doses?\b", after, re.I) is not None)


def named_before(text: str, d: re.Match[str]) -> bool:
    """Whether a later dose follows a word that may name another product ("thiamine 100 mg,
    folate 1 mg"): a dose repeats its drug only after a joint, a count or a time ("x1 at 1520,
    10 mg IV"; "then 10 mg"), so one after an unknown name is that name's, not the drug's.
    """
    word = re.search(r"([A-Za-z][A-Za-z\-]+)\W*$", text[:d.start()])
    if word is None:
        return False
    return word.group(1).lower() not in _DOSE_JOINTS and not _ROUTE_WORD.fullmatch(word.group(1))


def own_item(text: str, acts: re.Pattern[str]) -> int:
    """Where a drug's own list item ends in ``text``, the words after its name: at the first
    list break (comma, semicolon, "and", "+") whose next item is headed by one or two words that
    may name something else right before its number ("thiamine 100 IV, folate 1 mg": the 1 mg is
    folate's; "on nicardipine, nimodipine x21d": the 21 days are nimodipine's). A head with a
    joint, a route, a time, an attribute noun, an action (``acts``) or a verb form ("titrated
    up to 0.3", "briefly up to 0.1") continues the drug's item, so its details stay the drug's.
    """
    for m in _NEXT_ITEM.finditer(text):
        words = m.group("head").split()
        if not any(w.lower() in _ITEM_CONTINUES or _ROUTE_WORD.fullmatch(w) or acts.fullmatch(w)
                   or _VERB_FORM.fullmatch(w) for w in words):
            return m.start()
    return len(text)
