"""Diagnosis rule: a billed ICD code of the admission among Lexical_Search's best matches.

Note shorthand is first rewritten into ICD title wording (``diagnosis_wording.yaml``,
reusing ``abbreviations.yaml``); a code billed on another admission is not this one's.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Mapping

from ehrlib.datafiles import load_data
from ehrlib.errors import ConfigError
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.verification.session import Claim, verdict
from ehrlib.pipeline.records import Verdict

__all__ = ["RULES", "BILLED_CODE", "icd_rewrites", "icd_wording", "billed_match"]


@functools.lru_cache(maxsize=1)
def icd_rewrites() -> tuple[tuple[re.Pattern[str], str], ...]:
    """The ordered shorthand -> ICD wording rewrites of ``diagnosis_wording.yaml``, an
    ``abbreviation`` entry taking its first expansion from ``abbreviations.yaml``."""
    abbreviations = load_data("abbreviations.yaml")["abbreviations"]
    folded = {str(k).lower(): v for k, v in reversed(list(abbreviations.items()))}
    out = []
    for entry in load_data("diagnosis_wording.yaml")["rewrites"]:
        if "abbreviation" in entry:
            key = str(entry["abbreviation"])
            expansions = abbreviations.get(key) or folded.get(key.lower())
            if not expansions:
                raise ConfigError(f"ehrlib/data/diagnosis_wording.yaml: {key!r} is not in abbreviations.yaml")
            term, icd = key.lower(), str(expansions[0])
        else:
            term, icd = str(entry["term"]), str(entry["icd"])
        out.append((re.compile(rf"\b{term}\b"), icd))
    return tuple(out)


def icd_wording(text: str) -> str:
    """A statement in ICD title wording ("CHF exacerbation" -> "congestive heart failure exacerbation")."""
    text = text.lower()
    for pattern, icd in icd_rewrites():
        text = pattern.sub(icd, text)
    return text


def billed_match(c: Claim) -> Verdict:
    """The billed-code check of a statement (also used for procedures with no bedside record)."""
    e, s = c.entity, c.session
    res = s.call("Lexical_Search", query=icd_wording(e.text)[:100], k=25)
    rows = [r for r in (res.rows if res else ()) if r.get("table") in ("diagnoses_icd", "procedures_icd")]
    if not rows:
        return verdict(c, True, "no ICD title resembles this diagnosis; not judged", ())
    best = max(float(r.get("score") or 0) for r in rows)
    if best < 0.55:
        return verdict(c, True, "no close ICD title; not judged", ())
    close = [r for r in rows if float(r.get("score") or 0) >= max(0.55, best - 0.35)]
    # has_records is per patient; a code billed on another admission is not this one's
    billed: list[Mapping[str, Any]] = []
    for r in [r for r in close if r.get("has_records")][:5]:
        got = s.call("Get_Item_Status_History", item=str(r["key"]), time="")
        if got is not None and got.rows:
            billed += list(got.rows[:1])
            break
    if billed:
        return verdict(c, True, f"billed this admission: {billed[0].get('label')}", billed)
    return verdict(c, False, f"no billed code of this admission resembles {e.text!r} (closest title: "
                   f"{close[0]['label']})", (), missing=True)


BILLED_CODE = Rule("diagnoses.billed_code", "A diagnosis stated for the admission claims a billed ICD code of that "
                   "admission whose title matches it; with no close title the statement is not judged.", billed_match,
                   ("diagnosis",))
RULES = (BILLED_CODE,)
