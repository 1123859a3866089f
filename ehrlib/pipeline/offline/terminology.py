"""Diagnosis and procedure names matched to ICD titles: token sets, synonyms, rapidfuzz.

A discharge diagnosis reads "NSTEMI", "acute kidney injury", "CHF exacerbation"; the
billed code's title reads "Subendocardial infarction, initial episode of care", "Acute
kidney failure, unspecified", "Congestive heart failure, unspecified". Word overlap
misses the first two and matches "acute" to anything acute. The matcher here:

1. normalises both sides the same way: lower case, punctuation out, plurals stemmed, the
   ICD boilerplate ("Other …", "… unspecified", "NOS", "not elsewhere classified",
   "initial episode of care") and function words removed, so word order and plural
   variants meet as token sets;
2. expands the note's phrase with a shipped synonym list (``terminology_synonyms.yaml``,
   clinical name -> ICD wording), the verifier's shorthand rewrites
   (``diagnosis_wording.yaml``) and the bedside abbreviations of ``abbreviations.yaml``;
   the phrase as written stays one of the candidates, so a synonym never hides a literal
   match;
3. scores each candidate title with rapidfuzz's ``token_set_ratio`` and accepts it only
   when the score reaches a threshold *and* the phrase's tokens are covered by the title
   (its words as written, boilerplate included: "Pneumonia, organism" names
   "Pneumonia, organism unspecified")
   (every token of a one- or two-word phrase, two in three of a longer one; a token is covered by
   an equal or near-equal token, so spelling variants count). A covered phrase with a
   longer, more specific title is a match: "pneumonia" is billed as
   "Pneumonia, organism unspecified" and as "Pneumonia due to Staphylococcus aureus" —
   but the phrase must cover at least a quarter of the title's content and at least one
   covered token must be more than a qualifier ("acute", "left", "stage"), so a modifier
   never matches every title it occurs in.

Titles come from the database's dictionary tables (``d_icd_diagnoses`` /
``d_icd_procedures``, MIMIC-III and MIMIC-IV alike) or any iterable of :class:`Title`.
An index of a whole dictionary takes about a second per 20,000 titles to build; a verifier
checking a note against what was billed builds one over the admission's billed codes.
"""
from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from ehrlib.datafiles import load_data

__all__ = ["Title", "TitleTokens", "TermMatch", "Terminology", "tokenise_titles", "normalise",
           "search_forms", "contradicts", "phrase_forms", "qualifier_words", "TABLES", "word_covered"]

#: billed-code table -> its dictionary table
TABLES = {"diagnoses_icd": "d_icd_diagnoses", "procedures_icd": "d_icd_procedures"}


@dataclass(frozen=True, slots=True)
class Title:
    """One ICD code: the billed table it belongs to, the code, its (long) title."""

    table: str
    code: str
    title: str


@dataclass(frozen=True, slots=True)
class TermMatch:
    """One code title matching a phrase, with its score and how much of the title the phrase covers."""
    table: str
    code: str
    title: str
    score: float
    coverage: float
    #: the phrase form that matched (the normalised phrase or one synonym expansion)
    form: str
    #: share of the form's words the title covers, qualifiers included (ranks a title that
    #: also states the qualifiers above one that leaves them out)
    stated: float = 0.0


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Plural and the noun/adjective endings of clinical words folded away, the same on both
    sides: "varices" / "varix" stay apart, but "endoscopy" / "endoscopic", "hypoxia" /
    "hypoxic", "anemia" / "anemic" meet.
    """
    if len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("es") and word[-3] in "sxz" or word.endswith(("ches", "shes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 6 and word.endswith(("ic", "ia")):
        return word[:-2]
    if len(word) > 6 and word.endswith("y") and not word.endswith("ey"):
        return word[:-1]
    return word


_DEID = re.compile(r"\[\*\*.*?\*\*\]|_{3,}")
_WORD = re.compile(r"[a-z0-9]+")


def _raw_tokens(text: str) -> list[str]:
    # de-identification brackets and blanks are no words; "(Aorto)coronary" is one word
    t = _DEID.sub(" ", text.lower()).replace("&", " and ").replace("s/p", " ").replace("(", "").replace(")", "")
    return [_stem(w) for w in _WORD.findall(t)]


@functools.lru_cache(maxsize=1)
def _qualifiers() -> frozenset[str]:
    return frozenset(_stem(str(w)) for w in load_data("terminology_synonyms.yaml")["qualifiers"])


def qualifier_words() -> frozenset[str]:
    """The qualifier words (stemmed): modifiers that never name a concept alone."""
    return _qualifiers()


@functools.lru_cache(maxsize=1)
def _opposites() -> dict[str, frozenset[str]]:
    """Qualifier -> the qualifiers that exclude it ("acute" / "chronic", "left" / "right")."""
    out: dict[str, set[str]] = defaultdict(set)
    for group in load_data("terminology_synonyms.yaml")["opposites"]:
        words = {_stem(str(w)) for w in group}
        for w in words:
            out[w] |= words - {w}
    return {k: frozenset(v) for k, v in out.items()}


def _excluded(title: str) -> frozenset[str]:
    """The content words of a title's "without ..." clauses, with their synonym forms:
    what the code says is absent ("without mention of bleeding" -> bleeding, hemorrhage).
    """
    _, stop, _ = _vocab()
    words = tuple(t for m in _WITHOUT.finditer(title) for t in _raw_tokens(m.group(0))
                  if t not in stop and t not in ("without", "w", "o", "mention"))
    return frozenset(t for w in words for f in _expansions((w,)) for t in f)


def contradicts(forms: Iterable[tuple[str, ...]], title: str) -> bool:
    """Whether a title states the opposite of the phrase (any of its forms): it excludes a
    word the phrase states ("without mention of bleeding" for a bleed), or carries only the
    opposite of a stated qualifier ("chronic" for "acute", "right" for "left").
    """
    opposite = _opposites()
    # a rewrite that reads one side into a phrase naming the other ("right heart cath" ->
    # "right heart cardiac catheterization" -> "... left heart ...") states neither side
    said = {t for f in forms if not any(w in opposite and opposite[w] & set(f) for w in f) for t in f}
    raw = set(_raw_tokens(title))
    if said & _excluded(title):
        return True
    return any(w in opposite and w not in raw and raw & opposite[w] for w in said)


@functools.lru_cache(maxsize=1)
def _vocab() -> tuple[tuple[tuple[str, ...], ...], frozenset[str], tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]]:
    doc = load_data("terminology_synonyms.yaml")
    boiler = tuple(sorted((tuple(_raw_tokens(p)) for p in doc["boilerplate"]), key=len, reverse=True))
    stop = frozenset(_stem(w) for w in doc["stopwords"]) | frozenset(w for w in doc["stopwords"])
    pairs: dict[tuple[tuple[str, ...], tuple[str, ...]], None] = {}

    def variant(text: str) -> tuple[str, ...]:
        # a variant is looked for in a normalised phrase, which has lost its function words
        # ("LIMA to LAD" is looked for as "lima lad"); a single letter stays, it is part of a
        # shorthand ("a-line" is no "line"), and so does a variant that would keep one word only
        # ("on pump" is no "pump")
        raw = _raw_tokens(text)
        kept = tuple(t for t in raw if t not in stop or len(t) == 1)
        return kept if len(kept) >= 2 else tuple(raw)

    for canon, variants in doc["synonyms"].items():
        c = tuple(_raw_tokens(canon))
        for v in variants:
            pairs.setdefault((variant(v), c), None)
    for entry in load_data("diagnosis_wording.yaml")["rewrites"]:
        if "term" in entry:
            pairs.setdefault((variant(str(entry["term"])), tuple(_raw_tokens(str(entry["icd"])))), None)
    known = {v for v, _ in pairs}
    for abbr, expansions in load_data("abbreviations.yaml")["abbreviations"].items():
        key = variant(abbr)
        if key and expansions and key not in known:
            pairs.setdefault((key, tuple(_raw_tokens(expansions[0]))), None)
    # longest variant first; a variant listed under several names keeps the listed order
    ordered = tuple(sorted(((k, v) for k, v in pairs if k and k != v), key=lambda kv: len(kv[0]), reverse=True))
    return boiler, stop, ordered


def _drop(tokens: list[str], phrases: Iterable[tuple[str, ...]]) -> list[str]:
    out = list(tokens)
    present = set(out)
    for p in phrases:
        if p[0] not in present:
            continue
        n = len(p)
        i = 0
        while i + n <= len(out):
            if tuple(out[i:i + n]) == p:
                del out[i:i + n]
            else:
                i += 1
    return out


#: an ICD "without ..." clause (up to the next comma) names what the code excludes, which a
#: note naming the condition does not state: "Cirrhosis of liver without mention of alcohol"
#: a parenthetical aside of a phrase ("CABG x3 (LIMA-LAD, SVG-OM)", an unclosed one to the end)
_PAREN = re.compile(r"\([^)]*\)?|\[[^\]]*\]?")
_WITHOUT = re.compile(r"\b(?:without|w/o)\b[^,;]*", re.I)


def normalise(text: str) -> tuple[str, ...]:
    """The content tokens of a diagnosis/procedure name, as both sides are compared:
    ``"Other and unspecified hyperlipidemia"`` -> ``("hyperlipidemia",)``.
    """
    boiler, stop, _ = _vocab()
    return tuple(t for t in _drop(_raw_tokens(_WITHOUT.sub(" ", text)), boiler) if t not in stop)


def _expansions(tokens: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The phrase as written, each single synonym rewrite, and all rewrites at once."""
    _, stop, pairs = _vocab()
    forms = [tokens]
    full = list(tokens)
    rewritten: set[tuple[str, ...]] = set()
    for variant, canon in pairs:
        n = len(variant)
        for i in range(len(tokens) - n + 1):
            if tokens[i:i + n] == variant:
                forms.append(tuple(t for t in tokens[:i] + canon + tokens[i + n:] if t not in stop))
        if variant in rewritten:
            continue  # the all-at-once rewrite takes a variant's first listed name only
        j = 0
        while j + n <= len(full):
            if tuple(full[j:j + n]) == variant:
                full[j:j + n] = [f"\x00{t}" for t in canon]  # marked: not rewritten again
                rewritten.add(variant)
                j += len(canon)
            else:
                j += 1
    forms.append(tuple(t.lstrip("\x00") for t in full if t.lstrip("\x00") not in stop))
    seen: dict[tuple[str, ...], None] = {}
    for f in forms:
        if f:
            seen.setdefault(f, None)
    return list(seen)


@functools.lru_cache(maxsize=4096)
def phrase_forms(tokens: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The phrase's forms, rewritten twice over: a rewrite may reveal another
    ("hypoxemic resp failure" -> "hypoxemic respiratory failure" -> "acute respiratory
    failure with hypoxia"). At most 24 forms, the phrase as written first.
    """
    seen: dict[tuple[str, ...], None] = dict.fromkeys(_expansions(tokens))
    for f in list(seen)[1:]:
        for g in _expansions(f):
            seen.setdefault(g, None)
    return tuple(list(seen)[:12])


def search_forms(phrase: str) -> list[str]:
    """The phrase in ICD wording, for a lexical search: the all-synonyms rewrite first,
    then single rewrites (never the phrase as written, which the caller has).
    """
    forms = _expansions(normalise(phrase))
    rest = forms[1:]
    ordered = ([rest[-1]] if rest else []) + rest[:-1]
    return [" ".join(f) for f in ordered if f != forms[0]]


@functools.lru_cache(maxsize=262144)
def _near_equal(a: str, b: str) -> bool:
    """Spelling variants of one word (five letters or more): rapidfuzz ratio of 88 or more."""
    la, lb = len(a), len(b)
    if la < 5 or lb < 5 or 2 * min(la, lb) < 0.88 * (la + lb):
        return False  # the ratio cannot reach 88 with lengths this far apart
    return fuzz.ratio(a, b) >= 88


def _spelled_as(token: str, title: frozenset[str]) -> str:
    """The title's word that ``token`` is a spelling variant of (the token when none)."""
    return next((t for t in sorted(title) if _near_equal(token, t)), token)


def _covered(token: str, title: frozenset[str]) -> bool:
    if token in title:
        return True
    return len(token) >= 5 and any(_near_equal(token, t) for t in title)


def word_covered(token: str, words: frozenset[str]) -> bool:
    """Whether a normalised word is among ``words``, as written or as a spelling variant."""
    return _covered(token, words)


#: titles scored per phrase form, those sharing the most words first
_MAX_SCORED = 400


#: one title as the index holds it: table, code, title, its content tokens (normalised, in
#: order) and its raw tokens (what :func:`tokenise_titles` computes, the costly part of an index)
TitleTokens = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]


def tokenise_titles(titles: Iterable[Title]) -> list[TitleTokens]:
    """The titles with content tokens, tokenised as :func:`normalise` does (a title without
    content words left out): the part of an index worth keeping on disk for a whole dictionary.
    """
    boiler, stop, _ = _vocab()
    out: list[TitleTokens] = []
    for t in titles:
        raw = _raw_tokens(t.title)
        # normalise(), sharing the tokens: a "without" clause is cut only where there is one
        kept = _raw_tokens(_WITHOUT.sub(" ", t.title)) if ("without" in raw or "w/o" in t.title.lower()) else raw
        toks = tuple(w for w in _drop(kept, boiler) if w not in stop)
        if toks:
            out.append((t.table, t.code, t.title, toks, tuple(raw)))
    return out


class Terminology:
    """An index of ICD titles for one database."""

    def __init__(self, titles: Iterable[Title]) -> None:
        self._load(tokenise_titles(titles))

    @classmethod
    def from_tokens(cls, rows: Iterable[TitleTokens]) -> Terminology:
        """The index of titles tokenised by :func:`tokenise_titles` (read back from a cache)."""
        term = cls.__new__(cls)
        term._load(rows)
        return term

    def _load(self, rows: Iterable[TitleTokens]) -> None:
        self._titles: list[Title] = []
        self._tokens: list[frozenset[str]] = []
        self._raw: list[frozenset[str]] = []
        self._text: list[str] = []
        self._index: dict[str, set[int]] = defaultdict(set)
        for table, code, title, toks, raw in rows:
            i = len(self._titles)
            self._titles.append(Title(table, code, title))
            self._tokens.append(frozenset(toks))
            self._raw.append(frozenset(toks) | frozenset(raw))
            self._text.append(" ".join(toks))
            for tok in toks:
                self._index[tok].add(i)
        self._near_cache: dict[str, set[int]] = {}
        self._match_cache: dict[Any, tuple[TermMatch, ...]] = {}
        # codes with a more specific code under them: category headers ("I48", "I48.9")
        self._headers = frozenset((t.table, t.code[:k]) for t in self._titles for k in range(3, len(t.code)))
        self._by_prefix: dict[str, list[str]] = defaultdict(list)
        for key in self._index:
            if len(key) >= 5:
                self._by_prefix[key[:4]].append(key)

    def __len__(self) -> int:
        return len(self._titles)

    def is_leaf(self, table: str, code: str) -> bool:
        """Whether no more specific code of the index sits under ``code``: a billable code,
        not a category header that groups several ("I48 Atrial fibrillation and flutter").
        """
        return (table, code) not in self._headers

    @classmethod
    def from_database(cls, con: Any, schema: Any) -> Terminology:
        """Every diagnosis and procedure title of the database (``schema`` is the
        :class:`ehrlib.schema.SchemaMap` that maps MIMIC-III and MIMIC-IV names).
        """
        titles: list[Title] = []
        for table, dictionary in TABLES.items():
            if not schema.has(dictionary):
                continue
            sql = (f"SELECT {schema.select_list(dictionary, ('icd9_code', 'long_title', 'short_title'))} "  # noqa: S608
                   f"FROM {schema.table(dictionary).ref}")
            for code, long_title, short_title in con.execute(sql).fetchall():
                title = long_title or short_title
                if code is not None and title:
                    titles.append(Title(table, str(code).strip(), str(title).strip()))
        return cls(titles)

    def _near(self, token: str) -> set[int]:
        """Titles holding the token or a near-equal spelling of it (five letters or more)."""
        got = self._near_cache.get(token)
        if got is None:
            got = set(self._index.get(token, ()))
            if len(token) >= 5:
                for key in self._by_prefix.get(token[:4], ()):
                    if key != token and fuzz.ratio(token, key) >= 88:
                        got |= self._index[key]
            if len(self._near_cache) > 20000:
                self._near_cache.clear()
            self._near_cache[token] = got
        return got

    def match(self, phrase: str, *, tables: Iterable[str] | None = None, codes: Iterable[str] | None = None,
              threshold: float = 90.0, limit: int = 5) -> list[TermMatch]:
        """The titles ``phrase`` names, best first.

        ``tables`` limits the search to billed tables (``diagnoses_icd``/``procedures_icd``);
        ``codes`` to a set of codes (the admission's billed codes, say). A title that states
        the opposite of the phrase (:func:`contradicts`) is never a match. Answers are
        remembered per index (one phrase is resolved at extraction and at verification).
        """
        key = (phrase, tuple(tables) if tables is not None else None,
               frozenset(str(c).strip() for c in codes) if codes is not None else None, threshold, limit)
        got = self._match_cache.get(key)
        if got is None:
            got = self._match(phrase, tables=key[1], codes=key[2], threshold=threshold, limit=limit)
            if len(self._match_cache) > 4096:
                self._match_cache.clear()
            self._match_cache[key] = got
        return list(got)

    def _match(self, phrase: str, *, tables: Iterable[str] | None, codes: Iterable[str] | None,
               threshold: float, limit: int) -> tuple[TermMatch, ...]:
        want_tables = set(tables) if tables is not None else None
        want_codes = {str(c).strip() for c in codes} if codes is not None else None
        best: dict[int, TermMatch] = {}
        qualifiers = _qualifiers()
        loose = qualifiers
        forms = phrase_forms(normalise(_PAREN.sub(" ", phrase)))
        for form in forms:
            fset = frozenset(form)
            need = 1.0 if len(fset) <= 2 else 0.66
            counts: dict[int, int] = defaultdict(int)
            for tok in fset:
                for i in self._near(tok):
                    counts[i] += 1
            # a title can cover at most the phrase tokens whose postings hold it (plus raw words)
            # every content word of a short phrase must be in the title, most of a longer one; of
            # the titles holding as many as the best, a bounded number is scored (a common word
            # of ICD-10-PCS titles, "artery", has thousands)
            content = sum(1 for tok in fset if tok not in loose)
            floor = max(1, int(need * content + 0.999) - (1 if len(fset) > 2 else 0))
            ranked_ids = sorted((i for i, n in counts.items() if n >= floor), key=lambda i: -counts[i])
            text = " ".join(form)
            for i in ranked_ids[:_MAX_SCORED]:
                t = self._titles[i]
                if want_tables is not None and t.table not in want_tables:
                    continue
                if want_codes is not None and t.code not in want_codes:
                    continue
                # a qualifier is covered only as written: "placement" is no spelling of "replacement"
                raw_i = self._raw[i]
                hits = [tok for tok in fset if tok in raw_i or (tok not in loose and _covered(tok, raw_i))]
                # a stated qualifier the title leaves out narrows, it does not name another concept
                # ("open cholecystectomy", "right femoral line"); a contrary one is excluded below
                counted = len(fset) - sum(1 for tok in fset if tok in loose and tok not in hits)
                coverage = len(hits) / counted if counted else 0.0
                if coverage < need or all(tok in qualifiers for tok in hits):
                    continue
                title_cover = sum(_covered(t, fset) for t in self._tokens[i])
                if title_cover / len(self._tokens[i]) < 0.25:
                    continue
                # a near-equal spelling is scored as the title's word ("endoscopy" / "endoscopic")
                said = text if len(hits) == sum(tok in self._raw[i] for tok in hits) else " ".join(
                    tok if tok in self._raw[i] or tok not in hits else _spelled_as(tok, self._raw[i]) for tok in form)
                score = fuzz.token_set_ratio(said, self._text[i])
                if score < threshold:
                    continue
                m = TermMatch(t.table, t.code, t.title, float(score), coverage, text, len(hits) / len(fset))
                prev = best.get(i)
                if prev is None or (m.stated, m.coverage, m.score) > (prev.stated, prev.coverage, prev.score):
                    best[i] = m
        kept = [m for m in best.values() if not contradicts(forms, m.title)]
        ranked = sorted(kept, key=lambda m: (-m.stated, -m.coverage, -m.score,
                                             -fuzz.token_sort_ratio(m.form, " ".join(normalise(m.title))),
                                             m.code))
        return tuple(ranked[:limit])
