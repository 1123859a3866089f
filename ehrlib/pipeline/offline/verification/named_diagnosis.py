"""A rhythm named as a standing diagnosis rather than stated as the current rhythm.

Atrial fibrillation and flutter are often paroxysmal: a patient "with AF" may be in sinus
rhythm all day. A problem heading ("# AF: rate control"), a history list ("CHF, AF admitted
with ...") or a drug's indication ("heparin gtt for afib") names the diagnosis, which a
charted sinus rhythm cannot contradict. Only a name its clause places in time ("in AF",
"AF with RVR", "AF on monitor", "Heart rhythm: AF") states what the monitor should show.
The states and the cue words are data (``finding_states.yaml``, ``diagnosis_states``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.verification.session import Case, unverified
from ehrlib.pipeline.records import Verdict

__all__ = ["diagnosis_only"]


def diagnosis_only(c: Case, concept: str, missing: set[str], charted: set[str]) -> Verdict | None:
    """``unverified`` when every uncharted stated state of ``concept`` is a diagnosis state that the
    statement's line, from the statement on, names without placing the patient in it; else None.
    """
    vocab = load_data("finding_states.yaml")
    cues = vocab.get("diagnosis_states") or {}
    e, lines = c.entity, c.ctx.lines
    if not missing <= set((cues.get("states") or {}).get(concept, ())) or re.search(cues["label"], e.text, re.I):
        return None
    line = lines[e.line] if 0 <= e.line < len(lines) else ""
    start = e.span[0] if e.span else max(line.find(e.text), 0)
    note_regex = {x["state"]: x["note"] for x in vocab["states"].get(concept, ())}
    for state in missing:
        named = list(re.compile(note_regex[state], re.I).finditer(line, start))
        if not named or any(_placed(cues, line, m) for m in named):  # "# AFib: currently in AF with RVR"
            return None
    return unverified(c, f"{e.text}: names {', '.join(sorted(missing))} as a diagnosis, not as the current state; "
                      f"the window's {', '.join(sorted(charted))} cannot contradict one that comes and goes")


def _placed(cues: Mapping[str, Any], line: str, m: re.Match[str]) -> bool:
    """Whether the words right around one naming of the state place the patient in it."""
    lead = re.split(r"[.;,#]", line[max(0, m.start() - 30):m.start()])[-1]
    return bool(re.search(cues["lead"], lead, re.I) or re.search(cues["tail"], line[m.end():m.end() + 25], re.I))
