"""ehrlib: note-table consistency verification for electronic health records.

Reproduces and extends the EHR-Inspector framework (tool-augmented verification of
clinical-note statements against structured EHR tables) on MIMIC-III, MIMIC-IV, a
perturbed MIMIC-III schema and an embedded synthetic hospital.

``ehrlib.Verifier`` checks notes from Python and returns ``ehrlib.Findings``; both are
imported on first use, so ``import ehrlib`` stays fast.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "Verifier", "Findings", "Finding"]

_LAZY = {"Verifier": "ehrlib.verifier", "Findings": "ehrlib.findings", "Finding": "ehrlib.findings"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ehrlib' has no attribute {name!r}")
