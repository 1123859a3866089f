"""A token-level BIO tagger: a linear model over word, shape and context features.

Greedy left-to-right decoding with the previous tag as a feature (a maximum-entropy
Markov model): scikit-learn's logistic regression learns the weights, and the weights
alone (a feature vocabulary, one row of weights per tag, the biases) are what is saved,
as a NumPy archive read without pickle, so a model file cannot run code when loaded.
Training on the development sets' tokens takes well under a minute on two cores.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ehrlib.errors import ConfigError, DataError
from ehrlib.ner.bio import TAGS, Token

__all__ = ["DEFAULT_MODEL", "FEATURES_VERSION", "Tagger", "token_features", "train_tagger", "load_tagger"]

#: bump when token_features changes: a model trained on other features is refused
FEATURES_VERSION = 1
MODEL_FILE = "model.npz"
#: where ``--extraction ner`` looks for its model when the run names none (the shipped one)
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "data" / "ner"
MANIFEST_FILE = "manifest.json"


def _shape(word: str) -> str:
    """"WBC" -> "XXX", "3.4" -> "d", "Lasix" -> "Xxxxx", collapsed to at most 4 symbols."""
    s = re.sub(r"[A-Z]", "X", word)
    s = re.sub(r"[a-z]", "x", s)
    s = re.sub(r"\d", "d", s)
    return re.sub(r"(.)\1{3,}", r"\1\1\1\1", s)


def _short(word: str) -> str:
    """The shape with runs collapsed: "Xxxxx" -> "Xx"."""
    return re.sub(r"(.)\1+", r"\1", _shape(word))


def token_features(line: str, tokens: Sequence[Token], i: int, prev_tag: str) -> list[str]:
    """Binary features of token ``i`` (names only: a feature is present or not)."""
    w = tokens[i].text
    low = w.lower()
    f = [f"w={low}", f"sh={_short(w)}", f"shape={_shape(w)}", f"p3={low[:3]}", f"s3={low[-3:]}",
         f"len={min(len(w), 8)}", f"prev_tag={prev_tag}", f"prev_tag+w={prev_tag}|{low}"]
    if i == 0:
        f.append("first")
    head = line[:tokens[i].start]
    if ":" in head:
        f.append("after_colon")
    f.append(f"head={line.split(':', 1)[0].strip().lower()[:20]}" if ":" in line[:40] else "head=")
    for k in (-2, -1, 1, 2):
        j = i + k
        if 0 <= j < len(tokens):
            o = tokens[j].text
            f += [f"w{k:+d}={o.lower()}", f"sh{k:+d}={_short(o)}"]
        else:
            f.append(f"w{k:+d}=<edge>")
    if i > 0:
        f.append(f"bigram-={tokens[i - 1].text.lower()}|{low}")
    if i + 1 < len(tokens):
        f.append(f"bigram+={low}|{tokens[i + 1].text.lower()}")
        f.append(f"gap+={tokens[i + 1].start - tokens[i].end > 0}")
    return f


@dataclass(frozen=True, slots=True)
class Tagger:
    """Weights of a trained tagger: ``weights[feature_index]`` is one score per tag."""

    vocab: dict[str, int]
    weights: np.ndarray   # (n_features, n_tags)
    bias: np.ndarray      # (n_tags,)
    tags: tuple[str, ...]

    def tag(self, line: str, tokens: Sequence[Token]) -> list[str]:
        """Greedy left-to-right tags of a line's tokens."""
        out: list[str] = []
        prev = "<s>"
        for i in range(len(tokens)):
            idx = [self.vocab[n] for n in token_features(line, tokens, i, prev) if n in self.vocab]
            scores = self.bias + self.weights[idx].sum(axis=0)
            tag = self.tags[int(np.argmax(scores))]
            if tag == "I" and prev not in ("B", "I"):
                tag = "B"   # an I may only continue an entity
            out.append(tag)
            prev = tag
        return out

    def save(self, folder: str | Path, manifest: dict[str, object]) -> Path:
        """Write ``model.npz`` (no pickled objects) and ``manifest.json`` into ``folder``."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        names = np.array(sorted(self.vocab, key=self.vocab.__getitem__), dtype=np.str_)
        tmp = out / (MODEL_FILE + ".part.npz")
        np.savez_compressed(tmp, names=names, weights=self.weights.astype(np.float32),
                            bias=self.bias.astype(np.float32), tags=np.array(self.tags, dtype=np.str_))
        tmp.replace(out / MODEL_FILE)
        doc = {**manifest, "features_version": FEATURES_VERSION, "n_features": len(names), "tags": list(self.tags)}
        (out / MANIFEST_FILE).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return out


def train_tagger(sequences: Sequence[tuple[str, Sequence[Token], Sequence[str]]], *, min_count: int = 2,
                 c: float = 1.0, max_iter: int = 300) -> Tagger:
    """Fit the tagger on (line, tokens, gold tags) triples, the gold previous tag as context.

    Features seen fewer than ``min_count`` times are left out (a smaller file, less
    memorising of one note's words).
    """
    # deferred: scipy and scikit-learn load only to train, never to tag
    from scipy.sparse import csr_matrix
    from sklearn.linear_model import LogisticRegression

    rows: list[list[str]] = []
    labels: list[str] = []
    for line, tokens, tags in sequences:
        prev = "<s>"
        for i, tag in enumerate(tags):
            rows.append(token_features(line, tokens, i, prev))
            labels.append(tag)
            prev = tag
    if len(set(labels)) < 2:
        raise DataError("NER training data needs tokens inside and outside entities")
    counts = Counter(n for r in rows for n in r)
    vocab = {n: k for k, n in enumerate(sorted(n for n, v in counts.items() if v >= min_count))}
    indptr, indices = [0], []
    for r in rows:
        indices += sorted({vocab[n] for n in r if n in vocab})
        indptr.append(len(indices))
    x = csr_matrix((np.ones(len(indices), dtype=np.float32), indices, indptr), shape=(len(rows), len(vocab)))
    model = LogisticRegression(C=c, max_iter=max_iter)
    model.fit(x, labels)
    classes = tuple(str(t) for t in model.classes_)
    order = [classes.index(t) for t in TAGS if t in classes]
    coef = model.coef_
    bias = model.intercept_
    if len(classes) == 2:   # binary: one row of weights for the second class
        coef = np.vstack([-coef[0] / 2, coef[0] / 2])
        bias = np.array([-bias[0] / 2, bias[0] / 2])
    return Tagger(vocab, coef[order].T.copy(), bias[order].copy(), tuple(classes[k] for k in order))


def load_tagger(folder: str | Path, *, hint: str = "ehrlib train-ner") -> tuple[Tagger, dict[str, object]]:
    """A saved tagger and its manifest; a missing or foreign model is a one-line error."""
    path = Path(folder)
    if not (path / MODEL_FILE).is_file() or not (path / MANIFEST_FILE).is_file():
        raise ConfigError(f"no NER model at {path} (needs {MODEL_FILE} and {MANIFEST_FILE}); train one with `{hint}`")
    try:
        manifest = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
        with np.load(path / MODEL_FILE, allow_pickle=False) as z:
            names, weights, bias, tags = z["names"], z["weights"], z["bias"], z["tags"]
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"NER model at {path} is unreadable ({exc}); retrain it with `{hint}`") from None
    if not isinstance(manifest, dict) or manifest.get("features_version") != FEATURES_VERSION:
        raise DataError(f"NER model at {path} was trained on other features "
                        f"(version {manifest.get('features_version') if isinstance(manifest, dict) else '?'}, "
                        f"this ehrlib reads {FEATURES_VERSION}); retrain it with `{hint}`")
    if weights.shape != (len(names), len(tags)) or bias.shape != (len(tags),):
        raise DataError(f"NER model at {path} has inconsistent array shapes; retrain it with `{hint}`")
    vocab = {str(n): k for k, n in enumerate(names)}
    return Tagger(vocab, weights.astype(np.float64), bias.astype(np.float64), tuple(str(t) for t in tags)), manifest
