"""Microbiology mentions: a culture's specimen with its organism, negative or pending result.

``BCx 2/4 GPC in clusters``, ``UCx NGTD``, ``sputum grew yeast``, ``E. coli resistant to
cipro``. A bare specimen word ("sputum", "urine") is a culture only when culture words
follow. Each antibiotic's susceptibility after an organism (:mod:`.microsens`) is its own
statement about that organism, apart from the culture's organism statement ("grew E. coli,
cipro resistant" is two claims); a result stated in its own clause after the specimen's
collection ("swab sent, positive per lab") is a third.
"""
from __future__ import annotations

import functools
import itertools
import re
from dataclasses import replace
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.claims import MicrobiologyClaim
from ehrlib.pipeline.offline.lexicon import Lexicon
from ehrlib.pipeline.offline.mention import Mention, line_clause, overlaps
from ehrlib.pipeline.offline.microsens import pan_sensitive_span, parse_susceptibilities, susceptibility_mentions

__all__ = ["microbiology_mentions", "culture_starts", "patient_test_names", "listed_cultures"]

_BARE_SPECIMENS = ((re.compile(r"\bsputum\b", re.I), "sputum|bronch"), (re.compile(r"\burine\b", re.I), "urine"),
                   (re.compile(r"\bblood\b", re.I), "blood cult"), (re.compile(r"\bwound(?:\s+swab)?\b", re.I),
                                                               "wound|swab"),
                   (re.compile(r"\bstool\b", re.I), "stool|feces"),
                   (re.compile(r"\b(?:joint|synovial)\s+fluid\b", re.I), "joint|synovial|fluid"),
                   (re.compile(r"\bpericardial\s+fluid\b", re.I), "pericardial|fluid"),
                   (re.compile(r"\bcsf\b", re.I), "csf"), (re.compile(r"\bswab\b", re.I), "swab"))
_MICRO_HEAD = r"[\s:(`\d/\-)_]*(?:(?:also|again|now|still|too)\s+)?(?:came\s+back\s+)?"
_MICRO_WORDS = (r"cx|cultures?|gram\s+stain|grew|growing|grows|sent|ngtd|no\s+growth|"
                r"(?:was|were|is|are)\s+(?:positive|negative|pending|sent)|positive|negative|pending|"
                r"from\s+`*[\d/-]+`*\s+(?:grew|growing|positive|negative|w/|with)")
_MICRO_CONTEXT = re.compile(r"^" + _MICRO_HEAD + r"(?:" + _MICRO_WORDS + r"|w/|with)", re.I)


_BARE = (*_BARE_SPECIMENS, (re.compile(r"\bbile\b", re.I), "bile"), (re.compile(r"\btissue\b", re.I), "tissue"))


def _coordinated(but: str) -> str:
    """Specimens named together share the culture words after the last ("blood, urine and
    sputum cultures"); the same word again ("tan sputum, sputum cx") is no coordination.
    """
    others = "|".join(p.pattern for p, _ in _BARE if p.pattern != but)
    return r"(?:\s*(?:,|&|/|\band\b)\s*(?:" + others + r"))*"


def _bare_specimens(lex: Lexicon) -> tuple[tuple[re.Pattern[str], str], ...]:
    """The bare specimen words, each a culture only when culture words or an organism follow
    ("sputum grew yeast", "Sputum: GNRs", "urine w/ E. coli", "bile and sputum cx sent").
    """
    return _bare_specimen_patterns(lex.organisms)


@functools.lru_cache(maxsize=8)
def _bare_specimen_patterns(organisms: tuple[tuple[re.Pattern[str], str], ...]
                            ) -> tuple[tuple[re.Pattern[str], str], ...]:
    # built once per lexicon: each pattern holds every organism, too long to rebuild per line
    alternatives = "|".join(p.pattern for p, _ in organisms)
    # "urine w/ E. coli" is a culture, "yellow urine w/ sediment" the urine's look: after a
    # bare specimen, "with" binds a culture only when an organism follows
    result = (r"(?:" + _MICRO_HEAD + r"(?:" + _MICRO_WORDS + r")|" + _MICRO_HEAD + r"(?:(?:w/|with)\s+)?"
              r"(?:>\s*\d+\s*k\s+)?(?:" + alternatives + r"))")
    return tuple((re.compile(p.pattern + r"(?=" + _coordinated(p.pattern) + result + r")", re.I), word)
                 for p, word in _BARE)


_ANY_COORDINATED = re.compile(_coordinated(""), re.I)
#: what joins two named cultures that share one result ("BCx and UCx", "BCx, UCx", "BCx x2 + UCx":
#: a plus sign between two cultures is "and", not a positive result)
_JOIN = re.compile(r"\s*(?:x\s?\d\s*)?(?:,|&|/|\+|\band\b)\s*", re.I)


@functools.cache
def _implications() -> tuple[tuple[re.Pattern[str], str, tuple[str, str]], ...]:
    terms = load_data("verification_terms.yaml")["organism_implied"]
    return tuple((re.compile(k, re.I), v["organism"], (v["antibiotic"], v["level"])) for k, v in terms.items())


def _implied(organism_text: str) -> dict[str, Any]:
    """"MRSA": S. aureus with oxacillin R, one organism claim and one susceptibility claim."""
    for pat, organism, claim in _implications():
        if pat.search(organism_text):
            return {"organism": organism, "sensitivities": (claim,)}
    return {}


def _test_word(word: str) -> str:
    """A test-name word as the note may write it: a long word by its first four letters on
    ("Resp" for "Respiratory"), a short one whole.
    """
    w = re.escape(word.lower())
    return (w[:4] + r"[a-z]*") if len(word) >= 5 else w + r"s?"


@functools.lru_cache(maxsize=256)
def patient_test_names(labels: tuple[str, ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    """(note pattern, specimen pattern) of the patient's microbiology test names: two or more
    of a name's specific words in its order, joined by spaces ("Influenza DFA" for "Influenza
    A/B by DFA", "resp viral screen" for "Rapid Respiratory Viral Screen & Culture"), read as
    a culture only when a result or collection follows, like a bare specimen word.
    """
    generic = frozenset(load_data("verification_terms.yaml")["micro_test_generic_words"])
    out: list[tuple[re.Pattern[str], str]] = []
    for label in labels:
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", label)][:6]
        forms: list[list[str]] = []
        for size in range(len(words), 1, -1):  # longest first
            for combo in itertools.combinations(range(len(words)), size):
                picked = [words[i] for i in combo]
                if all(w.lower() in generic for w in picked) or any(len(w) < 3 and not w.isupper() for w in picked):
                    continue
                if picked[0].lower() in generic and picked[-1].lower() in generic:
                    continue  # "blood ... culture": generic words at both edges name no test
                forms.append(picked)
        if not forms:
            continue
        alts = "|".join(r"[\s\-/]+".join(_test_word(w) for w in f) for f in forms)
        context = _MICRO_CONTEXT.pattern[1:]
        out.append((re.compile(r"(?<![A-Za-z0-9])(?:" + alts + r")(?![A-Za-z0-9])(?=" + context + r")", re.I),
                    re.escape(label)))
    return tuple(out)


#: "culture grew ...", "cx positive": a culture of no named specimen is one of any specimen
_UNNAMED = re.compile(r"(?<![A-Za-z])(?:(?:cultures?|cx)(?=\s+(?:grew|growing|positive|negative|with|was\s+(?:positive|"
                      r"negative)|came\s+back))|gram\s+stain(?=\s*(?::|with|w/|showed|shows|positive|negative|[+-]|\d\+|"
                      r"(?:few|rare|many|moderate|\d\+)?\s*(?:gp|gn|gram|yeast|pmn|no\s+organisms))))", re.I)


def _after_specimen(raw: str, start: int, specimens: list[tuple[re.Pattern[str], str]]) -> bool:
    """Whether a specimen word ends right before ``start`` ("blood culture" is the blood's)."""
    before = raw[:start].rstrip()
    return any(re.search("(?:" + p.pattern.split("(?=")[0] + r")$", before, re.I) for p, _ in (*_BARE, *specimens))


#: "all blood cultures", "all of her prior cultures": a statement about every culture so far
_EVERY = re.compile(r"\b(?:all|every)\s+(?:(?:of\s+)?(?:the|his|her|prior|previous|repeat|subsequent|surveillance|"
                    r"other)\s+)*$", re.I)
#: a morphology seen on a gram stain ("GNRs + GPRs" is one stain's reading, not two organisms)
_MORPHOLOGY = re.compile(r"^(?:gp|gn|gram)", re.I)
#: between two organisms of one culture ("MSSA and Stenotrophomonas", "E. coli + Kleb")
#: ("GPC in clusters -> coag-neg staph" is one organism identified further: no list word)
_ORGANISM_JOIN = re.compile(r"^(?:\s|,|\+|&|\band\b|\bwith\b|\balso\b|\bplus\b)*$", re.I)


def _organisms_in(clause: str, lex: Lexicon) -> list[tuple[int, int, str, str]]:
    """(start, end, table words, note words) of each organism named in ``clause``, left to
    right without overlaps; at one place the lexicon's more specific (earlier) pattern wins.
    """
    hits = sorted((om.start(), i, om.end(), oword) for i, (opat, oword) in enumerate(lex.organisms)
                  for om in opat.finditer(clause))
    out: list[tuple[int, int, str, str]] = []
    for a, _, b, oword in hits:
        if not out or a >= out[-1][1]:
            out.append((a, b, oword, clause[a:b]))
    return out


def _further_organisms(clause: str, found: list[tuple[int, int, str, str]]) -> list[tuple[int, int, str, str]]:
    """The organisms after the first that the culture also grew, each its own statement
    ("growing MSSA and Stenotrophomonas"): joined to the one before by a list word, outside
    parentheses (a parenthesis holds the previous one's details: "Steno sensitive to ..."),
    a different organism, and not one more morphology of a gram stain's reading.
    """
    out: list[tuple[int, int, str, str]] = []
    named = {found[0][2]} if found else set()
    prev = found[0] if found else None
    for cur in found[1:]:
        assert prev is not None
        head = clause[:cur[0]]
        if head.count("(") > head.count(")"):
            continue  # inside a parenthesis: the previous organism's details
        gap = re.sub(r"\([^()]*\)", " ", clause[prev[1]:cur[0]])
        if not _ORGANISM_JOIN.match(gap):
            break
        if cur[2] not in named and not (_MORPHOLOGY.match(prev[3]) and _MORPHOLOGY.match(cur[3])):
            out.append(cur)
            named.add(cur[2])
        elif _implied(cur[3]) and not _implied(prev[3]):
            out.append(cur)  # "Staph aureus, MSSA": the class word restates the organism's susceptibility
        prev = cur
    return out


#: a word that adds one more organism to a culture's report ("...; also MRSA", "also Staph aureus")
_ALSO = re.compile(r"(?<![A-Za-z])(?:also|plus)\s+(?:(?:grew|growing|with|w/)\s+)?", re.I)
#: a sentence end that is no genus initial ("E. coli" goes on); a semicolon does not end a report
_REPORT_END = re.compile(r"(?<!\b[A-Za-z])\.(?:\s|$)")


def _also_organisms(raw: str, pos: int, end: int, lex: Lexicon) -> list[tuple[int, int, str, str]]:
    """(start, end, table words, note words) in ``raw`` of the organisms that the culture's
    report adds after ``pos`` with "also" / "plus" ("Klebsiella - R to ceftriaxone; also
    MRSA", "Pseudomonas - S to cefepime; R to cipro, also Staph aureus, MSSA"), up to the
    sentence end or ``end`` (the next specimen), outside parentheses; each is its own
    statement, and a class word right after it ("MSSA") restates its susceptibility.
    """
    stop = _REPORT_END.search(raw, pos, end)
    end = stop.start() if stop else end
    out: list[tuple[int, int, str, str]] = []
    for j in _ALSO.finditer(raw, pos, end):
        head = raw[pos:j.start()]
        if head.count("(") > head.count(")"):
            continue
        hit = _organisms_in(raw[j.end():end][:60], lex)
        if not hit or hit[0][0] != 0:
            continue
        clause = line_clause(raw, j.end())[:80]
        found = _organisms_in(clause, lex)
        for a, b, oword, otext in found[:1] + _further_organisms(clause, found):
            out.append((j.end() + a, j.end() + b, oword, otext))
    return out


def _sentence_start(raw: str, pos: int) -> int:
    """Where the sentence holding ``pos`` begins (not at a genus initial: "E. coli")."""
    ends = [m.end() for m in re.finditer(r"(?:;|(?<!\b[A-Za-z])\.)(?:\s|$)", raw[:pos])]
    return ends[-1] if ends else 0


#: a culture's date or specimen after "<organism> bacteremia": the result of that culture
_CULTURE_DETAIL = re.compile(r"^\s*(?:`+[\d/-]+`+|_{3,}|\d{1,2}/\d{1,2}\b|\(\s*(?:blood|bcx|b\s*cx)|(?:on|from)\s+"
                             r"(?:`+[\d/-]+`+|_{3,}|\d{1,2}/\d{1,2}\b))", re.I)


def _bacteremia(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    """"MSSA bacteremia [**4-2**]", "E. coli bacteremia (blood cx 2/4 ...)": an organism grown
    from blood, stated by the infection's name with the culture's date or specimen. Without
    either ("# Proteus bacteremia", "admitted with E. coli bacteremia") it names a diagnosis.
    """
    organisms = "|".join(f"(?:{p.pattern})" for p, _ in lex.organisms)
    out: list[Mention] = []
    for m in re.finditer(r"(?<![A-Za-z])(?P<org>" + organisms + r")\s+(?:bacter|fung)(?:a)?emia\b", raw, re.I):
        if overlaps(taken, m.start(), m.end()) or not _CULTURE_DETAIL.match(raw[m.end():]):
            continue
        otext = m.group("org")
        oword = next(w for p, w in lex.organisms if p.fullmatch(otext) or p.match(otext))
        claim = MicrobiologyClaim(**{"specimen": "blood cult", "organism": oword, "organism_text": otext,
                                      **_implied(otext)})
        out.append(Mention(line, m.start(), m.end(), m.group(0), "microbiology", "culture", None, claim))
        taken.append((m.start(), m.end()))
    return out


def _cultures(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]],
              tests: tuple[tuple[re.Pattern[str], str], ...] = ()
              ) -> tuple[list[Mention], list[Mention], set[int]]:
    """(cultures, further organisms of them, starts of cultures that only source an
    organism named before them: "MSSA bacteremia (blood cx levo S)").
    """
    out: list[Mention] = _bacteremia(raw, line, lex, taken)
    extra: list[Mention] = []
    sources: set[int] = set()
    specimens = [*lex.specimens, *_bare_specimens(lex), *tests]
    for pattern, table_word in [*specimens, (_UNNAMED, "")]:
        for m in pattern.finditer(raw):
            if overlaps(taken, m.start(), m.end()) or (not table_word and (
                    _after_specimen(raw, m.start(), specimens)
                    or any(o.start < m.start() and not re.search(r"[.;](?:\s|$)", raw[o.start:m.start()])
                           for o in out))):
                continue  # an unnamed culture in a named one's sentence is that one's ("CSF gram stain and culture")
            clause = line_clause(raw, m.end())[:80]
            # a coordinated specimen reads the result of the last one named with it
            chain = _ANY_COORDINATED.match(clause)
            skip = chain.end() if chain else 0
            nxt_spec = min((x.start() for pat, _ in specimens for x in pat.finditer(clause) if x.start() > skip),
                           default=len(clause))
            if not skip and not clause[:nxt_spec].strip() and nxt_spec < len(clause) and (pattern, table_word) not in \
                    lex.specimens:
                continue  # "stool C. diff positive": the bare word is the named test's specimen
            # an organism between a conjunction and the next culture names that test ("MRSA screen and
            # Staph aureus swab negative"): the two are joined
            head = clause[:nxt_spec]
            named = [f for f in _organisms_in(head, lex) if not head[f[1]:].strip() and _JOIN.fullmatch(head[:f[0]])]
            if not skip and nxt_spec < len(clause) and (named or _JOIN.fullmatch(head)):
                # "BCx and UCx no growth to date": cultures joined by a conjunction share the result
                # stated after the last of them (whose name is no result: "MRSA screen and Staph aureus swab")
                last = max(x.end() for pat, _ in specimens for x in pat.finditer(clause) if x.start() == nxt_spec)
                nxt_spec = min((x.start() for pat, _ in specimens for x in pat.finditer(clause) if x.start() >= last),
                               default=len(clause))
                clause = " " * last + clause[last:]
            clause = clause[:nxt_spec]
            attrs: dict[str, Any] = {"specimen": table_word}  # the MicrobiologyClaim's fields
            if _EVERY.search(raw[:m.start()]):
                attrs["every"] = True
            # the organism named first (ties: the lexicon's more specific pattern)
            found = _organisms_in(clause, lex)
            if found:
                otext, oword = found[0][3], found[0][2]
                attrs["organism"] = oword
                attrs["organism_text"] = otext
                attrs.update(_implied(otext))
                further = [(m.end() + a, m.end() + b, ow, ot) for a, b, ow, ot in _further_organisms(clause, found)]
                nxt = min((x.start() for pat, _ in specimens if (x := pat.search(raw, m.end() + len(clause)))),
                          default=len(raw))
                further += [x for x in _also_organisms(raw, m.end() + found[0][1], nxt, lex)
                            if all(x[0] >= b or x[1] <= a for a, b, _, _ in further)]
                for a, b, ow, ot in further:
                    extra.append(Mention(line, a, b, ot, "microbiology", "culture", ot,
                                         MicrobiologyClaim(**{"specimen": table_word, "organism": ow,
                                                              "organism_text": ot, **_implied(ot)})))
            elif parse_susceptibilities(clause, lex)[0]:
                # the specimen sources the susceptibilities of an organism named before it in the sentence
                before = _organism_before(raw, _sentence_start(raw, m.start()), m.start(), lex)
                if before is not None:
                    attrs["organism"], attrs["organism_text"] = before
                    sources.add(m.start())
            # a test named with its result ("C. diff negative", "C. diff toxin positive")
            own = m.group(0) + " " if re.search(r"\b(?:positive|pos|negative|neg)\b|[+-]\s*$", m.group(0), re.I) else ""
            if "organism" not in attrs and lex.micro_negative.search(own + clause[:60]):
                attrs["negative"] = True
            elif "organism" not in attrs and re.search(r"\b(?:positive|pos)\b|\(\+\)|\+\s*$",
                                                       own + clause[:40], re.I):
                attrs["positive"] = True
            if parse_susceptibilities(clause, lex)[1]:
                attrs["pan_sensitive"] = True  # per-antibiotic claims are their own statements (find_mentions)
            if re.search(r"\bpending\b", clause, re.I) and "organism" not in attrs:
                attrs["pending"] = True
            end = m.end()
            for key in ("organism_text",):
                if key in attrs:
                    end = m.end() + clause.find(attrs[key]) + len(attrs[key])
            claim = MicrobiologyClaim(**attrs)
            result = _separate_result(clause, claim)
            if result is not None:
                # "swab sent, positive per lab call": the collection and the result are two statements
                r0, r1 = m.end() + result[0], m.end() + result[1]
                out.append(Mention(line, m.start(), m.end(), m.group(0).strip(), "microbiology", "culture",
                                   clause[:result[0]].strip(" ,;") or None, MicrobiologyClaim(specimen=table_word)))
                out.append(Mention(line, r0, r1, raw[r0:r1], "microbiology", "culture", raw[r0:r1], claim))
                taken.append((m.start(), r1))
                continue
            out.append(Mention(line, m.start(), end, m.group(0).strip(), "microbiology", "culture",
                               clause.strip()[:80] or None, claim))
            taken.append((m.start(), end))
    extra = [x for x in extra if not overlaps(taken, x.start, x.end)]
    taken.extend((x.start, x.end) for x in extra)
    return sorted(out, key=lambda x: x.start), extra, sources


#: a collection stated before the result, in its own clause ("sent, positive per lab")
_COLLECTED_FIRST = re.compile(r"^\s*(?:x\s*\d\s*)?(?:(?:was|were)\s+)?(?:sent|drawn|obtained|collected)\b[^,;]{0,20}"
                              r"[,;]\s*(?:(?:and|now|but|since|which\s+(?:was|is|came\s+back))\s+)?", re.I)


def _separate_result(clause: str, claim: MicrobiologyClaim) -> tuple[int, int] | None:
    """(start, end) in ``clause`` of a result stated in its own clause after the specimen's
    collection, or None: the collection is checked on its own (the specimen was drawn), the
    result on the organism rows.
    """
    first = _COLLECTED_FIRST.match(clause)
    if first is None or not (claim.positive or claim.negative or claim.organism):
        return None
    rest = clause[first.end():]
    stop = re.search(r"[,;]|\.(?:\s|$)", rest)
    end = first.end() + (stop.start() if stop else len(rest.rstrip()))
    return (first.end(), end) if end > first.end() else None


#: fungi, and the antifungal agents tested on them: an antibacterial is tested on a bacterium
_FUNGUS = re.compile(r"yeast|candida|fung|aspergill|cryptococ|torulopsis", re.I)
_ANTIFUNGAL = re.compile(r"azole|fungin|amphotericin|flucytosine|nystatin", re.I)


def _organism_before(raw: str, start: int, end: int, lex: Lexicon, drug: str | None = None
                     ) -> tuple[str, str] | None:
    """(table words, note words) of the organism named last in ``raw[start:end]``; with a
    ``drug``, the last of the kind it is tested on (a fungus for an antifungal, else a
    bacterium: "KLEBSIELLA, sparse yeast. Meropenem S" is the Klebsiella's), else the last.
    """
    found = sorted((om.start(), oword, om.group(0)) for opat, oword in lex.organisms
                   for om in opat.finditer(raw, start, end))
    if not found:
        return None
    fungal = bool(_ANTIFUNGAL.search(drug or ""))
    kind = [f for f in found if bool(_FUNGUS.search(f[1]) or _FUNGUS.search(f[2])) == fungal] if drug else []
    best = (kind or found)[-1]
    return best[1], best[2]


#: a verb of collecting cultures ("cultured", "pan-cultured", "re-cultured"): the specimens it lists are cultures
_CULTURE_VERB = re.compile(r"(?<![A-Za-z])(?:(?:pan|re)-?\s?)?cultured\b", re.I)


def listed_cultures(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]]) -> list[Mention]:
    """The bare specimens a culture verb lists ("Pan-cultured: blood, sputum, stool",
    "re-cultured (blood) tonight"): each is a culture collected, its own statement. A
    specimen written with its own culture words ("blood cx x2") is left to the culture
    scanner, and the list ends with the sentence.
    """
    out: list[Mention] = []
    bare = _bare_specimens(lex)
    for verb in _CULTURE_VERB.finditer(raw):
        stop = re.search(r"[;]|(?<!\b[A-Za-z])\.(?:\s|$)", raw[verb.end():])
        end = verb.end() + (stop.start() if stop else len(raw) - verb.end())
        for pattern, word in _BARE:
            for m in pattern.finditer(raw, verb.end(), end):
                if overlaps(taken, m.start(), m.end()) or any(
                        b.match(raw, m.start()) for b, _ in bare) or any(
                        s.match(raw, m.start()) or (x := s.search(raw, max(0, m.start() - 20), m.end() + 20)) and
                        x.start() <= m.start() < x.end() for s, _ in lex.specimens):
                    continue  # the culture scanner reads it with its own result
                out.append(Mention(line, m.start(), m.end(), m.group(0), "microbiology", "culture", None,
                                   MicrobiologyClaim(specimen=word)))
                taken.append((m.start(), m.end()))
    return sorted(out, key=lambda x: x.start)


def culture_starts(raw: str, lex: Lexicon) -> set[int]:
    """Where a named culture ("sputum cx", "BCx") begins: the observation before it ends there."""
    return {m.start() for pattern, _ in lex.specimens for m in pattern.finditer(raw)
            if not raw[m.start() - 1:m.start()].isalnum() and not raw[m.end():m.end() + 1].isalnum()}


def microbiology_mentions(raw: str, line: int, lex: Lexicon, taken: list[tuple[int, int]],
                          tests: tuple[tuple[re.Pattern[str], str], ...] = ()) -> list[Mention]:
    """The culture mentions of one line, each with its susceptibility statements; ``tests``
    are the patient's own test names (:func:`patient_test_names`).
    """
    out: list[Mention] = []
    micro, extra, sources = _cultures(raw, line, lex, taken, tests)
    # each organism's report runs to the next organism or culture ("also Staph aureus; vanc S")
    reports = sorted([*micro, *extra], key=lambda x: x.start)
    claims = susceptibility_mentions(raw, reports, lex)
    for culture in reports:
        found = culture.claim
        assert isinstance(found, MicrobiologyClaim)  # what _cultures builds
        own = [c for c in claims if next(m for m in reversed(reports) if m.start <= c[0]) is culture]
        # the organism and each susceptibility are separate statements, each verified on its own;
        # a specimen sourcing an organism named before it restates that organism's culture
        further = any(culture is x for x in extra)
        pan = pan_sensitive_span(raw, culture.start, min([x.start for x in reports if x.start > culture.start]
                                                         + [len(raw)])) if found.pan_sensitive else None
        if pan is not None:
            # "pan-sensitive" interprets every susceptibility row: its own statement, excepting
            # the antibiotics the report itself states resistant ("pan-sensitive (cefazolin R)")
            culture = replace(culture, claim=replace(found, pan_sensitive=False))
            excepted = tuple(dict.fromkeys([*(s for s in found.sensitivities if s[1] == "R"),
                                            *((d, lvl) for _, _, d, lvl in own if lvl == "R")]))
            out.append(Mention(line, pan[0], pan[1], raw[pan[0]:pan[1]], "microbiology", "culture", "pan-sensitive",
                               replace(found, sensitivities=excepted, antibiotics=(), susceptibility=None)))
        if culture.start not in sources and not further:
            out.append(culture)
        # each antibiotic's statement keeps the culture, not the culture's summary susceptibility
        own_claim = replace(found, antibiotics=(), susceptibility=None, pan_sensitive=False)
        for a, b, drug, level in own:
            # each antibiotic is tested on the organism named last before it ("E. coli (S to x) and
            # Klebsiella (R to y)")
            org = _organism_before(raw, culture.start, a, lex, drug)
            claim = replace(own_claim, organism=org[0], organism_text=org[1]) if org else own_claim
            out.append(Mention(line, a, b, raw[a:b], "microbiology", "culture", level,
                               replace(claim, sensitivities=((drug, level),))))
    return sorted([*out, *extra], key=lambda x: x.start)
