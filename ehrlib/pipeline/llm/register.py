"""Registration of the LLM backends: every name of :data:`ehrlib.llm.factory.PRESETS`.

:func:`build_llm_stages` builds the inspector or CheckEHR bundle around any
:class:`ehrlib.llm.Client` (tests pass a fake backend); importing this module registers
one factory per backend name with :func:`ehrlib.pipeline.stages.register_backend`, as
:mod:`ehrlib.pipeline.offline.register` does for the offline backend. The shared ablation
switches are applied by :func:`ehrlib.pipeline.stages.get_stages`, not here.
"""
from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm.factory import BACKENDS as PRESET_NAMES
from ehrlib.llm.usage import call_counts
from ehrlib.pipeline.llm.caller import BoundedClient, LLMCaller, make_llm_client
from ehrlib.pipeline.llm.checkehr import build_checkehr_stages
from ehrlib.pipeline.llm.stages import (
    LLMAnchorResolver,
    LLMOntologyExtractor,
    LLMPatientExtractor,
    LLMScopeFilter,
    LLMSegmenter,
    LLMSemanticRanker,
)
from ehrlib.pipeline.llm.verify import LLMVerifier
from ehrlib.pipeline.stages import Stages, register_backend

__all__ = ["build_llm_stages", "LLM_BACKENDS"]

#: backend names this module registers: every preset of ehrlib.llm.factory (vllm, azure, ...)
LLM_BACKENDS: tuple[str, ...] = tuple(PRESET_NAMES)

def build_llm_stages(method: str, params: Any, client: Any, *, backend: str = "llm") -> Stages:
    """The stage bundle for ``method`` around one LLM client (calls bounded by its
    ``max_concurrency`` across all runner threads).
    """
    llm = LLMCaller(BoundedClient(client, int(getattr(client, "max_concurrency", 1))))
    endpoint = getattr(getattr(client, "backend_impl", None), "endpoint", None)
    cache = getattr(client, "cache", None)

    def stats() -> dict[str, Any]:
        ledger = getattr(client, "ledger", None)
        out: dict[str, Any] = {"network_calls": getattr(client, "network_calls", None),
                               "retries": getattr(client, "retries", None)}
        if ledger is not None:
            recs = ledger.records()
            out["response_cache"] = {"hits": sum(1 for r in recs if r.cached),
                                     "misses": sum(1 for r in recs if not r.cached)}
            # every model call, including those made inside tools (LLM Semantic_Search)
            out["calls_by_stage"] = dict(sorted(collections.Counter(r.stage or "other" for r in recs).items()))
            out["counts"] = call_counts(ledger, network_calls=getattr(client, "network_calls", None),
                                        retries=getattr(client, "retries", None),
                                        truncation_retries=getattr(client, "truncation_retries", None))
        describe = getattr(getattr(client, "backend_impl", None), "describe", None)
        if describe is not None:
            wire = describe()
            out["structured_output"] = wire.get("structured_output")
            out["structured_output_fallbacks"] = wire.get("structured_output_fallbacks")
            # whether verdicts could carry the model's own probability (ehrlib.llm.logprobs)
            asked = bool(getattr(getattr(client, "config", None), "logprobs", False))
            out["logprobs"] = ("not asked" if not asked else
                               f"refused ({wire['logprobs_refused']})" if wire.get("logprobs_refused") else "asked")
        out["extraction"] = llm.counts()
        if cache is not None:
            out["response_cache_entries"] = len(cache)
        return out

    common: dict[str, Any] = dict(method=method, backend=backend, concurrency=int(getattr(client, "max_concurrency",
                                                                                          1)),
                  model=llm.model, endpoint=endpoint, stats=stats, semantic_ranker=LLMSemanticRanker(llm))
    if method == "inspector":
        return Stages(anchors=LLMAnchorResolver(llm),
                      verifier=LLMVerifier(llm, max_steps=params.max_steps, evidence_guard=params.evidence_guard),
                      segmenter=LLMSegmenter(llm), patient_extractor=LLMPatientExtractor(llm, params.top_k),
                      ontology_extractor=LLMOntologyExtractor(llm), scope_filter=LLMScopeFilter(llm), **common)
    if method == "checkehr":
        return build_checkehr_stages(llm, params, **common)
    raise ConfigError(f"method {method!r} has no LLM implementation (surface is an offline baseline; "
                      "use --backend offline)")


_LLM_METHODS = ("inspector", "checkehr")


def _factory(backend: str) -> Callable[[str, Any], Stages]:
    def make(method: str, params: Any) -> Stages:
        if method not in _LLM_METHODS:  # before building a client: no credentials needed to learn this
            raise ConfigError(f"method {method!r} has no LLM implementation (surface is an offline baseline; "
                              "use --backend offline)")
        return build_llm_stages(method, params, make_llm_client(backend, params), backend=backend)
    return make


for _name in LLM_BACKENDS:
    register_backend(_name, _factory(_name))
