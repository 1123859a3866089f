"""Run parameters: one frozen record, loaded from ``params/*.yaml`` and command-line overrides.

The same :class:`RunParams` drives ``ehrlib run`` and notebooks (papermill passes the same
keys). Unknown keys are an error, not silently ignored: a typo in an ablation switch
would otherwise run the wrong experiment. Keys a params file uses for other modules
(the notebook's own parameters) go under ``notebook:`` or are listed in ``_FOREIGN``.
"""
from __future__ import annotations

import dataclasses
import difflib
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ehrlib.errors import ConfigError

__all__ = [
    "RunParams",
    "METHODS",
    "EXTRACTION_MODES",
    "TOOL_CATEGORIES",
    "EXECUTORS",
    "DEFAULT_ABSTAIN_BELOW",
    "load_params",
    "params_from_mapping",
    "params_to_dict",
]

#: verification methods: EHR-Inspector, the CheckEHR baseline and the surface baseline
METHODS: tuple[str, ...] = ("inspector", "checkehr", "surface")
EXTRACTION_MODES: tuple[str, ...] = ("inspector", "patient_only", "ontology_only", "checkehr")
#: tool categories of DESIGN.md (paper Appendix C) plus the criterion tool
TOOL_CATEGORIES: tuple[str, ...] = ("alignment", "profiling", "temporal", "criterion")
#: the default of ``abstain_below``: no alarm withheld. Leave-one-set-out on the development
#: sets the precision-oriented choice is 0.75 (``ehrlib calibrate`` reports it), but any
#: abstention lowers F1 and the calibrator, fitted on real notes, withholds most alarms of
#: the synthetic split (docs/calibration.md); reviewers set it, or use the viewer's slider
DEFAULT_ABSTAIN_BELOW = 0.0
#: how notes are spread: a thread pool in this process, or tasks on a Ray cluster
EXECUTORS: tuple[str, ...] = ("thread", "ray")
log = logging.getLogger(__name__)
_SWITCH_WORDS = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False}
# notebook keys that look like run parameters (plural sweeps): accepted and ignored here
_FOREIGN = frozenset({"notebook", "judge", "judge_model", "report", "figures", "out_dir", "figure_prefix",
                      "experiment", "description", "n_bootstrap", "methods", "backends", "models", "run_ids",
                      "layouts", "dbs"})


@dataclass(frozen=True, slots=True)
class RunParams:
    """All knobs of one pipeline run (ablation switches follow the paper's Tables 3-5, 11)."""

    corpus: str | None = None
    db: str | None = None
    method: str = "inspector"
    backend: str = "offline"
    model: str | None = None
    run_id: str | None = None
    runs_dir: str = "runs"
    limit: int | None = None
    note_ids: tuple[str, ...] = ()
    # --- switches ---------------------------------------------------------------------
    segmentation: bool = True
    scope_filter: bool = True
    extraction: str = "inspector"
    #: tool categories offered to the verifier; None = all
    tools: tuple[str, ...] | None = None
    #: validation cache size m (0 = off); the paper uses 5
    validation_cache: int = 5
    #: cache lanes: "segment" (one cache per segment, segments verified in parallel) or
    #: "note" (one cache for the whole note, verified sequentially as in the paper)
    cache_scope: str = "segment"
    evidence_guard: bool = True
    # --- sizes and limits -------------------------------------------------------------
    top_k: int = 10
    max_steps: int = 12
    #: worker threads; None = the backend's concurrency limit
    concurrency: int | None = None
    #: ontology JSON file; None = the default built for the database
    ontology: str | None = None
    #: CheckEHR SQL guard rails
    sql_timeout_s: float = 10.0
    sql_row_cap: int = 200
    #: per-note input limits: a longer note (or line) is a recorded per-note failure
    max_note_chars: int = 1_000_000
    max_line_chars: int = 100_000
    #: sampling temperature for LLM backends; None = the backend's default (the paper's
    #: settings: Gemini defaults; 0.5 for open models). Set it to override.
    temperature: float | None = None
    seed: int = 0
    progress: bool = True
    #: backend-specific options (e.g. scripted replies file, oracle latency)
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    # --- executor (ehrlib.pipeline.executors) -------------------------------------------
    #: "thread" (one process, the default) or "ray" (a Ray cluster; the ``ray`` extra)
    executor: str = "thread"
    #: Ray cluster address ("auto", "ray://head:10001"); None = start a local instance
    ray_address: str | None = None
    #: Ray worker actors; None = one per CPU of the cluster
    ray_workers: int | None = None
    #: notes per Ray task
    ray_batch: int = 1
    # --- confidence (ehrlib.pipeline.calibration, docs/calibration.md) ------------------
    #: calibrator file; None = the bundled one, "none" = run uncalibrated (confidence None)
    calibrator: str | None = None
    #: an ``inconsistent`` verdict whose confidence is below this is reported ``unverified``
    #: (``abstained_from`` keeps the verdict); 0 (default) = never withhold
    abstain_below: float = DEFAULT_ABSTAIN_BELOW

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.extraction not in EXTRACTION_MODES:
            raise ConfigError(f"extraction must be one of {', '.join(EXTRACTION_MODES)}, "
                              f"got {self.extraction!r}")
        if self.cache_scope not in ("segment", "note"):
            raise ConfigError(f"cache_scope must be segment or note, got {self.cache_scope!r}")
        if not 0 <= self.validation_cache <= 5:
            raise ConfigError(f"validation_cache must be 0..5, got {self.validation_cache}")
        if self.tools is not None:
            bad = [t for t in self.tools if t not in TOOL_CATEGORIES]
            if bad:
                raise ConfigError(f"unknown tool categories {bad}; expected some of {', '.join(TOOL_CATEGORIES)}")
        if self.limit is not None and self.limit < 0:
            raise ConfigError("limit must be >= 0")
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError("concurrency must be >= 1")
        if self.top_k < 1 or self.max_steps < 1:
            raise ConfigError("top_k and max_steps must be >= 1")
        if self.max_note_chars < 1 or self.max_line_chars < 1:
            raise ConfigError("max_note_chars and max_line_chars must be >= 1")
        if self.executor not in EXECUTORS:
            raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, got {self.executor!r}")
        if (self.ray_workers is not None and self.ray_workers < 1) or self.ray_batch < 1:
            raise ConfigError("ray_workers and ray_batch must be >= 1")
        if not (isinstance(self.abstain_below, (int, float)) and math.isfinite(self.abstain_below)
                and 0.0 <= self.abstain_below <= 1.0):
            raise ConfigError(f"abstain_below must be a number in [0, 1], got {self.abstain_below!r}")

    def replace(self, **changes: Any) -> RunParams:
        """A copy with ``changes`` applied (``None`` values are ignored: CLI flags not given)."""
        return params_from_mapping({**params_to_dict(self),
                                    **{k: v for k, v in changes.items() if v is not None}})


_FIELDS = {f.name: f for f in dataclasses.fields(RunParams)}


def _switch(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _SWITCH_WORDS:
        return _SWITCH_WORDS[word]
    raise ConfigError(f"{name} must be on|off, got {value!r}")


def _coerce(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in ("segmentation", "scope_filter", "evidence_guard", "progress"):
        return _switch(name, value)
    if name == "tools":
        if isinstance(value, str):
            value = [v for v in value.replace(",", " ").split() if v]
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise ConfigError(f"tools must be a list of categories, got {value!r}")
        return tuple(str(v) for v in value)
    if name == "note_ids":
        if isinstance(value, str):
            value = [value]
        return tuple(str(v) for v in value)
    if name in ("limit", "validation_cache", "top_k", "max_steps", "concurrency", "sql_row_cap", "seed",
                "max_note_chars", "max_line_chars", "ray_workers", "ray_batch"):
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name} must be an integer, got {value!r}") from None
    if name in ("sql_timeout_s", "temperature", "abstain_below"):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{name} must be a number, got {value!r}") from None
    if name == "backend_options":
        if not isinstance(value, Mapping):
            raise ConfigError("backend_options must be a mapping")
        return dict(value)
    if name in ("corpus", "db", "ontology", "runs_dir", "run_id", "model", "method", "backend", "extraction",
                "cache_scope", "executor", "ray_address", "calibrator"):
        return str(value)
    return value


def params_from_mapping(data: Mapping[str, Any]) -> RunParams:
    """Validate a mapping (a YAML document, notebook parameters) into :class:`RunParams`."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"params must be a mapping, got {type(data).__name__}")
    data = dict(data)
    if "llm" in data:  # the documented `llm:` block (docs/llm_backends.md) = client settings
        llm = data.pop("llm")
        if llm is not None and not isinstance(llm, Mapping):
            raise ConfigError("llm must be a mapping of client settings (backend, model, ...)")
        if llm:
            options = dict(data.get("backend_options") or {})
            options["llm"] = {**dict(options.get("llm") or {}), **dict(llm)}
            data["backend_options"] = options
            if llm.get("backend") and data.get("backend") in (None, "offline") and llm["backend"] != "offline":
                data["backend"] = llm["backend"]
    if "note_id" in data:  # notebooks select one note; the runner takes a list
        one = data.pop("note_id")
        if one is not None and not data.get("note_ids"):
            data["note_ids"] = [one]
    unknown = sorted(k for k in data if k not in _FIELDS and k not in _FOREIGN)
    # A params file may carry its notebook's own keys (work_dir, layout, ...): those are
    # ignored. A key that looks like a misspelt run parameter is an error, because a typo
    # in an ablation switch would silently run the wrong experiment.
    close = {k: difflib.get_close_matches(k, list(_FIELDS), n=1, cutoff=0.8) for k in unknown}
    typos = {k: v[0] for k, v in close.items() if v}
    if typos:
        raise ConfigError("unknown run parameter(s): " + ", ".join(f"{k!r} (did you mean {v!r}?)"
                                                                   for k, v in typos.items()))
    if unknown:
        log.debug("ignoring parameters that are not run parameters: %s", ", ".join(unknown))
    kwargs = {k: _coerce(k, v) for k, v in data.items() if k in _FIELDS}
    kwargs = {k: v for k, v in kwargs.items() if v is not None or _FIELDS[k].default is None}
    return RunParams(**kwargs)


def load_params(path: str | Path | None, **overrides: Any) -> RunParams:
    """Read a params YAML (or start from defaults) and apply non-None overrides.

    Relative ``corpus``/``db``/``ontology`` paths in the file resolve against the
    current directory, as papermill and the CLI both run from the project root.
    """
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"params file not found: {p}")
        try:
            loaded = yaml.safe_load(p.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: not valid YAML ({exc})") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, Mapping):
            raise ConfigError(f"{p}: expected a mapping at the top level")
        data.update(loaded)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return params_from_mapping(data)


def params_to_dict(params: RunParams) -> dict[str, Any]:
    """JSON-ready dict (for the manifest)."""
    out: dict[str, Any] = {}
    for name in _FIELDS:
        v = getattr(params, name)
        out[name] = list(v) if isinstance(v, tuple) else (dict(v) if isinstance(v, Mapping) else v)
    return out
