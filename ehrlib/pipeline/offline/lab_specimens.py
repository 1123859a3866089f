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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import ItemRef
from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.lab_results import clause_start, line_fluid, prose_fluid
from ehrlib.pipeline.offline.lexicon import Concept
from ehrlib.pipeline.offline.rule import Rule

__all__ = ["specimen_items", "statement_clause", "names_specimen", "default_specimen_items", "RULE",
           "DEFAULT_SPECIMEN_RULE"]

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
    a = clause_start(text, text.rfind("\n", 0, start) + 1, start)
    nxt = _CLAUSE_END.search(text, end)
    b = nxt.start() if nxt else len(text)
    nl = text.find("\n", end)
    return text[a:min(b, nl) if nl >= 0 else b]


# every statement of a clause asks of the same clause: answered once per clause (a line with
# no clause break is one clause, however many statements it holds)
@functools.lru_cache(maxsize=256)
def _names_gas(clause: str) -> bool:
    """Whether a clause names a blood gas."""
    return bool(_data()["gas_cue"].search(clause))


@functools.lru_cache(maxsize=256)
def _names_fluid(clause: str) -> bool:
    """Whether a clause names a body fluid."""
    return bool(_data()["fluid_cue"].search(clause))


def specimen_items(clause: str, concept: Concept | None, pairs: Sequence[tuple[ItemRef, str]],
                   items: Sequence[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The items of the specimen the clause names, when the patient has them; else ``items``."""
    if concept is None or concept.kind != "measurement":
        return list(items)
    d = _data()
    labs = [(it, k) for it, k in pairs if it.table == "labevents"]
    gas = d["gas_items"].get(concept.cid)
    if gas is not None and (not items and concept.cid in d["settings"] or _names_gas(clause)):
        # a ventilator setting is also recorded with every blood gas: with no bedside item
        # of the patient (a build without chart rows), the gas's record is the setting's
        found = [(it, k) for it, k in labs if gas.search(it.label or "")]
        if found:
            return found
    if concept.items is not None and "labevents" in concept.tables and _names_fluid(clause):
        fluid = re.compile(concept.items.pattern.replace("$", d["suffix"]), re.I)
        found = [(it, k) for it, k in labs if fluid.search(it.label or "") and d["suffix_re"].search(it.label or "")]
        if found:
            return found
    return list(items)


@functools.lru_cache(maxsize=1)
def _default_fluid() -> str:
    """The specimen of a lab name that names none (``lab_results.yaml``: blood), lower case."""
    return str(load_data("lab_results.yaml")["default_fluid"]).lower()


def names_specimen(line: str, text: str, start: int, end: int, name: str) -> bool:
    """Whether the statement at ``text[start:end]`` (on note line ``line``) names a specimen
    other than blood: a results record's specimen or a specimen cue on its line, a
    specimen word or heading before it, a fused specimen letter ("UNa"), or a blood gas or
    body fluid named in its clause.
    """
    default = _default_fluid()
    prose = prose_fluid(text, start, name)
    clause = statement_clause(text, start, end)
    return (line_fluid(line).lower() != default or (prose is not None and prose[0].lower() != default)
            or _names_fluid(clause) or _names_gas(clause))


def default_specimen_items(items: Sequence[tuple[ItemRef, str]], fluid_of: Callable[[str], str | None]
                           ) -> list[tuple[ItemRef, str]]:
    """``items`` without the lab items of another specimen than the default (blood), when
    any item of the default specimen, or of none, remains.

    For a statement whose words name no specimen (:func:`names_specimen`): "WBC 14" is the
    blood count, not the urine or stool item that shares its name ("WBC", fluid Urine).
    """
    default = _default_fluid()

    def other(key: str) -> bool:
        fluid = fluid_of(key)
        return fluid is not None and not fluid.lower().startswith(default)
    kept = [(it, k) for it, k in items if it.table != "labevents" or not other(k)]
    return kept if kept else list(items)


RULE = Rule("extract.specimen_item", "An analyte written in a clause that names its specimen (a blood gas, a body "
            "fluid) is the value of that specimen's lab item when the patient has one, not the bedside or serum "
            "item of the same name.", specimen_items, ("measurement",))
DEFAULT_SPECIMEN_RULE = Rule("extract.default_specimen", "An analyte named without a specimen is measured on "
                             "blood: a same-named lab item of another specimen (urine or stool WBC) is not its "
                             "record while a blood item, or one of no stated specimen, remains.",
                             default_specimen_items, ("measurement", "trend", "range"))
