"""The specimen a results line reports on: named on the line, or by the record or heading it continues.

A laboratory result is the value of the item of the specimen it was measured on, and notes
name the specimen once for several values: after a record's stamp (``___ 03:12PM URINE
...``), before it (``PLEURAL FLUID ___ 08:38AM: TNC-2350 ...``), opening a record whose
stamp was left off (``URINE SpecGr-1.015 pH-7.5``: two ``Name-value`` items or more follow
the word), as a heading opening the line (``UA:``), or as a heading alone on its line
(``Pleural fluid studies:``). The values
wrapped onto the next lines ("     glucose 198, albumin 2.9") are of the same sample. So a
line's specimen is its own, else that of the line it continues, found by walking back over
lines that open nothing of their own; a blank line, a heading, a labelled entry or another
record ends the walk. A stamped record that names no specimen reports blood. Specimen words
are data (``lab_results.yaml`` fluids).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.numparse import block_items
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.statement_time import stamp_clock

__all__ = ["line_fluid", "is_record", "scoped_fluid", "default_fluid", "RULE"]

#: how many lines back a wrapped line may continue its record or heading
_MAX_BACK = 8
#: the date token and clock of a results record's stamp ("___ 08:38AM", "[**2144-12-25**] 05:15PM")
_STAMP = r"\S+\s+\d{1,2}:\d{2}\s*(?:[AP]M)?"
#: a record's first two ``Name-value`` items right after a specimen word opening the line ("URINE SpecGr-1.015 pH-7.5"):
#: the record's stamp was left off, its layout still names the sample
_RECORD_ITEM = r"(?=[A-Za-z][A-Za-z0-9()#%/]*-[<>]?\d[\d.]*\*?\s+[A-Za-z][A-Za-z0-9()#%/]*-[<>]?\d)"
#: a line that opens an entry of its own: a bullet, a numbered item or a "Label:" with text after it
_ENTRY = re.compile(r"^\s*(?:[#*\-\u2022]|\d{1,2}[.)]\s|[A-Za-z][A-Za-z0-9 /()&,.\-]{0,40}:)")
#: words a heading alone on its line may add after the specimen ("Pleural fluid studies:")
_RESULT_WORDS = r"(?:\s+(?:fluid|studies|labs?|results?|analysis|chemistr(?:y|ies)|chems?|cell\s+counts?))*"


@functools.lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    data = load_data("lab_results.yaml")
    cues = []
    for f in data["fluids"]:
        w = f"(?:{f['words']})"
        # a heading with values after it: the words alone, or (for a word that is also a problem or an
        # output) only with "fluid"
        head = w if f["heading"] else rf"{w}(?<=fluid)"
        line = re.compile(rf"^\s*{_STAMP}\s+{w}\b|^\s*{w}\s*(?:\([^)]*\))?\s*[:\-]?\s*{_STAMP}"
                          rf"|^\s*{head}\s*(?:\([^)]*\))?\s*:|^\s*{w}\s+{_RECORD_ITEM}", re.I)
        alone = re.compile(rf"^\s*(?:[A-Za-z][A-Za-z ]{{0,20}}\s*[/,\-]\s*)?{w}{_RESULT_WORDS}"
                           r"\s*(?:\([^)]*\))?\s*:\s*$", re.I)
        cues.append((line, alone, str(f["fluid"])))
    return {"cues": cues, "default": str(data["default_fluid"])}


def default_fluid() -> str:
    """The specimen of a line that names none (``lab_results.yaml``: Blood)."""
    return str(_data()["default"])


@functools.lru_cache(maxsize=512)  # asked once per statement on the line: answered once per line
def line_fluid(text: str) -> str:
    """The specimen (a d_labitems ``fluid``) a results line names: the word after its stamp
    or before it, or a specimen heading opening it; the default (blood) without one.
    """
    for cue, _, fluid in _data()["cues"]:
        if cue.search(text):
            return fluid
    return default_fluid()


def _heading_fluid(text: str) -> str | None:
    """The specimen a heading alone on its line names ("Pleural fluid studies:"), else None."""
    return next((fluid for _, alone, fluid in _data()["cues"] if alone.match(text)), None)


@functools.lru_cache(maxsize=512)  # asked once per statement on the line: answered once per line
def is_record(text: str) -> bool:
    """Whether a line is a results record: a stamped one, or two ``Name-value`` items or more."""
    return stamp_clock(text) is not None or len(block_items(text)) >= 2


def scoped_fluid(lines: Sequence[str], i: int) -> str:
    """The specimen of the results on line ``i``: named by the line itself when it is a
    record, else by the record or specimen heading that the line continues.
    """
    text = lines[i] if 0 <= i < len(lines) else ""
    default = default_fluid()
    if is_record(text) and (own := line_fluid(text)) != default:
        return own
    if stamp_clock(text) is not None or _ENTRY.match(text) or not text.strip():
        return default  # a record of its own, or an entry that opens its own context
    for j in range(i - 1, max(-1, i - 1 - _MAX_BACK), -1):
        prev = lines[j]
        if not prev.strip():
            return default  # a blank line ends the sample's lines
        if (heading := _heading_fluid(prev)) is not None:
            return heading
        if is_record(prev):
            return line_fluid(prev)
        if _ENTRY.match(prev):
            return default
    return default


RULE = Rule("extract.specimen_scope", "A results line names its specimen after or before its stamp or as a heading; "
            "the lines wrapped after it, or under a specimen heading alone on its line, report the same sample "
            "until a blank line, a heading, a labelled entry or another record.", scoped_fluid, ("measurement",))
