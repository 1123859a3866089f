"""Statements a note states, each built from table rows with its gold label decided first.

One module per statement kind (labs, vitals, interpretations, trends, findings,
medications, infusions, procedures, microbiology, relations, diagnoses, outputs) over
:mod:`~ehrlib.synth.statements.base`, which holds the builders' context, the statement
record and the helpers they share. ``BUILDERS`` maps each kind the note writer plans to
its builder and the column-inconsistency modes it can make.
"""
from __future__ import annotations

from collections.abc import Callable

from ehrlib.synth.statements.base import VALUE_TOLERANCE, Ctx, Stmt, day_window, iso
from ehrlib.synth.statements.diagnoses import diagnosis
from ehrlib.synth.statements.findings import categorical
from ehrlib.synth.statements.infusions import infusion
from ehrlib.synth.statements.interpretations import interpretation
from ehrlib.synth.statements.labs import lab_value
from ehrlib.synth.statements.medications import medication
from ehrlib.synth.statements.microbiology import micro
from ehrlib.synth.statements.outputs import urine_output
from ehrlib.synth.statements.procedures import procedure
from ehrlib.synth.statements.relations import relation, relation_pair
from ehrlib.synth.statements.trends import trend
from ehrlib.synth.statements.vitals import vital_range

__all__ = ["Ctx", "Stmt", "BUILDERS", "relation_pair", "iso", "day_window", "VALUE_TOLERANCE"]

Builder = Callable[..., "Stmt | None"]
BUILDERS: dict[str, tuple[Builder, tuple[str, ...]]] = {
    # name: (builder, feasible column-inconsistency modes)
    "lab_value": (lab_value, ("time", "value")),
    "vital_range": (vital_range, ("value",)),
    "interpretation": (interpretation, ("interpretation",)),
    "trend": (trend, ("trend",)),
    "finding": (categorical, ("value",)),
    "medication": (medication, ("time", "value", "other")),
    "infusion": (infusion, ("time", "value")),
    "procedure": (procedure, ("time", "other")),
    "microbiology": (micro, ("time", "value")),
    "diagnosis": (diagnosis, ()),
    "relation": (relation, ("time",)),
    "output": (urine_output, ("value",)),
}
