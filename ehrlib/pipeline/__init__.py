"""EHR-Inspector: segment -> temporal anchors -> extraction -> scope filter -> verification.

The public entry points, imported lazily (stage backends import :mod:`.stages` while this
package initialises, so nothing heavy is imported here)::

    from ehrlib.pipeline import load_params, run_experiment
    run_dir = run_experiment(load_params("params/X.yaml", corpus="...", db="..."))
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["RunParams", "load_params", "run_experiment", "get_stages", "register_backend", "inspect_note",
           "NoteContext", "Stages", "StageEnv", "StageOutput", "Timeline"]

_WHERE = {
    "RunParams": "ehrlib.pipeline.params", "load_params": "ehrlib.pipeline.params",
    "run_experiment": "ehrlib.pipeline.runner", "inspect_note": "ehrlib.pipeline.inspector",
    "get_stages": "ehrlib.pipeline.stages", "register_backend": "ehrlib.pipeline.stages",
    "NoteContext": "ehrlib.pipeline.stages", "Stages": "ehrlib.pipeline.stages",
    "StageEnv": "ehrlib.pipeline.stages", "StageOutput": "ehrlib.pipeline.stages",
    "Timeline": "ehrlib.pipeline.stages",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'ehrlib.pipeline' has no attribute {name!r}")
