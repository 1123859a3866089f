"""The embedded synthetic hospital: seeded MIMIC-shaped tables with known storylines.

:func:`generate_hospital` writes one DuckDB file in the MIMIC-III (default), MIMIC-IV
or perturbed layout, with the same typed tables and build manifest as ``ehrlib
build-db`` (``source_kind = synthetic``), plus ``ehrlib_synth_storylines``: each
admission's storyline and key event times (surgery, intubation, first antibiotic, ...)
so that notes can say "POD 2" relative to the real surgery time. Everything else a note
writer needs it reads from the tables themselves, through :mod:`ehrlib.schema`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ehrlib.lazy import lazy_package

if TYPE_CHECKING:  # exports, imported on first use (lazy_package): importing the package stays cheap
    from ehrlib.synth.hospital import (
        GENERATOR_VERSION,
        MAX_PATIENTS,
        HospitalBuild,
        build_hospital,
        content_checksums,
        generate_hospital,
    )
    from ehrlib.synth.render import STORYLINES_TABLE
    from ehrlib.synth.storylines import STORYLINES
    from ehrlib.synth.truth import AdmissionView, admission_view, read_storylines

__all__ = [
    "GENERATOR_VERSION",
    "MAX_PATIENTS",
    "STORYLINES",
    "STORYLINES_TABLE",
    "generate_hospital",
    "build_hospital",
    "HospitalBuild",
    "content_checksums",
    "read_storylines",
    "admission_view",
    "AdmissionView",
]

lazy_package(__name__)
