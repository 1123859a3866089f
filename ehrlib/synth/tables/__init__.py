"""Generate the synthetic hospital's rows, in the logical model (DataFrames).

One admission at a time: a storyline (:mod:`ehrlib.synth.storylines`) gives a severity
curve over the stay; vitals and labs follow it with patient-specific baselines and
noise; therapies are triggered by the generated values (fluids then norepinephrine when
the MAP drops below 65, PRBCs when the hemoglobin drops below 7.5, potassium when the
K is low, an insulin drip until the anion gap closes) and feed back into them; orders,
administrations, cultures, lines, drains and billing codes follow from what happened.

One module per table family over the shared :mod:`~ehrlib.synth.tables.admission`;
:mod:`~ehrlib.synth.tables.hospital` runs them per admission and
:mod:`~ehrlib.synth.tables.frames` types the result. The per-admission work is small
(hundreds of rows); bulk rows for benchmarks come from :mod:`ehrlib.synth.scale` in SQL.
"""
from __future__ import annotations

from ehrlib.synth.tables.frames import EXTRA_COLUMNS
from ehrlib.synth.tables.hospital import STORYLINE_COLUMNS, build_tables

__all__ = ["STORYLINE_COLUMNS", "EXTRA_COLUMNS", "build_tables"]
