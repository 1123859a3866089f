"""Specimen context: which lab item an analyte's value was measured on.

The same name reads a different item when its sentence names the specimen: "Temp 38.0 on
that gas" and "FiO2 60% on the ABG" are the values the laboratory recorded with a blood
gas (labevents Temperature, Oxygen), not the bedside charting; "drain fluid: bili 7.2,
amylase 76" is a body-fluid chemistry ("Bilirubin, Total, Ascites"), not serum. A
ventilator setting (PEEP, tidal volume, FiO2, set rate) with no bedside item of the patient
reads the gas item too, since the laboratory records the settings with every gas. The
fluid item is found among the patient's own labels: the concept's blood label followed by
a fluid suffix. Cues, items and suffixes are data (``lab_specimens.yaml``); without such
an item in the patient's tables the items stay as aligned.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["specimen_items", "statement_clause", "RULE"]

#: a clause ends at a semicolon, or at a full stop that is no decimal point
_CLAUSE_END = re.compile(r";|\.(?!\d)")


@functools.lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    data = load_data("lab_specimens.yaml")
    return {"gas_cue": re.compile(data["gas"]["cue"], re.I),
            "gas_items": {k: re.compile(v, re.I) for k, v in data["gas"]["items"].items()},
            "settings": frozenset(data["gas"].get("settings", ())),
            "fluid_cue": re.compile(data["fluids"]["cue"], re.I),
            "suffix": data["fluids"]["suffix"], "suffix_re": re.compile(data["fluids"]["suffix"], re.I)}


def statement_clause(text: str, start: int, end: int) -> str:
    """The clause of ``text`` around ``[start, end)``: from the last clause end before it to
    the first after it (a line break also ends it).
    """
    a = max([m.end() for m in _CLAUSE_END.finditer(text, 0, start)] + [text.rfind("\n", 0, start) + 1])
    nxt = _CLAUSE_END.search(text, end)
    b = nxt.start() if nxt else len(text)
    nl = text.find("\n", end)
    return text[a:min(b, nl) if nl >= 0 else b]


def specimen_items(clause: str, concept: Concept | None, pairs: Sequence[tuple[ItemRef, str]],
                   items: Sequence[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The items of the specimen the clause names, when the patient has them; else ``items``."""
    if concept is None or concept.kind != "measurement":
        return list(items)
    d = _data()
    labs = [(it, k) for it, k in pairs if it.table == "labevents"]
    gas = d["gas_items"].get(concept.cid)
    if gas is not None and (not items and concept.cid in d["settings"] or d["gas_cue"].search(clause)):
        # a ventilator setting is also recorded with every blood gas: with no bedside item
        # of the patient (a build without chart rows), the gas's record is the setting's
        found = [(it, k) for it, k in labs if gas.search(it.label or "")]
        if found:
            return found
    if concept.items is not None and "labevents" in concept.tables and d["fluid_cue"].search(clause):
        fluid = re.compile(concept.items.pattern.replace("$", d["suffix"]), re.I)
        found = [(it, k) for it, k in labs if fluid.search(it.label or "") and d["suffix_re"].search(it.label or "")]
        if found:
            return found
    return list(items)


RULE = Rule("extract.specimen_item", "An analyte written in a clause that names its specimen (a blood gas, a body "
            "fluid) is the value of that specimen's lab item when the patient has one, not the bedside or serum "
            "item of the same name.", specimen_items, ("measurement",))
