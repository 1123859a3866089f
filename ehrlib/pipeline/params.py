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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.pipeline.paramchecks import Rule, choice, integer, json_mapping, names, number, switch, text
from ehrlib.pipeline.runid import check_run_id
from ehrlib.yamlfiles import read_yaml

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
#: how statements are found: the framework's two steps (or one of them), CheckEHR's NER
#: prompts, or the trained token tagger of ``ehrlib train-ner`` (:mod:`ehrlib.ner`)
EXTRACTION_MODES: tuple[str, ...] = ("inspector", "patient_only", "ontology_only", "checkehr", "ner")
#: tool categories of DESIGN.md (paper Appendix C) plus the criterion tool
TOOL_CATEGORIES: tuple[str, ...] = ("alignment", "profiling", "temporal", "criterion")
#: the default of ``abstain_below``, first chosen as the lowest threshold at which the calibrator's
#: alarms, scored leave-one-set-out on the real-patient development sets, reach alarm
#: precision 0.80 with inconsistent recall >= 0.60 (``ehrlib calibrate`` reports it after a
#: refit; docs/calibration.md has the table and why 0.6 stays when a refit on tuned sets picks
#: less); reviewers move it here or with the viewer's slider
DEFAULT_ABSTAIN_BELOW = 0.6
#: how notes are spread: a thread pool in this process, or tasks on a Ray cluster
EXECUTORS: tuple[str, ...] = ("thread", "ray")
log = logging.getLogger(__name__)
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
    #: only the notes of this split of the corpus (``test`` or ``valid``, as its manifest or
    #: import.json assigns them); None = every note
    split: str | None = None
    # --- switches ---------------------------------------------------------------------
    segmentation: bool = True
    scope_filter: bool = True
    extraction: str = "inspector"
    #: folder of the NER tagger for ``extraction="ner"``; None = the bundled model
    ner_model: str | None = None
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
    #: (``abstained_from`` keeps the verdict); 0 = never withhold
    abstain_below: float = DEFAULT_ABSTAIN_BELOW

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):   # the same checks as a params file gets (code builds these too)
            value = getattr(self, f.name)
            if value is not None or f.default is not None:
                _RULES[f.name](f.name, value)

    def replace(self, **changes: Any) -> RunParams:
        """A copy with ``changes`` applied (``None`` values are ignored: CLI flags not given)."""
        return params_from_mapping({**params_to_dict(self),
                                    **{k: v for k, v in changes.items() if v is not None}})


_FIELDS = {f.name: f for f in dataclasses.fields(RunParams)}
_PATH = text()
#: what each run parameter may hold (ehrlib.pipeline.paramchecks); one line per field
_RULES: dict[str, Rule] = {
    "corpus": _PATH, "db": _PATH, "ontology": _PATH, "runs_dir": _PATH, "ner_model": _PATH,
    "method": choice(METHODS), "backend": text(), "model": text(), "run_id": text(check_run_id),
    "limit": integer(0), "note_ids": names(), "split": choice(("test", "valid", "validation")),
    "segmentation": switch, "scope_filter": switch, "evidence_guard": switch, "progress": switch,
    "extraction": choice(EXTRACTION_MODES), "tools": names(TOOL_CATEGORIES, "tool categories"),
    "validation_cache": integer(0, 5), "cache_scope": choice(("segment", "note")),
    "top_k": integer(1, 10_000), "max_steps": integer(1, 10_000), "concurrency": integer(1, 4096),
    "sql_timeout_s": number(0.001, 86_400.0), "sql_row_cap": integer(1, 10_000_000),
    "max_note_chars": integer(1, 2**40), "max_line_chars": integer(1, 2**40),
    "temperature": number(0.0, 2.0), "seed": integer(-(2**63), 2**63 - 1),
    "backend_options": json_mapping(("llm",)),
    "executor": choice(EXECUTORS), "ray_address": text(), "ray_workers": integer(1, 100_000),
    "ray_batch": integer(1, 1_000_000),
    "calibrator": text(), "abstain_below": number(0.0, 1.0),
}

if set(_RULES) != set(_FIELDS):   # a new field needs its line above: fail at import, not on a user's value
    raise RuntimeError(f"RunParams fields without a rule in _RULES: {sorted(set(_FIELDS) - set(_RULES))}; "
                       f"rules without a field: {sorted(set(_RULES) - set(_FIELDS))}")


def params_from_mapping(data: Mapping[Any, Any], *, source: str | None = None,
                        lines: Mapping[Any, int] | None = None) -> RunParams:
    """Validate a mapping (a YAML document, notebook parameters) into :class:`RunParams`.

    ``source`` and ``lines`` (a key's line in that file) put ``file:line`` in front of an
    error about a key that came from a params file.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source or 'params'}: expected a mapping of parameters, got {type(data).__name__}")
    lines = dict(lines or {})

    def where(key: Any) -> str:
        if not source or key not in lines:   # not from the file (a command-line override)
            return ""
        return f"{source}:{lines[key]}: " if lines[key] else f"{source}: "

    bad = [k for k in data if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{where(bad[0])}parameter names must be text, got {bad[0]!r}")
    data = dict(data)
    if "llm" in data:  # the documented `llm:` block (docs/llm_backends.md) = client settings
        llm = data.pop("llm")
        if llm is not None and not isinstance(llm, Mapping):
            raise ConfigError(f"{where('llm')}llm must be a mapping of client settings (backend, model, ...)")
        if llm:
            options = data.get("backend_options") or {}
            if not isinstance(options, Mapping) or not isinstance(options.get("llm") or {}, Mapping):
                raise ConfigError(f"{where('backend_options')}backend_options must be a mapping "
                                  "(and its llm entry too)")
            options = dict(options)
            options["llm"] = {**dict(options.get("llm") or {}), **dict(llm)}
            data["backend_options"] = options
            lines.setdefault("backend_options", lines.get("llm", 0))
            if llm.get("backend") and data.get("backend") in (None, "offline") and llm["backend"] != "offline":
                data["backend"] = llm["backend"]
    if "note_id" in data:  # notebooks select one note; the runner takes a list
        one = data.pop("note_id")
        if one is not None and not data.get("note_ids"):
            data["note_ids"] = [one]
            lines.setdefault("note_ids", lines.get("note_id", 0))
    unknown = sorted(k for k in data if k not in _FIELDS and k not in _FOREIGN)
    # A params file may carry its notebook's own keys (work_dir, layout, ...): those are
    # ignored. A key that looks like a misspelt run parameter is an error, because a typo
    # in an ablation switch would silently run the wrong experiment.
    close = {k: difflib.get_close_matches(k, list(_FIELDS), n=1, cutoff=0.8) for k in unknown}
    typos = {k: v[0] for k, v in close.items() if v}
    if typos:
        first = next(iter(typos))
        raise ConfigError(f"{where(first)}unknown run parameter(s): "
                          + ", ".join(f"{k!r} (did you mean {v!r}?)" for k, v in typos.items()))
    if unknown:
        log.debug("ignoring parameters that are not run parameters: %s", ", ".join(unknown))
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key not in _FIELDS or (value is None and _FIELDS[key].default is not None):
            continue   # None = not given: the default stands
        try:
            kwargs[key] = None if value is None else _RULES[key](key, value)
        except ConfigError as exc:
            raise ConfigError(f"{where(key)}{exc}") from None
    return RunParams(**kwargs)


def load_params(path: str | Path | None, **overrides: Any) -> RunParams:
    """Read a params YAML (or start from defaults) and apply non-None overrides.

    The file is read by :func:`ehrlib.yamlfiles.read_yaml` (strict UTF-8, bounded size
    and nesting); an error names the file, the line and the key. Relative
    ``corpus``/``db``/``ontology`` paths in the file resolve against the current
    directory, as papermill and the CLI both run from the project root.
    """
    data: dict[Any, Any] = {}
    source, lines = None, {}
    if path is not None:
        doc = read_yaml(path, what="params file")
        if doc.data is not None and not isinstance(doc.data, Mapping):
            raise ConfigError(f"{doc.source}: expected a mapping of parameters at the top level, "
                              f"got {type(doc.data).__name__}")
        data.update(doc.data or {})
        source, lines = doc.source, dict(doc.lines)
    given = {k: v for k, v in overrides.items() if v is not None}
    data.update(given)
    return params_from_mapping(data, source=source, lines={k: v for k, v in lines.items() if k not in given})


def params_to_dict(params: RunParams) -> dict[str, Any]:
    """JSON-ready dict (for the manifest)."""
    out: dict[str, Any] = {}
    for name in _FIELDS:
        v = getattr(params, name)
        out[name] = list(v) if isinstance(v, tuple) else (dict(v) if isinstance(v, Mapping) else v)
    return out
