"""ehrlib: note-table consistency verification for electronic health records.

Reproduces and extends the EHR-Inspector framework (tool-augmented verification of
clinical-note statements against structured EHR tables) on MIMIC-III, MIMIC-IV, a
perturbed MIMIC-III schema and an embedded synthetic hospital.
"""
from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
